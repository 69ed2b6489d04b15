"""Grading runs, timed: how long nbgrader's autograde takes per lab, and whether it ever stalls.

Not a test (the times depend on the machine). Two parts, in a scratch copy of ``notebooks/``:

* ``labs``: for every lab, ``nbgrader autograde`` of two submissions, the master (every
  answer filled in) and the untouched student copy, each timed on its own; and the slowest
  cell of either (``GradingExecute`` logs each cell's time). ``specdec_lite/classroom/timeouts.py`` sets each
  lab's per-cell limit from these, with a wide margin.
* ``loop``: ``--runs`` autograde runs of Labs 1-7 back to back (lab 1, 2, ..., 7, 1, ...),
  while ``--busy`` other processes keep cores busy (one by default; more give the
  ``loop_busyN`` entry): the seconds of each run, their maximum, any run past ``--stall``
  seconds (a stall, like ipykernel 7's), the runs in which a cell returned only at its cell
  limit (a missed reply; ``cells_at_limit`` holds their numbers) and any cell that failed and
  was run again in a fresh kernel.

    python benchmarks/grading_runs.py [--part labs|loop|both] [--runs 40] [--busy 1] [--budget-s S] [--json PATH]

``--json benchmarks/grading_runs.json`` refreshes the numbers the *For instructors* appendix
shows (its lab timing table and the closing note on grading runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
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

from specdec_lite.classroom import COURSE, cell_timeout, masters, nbgrader_env  # noqa: E402


def course_copy(tmp: Path, labs: list[str]) -> Path:
    """A scratch course with the labs' masters, generated, and two submissions of each."""
    course = tmp / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy2(COURSE / "nbgrader_config.py", course)
    for lab in labs:
        shutil.copytree(COURSE / "source" / lab, course / "source" / lab)
        nbgrader(course, "generate_assignment", lab, "--force")
        for student, src in (
            ("full", COURSE / "source" / lab / f"{lab}.ipynb"),
            ("untouched", COURSE / f"{lab}.ipynb"),
        ):
            (course / "submitted" / student / lab).mkdir(parents=True)
            shutil.copy2(src, course / "submitted" / student / lab / f"{lab}.ipynb")
    return course


def nbgrader(course: Path, *args: str) -> float:
    """Run one nbgrader command in ``course``; its wall-clock seconds."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=nbgrader_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start


def autograde(course: Path, lab: str, student: str) -> tuple[float, float, list[str]]:
    """``nbgrader autograde`` of one submission: its wall-clock seconds, its slowest cell's, and
    the cells that failed once and were run again in a fresh kernel.

    The cell times are those ``GradingExecute`` logs (``cell N ran in X s``).
    """
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", lab, f"--student={student}", "--force"],
        cwd=course,
        env=nbgrader_env(),
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader autograde {lab} failed:\n{proc.stderr[-2000:]}")
    cells = [float(x) for x in re.findall(r"cell \d+ ran in ([\d.]+) s", proc.stderr)]
    stalls = re.findall(r"cell \d+ failed after .*", proc.stderr)
    if stalls:
        print(f"  {lab} {student}: {stalls}", flush=True)
    return seconds, max(cells, default=0.0), stalls


def part_labs(labs: list[str]) -> dict:
    out = {}
    with tempfile.TemporaryDirectory(prefix="grading-runs-") as tmp:
        course = course_copy(Path(tmp), labs)
        for lab in labs:
            row = {}
            slowest = 0.0
            for student in ("full", "untouched"):
                seconds, cell, _ = autograde(course, lab, student)
                row[f"autograde_{student}_s"] = round(seconds, 1)
                slowest = max(slowest, cell)
            row["slowest_cell_s"] = round(slowest, 1)
            row["cell_timeout_s"] = cell_timeout(lab)
            print(lab, row, flush=True)
            out[lab] = row
    return out


def part_loop(labs: list[str], runs: int, stall: float, budget_s: float | None = None, busy: int = 1) -> dict:
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    seconds: list[float] = []
    slowest: list[float] = []
    retried: list[str] = []
    loads: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="grading-loop-") as tmp:
            course = course_copy(Path(tmp), labs)
            start = time.perf_counter()
            for k in range(runs):
                if budget_s and time.perf_counter() - start > budget_s:
                    print(f"stopped after {k} runs: the budget of {budget_s:.0f} s is spent", flush=True)
                    break
                lab = labs[k % len(labs)]
                run, cell, again = autograde(course, lab, "full")
                seconds.append(round(run, 2))
                slowest.append(round(cell, 2))
                retried += [f"run {k + 1} {lab}: {line}" for line in again]
                loads.append(round(os.getloadavg()[0], 2))
                print(f"run {k + 1:2d} {lab}: {run:.1f} s (slowest cell {cell:.1f} s)", flush=True)
    finally:
        for proc in load:
            proc.kill()
            proc.wait()
    return {
        "runs": len(seconds),
        "runs_asked": runs,
        "labs": labs,
        "cpu_load": f"{busy} extra process{'es' if busy > 1 else ''} spinning, on {os.cpu_count()} cores",
        "load_average_after_each_run": loads,
        "seconds": seconds,
        "slowest_cell_of_each_run_s": slowest,
        "mean_s": round(statistics.mean(seconds), 2),
        "median_s": round(statistics.median(seconds), 2),
        "max_s": max(seconds),
        "slowest_cell_s": max(slowest),
        "stall_threshold_s": stall,
        "stalls": [s for s in seconds if s > stall],
        "cell_limit_s": {lab: cell_timeout(lab) for lab in labs},
        "cells_at_limit": [k + 1 for k, c in enumerate(slowest) if c >= cell_timeout(labs[k % len(labs)]) - 1],
        "cells_run_again": retried,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["labs", "loop", "both"], default="both")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--stall", type=float, default=600.0, help="a run longer than this is a stall (ipykernel 7: 900 s)"
    )
    parser.add_argument("--busy", type=int, default=1, help="processes kept spinning during the loop")
    parser.add_argument("--labs", nargs="*", help="the labs (default: every master); the loop takes Labs 1-7")
    parser.add_argument("--budget-s", type=float, help="stop the loop after this many seconds")
    parser.add_argument("--json", type=Path, help="write the results there (merged with what it holds)")
    args = parser.parse_args(argv)
    names = args.labs or [m.stem for m in masters(COURSE)]
    results = json.loads(args.json.read_text()) if args.json and args.json.is_file() else {}
    results["machine"] = f"{platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"
    results["date"] = date.today().isoformat()
    if args.part in ("labs", "both"):
        results["labs"] = part_labs(names)
    if args.part in ("loop", "both"):
        key = "loop" if args.busy == 1 else f"loop_busy{args.busy}"
        labs = [n for n in names if int(n[3:5]) <= 7]
        results[key] = loop = part_loop(labs, args.runs, args.stall, args.budget_s, args.busy)
        print(f"{loop['runs']} runs: mean {loop['mean_s']} s, max {loop['max_s']} s, stalls {loop['stalls']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
