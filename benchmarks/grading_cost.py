"""What one graded submission costs: wall and CPU seconds of ``nbgrader autograde --student``, and its overhead.

Not a test (the times depend on the machine). In a scratch course directory, each lab's master
(every answer filled in: an honest submission) is graded ``--runs`` times, one submission at a time,
with the course's ``nbgrader_config.py`` (the sandbox included), as the instructors page's commands
grade it. For each run:

* ``wall_s``: the seconds of the whole ``nbgrader autograde`` command;
* ``cpu_s``: user and system seconds of every process it started, the sandboxed kernel included
  (this script makes itself the reaper of orphaned descendants, so a killed kernel's CPU is counted);
* ``cells_s``: the seconds of the notebook's cells, as ``GradingExecute`` logs them (``cell N ran in X s``);
* ``overhead_s``: ``wall_s - cells_s``: nbgrader's start, the kernel's start in its sandbox, the
  gradebook, writing the notebook, the kernel's end.

The medians are printed per lab. ``--pythonpath`` grades with another copy of ``specdec_lite`` (a
checkout of an earlier commit, to compare); ``--json`` writes the numbers.

    python benchmarks/grading_cost.py [--labs lab01_markov_chains ...] [--runs 3] [--pythonpath DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite.classroom import COURSE, nbgrader_env  # noqa: E402

LABS = ("lab01_markov_chains", "lab05_tradeoff", "lab08_real_models", "lab09_bugs")
#: ``prctl`` option: orphaned descendants are re-parented to this process, which reaps them (and counts their CPU).
PR_SET_CHILD_SUBREAPER = 36


def course_copy(tmp: Path, labs: list[str], env: dict[str, str]) -> Path:
    """A scratch course with the labs' masters, generated, and the master submitted by student ``full``."""
    course = tmp / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy2(COURSE / "nbgrader_config.py", course)
    for lab in labs:
        shutil.copytree(COURSE / "source" / lab, course / "source" / lab)
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", lab, "--force"],
            cwd=course,
            env=env,
            check=True,
            capture_output=True,
        )
        (course / "submitted" / "full" / lab).mkdir(parents=True)
        shutil.copy2(COURSE / "source" / lab / f"{lab}.ipynb", course / "submitted" / "full" / lab)
    return course


def _reap() -> None:
    """Wait for every descendant left (orphans re-parented here), so that their CPU time is counted."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def grade_once(course: Path, lab: str, env: dict[str, str]) -> dict[str, float]:
    """One ``nbgrader autograde <lab> --student=full --force``: wall, CPU, cells and overhead seconds."""
    _reap()
    cpu0, t0 = cpu_of_children(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", lab, "--student=full", "--force"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    _reap()
    cpu = cpu_of_children() - cpu0
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader autograde {lab} failed:\n{proc.stderr[-3000:]}")
    cells = sum(float(x) for x in re.findall(r"cell \d+ ran in ([\d.]+) s", proc.stderr))
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cells_s": round(cells, 2),
        "overhead_s": round(wall - cells, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labs", nargs="*", default=list(LABS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pythonpath", help="grade with the specdec_lite of this folder (default: this checkout's)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    env = nbgrader_env()
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(args.pythonpath).resolve()), env["PYTHONPATH"]])
    out: dict = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "specdec_lite": args.pythonpath or str(ROOT),
        "labs": {},
    }
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        course = course_copy(Path(tmp), args.labs, env)
        for lab in args.labs:
            runs = []
            for _ in range(args.runs):
                load = os.getloadavg()[0]
                runs.append({**grade_once(course, lab, env), "load_before": round(load, 2)})
            median = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s", "cells_s", "overhead_s")}
            out["labs"][lab] = {"runs": runs, "median": median}
            print(lab, json.dumps(median), "loads", [r["load_before"] for r in runs], flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
