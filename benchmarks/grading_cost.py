"""What one graded submission costs: wall and CPU seconds of ``nbgrader autograde --student``, and its overhead.

Not a test (the times depend on the machine). In a scratch course directory, each lab's master
(every answer filled in: an honest submission) is graded ``--runs`` times, one submission at a time,
with the course's ``nbgrader_config.py`` (the sandbox included), as the instructors page's commands
grade it. For each run:

* ``wall_s``: the seconds of the whole ``nbgrader autograde`` command;
* ``cpu_s``: user and system seconds of nbgrader and of every process under it, the sandboxed kernel's
  included, read from ``/proc`` while they run (``ProcessCPU``);
* ``grader_cpu_s`` and ``kernel_cpu_s``: the same, nbgrader's and the kernel's apart;
* ``cells_s``: the seconds of the notebook's cells, as ``GradingExecute`` logs them (``cell N ran in X s``);
* ``overhead_s``: ``wall_s - cells_s``: nbgrader's start, the kernel's start in its sandbox, the
  gradebook, writing the notebook, the kernel's end.

The medians are printed per lab. ``--lab8-rule`` also grades Lab 8's master, a wrong answer and the untouched
copy with the measurement section at its smallest plan (the grader's rule) and at the lab's budget, and
records every score of both. ``--compare DIR`` also grades each submission with the ``specdec_lite``
of ``DIR`` (a checkout of an earlier commit), the two in turn; ``--zygote`` also grades each in a fresh
child of a zygote that imported nbgrader once (``classroom.zygote``: what ``--jobs N`` and a Dask worker
run), its own seconds before the run left out; ``--json`` writes the numbers.

    python benchmarks/grading_cost.py [--labs LAB ...] [--runs 3] [--compare DIR] [--zygote] [--lab8-rule] [--json PATH]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite.classroom import COURSE, nbgrader_env  # noqa: E402
from specdec_lite.classroom.sandbox import NOBODY  # noqa: E402

LABS = ("lab01_markov_chains", "lab05_tradeoff", "lab08_real_models", "lab09_bugs")
#: The numbers of a run whose median is kept.
KEYS = ("wall_s", "cpu_s", "grader_cpu_s", "kernel_cpu_s", "cells_s", "overhead_s")
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


#: Children that stay between runs (a zygote): ``_reap`` does not wait for them.
STAYING: set[int] = set()


def _reap() -> None:
    """Wait for every descendant left (orphans re-parented here) but ``STAYING``, so that their CPU time is
    counted."""
    me = os.getpid()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        tasks = os.scandir(f"/proc/{me}/task")
        children = {int(c) for t in tasks for c in Path(t.path, "children").read_text().split()}
        if not children - STAYING:
            return
        time.sleep(0.01)


class ProcessCPU:
    """CPU seconds of a process and of every process under it, read from ``/proc`` every ``every`` seconds.

    Each process's own user and system seconds (not its children's: those are counted as processes of their
    own), at its last reading, so up to ``every`` seconds at the end of each process are missed, and a process
    that lives less than that may be missed whole. Read this way because the account the kernel would otherwise
    give its parent depends on how it ends: a sandboxed kernel that is killed never reaches it (bubblewrap's
    init dies with it), one that exits does. ``kernel``: the processes of uid ``NOBODY`` (the sandboxed
    kernel, when grading as root)."""

    def __init__(self, root: int, every: float = 0.02, count_root: bool = True) -> None:
        self.root, self.every, self.last, self.kernel = root, every, {}, set()
        self.count_root = count_root  # False: a zygote's own seconds (its imports, before the run) are left out
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.is_set():
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    uid = entry.stat().st_uid
                    fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
                    if int(entry.name) == self.root and not self.count_root:
                        continue
                    if int(entry.name) != self.root and not self._descends(int(fields[1])):
                        continue
                except (OSError, IndexError, ValueError):
                    continue
                key = (entry.name, fields[19])  # the start time tells a reused pid
                self.last[key] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime (proc(5) 14, 15)
                if uid == NOBODY:
                    self.kernel.add(key)
            self._stop.wait(self.every)

    def _descends(self, pid: int) -> bool:
        for _ in range(16):
            if pid == self.root:
                return True
            if pid <= 1:
                return False
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        return False

    def __enter__(self) -> ProcessCPU:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.last.values())

    @property
    def kernel_seconds(self) -> float:
        return sum(v for k, v in self.last.items() if k in self.kernel)


#: Each log line starts with its time (seconds since the epoch), from which ``breakdown`` cuts the run in parts.
LOG_FORMAT = "%(created).3f %(message)s"


def breakdown(stderr: str, start: float, end: float) -> dict[str, float]:
    """The run's seconds by part, from the times of nbgrader's and ``GradingExecute``'s log lines.

    ``nbgrader_start``: Python, nbgrader's imports and the configuration, to its first line; ``gradebook``: the
    gradebook, the submission's sanitizing, writing it out; ``kernel_start``: the sandbox, the kernel's Python and
    ipykernel, until the first cell starts; ``cells``: the cells' own seconds (``imports``: the lab's second code
    cell, its imports); ``between_cells``; ``kernel_end``: the kernel's end and the scoring steps, to the autograded
    notebook's writing; ``exit``: writing it and the process's end."""
    lines = [(float(m[1]), m[2]) for m in re.finditer(r"^(\d{9,}\.\d+) (.*)$", stderr, re.M)]
    ran = [(t, float(m[2])) for t, text in lines if (m := re.match(r"cell (\d+) ran in ([\d.]+) s", text))]
    first = lines[0][0]
    told = next(t for t, text in lines if text.startswith(("sandboxed", "NOT SANDBOXED")))
    written = [t for t, text in lines if text.startswith("Writing") and "autograded" in text][-1]
    ready = ran[0][0] - ran[0][1]
    cells = sum(r[1] for r in ran)
    return {
        "nbgrader_start": first - start,
        "gradebook": told - first,
        "kernel_start": ready - told,
        "cells": cells,
        "imports": ran[1][1] if len(ran) > 1 else 0.0,
        "between_cells": ran[-1][0] - ready - cells,
        "kernel_end": written - ran[-1][0],
        "exit": end - written,
    }


def _row(wall: float, cpu: ProcessCPU, parts: dict[str, float]) -> dict:
    """One run's numbers: wall and CPU seconds (nbgrader's and the kernel's apart), cells, overhead, parts."""
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu.seconds, 2),
        "grader_cpu_s": round(cpu.seconds - cpu.kernel_seconds, 2),
        "kernel_cpu_s": round(cpu.kernel_seconds, 2),
        "cells_s": round(parts["cells"], 2),
        "overhead_s": round(wall - parts["cells"], 2),
        "parts_s": {k: round(v, 2) for k, v in parts.items()},
    }


def grade_once(course: Path, lab: str, env: dict[str, str]) -> dict:
    """One ``nbgrader autograde <lab> --student=full --force``: wall, CPU, cells and overhead seconds, and parts."""
    _reap()
    start, t0 = time.time(), time.perf_counter()
    args = [sys.executable, "-m", "nbgrader", "autograde", lab, "--student=full", "--force"]
    with subprocess.Popen(
        args + [f"--Application.log_format={LOG_FORMAT}"],
        cwd=course,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        with ProcessCPU(proc.pid) as cpu:
            _, stderr = proc.communicate()
            wall, end = time.perf_counter() - t0, time.time()
    _reap()
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader autograde {lab} failed:\n{stderr[-3000:]}")
    return _row(wall, cpu, breakdown(stderr, start, end))


def grade_once_zygote(course: Path, lab: str, env: dict[str, str], zygote: Any) -> dict:
    """The same run as ``grade_once``, in a fresh child of ``zygote`` (what ``--jobs N`` and Dask's workers do)."""
    _reap()
    log = course / f".zygote-{lab}.log"
    start, t0 = time.time(), time.perf_counter()
    args = ["autograde", lab, "--student=full", "--force", f"--Application.log_format={LOG_FORMAT}"]
    with ProcessCPU(zygote.proc.pid, count_root=False) as cpu:
        code = zygote.run(args, course, env, log)
        wall, end = time.perf_counter() - t0, time.time()
    _reap()
    said = log.read_text()
    if code != 0:
        raise RuntimeError(f"nbgrader autograde {lab} failed in the zygote's child:\n{said[-3000:]}")
    return _row(wall, cpu, breakdown(said, start, end))


def lab8_rule(tmp: Path, env: dict[str, str]) -> dict:
    """Lab 8 graded with its measurement at the smallest plan (the grader's rule) and at the lab's budget
    (``--GradingExecute.measurements=full``): the master, the master with a wrong ``verify_round`` and the untouched
    student copy; each run's seconds and every graded cell's score."""
    import nbformat
    from nbgrader.api import Gradebook

    lab = "lab08_real_models"
    course = tmp / "lab8"
    (course / "source").mkdir(parents=True)
    shutil.copy2(COURSE / "nbgrader_config.py", course)
    shutil.copytree(COURSE / "source" / lab, course / "source" / lab)
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", lab, "--force"],
        cwd=course,
        env=env,
        check=True,
        capture_output=True,
    )
    master = COURSE / "source" / lab / f"{lab}.ipynb"
    wrong = nbformat.read(master, as_version=4)
    for cell in wrong.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "verify_round":
            cell.source = "def verify_round(p, q, drafts, u):\n    return len(drafts), q[-1]  # keeps every draft\n"
    students = {
        "honest": nbformat.read(master, as_version=4),
        "wrong": wrong,
        "untouched": nbformat.read(COURSE / f"{lab}.ipynb", as_version=4),
    }
    for who, nb in students.items():
        (course / "submitted" / who / lab).mkdir(parents=True)
        nbformat.write(nb, course / "submitted" / who / lab / f"{lab}.ipynb")
    out: dict = {}
    for mode in ("smallest", "full"):
        out[mode] = {"seconds": {}, "scores": {}}
        for who in students:
            t0 = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "nbgrader",
                    "autograde",
                    lab,
                    f"--student={who}",
                    "--force",
                    f"--GradingExecute.measurements={mode}",
                ],
                cwd=course,
                env=env,
                capture_output=True,
                text=True,
            )
            out[mode]["seconds"][who] = round(time.perf_counter() - t0, 1)
            if proc.returncode != 0:
                raise RuntimeError(f"nbgrader autograde {lab} ({mode}) failed:\n{proc.stderr[-3000:]}")
            print("lab8 rule", mode, who, out[mode]["seconds"][who], flush=True)
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for who in students:
                grades = gb.find_submission_notebook(lab, lab, who).grades
                out[mode]["scores"][who] = {g.name: [g.auto_score, g.max_score] for g in grades}
    out["same_scores"] = out["smallest"]["scores"] == out["full"]["scores"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labs", nargs="*", default=list(LABS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--compare", help="also grade with the specdec_lite of this folder (an earlier checkout), run for run"
    )
    ap.add_argument("--compare-label", help="what DIR is, in a few words (e.g. the commit it was taken from)")
    ap.add_argument("--lab8-rule", action="store_true", help="also grade Lab 8 at its smallest and full measurement")
    ap.add_argument(
        "--zygote", action="store_true", help="also grade each run in a child of a zygote (classroom.zygote), in turn"
    )
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    envs = {"this": nbgrader_env()}
    if args.compare:
        envs["compared"] = {
            **envs["this"],
            "PYTHONPATH": os.pathsep.join([str(Path(args.compare).resolve()), envs["this"]["PYTHONPATH"]]),
        }
    out: dict = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "specdec_lite": {"this": str(ROOT), "compared": args.compare, "compared_label": args.compare_label},
        "labs": {},
    }
    zygote = None
    if args.zygote:
        from specdec_lite.classroom.zygote import Zygote

        zygote = Zygote(envs["this"])
        STAYING.add(zygote.proc.pid)
        out["specdec_lite"]["zygote"] = "this checkout, each run in a fresh child of one zygote"
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        course = course_copy(Path(tmp), args.labs, envs["this"])
        for lab in args.labs:
            ways = [*envs, *(["zygote"] if zygote else [])]
            runs: dict[str, list] = {name: [] for name in ways}
            for _ in range(args.runs):  # the ways in turn, so that all meet the same load
                for name in ways:
                    load = os.getloadavg()[0]
                    if name == "zygote":
                        row = grade_once_zygote(course, lab, envs["this"], zygote)
                    else:
                        row = grade_once(course, lab, envs[name])
                    runs[name].append({**row, "load_before": round(load, 2)})
            out["labs"][lab] = {}
            for name, rows in runs.items():
                median = {k: statistics.median(r[k] for r in rows) for k in KEYS}
                median["parts_s"] = {k: statistics.median(r["parts_s"][k] for r in rows) for k in rows[0]["parts_s"]}
                out["labs"][lab][name] = {"runs": rows, "median": median}
                print(lab, name, json.dumps(median), "loads", [r["load_before"] for r in rows], flush=True)
        if args.lab8_rule:
            out["lab8_rule"] = lab8_rule(Path(tmp), envs["this"])
    if zygote is not None:
        zygote.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
