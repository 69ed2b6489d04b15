"""Teaching with the book: student copies of the labs, and the exercises of every chapter.

* ``python -m specdec_lite.classroom strip notebooks/ --out student/`` writes valid
  notebooks without solution code; run, each check right after a stub says "Not yet"
  instead of crashing.
* Each lab's coding exercises follow the convention the command relies on: a code cell
  tagged ``solution`` followed by a cell that calls a ``check_`` function.
* Every chapter ends with an "Exercises" section holding the three kinds described in
  ``book/instructors.md``: pencil-and-paper (dropdown solution), coding (names the
  ``check_`` functions its lab calls) and exploration (a question for a widget).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import specdec_lite.exercises as exercises
from specdec_lite.classroom import (
    MARKDOWN_STUB,
    STUB_MARK,
    STUDENT_NOTE,
    is_solution,
    strip_folder,
    strip_notebook,
    stub_source,
)

ROOT = Path(__file__).resolve().parents[1]
LABS = sorted((ROOT / "notebooks").glob("lab[0-9][0-9]_*.ipynb"))
CHAPTERS = sorted((ROOT / "book").glob("ch[0-9][0-9]_*.md"))

SOLUTION = '''import numpy as np

@np.vectorize
def residual_law(p: np.ndarray,
                 q: np.ndarray) -> np.ndarray:
    """The normalised positive part of q - p."""
    # clip, then normalise
    d = np.maximum(q - p, 0)
    return d / d.sum()

def tv(p, q): return 0.5 * np.abs(p - q).sum()

tvs = np.zeros(3)  # per position
answer = tvs.sum() + 1
for k in range(3):
    answer += k
answer'''


def test_stub_keeps_signatures_and_drops_the_work():
    stub = stub_source(SOLUTION)
    ast.parse(stub)
    for kept in [
        "import numpy as np",
        "@np.vectorize",
        "def residual_law(p: np.ndarray,\n                 q: np.ndarray) -> np.ndarray:",
        '"""The normalised positive part of q - p."""',
        "def tv(p, q):",
        "tvs = None  # YOUR CODE HERE",
        "answer = None  # YOUR CODE HERE",
    ]:
        assert kept in stub, kept
    assert stub.count("raise NotImplementedError") == 2
    assert stub.count(STUB_MARK) == 4
    assert stub.rstrip().endswith("\nanswer"), "the cell still shows its value"
    for gone in ["np.maximum", "d.sum()", "0.5 * np.abs", "np.zeros", "clip", "per position", "for k", "+= k"]:
        assert gone not in stub, gone


def test_stub_of_nothing_recognisable():
    assert stub_source("print(1 +") == STUB_MARK  # not even Python: the student starts from scratch
    assert stub_source("print('hi')") == STUB_MARK


def test_stub_functions_raise_not_implemented():
    namespace: dict = {}
    exec(stub_source(SOLUTION), namespace)
    with pytest.raises(NotImplementedError):
        namespace["tv"](1, 2)
    assert namespace["answer"] is None
    assert namespace["residual_law"].__doc__ is None or "normalised" in str(namespace["residual_law"].__doc__)


def _lab() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# Lab\n\n[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            "(https://colab.research.google.com/github/o/r/blob/main/notebooks/lab.ipynb)\n\nIntro."
        ),
        nbformat.v4.new_code_cell("def f(x):\n    return 2 * x", metadata={"tags": ["solution"]}),
        nbformat.v4.new_code_cell("check_f(f)", outputs=[nbformat.v4.new_output("stream", text="Correct.")]),
        nbformat.v4.new_markdown_cell("Because 2x.", metadata={"tags": ["solution"]}),
    ]
    return nb


def test_strip_notebook():
    nb = _lab()
    student = strip_notebook(nb)
    nbformat.validate(student)
    assert "return 2 * x" in nb.cells[1].source, "the original is not modified"
    assert "return 2 * x" not in student.cells[1].source and "def f(x):" in student.cells[1].source
    assert student.cells[2].outputs == [] and student.cells[2].source == "check_f(f)"
    assert student.cells[3].source == MARKDOWN_STUB
    assert "colab.research.google.com" not in student.cells[0].source, "the badge would open the solutions"
    assert student.cells[0].source.startswith("# Lab") and STUDENT_NOTE in student.cells[0].source


def test_strip_folder_refuses_to_overwrite_the_labs(tmp_path):
    with pytest.raises(ValueError, match="out"):
        strip_folder(tmp_path, tmp_path)
    with pytest.raises(ValueError, match="src"):
        strip_folder(tmp_path / "missing", tmp_path / "out")


@pytest.fixture(scope="module")
def student_copies(tmp_path_factory) -> Path:
    if not LABS:
        pytest.skip("no labs yet")
    out = tmp_path_factory.mktemp("student")
    proc = subprocess.run(
        [sys.executable, "-m", "specdec_lite.classroom", "strip", str(ROOT / "notebooks"), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{len(list((ROOT / 'notebooks').glob('*.ipynb')))} student copies" in proc.stderr
    return out


def _solution_lines(source: str) -> set[str]:
    """Lines of a solution that do the work (not imports, signatures, docstrings)."""
    tree = ast.parse(source)
    keep = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep |= set(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0]
            keep |= set(range(node.lineno, first.lineno))
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                keep |= set(range(first.lineno, first.end_lineno + 1))
            keep |= {d.lineno for d in node.decorator_list}
    lines = source.splitlines()
    return {ln.strip() for i, ln in enumerate(lines, 1) if i not in keep and len(ln.strip()) > 3}


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_student_copy_has_no_solution_code(student_copies, lab):
    nb = nbformat.read(lab, as_version=4)
    student = nbformat.read(student_copies / lab.name, as_version=4)
    nbformat.validate(student)
    assert len(student.cells) == len(nb.cells)
    for original, copy in zip(nb.cells, student.cells, strict=True):
        if not is_solution(original):
            assert copy.source == original.source or original is nb.cells[0]
            continue
        if original.cell_type == "code":
            leaked = {ln for ln in _solution_lines(original.source) if ln in copy.source.splitlines()}
            leaked = {ln for ln in leaked if not ln.endswith(STUB_MARK) and not re.fullmatch(r"\w+", ln)}
            assert not leaked, f"{lab.name}: the student copy still contains {leaked}"
            ast.parse(copy.source)


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_lab_follows_the_exercise_convention(lab):
    """Solution cells exist, and each is checked right after by a check_ function of the package."""
    nb = nbformat.read(lab, as_version=4)
    solutions = [i for i, c in enumerate(nb.cells) if is_solution(c) and c.cell_type == "code"]
    assert solutions, f"{lab.name}: no code cell tagged 'solution'"
    known = _check_functions()
    for i in solutions:
        nxt = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
        called = re.findall(r"\b(check_\w+)\(", nxt.source) if nxt is not None and nxt.cell_type == "code" else []
        assert called, f"{lab.name}: the cell after solution cell {i} must call a check_ function"
        assert set(called) <= known, f"{lab.name}: {set(called) - known} are not in specdec_lite.exercises"


def _check_functions() -> set[str]:
    names = set()
    for info in pkgutil.iter_modules(exercises.__path__):
        mod = importlib.import_module(f"specdec_lite.exercises.{info.name}")
        names |= {n for n in vars(mod) if n.startswith("check_") and callable(getattr(mod, n))}
    return names


def _until_last_check(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    last = max(i + 1 for i, c in enumerate(nb.cells[:-1]) if is_solution(c))
    nb.cells = nb.cells[: last + 1]
    return nb


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_student_copy_says_not_yet(student_copies, lab, tmp_path):
    """Run the student copy (up to its last check): each check answers "Not yet", none crashes.

    Code that reuses a student's answer may fail until the student writes it (a student
    works top to bottom): only the checks themselves must answer.
    """
    from nbclient import NotebookClient

    nb = _until_last_check(nbformat.read(student_copies / lab.name, as_version=4))
    NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    checks = [i + 1 for i, c in enumerate(nb.cells[:-1]) if is_solution(c) and c.cell_type == "code"]
    for i in checks:
        outputs = nb.cells[i].outputs
        texts = [o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs]
        answered = next((k for k, t in enumerate(texts) if "Not yet." in t), None)
        errors = [k for k, o in enumerate(outputs) if o.output_type == "error"]
        if errors and (answered is None or errors[0] < answered):
            err = outputs[errors[0]]
            pytest.fail(f"{lab.name} cell {i}: the check crashed on a stub: {err.ename}: {err.evalue}")
        assert answered is not None, f"{lab.name} cell {i}: expected 'Not yet.' feedback, got {''.join(texts)!r}"


# --- chapters: three kinds of exercises --------------------------------------------------

FENCE = re.compile(
    r"^(?P<fence>:::+|```+)\{(?P<kind>exercise|solution)\}(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S
)


def exercises_of(text: str) -> tuple[list[dict], str]:
    """The exercises of a chapter's last section, classified; and that section's title."""
    headings = list(re.finditer(r"^## +(.+)$", text, re.M))
    if not headings:
        return [], ""
    last = headings[-1]
    section = text[last.end() :]
    found: dict[str, dict] = {}
    order = []
    for m in FENCE.finditer(section):
        body = m["body"]
        options = dict(re.findall(r"^:(\w+):\s*(.*)$", body, re.M))
        if m["kind"] == "exercise":
            label = options.get("label", f"#{len(order)}")
            found[label] = {"label": label, "body": body, "dropdown_solution": False}
            order.append(label)
        elif m["arg"].strip() in found and "dropdown" in options.get("class", ""):
            found[m["arg"].strip()]["dropdown_solution"] = True
    for ex in found.values():
        body = ex["body"]
        ex["checks"] = sorted(set(re.findall(r"\b(check_\w+)", body)))
        if ex["checks"]:
            ex["kind"] = "coding"
        elif re.search(r"\*Exploration\b|\bwidget\b|\bexplorer\b", body, re.I):
            ex["kind"] = "exploration"
        else:
            ex["kind"] = "pencil"
    return [found[label] for label in order], last[1].strip()


def test_exercise_classifier():
    text = """# Ch

## Exercises

:::{exercise}
:label: a
Compute $x$.
:::

:::{solution} a
:class: dropdown
1.
:::

:::{exercise}
:label: b
Write it in lab 9; check it with `check_thing`.
:::

:::{exercise}
:label: c
*Exploration (lab 9 widget).* What happens at 0?
:::
"""
    found, title = exercises_of(text)
    assert title == "Exercises"
    assert [(e["label"], e["kind"], e["dropdown_solution"]) for e in found] == [
        ("a", "pencil", True),
        ("b", "coding", False),
        ("c", "exploration", False),
    ]
    assert found[1]["checks"] == ["check_thing"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_ends_with_three_kinds_of_exercises(chapter):
    found, title = exercises_of(chapter.read_text(encoding="utf-8"))
    assert title == "Exercises", f"{chapter.name}: the last section must be '## Exercises', not {title!r}"
    kinds = {e["kind"] for e in found}
    assert {"pencil", "coding", "exploration"} <= kinds, f"{chapter.name}: exercise kinds {sorted(kinds)}"
    for e in found:
        if e["kind"] == "pencil":
            assert e["dropdown_solution"], f"{chapter.name}: exercise {e['label']} needs a dropdown solution"
        if e["kind"] == "exploration":
            assert "?" in e["body"], f"{chapter.name}: exploration {e['label']} must ask a question"
    known = _check_functions()
    number = re.match(r"ch(\d\d)_", chapter.name)[1]
    labs = sorted((ROOT / "notebooks").glob(f"lab{number}_*.ipynb"))
    for e in (e for e in found if e["kind"] == "coding"):
        assert set(e["checks"]) <= known, f"{chapter.name}: {set(e['checks']) - known} not in specdec_lite.exercises"
        assert labs, f"{chapter.name}: exercise {e['label']} points to lab {number}, which does not exist"
        lab_code = "\n".join(c.source for c in nbformat.read(labs[0], as_version=4).cells if c.cell_type == "code")
        missing = [c for c in e["checks"] if c not in lab_code]
        assert not missing, f"{chapter.name}: {labs[0].name} does not call {missing}"


def test_instructors_page_covers_every_chapter_and_lab():
    """book/instructors.md: a row per chapter (what it assumes) and per lab (how long it takes)."""
    page = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    for chapter in CHAPTERS:
        number = int(chapter.name[2:4])
        assert re.search(rf"^\| {number} · ", page, re.M), f"instructors.md: no row for chapter {number}"
    for lab in LABS:
        number = int(lab.name[3:5])
        assert re.search(rf"^\| Lab {number} · .*\| \d+ s", page, re.M), f"instructors.md: no timing for lab {number}"
    for section in ["What each chapter assumes", "How long the labs take", "A two-week plan", "A one-lecture plan"]:
        assert f"## {section}" in page
    assert "python -m specdec_lite.classroom strip notebooks/ --out student/" in page
