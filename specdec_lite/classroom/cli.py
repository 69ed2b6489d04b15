"""The command line ``python -m specdec_lite.classroom``: release, collect, autograde, report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._i18n import _
from .release import COURSE, ZH_COURSE, masters, release


class UsageError(ValueError):
    """A wrong argument on the command line: printed as one line, exit status 2."""


def _check_course(course: Path) -> list[str]:
    """The labs of ``course``, or a ``UsageError`` when it is not a course directory."""
    if not course.is_dir():
        raise UsageError(f"--course: {course} is not a folder")
    if not (course / "source").is_dir():
        raise UsageError(f"--course: {course} is not an nbgrader course directory (no source/ folder)")
    return [m.stem for m in masters(course)]


def _check_labs(labs: Sequence[str], known: list[str]) -> None:
    unknown = [lab for lab in labs if lab not in known]
    if unknown:
        raise UsageError(f"no lab named {', '.join(map(repr, unknown))} (the labs: {', '.join(known) or 'none'})")


def _check_args(args: argparse.Namespace) -> None:
    """Every argument checked before any work: the course, the labs, the student id, the downloads."""
    from .collect import CollectError, check_root, check_student

    known = _check_course(args.course)
    _check_labs(list(getattr(args, "labs", None) or []) + ([args.lab] if getattr(args, "lab", None) else []), known)
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError(_("--jobs: grade at least one submission at a time"))
    if getattr(args, "scheduler", None) is not None:
        from .cluster import SchedulerRefused, check_address

        try:
            check_address(args.scheduler)
        except SchedulerRefused as err:
            raise UsageError(str(err)) from None
    if getattr(args, "student", None) is not None:
        try:
            check_student(args.student)
        except ValueError as err:
            raise UsageError(f"--student: {err}") from None
    if args.command == "collect":
        try:
            check_root(args.downloads)
        except CollectError as err:
            raise UsageError(str(err)) from None


def _release(args: argparse.Namespace) -> int:
    courses = [args.course]
    if args.course.resolve() == COURSE.resolve() and (ZH_COURSE / "source").is_dir():
        courses.append(ZH_COURSE)  # the Chinese labs are released with the English ones
    stale = []
    for course in courses:
        known = [m.stem for m in masters(course)]
        wanted = [lab for lab in args.labs or known if lab in known]
        for name in release(course, check=args.check, labs=wanted) if wanted else []:
            stale.append(name)
            print(f"{'out of date' if args.check else 'written'}: {course / (name + '.ipynb')}")
    if args.check and stale:
        print("run: python -m specdec_lite.classroom release", file=sys.stderr)
        return 1
    return 0


def _collect(args: argparse.Namespace) -> int:
    from .collect import collect, describe

    outcomes = collect(args.downloads, args.course, lab=args.lab)
    for out in sorted(outcomes, key=lambda o: (o.target is not None, o.source)):
        print(describe(out))
    missed = sum(o.target is None for o in outcomes)
    print(f"{len(outcomes) - missed} placed, {missed} not placed (listed above)")
    return 0


def _autograde(args: argparse.Namespace) -> int:
    from . import sandbox
    from .grade import autograde_each
    from .report import problems

    if not args.unsandboxed and args.scheduler is None and sandbox.missing():
        print(f"refusing to grade: the sandbox cannot run here: {sandbox.missing()}", file=sys.stderr)
        print("install bubblewrap, or add --unsandboxed to run students' code with your rights", file=sys.stderr)
        return 2
    for line in sandbox.statement(sandboxed=not args.unsandboxed):
        print(line)
    sandboxed = not args.unsandboxed
    if args.jobs is None:
        args.jobs = default_jobs()
    if args.jobs == 1 and args.scheduler is None:
        runs = autograde_each(
            args.course, args.labs, student=args.student, force=args.force, sandboxed=sandboxed, progress=None
        )
    else:
        outcome = _grade_class(args, sandboxed)
        runs = outcome.status
        if outcome.stopped:
            print(
                _(
                    "stopped: {graded} graded, {failed} failed, {left} not graded; run autograde again to grade the "
                    "rest"
                ).format(graded=outcome.graded, failed=outcome.failed, left=outcome.left),
                file=sys.stderr,
            )
            return 130
    for lab, codes in runs.items():
        bad = {s: c for s, c in codes.items() if c}
        failed = ", ".join(f"{s} ({c})" for s, c in bad.items())
        print(f"autograde {lab}: {'done' if not bad else f'nbgrader exited with an error for {failed}'}")
    for problem in problems(args.course, list(runs), feedback=False):
        if args.student in (None, problem.student):
            print(problem.line())
    return 0


def default_jobs() -> int:
    """Submissions graded at once by default: one per core this process may run on."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _grade_class(args: argparse.Namespace, sandboxed: bool):
    """The class graded ``--jobs`` at a time here, or on the Dask cluster of ``--scheduler``."""
    from .parallel import grade_class

    if args.scheduler is None:
        return grade_class(
            args.course, args.labs, student=args.student, force=args.force, sandboxed=sandboxed, jobs=args.jobs
        )
    from .cluster import connect

    with connect(args.scheduler) as client:
        return grade_class(
            args.course, args.labs, student=args.student, force=args.force, sandboxed=sandboxed, client=client
        )


def _report(args: argparse.Namespace) -> int:
    from .report import problems

    found = problems(args.course, args.labs or None)
    for problem in found:
        print(problem.line())
    print(f"{len(found)} to look at" if found else "every submission is autograded, with nothing to report")
    return 0


def default_course() -> Path:
    """The current folder when it is a course directory (holds ``nbgrader_config.py``), else ``notebooks/``."""
    here = Path.cwd()
    return here if (here / "nbgrader_config.py").is_file() else COURSE


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command."""
    parser = argparse.ArgumentParser(prog="python -m specdec_lite.classroom", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--course",
        type=Path,
        default=None,
        help="the nbgrader course directory (default: this folder if it is one, else notebooks/)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="write the student copies with nbgrader generate_assignment")
    rel.add_argument("labs", nargs="*", help="lab names (default: every master in source/)")
    rel.add_argument("--check", action="store_true", help="write nothing; exit 1 if a student copy is out of date")
    col = sub.add_parser("collect", help="place downloaded notebooks in submitted/<student>/<lab>/<lab>.ipynb")
    col.add_argument(
        "downloads",
        type=Path,
        help="a folder of downloads (one folder per student, or <student>_ files), or a class export .zip",
    )
    col.add_argument("--lab", help="collect only this lab (list the others)")
    aut = sub.add_parser("autograde", help="nbgrader autograde, lab by lab, then the problems found")
    aut.add_argument("labs", nargs="*", help="lab names (default: every lab with submissions)")
    aut.add_argument("--student", help="only this student")
    aut.add_argument("--force", action="store_true", help="grade again what was autograded before")
    aut.add_argument(
        "--unsandboxed",
        action="store_true",
        help="run students' code WITHOUT the sandbox, with your rights (only where bubblewrap cannot run)",
    )
    aut.add_argument(
        "--jobs",
        type=int,
        default=None,
        help=_(
            "grade this many submissions at once, one core each (default: one per core of this machine; 1: one plain "
            "nbgrader run after another)"
        ),
    )
    aut.add_argument(
        "--scheduler",
        default=None,
        help=_(
            "grade on a Dask cluster: tls://HOST:PORT (mutual TLS from Dask's configuration), or tcp:// on "
            "this machine only"
        ),
    )
    rep = sub.add_parser("report", help="every submission that failed to autograde or lacks a grade or feedback")
    rep.add_argument("labs", nargs="*", help="lab names (default: every lab)")
    for p in (rel, col, aut, rep):  # --course after the command too
        p.add_argument("--course", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.course = args.course or default_course()
    try:
        _check_args(args)
    except UsageError as err:
        print(f"{parser.prog} {args.command}: error: {err}", file=sys.stderr)
        return 2
    return {"release": _release, "collect": _collect, "autograde": _autograde, "report": _report}[args.command](args)
