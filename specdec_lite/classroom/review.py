"""What a student's own cells do that the checks cannot stop in-process: listed for a person to review.

The checks run in the student's kernel, beside the student's code, so code that rebuilds a
switched-off function from its code object, imports a second copy of the package, starts
a subprocess, reads a check's frame or opens a database could still fool them (the
sandbox keeps it from reaching anything outside that kernel). ``suspicious(nb)`` reads the
code cells the student wrote (not the read-only cells of the lab) and names each such
construct found, with the cell (cells as the lab ships them are skipped: the setup cell
installs with ``subprocess``); ``report`` prints them per student. A line is a reason to
read the notebook, not a judgement: a plain ``import subprocess`` is listed too.
"""

from __future__ import annotations

import re

from nbformat.notebooknode import NotebookNode

#: (what it can do, pattern in the student's code)
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (what, re.compile(rx))
    for what, rx in [
        ("code objects (rebuilding a function)", r"__code__|types\.(?:FunctionType|CodeType)|\bFunctionType\("),
        ("a second import of a module", r"importlib|__import__|sys\.modules|spec_from_file_location"),
        (
            "subprocesses or process pools",
            r"\bsubprocess\b|multiprocessing|concurrent\.futures|os\.(?:fork|system|exec|spawn|popen)",
        ),
        (
            "frame inspection",
            r"_getframe|\bf_locals\b|\bf_back\b|\bf_globals\b|inspect\.(?:stack|currentframe)|gc\.get_referr",
        ),
        ("database or grader files", r"sqlite3|gradebook|\bnbgrader\b"),
        (
            "IPython or interpreter hooks (display, events, transformers, tracing)",
            r"ast_node_interactivity|input_transformers|events\.register|set_custom_exc|displayhook"
            r"|sys\.settrace|sys\.setprofile|addaudithook",
        ),
        ("the grading lock or the checks' internals", r"_lock\b|\b_HELD\b|_SESSION|_reseal|_METHODS|ctypes"),
    ]
]


def _student_cells(nb: NotebookNode, master: NotebookNode) -> list[tuple[int, NotebookNode]]:
    shipped = {c.source.strip() for c in master.cells if c.get("cell_type") == "code"}
    out = []
    for i, cell in enumerate(nb.cells, start=1):
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code" or cell.source.strip() in shipped:
            continue
        if not (meta.get("locked") and not meta.get("solution")):
            out.append((i, cell))
    return out


def suspicious(nb: NotebookNode, master: NotebookNode) -> list[str]:
    """One line per kind of construct in the student's code cells (not the lab's own): ``what (cells 4, 9)``."""
    found: dict[str, list[int]] = {}
    for i, cell in _student_cells(nb, master):
        for what, rx in PATTERNS:
            if rx.search(cell.source):
                found.setdefault(what, []).append(i)
    return [f"{what} (cell{'s' if len(c) > 1 else ''} {', '.join(map(str, c))})" for what, c in found.items()]
