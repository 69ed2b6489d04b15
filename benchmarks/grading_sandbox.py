"""What the grading sandbox costs: a class graded on Lab 1 with and without it, side by side.

    python benchmarks/grading_sandbox.py [--students 10] [--json benchmarks/grading_sandbox.json]

Builds a course directory with Lab 1's master, releases it, submits the master for each of
``--students`` students, and runs ``python -m specdec_lite.classroom autograde`` on the whole
class twice: in the sandbox, then with ``--unsandboxed`` (each in a fresh course). It writes
the wall-clock seconds of each class and per student, the machine and the load average.
Run it on a quiet machine (``nice -n 19`` on a shared one): it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite import classroom  # noqa: E402

LAB = "lab01_markov_chains"


def grade_class(students: int, sandboxed: bool) -> dict:
    """Grade ``students`` copies of Lab 1's master; the seconds of the whole class and the scores."""
    with tempfile.TemporaryDirectory(prefix="specdec-bench-") as tmp:
        course = Path(tmp) / "notebooks"
        (course / "source").mkdir(parents=True)
        shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
        shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)
        env = classroom.nbgrader_env()
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", LAB, "--force"],
            cwd=course,
            env=env,
            check=True,
            capture_output=True,
        )
        for i in range(students):
            folder = course / "submitted" / f"s{i:02d}" / LAB
            folder.mkdir(parents=True)
            shutil.copy2(course / "source" / LAB / f"{LAB}.ipynb", folder)
        args = [sys.executable, "-m", "specdec_lite.classroom", "autograde", LAB]
        args += [] if sandboxed else ["--unsandboxed"]
        start = time.perf_counter()
        proc = subprocess.run(args, cwd=course, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0 or "done" not in proc.stdout:
            raise RuntimeError(f"autograde failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return {
            "seconds": round(seconds, 1),
            "per_student_s": round(seconds / students, 1),
            "load_average_after": round(os.getloadavg()[0], 2),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    out = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "lab": LAB,
        "students": args.students,
        "sandboxed": grade_class(args.students, True),
        "unsandboxed": grade_class(args.students, False),
    }
    out["overhead_per_student_s"] = round(out["sandboxed"]["per_student_s"] - out["unsandboxed"]["per_student_s"], 1)
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
