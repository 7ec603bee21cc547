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

"""Benchmark results as a human table, JSON or CSV."""

import csv
import io
import json

#: The columns of the CSV output: one row per figure measured.
CSV_FIELDS = ("section", "name", "metric", "value")

#: The figures of each backend the CSV output holds, in order.
DRIVER_METRICS = ("throughput", "p50", "p99", "collisions", "errors",
                  "baseline", "p50_over_baseline")


#: The figures of each layout and fill level the CSV output holds.
FILL_METRICS = ("p50", "p90", "p99", "rows", "statements", "baseline",
                "baseline_p90")

#: The figures of each fill level beside Neutron the CSV output holds.
NEUTRON_METRICS = ("samples", "ours_p50", "ours_p90", "neutron_p50",
                   "neutron_p90", "speedup")


def _ms(seconds):
    if seconds is None:
        return "-"
    return "%.3f" % (seconds * 1e3) if seconds < 0.01 else (
        "%.1f" % (seconds * 1e3))


def _mean(value):
    return "-" if value is None else "%.1f" % value


def _align(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(v.rjust(w) if i else v.ljust(w)
                      for i, (v, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def _cost_rows(costs):
    rows = [("BACKEND", "ENGINES", "LAYOUT", "FILL", "P50", "P90", "P99",
             "ROWS", "STATEMENTS", "BASE P50", "BASE P90", "P50/BASELINE",
             "P90/P50")]
    for d, c in costs:
        floor = c.get("baseline") or d["baseline"]
        rows.append((
            d["backend"], c.get("engines", "alone"), c["layout"], c["fill"],
            _ms(c["p50"]), _ms(c["p90"]), _ms(c["p99"]), _mean(c["rows"]),
            _mean(c["statements"]), _ms(c.get("baseline")),
            _ms(c.get("baseline_p90")),
            "%.1fx" % (c["p50"] / floor) if floor else "-",
            "%.1fx" % (c["p90"] / c["p50"]) if c["p50"] else "-"))
    return _align(rows)


def _neutron_rows(drivers):
    rows = [("BACKEND", "LIVE", "SAMPLES", "OURS P50", "OURS P90",
             "NEUTRON P50", "NEUTRON P90", "NEUTRON/OURS")]
    for d in drivers:
        for c in d.get("neutron", ()):
            rows.append((d["backend"], "{:,}".format(c["rows"]),
                         str(c["samples"]), _ms(c["ours_p50"]),
                         _ms(c["ours_p90"]), _ms(c["neutron_p50"]),
                         _ms(c["neutron_p90"]), "%.1fx" % c["speedup"]))
    return _align(rows) if len(rows) > 1 else []


def table(doc):
    """Return the results of :func:`~murano_cidr.measuring.bench.runner.run`.

    :param doc: the dictionary returned by the runner.
    :returns: aligned tables: the main row (engines taking turns on one
        router), drivers, one engine alone, beside Neutron's allocator,
        pool math, targets.
    """
    out = []
    settings = doc["settings"]
    drivers = doc["drivers"]
    measured = [d for d in drivers if not d["skipped"]]
    turns = [(d, c) for d in measured for c in d["fill_cost"]
             if c.get("engines") == "turns"]
    alone = [(d, c) for d in measured for c in d["fill_cost"]
             if c.get("engines", "alone") == "alone"]
    if turns:
        out.append("Main row: engines taking turns on one router (another "
                   "engine allocates between every two timed allocations), "
                   "pool of 4,096 /24s; ms; rows read and statements sent "
                   "per allocation; the INSERT + commit baseline timed "
                   "between allocations")
        out += _cost_rows(turns)
        out.append("")
    if drivers:
        out.append("Drivers: %d workers x %d allocations, one scope, pool "
                   "of 4,096 /24s; times in ms"
                   % (settings["workers"], settings["allocations"]))
        rows = [("BACKEND", "ALLOC/S", "P50", "P99", "COLLISIONS", "ERRORS",
                 "BASELINE", "P50/BASELINE")]
        skipped = []
        for d in drivers:
            if d["skipped"]:
                skipped.append("%s: skipped: %s" % (d["backend"],
                                                    d["skipped"]))
                continue
            ratio = d["p50_over_baseline"]
            rows.append((d["backend"], "%.0f" % d["throughput"],
                         _ms(d["p50"]), _ms(d["p99"]), str(d["collisions"]),
                         str(d["errors"]),
                         "%s (%s)" % (_ms(d["baseline"]), d["baseline_what"])
                         if d["baseline"] is not None else "-",
                         "%.1fx" % ratio if ratio is not None else "-"))
        if len(rows) > 1:
            out += _align(rows)
        out += skipped
        errors = ["%s: first error: %s" % (d["backend"], d["first_error"])
                  for d in drivers if d.get("first_error")]
        out += errors
    if alone:
        out.append("")
        out.append("One engine alone, as the pool fills (ms; db: rows, "
                   "statements and the INSERT baseline as above)")
        out += _cost_rows(alone)
    beside = _neutron_rows(measured)
    if beside:
        out.append("")
        out.append("Beside Neutron's allocator (a model of its algorithm), "
                   "taking turns on one database, pool of 65,536 /24s; ms")
        out += beside
    if doc["pool_math"]:
        out.append("")
        out.append("Pool math (median of %d, ms)" % settings["repeat"])
        rows = [("MEASURE", "CANDIDATES", "TAKEN", "MS", "WHAT")]
        for m in doc["pool_math"]:
            rows.append((m["name"], "{:,}".format(m["candidates"]),
                         "{:,}".format(m["taken"]), _ms(m["seconds"]),
                         m["what"]))
        out += _align(rows)
    if doc["targets"]:
        out.append("")
        out.append("Targets")
        for t in doc["targets"]:
            out.append("%s  %s: %.2fx (%s %gx; %s)" % (
                "PASS" if t["passed"] else "FAIL", t["name"], t["ratio"],
                "at most" if t["at_most"] else "at least", t["limit"],
                t["detail"]))
    return "\n".join(out)


def rows(doc):
    """Return every figure of the results as a CSV row.

    :param doc: the dictionary returned by the runner.
    :returns: dictionaries of :data:`CSV_FIELDS`: per measured backend its
        figures (seconds for times) and its fill costs, the pool-math
        timings, the figures beside Neutron's allocator and each target's
        ratio; skipped backends say why.
    """
    out = []
    for d in doc["drivers"]:
        if d["skipped"]:
            out.append(("driver", d["backend"], "skipped", d["skipped"]))
            continue
        out += [("driver", d["backend"], m, d[m]) for m in DRIVER_METRICS]
        out += [("fill", d["backend"],
                 "%s %s %s %s" % (c.get("engines", "alone"), c["layout"],
                                  c["fill"], metric), c.get(metric))
                for c in d["fill_cost"] for metric in FILL_METRICS]
        out += [("neutron", d["backend"], "%d %s" % (c["rows"], metric),
                 c[metric])
                for c in d.get("neutron", ()) for metric in NEUTRON_METRICS]
    out += [("pool_math", m["name"], "seconds", m["seconds"])
            for m in doc["pool_math"]]
    out += [("target", t["name"], "ratio", t["ratio"])
            for t in doc["targets"]]
    out += [("target", t["name"], "passed", t["passed"])
            for t in doc["targets"]]
    return [dict(zip(CSV_FIELDS, row)) for row in out]


def to_csv(doc):
    """Return the results as CSV with a header row (:data:`CSV_FIELDS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(doc))
    return buf.getvalue()


def render(doc, fmt):
    """Return the results in one of :data:`murano_cidr.measuring.FORMATS`."""
    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=True)
    if fmt == "csv":
        return to_csv(doc).rstrip("\n")
    return table(doc)
