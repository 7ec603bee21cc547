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

"""Peak memory and time of ``murano-cidr import`` on a large generated file.

Run as ``python -m murano_cidr.measuring.import_memory [--rows N]
[--formats csv,json,jsonl]``. For each format it writes a valid file of
``N`` rows (256 ``/24`` networks per router, the default pool's size,
owners and routers random UUIDs): CSV, a JSON list as ``murano-cidr list
--format json`` writes it (indented), or JSON Lines; and a configuration of
a fresh SQLite database in a temporary directory, then runs ``murano-cidr
import --dry-run`` and a real import (after ``murano-cidr-manage db sync``)
as child processes, then the same import again (every row already
recorded, so the plan holds every live allocation), and prints each one's
wall time and peak resident set size (``getrusage`` of the child). The
directory is removed at the end. Numbers are recorded in
``doc/source/benchmarks.rst``.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

#: Networks per router: the default pool (10.0.0.0/16 in /24s) has 256.
PER_ROUTER = 256


def _rows(rows):
    router = None
    for n in range(rows):
        slot = n % PER_ROUTER
        if slot == 0:
            router = str(uuid.uuid4())
        yield router, "10.0.%d.0/24" % slot, str(uuid.uuid4())


def write_csv(path, rows):
    """Write a valid CSV import file of ``rows`` rows; return its size."""
    with open(path, "w") as f:
        f.write("scope,cidr,owner\n")
        for row in _rows(rows):
            f.write("%s,%s,%s\n" % row)
    return os.path.getsize(path)


def _objects(rows):
    for scope, cidr, owner in _rows(rows):
        yield {"cidr": cidr, "owner": owner, "scope": scope}


def write_json(path, rows):
    """Write a JSON list as ``list --format json`` does; return its size."""
    with open(path, "w") as f:
        f.write("[")
        for n, record in enumerate(_objects(rows)):
            text = json.dumps(record, indent=2, sort_keys=True)
            f.write((",\n  " if n else "\n  ") +
                    text.replace("\n", "\n  "))
        f.write("\n]\n")
    return os.path.getsize(path)


def write_jsonl(path, rows):
    """Write JSON Lines, one object a line; return the file's size."""
    with open(path, "w") as f:
        for record in _objects(rows):
            f.write(json.dumps(record) + "\n")
    return os.path.getsize(path)


#: The files measured: a writer and the suffix of each format.
WRITERS = {"csv": (write_csv, "csv"), "json": (write_json, "json"),
           "jsonl": (write_jsonl, "json")}


def run(argv):
    """Run a command; return (exit code, seconds, CPU seconds, peak RSS).

    The CPU time is the child's user and system time, which a loaded
    machine changes less than the wall time; the peak RSS is in MiB.
    """
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace").strip()
    child.stderr.close()
    if child.returncode:
        print("  exit %d: %s" % (child.returncode, error[-500:]))
    # ru_maxrss is in KiB on Linux.
    return (child.returncode, seconds, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024.0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000000)
    parser.add_argument("--keep", action="store_true",
                        help="Keep the temporary directory.")
    parser.add_argument("--dry-run-only", action="store_true",
                        help="Measure import --dry-run only.")
    parser.add_argument("--formats", default="csv,json,jsonl",
                        help="The files to measure, of csv, json (a list) "
                        "and jsonl (JSON Lines).")
    args = parser.parse_args(argv)
    directory = tempfile.mkdtemp(prefix="murano-cidr-import-")
    try:
        conf = os.path.join(directory, "murano-cidr.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\n"
                    "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
                    % os.path.join(directory, "cidr.sqlite"))
        # The modules, not the console scripts: this tree's code is
        # measured, whatever is installed.
        cli = [sys.executable, "-m", "murano_cidr.operator.cmd.cli",
               "--config-file", conf]
        manage = [sys.executable, "-m", "murano_cidr.operator.cmd.manage",
                  "--config-file", conf]
        for fmt in args.formats.split(","):
            write, suffix = WRITERS[fmt]
            data = os.path.join(directory, "import-%s.%s" % (fmt, suffix))
            size = write(data, args.rows)
            print("%s: %d rows, %.1f MB" % (fmt, args.rows, size / 1e6))
            database = os.path.join(directory, "cidr.sqlite")
            if os.path.exists(database):
                os.unlink(database)
            subprocess.run(manage + ["db", "sync"], check=True,
                           stdout=subprocess.DEVNULL)
            for title, argv in (
                    ("import --dry-run", cli + ["import", "--dry-run",
                                                data]),
                    ("import", cli + ["import", data]),
                    # Every row already recorded: the plan holds the
                    # driver's live allocations.
                    ("import again", cli + ["import", data]))[
                        :1 if args.dry_run_only else 3]:
                code, seconds, cpu, rss = run(argv)
                print("%-18s exit %d  %7.1f s (CPU %7.1f s)  peak RSS %6.0f "
                      "MiB" % (title, code, seconds, cpu, rss))
            os.unlink(data)
    finally:
        if args.keep:
            print("kept", directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
