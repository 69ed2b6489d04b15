"""The labs as an nbgrader course: release the student copies, collect, grade and report.

``notebooks/`` is an nbgrader course directory (``notebooks/nbgrader_config.py``, one
master per lab in ``notebooks/source/<lab>/``). The command line::

    python -m specdec_lite.classroom release [--check]        # student copies from the masters
    python -m specdec_lite.classroom collect DOWNLOADS [--lab LAB]   # downloads -> submitted/
    python -m specdec_lite.classroom autograde [LAB ...] [--student S] [--force] [--unsandboxed]
                                   [--jobs N | --scheduler tls://HOST:PORT]   # one per core by default
    python -m specdec_lite.classroom report [LAB ...]         # every submission not fully graded

Modules: ``release`` (student copies and points), ``timeouts`` (each lab's per-cell limit),
``execute`` (nbgrader's Execute step that survives endless loops and dead kernels),
``sandbox`` (each graded kernel in bubblewrap, an unprivileged uid and prlimit's limits),
``scores`` (a graded cell's score from its check's outcome), ``restore`` (graded cells a
submission lost, put back), ``review`` (what the checks cannot stop in-process, for a
person), ``collect`` (placing downloaded notebooks), ``grade`` (autograde lab by lab,
student by student), ``parallel`` (many submissions at a time, locally or on Dask, the
instructor's process the gradebook's one writer), ``worker`` (one submission graded in a
scratch course, what a job runs), ``zygote`` (a process that imported nbgrader once and forks
each submission's run), ``progress`` (the instructor's progress bar), ``cluster`` (the Dask
scheduler: TLS, or plain TCP on loopback only) and ``report``.
The book's *For instructors* appendix runs the whole cycle.
"""

from __future__ import annotations

from .release import COURSE, generate, masters, nbgrader_env, points, release
from .timeouts import CELL_TIMEOUT_S, cell_timeout

__all__ = [
    "CELL_TIMEOUT_S",
    "COURSE",
    "cell_timeout",
    "generate",
    "main",
    "masters",
    "nbgrader_env",
    "points",
    "release",
]


def main(argv: list[str] | None = None) -> int:
    """The command line (``python -m specdec_lite.classroom``)."""
    from .cli import main as run

    return run(argv)
