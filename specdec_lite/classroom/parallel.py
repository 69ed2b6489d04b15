"""Grade a class many submissions at a time: local jobs or a Dask cluster, one writer of the gradebook.

``grade_class`` does what ``grade.autograde_each`` does (every submission of each lab, one
``nbgrader autograde`` run each, nbgrader's log in ``grade.log_path``) with submissions
graded at the same time:

* each submission is a job (``job_for``): its files, the lab's source files, the course's
  ``nbgrader_config.py`` and a copy of its gradebook with the labs and no student
  (``template_gradebook``). ``worker.grade_submission`` grades it in a scratch course, in the
  sandbox, and returns values; it never writes the course.
* The jobs run on ``jobs`` local threads, each driving one ``nbgrader`` process pinned to one
  core (``LocalPool``), or on a Dask cluster (``cluster.connect``): the same function, the
  same jobs, the same results.
* The instructor's process is the one writer: it checks each result (``check_result``: a
  result is as hostile as any output) and writes it (``merge``): the autograded folder, and
  in the gradebook exactly the values nbgrader wrote in the scratch one. The gradebook ends
  up as a one-at-a-time run leaves it.
* What needs grading is decided as nbgrader decides it (``needs_grading``): a submission
  graded before is skipped unless ``force`` or a newer ``timestamp.txt``. So after Ctrl-C
  (``stop``: the jobs not finished are dropped, nothing half-written), the next run grades
  the rest.
"""

from __future__ import annotations

import math
import os
import queue
import signal
import sqlite3
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .._i18n import _
from .grade import log_path
from .progress import Progress
from .release import COURSE, masters
from .worker import RESULT_KEYS, Job, Result, grade_submission

#: Most files and bytes a result may bring back (an autograded notebook's outputs are cut at 16 MiB).
MAX_FILES = 1000
MAX_RESULT_BYTES = 256 << 20
#: Longest auto comment kept (nbgrader writes "No response." or nothing).
MAX_COMMENT = 10_000
_STUDENT_TABLES = ("comment", "grade", "submitted_notebook", "submitted_assignment", "student")


class ResultRefused(ValueError):
    """A grading job's result that is not what a job returns; nothing of it is written."""


def course_dir(course: Path) -> Any:
    """nbgrader's ``CourseDirectory`` of ``course``, configured by its ``nbgrader_config.py``."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import Config, PyFileConfigLoader

    config = Config()
    if (Path(course) / "nbgrader_config.py").is_file():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return CourseDirectory(config=config, root=str(Path(course).resolve()))


def template_gradebook(course: Path) -> bytes:
    """The course's gradebook with its labs, cells and due dates, and no student: each job's starting point."""
    with tempfile.TemporaryDirectory(prefix="specdec-template-") as tmp:
        copy = Path(tmp) / "gradebook.db"
        src = sqlite3.connect(f"file:{Path(course) / 'gradebook.db'}?mode=ro", uri=True)
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
            for table in _STUDENT_TABLES:
                dst.execute(f"DELETE FROM {table}")  # noqa: S608 - the table names are this module's
            dst.commit()
            dst.execute("VACUUM")
        finally:
            src.close()
            dst.close()
        return copy.read_bytes()


def _files(folder: Path) -> dict[str, bytes]:
    skip = {".ipynb_checkpoints", "__pycache__"}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not skip & set(p.relative_to(folder).parts)
    }


def needs_grading(cd: Any, lab: str, student: str, notebooks: Sequence[str], force: bool) -> bool:
    """Whether nbgrader's ``autograde`` would grade this submission now (its ``init_destination``)."""
    dest = Path(cd.format_path(cd.autograded_directory, student, lab))
    if force or not dest.exists() or any(not (dest / f"{nb}.ipynb").exists() for nb in notebooks):
        return True
    new = cd.get_existing_timestamp(cd.format_path(cd.submitted_directory, student, lab))
    old = cd.get_existing_timestamp(str(dest))
    return new is not None and old is not None and new > old


def _prior(gb: Any, lab: str, student: str) -> tuple[dict[str, float], float | None]:
    """The manual scores and the extension the course holds for this submission (nbgrader's scoring reads them)."""
    from nbgrader.api import MissingEntry

    try:
        sub = gb.find_submission(lab, student)
    except MissingEntry:
        return {}, None
    manual = {f"{nb.name}/{g.name}": g.manual_score for nb in sub.notebooks for g in nb.grades}
    ext = sub.extension.total_seconds() if sub.extension is not None else None
    return {k: v for k, v in manual.items() if v is not None}, ext


def job_for(course: Path, lab: str, student: str, common: dict[str, Any], gb: Any, sandboxed: bool) -> Job:
    """One submission as a grading job (plain values only)."""
    manual, extension = _prior(gb, lab, student)
    return {
        **common[lab],
        "lab": lab,
        "student": student,
        "submission": _files(Path(course) / "submitted" / student / lab),
        "sandboxed": sandboxed,
        "manual": manual,
        "extension_s": extension,
        "course": str(Path(course).resolve()),
    }


def _bad(why: str) -> ResultRefused:
    return ResultRefused(_("the grading job's result was refused: {why}").format(why=why))


def _number(x: Any, top: float | None = None) -> bool:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
    return ok and (top is None or x <= top)


def check_result(result: Any, job: Job, cells: dict[str, Any]) -> Result:
    """``result`` if it has the shape and sizes of a job's result for ``job``, else ``ResultRefused``.

    ``cells``: ``{"grades": {(notebook, name): max score}, "comments": {(notebook, name)}, "notebooks": {...}}``
    of the lab in the course's gradebook; a result may only name those.
    """
    if not isinstance(result, dict) or set(result) != set(RESULT_KEYS):
        raise _bad(_("not the keys of a result"))
    for key, kind in RESULT_KEYS.items():
        if not isinstance(result[key], kind) or isinstance(result[key], bool):
            raise _bad(_("{key} is not of its type").format(key=key))
    if (result["lab"], result["student"]) != (job["lab"], job["student"]):
        raise _bad(_("it names another submission"))
    if len(result["log"]) > 4 * (1 << 20):
        raise _bad(_("its log is too long"))
    if len(result["files"]) > MAX_FILES:
        raise _bad(_("too many files"))
    total, seen = 0, set()
    for entry in result["files"]:
        if not (isinstance(entry, list) and len(entry) == 3):
            raise _bad(_("a file entry is not [path, mode, bytes]"))
        rel, mode, data = entry
        if not (isinstance(rel, str) and isinstance(mode, int) and isinstance(data, bytes)):
            raise _bad(_("a file entry is not [path, mode, bytes]"))
        path = PurePosixPath(rel)
        if not rel or path.is_absolute() or any(p in ("", ".", "..") for p in path.parts) or "\\" in rel:
            raise _bad(_("a file path leaves its folder: {path}").format(path=repr(rel)))
        if rel in seen or not 0 <= mode <= 0o777:
            raise _bad(_("a file is named twice or has a wrong mode: {path}").format(path=repr(rel)))
        seen.add(rel)
        total += len(data)
    if total > MAX_RESULT_BYTES:
        raise _bad(_("its files are too large"))
    for row in result["grades"]:
        if not (isinstance(row, list) and len(row) == 4 and tuple(row[:2]) in cells["grades"]):
            raise _bad(_("a grade names no graded cell of the lab"))
        top = cells["grades"][tuple(row[:2])]
        if not ((row[2] is None or _number(row[2], top)) and isinstance(row[3], bool)):
            raise _bad(_("a grade is not a score between 0 and the cell's points"))
    for row in result["comments"]:
        if not (isinstance(row, list) and len(row) == 3 and tuple(row[:2]) in cells["comments"]):
            raise _bad(_("a comment names no cell of the lab"))
        if not (row[2] is None or (isinstance(row[2], str) and len(row[2]) <= MAX_COMMENT)):
            raise _bad(_("a comment is not a short text"))
    for row in result["penalties"]:
        if not (isinstance(row, list) and len(row) == 2 and row[0] in cells["notebooks"]):
            raise _bad(_("a late penalty names no notebook of the lab"))
        if not (row[1] is None or _number(row[1])):
            raise _bad(_("a late penalty is not a number"))
    return result


def lab_cells(gb: Any, lab: str) -> dict[str, Any]:
    """The graded cells, comment cells and notebooks of ``lab`` in the course's gradebook (``check_result``)."""
    assignment = gb.find_assignment(lab)
    grades, comments = {}, set()
    for nb in assignment.notebooks:
        for cell in nb.grade_cells:
            grades[(nb.name, cell.name)] = float(cell.max_score)
        for cell in nb.solution_cells:
            comments.add((nb.name, cell.name))
    return {"grades": grades, "comments": comments, "notebooks": {nb.name for nb in assignment.notebooks}}


def merge(cd: Any, gb: Any, result: Result) -> None:
    """Write a checked result into the course: the autograded folder, then the gradebook, as nbgrader would."""
    from nbgrader.utils import rmtree

    lab, student = result["lab"], result["student"]
    gb.update_or_create_student(student)
    stamp = cd.get_existing_timestamp(cd.format_path(cd.submitted_directory, student, lab))
    with warnings.catch_warnings():  # nbgrader's add_submission warns of SQLAlchemy's autoflush, as in its own runs
        warnings.simplefilter("ignore")
        gb.update_or_create_submission(lab, student, **({"timestamp": stamp} if stamp else {}))
    dest = Path(cd.format_path(cd.autograded_directory, student, lab))
    if dest.exists():
        rmtree(str(dest))
    for rel, mode, data in result["files"]:
        path = dest / PurePosixPath(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, mode)
    for notebook, penalty in result["penalties"]:
        gb.find_submission_notebook(notebook, lab, student).late_submission_penalty = penalty
    for notebook, name, score, manual in result["grades"]:
        grade = gb.find_grade(name, notebook, lab, student)
        grade.auto_score, grade.needs_manual_grade = score, manual
    for notebook, name, text in result["comments"]:
        gb.find_comment(name, notebook, lab, student).auto_comment = text
    gb.db.commit()


class LocalPool:
    """``jobs`` grading jobs at a time on this machine, each pinned to one core (``pin``)."""

    def __init__(self, jobs: int, pin: bool = True) -> None:
        self.pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grade")
        cores = sorted(os.sched_getaffinity(0)) if pin and hasattr(os, "sched_getaffinity") else []
        self.cores: queue.Queue = queue.Queue()
        for i in range(jobs):
            self.cores.put(cores[i % len(cores)] if cores else None)

    def _run(self, job: Job) -> Result:
        core = self.cores.get()
        try:
            return grade_submission({**job, "core": core})
        finally:
            self.cores.put(core)

    def submit(self, job: Job) -> Any:
        """A future of ``grade_submission(job)``."""
        return self.pool.submit(self._run, job)

    def close(self) -> None:
        from .worker import stop_running

        self.pool.shutdown(wait=False, cancel_futures=True)
        stop_running()


class DaskPool:
    """Grading jobs sent to a Dask cluster through ``client`` (``cluster.connect``, or a ``LocalCluster``'s)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, job: Job) -> Any:
        """A Dask future of ``grade_submission(job)`` (run once per submission: ``pure=False``)."""
        return self.client.submit(
            grade_submission, job, pure=False, key=f"grade-{job['lab']}-{job['student']}-{time.monotonic_ns()}"
        )

    def close(self) -> None:
        pass


@dataclass
class Outcome:
    """What grading a class did: ``{lab: {student: exit status}}``, and whether it was stopped before the end."""

    status: dict[str, dict[str, int]] = field(default_factory=dict)
    stopped: bool = False
    graded: int = 0
    failed: int = 0
    left: int = 0
    merged: list[tuple[str, str]] = field(default_factory=list)
    merge_s: float = 0.0  #: seconds the instructor's process spent checking and writing results


def _failure_log(student: str, lab: str, why: str) -> str:
    return f"=== {student}/{lab} (grading job failed) ===\n[AutogradeApp | ERROR] {why}\n"


def grade_class(
    course: Path = COURSE,
    labs: Sequence[str] | None = None,
    student: str | None = None,
    force: bool = False,
    sandboxed: bool = True,
    jobs: int = 2,
    client: Any = None,
    progress: bool | None = None,
    on_merged: Callable[[str, str], None] | None = None,
) -> Outcome:
    """Grade every submission of each lab, ``jobs`` at a time here or on the Dask cluster of ``client``.

    Returns the exit status of nbgrader per submission (as ``grade.autograde_each``), and
    whether Ctrl-C stopped the class (what was graded before stays graded).
    """
    from nbgrader.api import Gradebook

    course = Path(course)
    known = [m.stem for m in masters(course)]
    unknown = sorted(set(labs or ()) - set(known))
    if unknown:
        raise ValueError(f"labs: no master for {unknown} in {course / 'source'}")
    cd = course_dir(course)
    out = Outcome()
    todo: list[tuple[str, str]] = []
    logs: dict[str, dict[str, str]] = {}
    config = (course / "nbgrader_config.py").read_text() if (course / "nbgrader_config.py").is_file() else ""
    common: dict[str, Any] = {}
    with Gradebook(cd.db_url, cd.course_id) as gb:
        for lab in labs or known:
            pattern = f"{student}/{lab}" if student else f"*/{lab}"
            students = sorted(p.parent.name for p in (course / "submitted").glob(pattern) if p.is_dir())
            if not students:
                continue
            out.status[lab], logs[lab] = {}, {}
            notebooks = [nb.name for nb in gb.find_assignment(lab).notebooks] if _has(gb, lab) else [lab]
            for who in students:
                if needs_grading(cd, lab, who, notebooks, force):
                    todo.append((lab, who))
                else:
                    out.status[lab][who] = 0
                    logs[lab][who] = f"=== {who}/{lab} (autograded before: skipped) ===\n"
        template = template_gradebook(course) if todo else b""
        for lab in {lab for lab, _who in todo}:
            common[lab] = {"config": config, "gradebook": template, "source": _files(course / "source" / lab)}
        cells = {lab: lab_cells(gb, lab) for lab in common if _has(gb, lab)}
        pool: Any = DaskPool(client) if client is not None else LocalPool(jobs)
        done: queue.Queue = queue.Queue()
        stop = threading.Event()
        previous = _on_sigint(stop)
        bar = Progress(len(todo), progress)
        futures = {}
        try:
            for lab, who in todo:
                fut = pool.submit(job_for(course, lab, who, common, gb, sandboxed))
                futures[fut] = (lab, who)
                fut.add_done_callback(done.put)
            left = len(futures)
            while left and not stop.is_set():
                try:
                    fut = done.get(timeout=0.2)
                except queue.Empty:
                    continue
                left -= 1
                lab, who = futures[fut]
                try:
                    result = fut.result()
                    if lab not in cells:
                        raise _bad(_("the lab is not in the gradebook (run: nbgrader generate_assignment)"))
                    check_result(result, {"lab": lab, "student": who}, cells[lab])
                except Exception as err:  # noqa: BLE001 - a job's failure is that submission's, told in the log
                    if stop.is_set():
                        break
                    out.status[lab][who] = 1
                    logs[lab][who] = _failure_log(who, lab, f"{type(err).__name__}: {err}")
                    out.failed += 1
                    bar.step(False)
                    continue
                if stop.is_set():
                    break
                start = time.perf_counter()
                merge(cd, gb, result)
                out.merge_s += time.perf_counter() - start
                out.merged.append((lab, who))
                if on_merged is not None:
                    on_merged(lab, who)
                out.status[lab][who] = result["returncode"]
                logs[lab][who] = f"=== {who}/{lab} (nbgrader exited with {result['returncode']}) ===\n{result['log']}"
                out.graded += result["returncode"] == 0
                out.failed += result["returncode"] != 0
                bar.step(result["returncode"] == 0)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            out.stopped = stop.is_set()
            if out.stopped:
                for fut in futures:
                    fut.cancel()
            pool.close()
            bar.close()
            out.left = sum(who not in out.status[lab] for lab, who in todo)
            for lab, parts in logs.items():
                log = log_path(course, lab)
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text("".join(parts[who] for who in sorted(parts)))
    return out


def _has(gb: Any, lab: str) -> bool:
    from nbgrader.api import MissingEntry

    try:
        gb.find_assignment(lab)
    except MissingEntry:
        return False
    return True


def _on_sigint(stop: threading.Event) -> Any:
    """Ctrl-C sets ``stop`` (the loop ends after the submission being written); the old handler, to put back."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    return signal.signal(signal.SIGINT, handler)


#: The committed measurement of grading a class each way (``benchmarks/grading_class.py`` writes it).
CLASS_RUNS = Path(__file__).resolve().parents[2] / "benchmarks" / "grading_class.json"


def class_runs(path: Path = CLASS_RUNS) -> dict[str, Any]:
    """The measured grading of a synthetic class: per lab and way, submissions per minute, speed-up, CPU seconds."""
    import json

    return json.loads(Path(path).read_text())


#: The columns of ``class_runs_table``: the ways a class is graded, each as its time for the whole class.
CLASS_WAYS = ("one_at_a_time", "jobs1", "jobs2", "dask1", "dask2", "dask100_predicted")


def class_runs_table(bench: dict[str, Any], titles: dict[str, str] | None = None) -> str:
    """``class_runs()`` as a Markdown table in the reader's language: per lab, the predicted minutes of a class of
    ``class_size`` graded each way, ``--jobs 2``'s speed-up and the machine's CPU seconds per submission, and the
    course's sum (its speed-up is that of the sums; a CPU time per submission is per lab). ``titles`` names each
    lab as the reader's edition does (its title); without it, by its file's id."""
    names = {
        "one_at_a_time": _("one at a time (`--jobs 1`)"),
        "jobs1": _("1 job"),
        "jobs2": _("`--jobs 2`"),
        "dask1": _("Dask, 1 worker"),
        "dask2": _("Dask, 2 workers"),
        "dask100_predicted": _("Dask, {workers} workers (predicted)").format(workers=bench["workers_predicted"]),
    }
    ways = [w for w in CLASS_WAYS if any(w in rows for rows in bench["labs"].values())]
    header = [
        _("Lab"),
        *(names[w] for w in ways),
        _("`--jobs 2`: speed-up"),
        _("`--jobs 2`: CPU seconds per submission (whole machine)"),
    ]
    rows = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]

    def minutes(x: float | None) -> str:
        return "—" if x is None else _("{minutes:.1f} min").format(minutes=x)

    for lab, measured in bench["labs"].items():
        jobs2 = measured.get("jobs2", {})
        cells = [minutes(measured.get(w, {}).get("class_min")) for w in ways]
        speedup = f"{jobs2['speedup']:.2f}×" if jobs2.get("speedup") else "—"
        cpu = f"{jobs2['cpu_s_per_submission']:.1f}" if "cpu_s_per_submission" in jobs2 else "—"
        name = titles[lab] if titles and lab in titles else f"`{lab}`"
        rows.append(f"| {name} | " + " | ".join([*cells, speedup, cpu]) + " |")
    course = bench["course_min"]
    total = [minutes(course.get(w)) for w in ways]
    one, jobs2 = course.get("one_at_a_time"), course.get("jobs2")
    speedup = f"{one / jobs2:.2f}×" if one and jobs2 else "—"
    rows.append("| " + " | ".join([_("**the course**"), *total, speedup, "—"]) + " |")
    return "\n".join(rows)
