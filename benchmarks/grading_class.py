"""How fast a class is graded: one at a time, ``--jobs`` 1 and 2, and through Dask (one and two workers).

For each lab asked, a synthetic class of ``--students N`` is built in a scratch course (the
lab's master, ``nbgrader generate_assignment``), cycling through five kinds of submission:
an honest one (the master's answers), an empty one (the student copy, untouched), one whose
kernel dies (``os._exit(1)`` after the first code cell), one that prints 3 MiB, and a hostile
one (it tries to read the grader's files, open a socket and leave a process behind). The
class is graded, from scratch each time, by:

* ``one_at_a_time``: ``grade.autograde_each`` (one ``nbgrader autograde`` after another, in the course);
* ``jobs1``, ``jobs2``: ``parallel.grade_class`` with 1 and 2 local jobs (one core each), each
  submission's nbgrader a fresh child of a zygote (``classroom.zygote``; the zygotes' start counted);
* ``dask1``, ``dask2``: ``parallel.grade_class`` through a ``distributed.LocalCluster`` of 1 and 2
  single-threaded workers (the path a ``--scheduler`` cluster runs).

Per lab and way: wall seconds, submissions per minute, the speed-up over one at a time, the
CPU seconds per submission (the whole machine's busy seconds over the class, divided by
its size: run it on a machine doing nothing else), the instructor's
seconds per submission spent checking and writing results, and the predicted time of a
300-student class. The prediction for 100 Dask workers assumes each worker grades at the
measured rate of one worker (its own core, as here) and that the scheduler and the transfers
cost nothing next to a submission's seconds; the instructor's writing of results, measured,
caps it. Every lab by default. Usage::

    python benchmarks/grading_class.py --students 5 [--labs LAB ...] --json benchmarks/grading_class.json

With ``--update`` the labs asked replace theirs in the ``--json`` file (measured with as many students) and the
others stay; the course's totals are summed again.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite.classroom import grade, parallel, worker  # noqa: E402
from specdec_lite.classroom.release import COURSE, masters, nbgrader_env  # noqa: E402

KINDS = ("honest", "empty", "crashing", "printing", "hostile")
CLASS_SIZE = 300
WORKERS = 100
HOSTILE = """import os, socket, subprocess
for attempt in (lambda: open("/etc/shadow").read(), lambda: os.listdir("/root"),
                lambda: socket.create_connection(("1.1.1.1", 53), timeout=2)):
    try:
        attempt()
        print("allowed")
    except Exception as e:
        print("denied", type(e).__name__)
subprocess.Popen(["sleep", "600"], start_new_session=True)"""


def _first_code(nb: nbformat.NotebookNode) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")


def submission(kind: str, master: nbformat.NotebookNode, released: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A submission of the given kind (see the module's docstring)."""
    if kind == "empty":
        return copy.deepcopy(released)
    nb = copy.deepcopy(released if kind == "hostile" else master)
    at = _first_code(nb) + 1
    extra = {"crashing": "import os\nos._exit(1)", "printing": 'print("x" * (3 << 20))', "hostile": HOSTILE}
    if kind in extra:
        nb.cells.insert(at, nbformat.v4.new_code_cell(extra[kind]))
    return nb


def build(tmp: Path, lab: str, n: int) -> Path:
    """A scratch course of ``n`` students of ``lab``."""
    course = tmp / lab
    (course / "source").mkdir(parents=True)
    shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / "source" / lab, course / "source" / lab)
    nbg = [sys.executable, "-m", "nbgrader"]
    subprocess.run(
        [*nbg, "generate_assignment", lab, "--force"], cwd=course, env=nbgrader_env(), check=True, capture_output=True
    )
    master = nbformat.read(course / "source" / lab / f"{lab}.ipynb", as_version=4)
    released = nbformat.read(course / "release" / lab / f"{lab}.ipynb", as_version=4)
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        folder = course / "submitted" / f"s{i:03d}_{kind}" / lab
        folder.mkdir(parents=True)
        nbformat.write(submission(kind, master, released), folder / f"{lab}.ipynb")
    return course


def reset(course: Path) -> None:
    """No submission graded: the autograded folder and the gradebook's submissions gone."""
    shutil.rmtree(course / "autograded", ignore_errors=True)
    db = sqlite3.connect(course / "gradebook.db")
    for table in ("comment", "grade", "submitted_notebook", "submitted_assignment", "student"):
        db.execute(f"DELETE FROM {table}")  # noqa: S608
    db.commit()
    db.close()


def _busy_cpu() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``: every state but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def measure(course: Path, lab: str, way: str, n: int) -> dict:
    """Grade the class one way, from scratch; wall and CPU seconds, and the instructor's writing seconds."""
    reset(course)
    worker.zygotes().close()  # each way starts its own zygotes, and pays for them
    cpu, start, merge_s = _busy_cpu(), time.perf_counter(), None
    if way == "one_at_a_time":
        status = grade.autograde_each(course, [lab])[lab]
    elif way.startswith("jobs"):
        out = parallel.grade_class(course, [lab], jobs=int(way[4:]), progress=False)
        status, merge_s = out.status[lab], out.merge_s
    else:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=int(way[4:]), threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            start, cpu = time.perf_counter(), _busy_cpu()  # the cluster's start is not the class's
            out = parallel.grade_class(course, [lab], client=client, progress=False)
        status, merge_s = out.status[lab], out.merge_s
    wall = time.perf_counter() - start
    graded = sum(1 for s in status.values() if s == 0)
    row = {"wall_s": round(wall, 1), "per_minute": round(60 * n / wall, 2), "graded_ok": graded, "students": n}
    row["cpu_s_per_submission"] = round((_busy_cpu() - cpu) / n, 2)
    if merge_s is not None:
        row["merge_s_per_submission"] = round(merge_s / n, 3)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=5)
    parser.add_argument("--labs", nargs="*", default=[m.stem for m in masters(COURSE)])
    parser.add_argument("--ways", nargs="*", default=["one_at_a_time", "jobs1", "jobs2", "dask1", "dask2"])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--update", action="store_true", help="replace only the labs asked in the --json file")
    args = parser.parse_args(argv)
    kept: dict = {}
    if args.update:
        if args.json is None or not args.json.exists():
            parser.error("--update needs an existing --json file")
        kept = json.loads(args.json.read_text())
        if kept.get("students") != args.students:
            parser.error(f"{args.json} was measured with {kept.get('students')} students, not {args.students}")
    machine = f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPU cores, Python {platform.python_version()}"
    if kept and kept.get("machine") != machine:
        parser.error(f"{args.json} was measured on {kept.get('machine')}, this is {machine}")
    result: dict = {
        "machine": machine,
        "date": date.today().isoformat(),
        "students": args.students,
        "class_size": CLASS_SIZE,
        "workers_predicted": WORKERS,
        "labs": dict(kept.get("labs", {})),
    }
    with tempfile.TemporaryDirectory(prefix="specdec-bench-class-") as tmp:
        for lab in args.labs:
            course = build(Path(tmp), lab, args.students)
            rows = {way: measure(course, lab, way, args.students) for way in args.ways}
            base = rows.get("one_at_a_time", {}).get("wall_s")
            for row in rows.values():
                row["speedup"] = round(base / row["wall_s"], 2) if base else None
                row["class_min"] = round(CLASS_SIZE / row["per_minute"], 1)
            if "dask1" in rows:
                per_worker = rows["dask1"]["per_minute"]
                merge = max(r.get("merge_s_per_submission", 0) for r in rows.values())
                cap = 60 / merge if merge else float("inf")
                rate = min(WORKERS * per_worker, cap)
                rows[f"dask{WORKERS}_predicted"] = {
                    "per_minute": round(rate, 1),
                    "class_min": round(CLASS_SIZE / rate, 2),
                    "capped_by_writing": rate == cap,
                }
            result["labs"][lab] = rows
            print(lab, json.dumps(rows, indent=1), flush=True)
    result["course_min"] = {
        way: round(sum(rows[way]["class_min"] for rows in result["labs"].values() if way in rows), 1)
        for way in [*args.ways, f"dask{WORKERS}_predicted"]
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["course_min"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
