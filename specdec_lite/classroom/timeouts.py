"""How long one cell of each lab may run while it is graded.

nbclient (which nbgrader's autograde uses) stops a cell that runs longer than its timeout;
the grader here then records the cell as timed out and goes on (see ``execute``). The
limits are per cell and per lab, measured with ``benchmarks/grading_runs.py``: a cell of
Labs 1-7 and 9 takes a few seconds on a 2-core machine with a core busy, and several times
that at a load average of 10 or more, so a minute leaves a wide margin, and a student's
endless loop costs two minutes (it is tried twice), not a quarter of an hour per
submission. Lab 8's slowest cell is its measurement section (``BUDGET_S = 300`` seconds at
most), hence its own limit. A new lab is one line here; a lab missing from the table gets
``DEFAULT_S``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .._i18n import _

#: Seconds one cell of the lab may run while graded.
CELL_TIMEOUT_S: dict[str, int] = {
    "lab01_markov_chains": 60,
    "lab02_unbiased": 60,
    "lab03_rejections": 60,
    "lab04_optimality": 60,
    "lab05_tradeoff": 60,
    "lab06_batch": 60,
    "lab07_lookahead": 60,
    "lab08_real_models": 420,
    "lab09_bugs": 60,
}

#: The limit of a lab that the table does not list.
DEFAULT_S = 120


def cell_timeout(lab: str, table: dict[str, int] | None = None) -> int:
    """The per-cell timeout, in seconds, of ``lab`` (``table`` defaults to ``CELL_TIMEOUT_S``)."""
    table = CELL_TIMEOUT_S if table is None else table
    return int(table.get(lab, DEFAULT_S))


#: The committed measurement of grading runs (``benchmarks/grading_runs.py`` writes it).
GRADING_RUNS = Path(__file__).resolve().parents[2] / "benchmarks" / "grading_runs.json"


def grading_runs(path: Path = GRADING_RUNS) -> dict[str, Any]:
    """The measured grading runs: per lab autograde seconds and slowest cell, and the back-to-back loop."""
    return json.loads(Path(path).read_text())


#: The committed measurement of what one graded submission costs (``benchmarks/grading_cost.py`` writes it).
GRADING_COST = GRADING_RUNS.parent / "grading_cost.json"


def grading_cost(path: Path = GRADING_COST) -> dict[str, Any]:
    """One submission per lab graded at a time: wall and CPU seconds, by part, now and with an earlier package;
    and Lab 8 graded with its measurement at the smallest plan and at the lab's budget, with the scores of each."""
    return json.loads(Path(path).read_text())


#: A benchmark file's description of its machine: "x86_64, 2 CPU cores, Python 3.11.7" ("2 cores", no Python too).
_MACHINE = re.compile(r"(?P<arch>[^,]+), (?P<cores>\d+) (?:CPU )?cores?(?:, Python (?P<python>\S+))?")


def machine_text(machine: str) -> str:
    """A benchmark file's machine ("x86_64, 2 CPU cores, Python 3.11.7") in the reader's language: its words and
    punctuation (the architecture and the Python version are names, the same in every language)."""
    found = _MACHINE.fullmatch(machine)
    if found is None:
        raise ValueError(machine)
    if found["python"]:
        return _("{arch}, {cores} CPU cores, Python {python}").format(**found.groupdict())
    return _("{arch}, {cores} CPU cores").format(arch=found["arch"], cores=found["cores"])
