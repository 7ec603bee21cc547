#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""How simulation results are shown: a table, JSON or CSV.

The PNG plot is :mod:`murano_cidr.measuring.simulate.plot`.
"""

import csv
import io
import json

#: The columns of the CSV output, in order.
CSV_FIELDS = ("driver", "k", "trials", "completed", "pool_size", "existing",
              "free", "collided", "refused", "errors", "probability",
              "ci95_low", "ci95_high", "birthday_bound")


def _percent(value):
    return "n/a" if value is None else "%.1f%%" % (100.0 * value)


def table(results):
    """Return the results as an aligned, human-readable table.

    Failed trials are counted under ERRORS and left out of P(COLLISION)
    and its interval ("n/a" when no trial completed).

    :param results: a list of
        :class:`~murano_cidr.measuring.simulate.model.Result`.
    :returns: the table as a string, one row per driver and K.
    """
    rows = [("DRIVER", "K", "TRIALS", "FREE", "COLLIDED", "P(COLLISION)",
             "95% CI (WILSON)", "BIRTHDAY BOUND", "ERRORS")]
    for r in results:
        low, high = r.interval
        rows.append((r.driver, str(r.k), str(r.trials),
                     "%d/%d" % (r.free, r.pool_size), str(r.collided),
                     _percent(r.probability),
                     ("n/a" if low is None
                      else "%s - %s" % (_percent(low), _percent(high))),
                     _percent(r.birthday), str(r.errors)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.rjust(w) if i else v.ljust(w)
                       for i, (v, w) in enumerate(zip(row, widths)))
             for row in rows]
    notes = ["%s, K=%d: %d trial(s) failed; first error: %s"
             % (r.driver, r.k, r.errors, r.first_error)
             for r in results if r.errors]
    return "\n".join(lines + notes)


def to_json(results, spec=None):
    """Return the results as a JSON document.

    :param results: a list of results.
    :param spec: the
        :class:`~murano_cidr.measuring.simulate.model.Spec`, recorded
        beside them so the numbers say how they were made.
    """
    doc = {"results": [r.to_dict() for r in results]}
    if spec is not None:
        doc["spec"] = {"drivers": spec.drivers, "ks": spec.ks,
                       "trials": spec.trials, "pool": spec.pool,
                       "existing": spec.existing, "seed": spec.seed}
    return json.dumps(doc, indent=2, sort_keys=True)


def to_csv(results):
    """Return the results as CSV with a header row (:data:`CSV_FIELDS`)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS,
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in results:
        writer.writerow(r.to_dict())
    return out.getvalue()


def render(results, fmt, spec=None):
    """Return the results in one of :data:`murano_cidr.measuring.FORMATS`."""
    if fmt == "json":
        return to_json(results, spec)
    if fmt == "csv":
        return to_csv(results).rstrip("\n")
    return table(results)
