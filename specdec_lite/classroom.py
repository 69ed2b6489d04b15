"""Student copies of the labs: every solution cell replaced by a stub.

A lab's coding exercise is a code cell tagged ``solution`` (it holds the working
answer) followed by a cell that calls a ``check_...`` function. The student copy keeps
everything else and turns each solution cell into a stub:

* imports are kept;
* a function keeps its signature and docstring, and its body becomes
  ``# YOUR CODE HERE`` / ``raise NotImplementedError``;
* a top-level variable the cell assigns becomes ``name = None  # YOUR CODE HERE``,
  and a bare name on the last line (shown as the cell's value) is kept;
* everything else (loops, comments, helper statements) is dropped.

The checks then answer "Not yet" (they never raise on a stub). A markdown cell tagged
``solution`` becomes "*Your answer here.*". Outputs are cleared, and the "Open in
Colab" badge is dropped: it would open the original lab, solutions included.

Command line::

    python -m specdec_lite.classroom strip notebooks/ --out student/
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SOLUTION_TAG = "solution"
STUB_MARK = "# YOUR CODE HERE"
MARKDOWN_STUB = "*Your answer here.*"
STUDENT_NOTE = (
    "*Student copy: the solution cells are replaced by stubs marked `# YOUR CODE HERE`. "
    "Upload it to Colab (File → Upload notebook) or open it in Jupyter.*"
)
_BADGE = re.compile(r"\[!\[Open in Colab\]\([^)]*\)\]\([^)]*\)\s*")


def is_solution(cell: Any) -> bool:
    """True for a cell tagged ``solution`` in its metadata."""
    return SOLUTION_TAG in (cell.get("metadata", {}).get("tags") or [])


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _stub_function(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str = "") -> list[str]:
    lines = source.splitlines()
    first = min([node.lineno, *[d.lineno for d in node.decorator_list]])
    body_start = node.body[0].lineno
    if body_start > node.lineno:
        header = lines[first - 1 : body_start - 1]
        # drop comment-only lines between the signature and the body: they may hint at the answer
        header = header[: node.lineno - first + 1] + [
            ln for ln in header[node.lineno - first + 1 :] if ln.strip() and not ln.strip().startswith("#")
        ]
    else:  # one-line ``def f(x): return x``: keep the signature only
        header = lines[first - 1 : node.lineno - 1] + [lines[node.lineno - 1].split(":", 1)[0] + ":"]
    inner = indent + " " * 4
    out = list(header)
    if ast.get_docstring(node, clean=False) is not None:
        doc = _segment(source, node.body[0]).splitlines()
        out += [inner + doc[0], *doc[1:]]
    out += [inner + STUB_MARK, inner + "raise NotImplementedError"]
    return out


def _stub_class(source: str, node: ast.ClassDef) -> list[str]:
    lines = source.splitlines()
    first = min([node.lineno, *[d.lineno for d in node.decorator_list]])
    out = lines[first - 1 : node.body[0].lineno - 1] or [lines[node.lineno - 1]]
    methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if ast.get_docstring(node, clean=False) is not None:
        out += ["    " + _segment(source, node.body[0])]
    for m in methods:
        out += _stub_function(source, m, indent="    ")
    if not methods:
        out += ["    " + STUB_MARK, "    pass"]
    return out


def _assigned_names(node: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names: list[str] = []
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.append(sub.id)
    return names


def stub_source(source: str) -> str:
    """The student's version of a solution cell's code (see the module docstring)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return STUB_MARK
    out: list[str] = []
    assigned: list[str] = []
    shown: str | None = None
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(_segment(source, node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += ([""] if out else []) + _stub_function(source, node)
        elif isinstance(node, ast.ClassDef):
            out += ([""] if out else []) + _stub_class(source, node)
        elif names := _assigned_names(node):
            assigned += [n for n in names if n not in assigned]
        elif i == len(tree.body) - 1 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Name):
            shown = node.value.id
    if assigned:
        out += ([""] if out else []) + [f"{name} = None  {STUB_MARK}" for name in assigned]
    if not out:
        out = [STUB_MARK]
    if shown:
        out.append(shown)
    return "\n".join(out)


def strip_notebook(nb: Any) -> Any:
    """A student copy of notebook ``nb`` (an nbformat NotebookNode); ``nb`` is not changed."""
    student = copy.deepcopy(nb)
    for k, cell in enumerate(student.cells):
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if k == 0 and cell.cell_type == "markdown" and _BADGE.search(cell.source):
            cell.source = _BADGE.sub("", cell.source).rstrip() + "\n\n" + STUDENT_NOTE
        if not is_solution(cell):
            continue
        if cell.cell_type == "code":
            cell.source = stub_source(cell.source)
        else:
            cell.source = MARKDOWN_STUB
    student.metadata.pop("widgets", None)
    return student


def strip_folder(src: Path, out: Path) -> list[Path]:
    """Write a student copy of every ``*.ipynb`` in ``src`` (not recursive) into ``out``."""
    import nbformat

    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise ValueError(f"src: not a folder: {src}")
    if out.resolve() == src.resolve():
        raise ValueError("out: must differ from src (the labs would lose their solutions)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(src.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        student = strip_notebook(nb)
        nbformat.validate(student)
        target = out / path.name
        nbformat.write(student, target)
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_lite.classroom", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    strip = sub.add_parser("strip", help="write student copies of the labs, without their solutions")
    strip.add_argument("src", type=Path, help="folder of lab notebooks, e.g. notebooks/")
    strip.add_argument("--out", type=Path, required=True, help="folder for the student copies, e.g. student/")
    args = parser.parse_args(argv)
    written = strip_folder(args.src, args.out)
    for path in written:
        print(path)
    print(f"{len(written)} student copies in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
