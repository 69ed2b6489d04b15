"""Grading runs, timed: how long nbgrader's autograde takes per lab, and whether it ever stalls.

Not a test (the times depend on the machine). Two parts, in a scratch copy of ``notebooks/``:

* ``labs``: for every lab, ``nbgrader autograde`` of two submissions, the master (every
  answer filled in) and the untouched student copy, each timed on its own; and the slowest
  cell of either (``GradingExecute`` logs each cell's time). ``specdec_lite/classroom/timeouts.py`` sets each
  lab's per-cell limit from these, with a wide margin.
* ``loop``: ``--runs`` autograde runs of Labs 1-7 back to back (lab 1, 2, ..., 7, 1, ...),
  while another process keeps one core busy: the seconds of each run, their maximum, and
  any run past ``--stall`` seconds (a stall, like ipykernel 7's, shows up there; a cell
  that stalled and was run again in a fresh kernel is printed).

    python benchmarks/grading_runs.py [--part labs|loop|both] [--runs 40] [--budget-s S] [--json PATH]

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


def autograde(course: Path, lab: str, student: str) -> tuple[float, float]:
    """``nbgrader autograde`` of one submission: its wall-clock seconds and its slowest cell's.

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
    return seconds, max(cells, default=0.0)


def part_labs(labs: list[str]) -> dict:
    out = {}
    with tempfile.TemporaryDirectory(prefix="grading-runs-") as tmp:
        course = course_copy(Path(tmp), labs)
        for lab in labs:
            row = {}
            slowest = 0.0
            for student in ("full", "untouched"):
                seconds, cell = autograde(course, lab, student)
                row[f"autograde_{student}_s"] = round(seconds, 1)
                slowest = max(slowest, cell)
            row["slowest_cell_s"] = round(slowest, 1)
            row["cell_timeout_s"] = cell_timeout(lab)
            print(lab, row, flush=True)
            out[lab] = row
    return out


def part_loop(labs: list[str], runs: int, stall: float, budget_s: float | None = None) -> dict:
    load = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    seconds: list[float] = []
    slowest: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="grading-loop-") as tmp:
            course = course_copy(Path(tmp), labs)
            start = time.perf_counter()
            for k in range(runs):
                if budget_s and time.perf_counter() - start > budget_s:
                    print(f"stopped after {k} runs: the budget of {budget_s:.0f} s is spent", flush=True)
                    break
                lab = labs[k % len(labs)]
                run, cell = autograde(course, lab, "full")
                seconds.append(round(run, 2))
                slowest.append(round(cell, 2))
                print(f"run {k + 1:2d} {lab}: {run:.1f} s (slowest cell {cell:.1f} s)", flush=True)
    finally:
        load.kill()
        load.wait()
    return {
        "runs": len(seconds),
        "runs_asked": runs,
        "labs": labs,
        "cpu_load": "one extra process spinning on one core",
        "seconds": seconds,
        "mean_s": round(statistics.mean(seconds), 2),
        "median_s": round(statistics.median(seconds), 2),
        "max_s": max(seconds),
        "slowest_cell_s": max(slowest),
        "stall_threshold_s": stall,
        "stalls": [s for s in seconds if s > stall],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["labs", "loop", "both"], default="both")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--stall", type=float, default=60.0, help="a run longer than this counts as a stall")
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
        results["loop"] = part_loop([n for n in names if int(n[3:5]) <= 7], args.runs, args.stall, args.budget_s)
        loop = results["loop"]
        print(f"{loop['runs']} runs: mean {loop['mean_s']} s, max {loop['max_s']} s, stalls {loop['stalls']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
