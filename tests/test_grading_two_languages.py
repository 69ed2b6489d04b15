"""One class, two languages: an English and a Chinese submission of Lab 1 graded together by the real nbgrader.

The course is the English one (``notebooks/nbgrader_config.py``, Lab 1's English master); ``ada`` submits
the English master (every answer right), ``li`` the Chinese master (``zh/notebooks/source``) with a total
variation that forgets the factor 1/2. Graded in the sandbox by ``python -m specdec_lite.classroom
autograde``: each gets exactly the points of her right answers, and li's feedback (nbgrader's
``generate_feedback``) is in Chinese, because her notebook's setup cell chose it, while ada's stays English.
One lab, two students: the cheapest class that shows it.
"""

from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from tests.grading_class import LAB, ROOT, _index, _run, text_of

pytestmark = pytest.mark.slow

#: Lab 1's two checks, 2 points each; li's tv (sum |p - q|) earns none.
POINTS = {"ada": 4.0, "li": 2.0}


@pytest.fixture(scope="module")
def graded() -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="specdec-two-languages-"))
    course = tmp / "notebooks"
    (course / "source").mkdir(parents=True)
    shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)
    (course / "roster.csv").write_text(
        "id,first_name,last_name,email\nada,Ada,L,ada@example.org\nli,Li,W,li@example.org\n"
    )
    nbg = [sys.executable, "-m", "nbgrader"]
    runs = {
        "generate": _run([*nbg, "generate_assignment", LAB, "--force"], course),
        "roster": _run([*nbg, "db", "student", "import", "roster.csv"], course),
    }
    ada = nbformat.read(ROOT / "notebooks" / "source" / LAB / f"{LAB}.ipynb", as_version=4)
    li = nbformat.read(ROOT / "zh" / "notebooks" / "source" / LAB / f"{LAB}.ipynb", as_version=4)
    li.cells[_index(li, "tv")].source = "def tv(p, q):\n    return np.abs(p - q).sum()"
    for student, nb in (("ada", ada), ("li", li)):
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
    # both at once (parallel.grade_class): the two-language class also runs the gradebook's one-writer merge
    runs["autograde"] = _run([sys.executable, "-m", "specdec_lite.classroom", "autograde", LAB, "--jobs", "2"], course)
    runs["feedback"] = _run([*nbg, "generate_feedback", LAB, "--force"], course)
    runs["export"] = _run([*nbg, "export", "--to", "grades.csv"], course)
    yield {"course": course, "runs": runs}
    shutil.rmtree(tmp, ignore_errors=True)


def _autograded(graded: dict, student: str) -> nbformat.NotebookNode:
    return nbformat.read(graded["course"] / "autograded" / student / LAB / f"{LAB}.ipynb", as_version=4)


def test_each_student_gets_exactly_her_points(graded):
    for name, run in graded["runs"].items():
        assert run.returncode == 0, f"{name}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    with (graded["course"] / "grades.csv").open() as f:
        scores = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    assert scores == POINTS


def test_the_chinese_submission_gets_chinese_feedback(graded):
    li, ada = text_of(_autograded(graded, "li")), text_of(_autograded(graded, "ada"))
    assert "还不对。对 p = " in li and "这是 sum |p - q|；TV 有一个因子 1/2" in li, li[-2000:]
    assert "正确。每个边缘分布都是前一个边缘分布" in li and "Not yet" not in li and "Correct." not in li
    assert "Correct. each marginal is the previous one" in ada and "Correct. TV is half" in ada
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in ada), "the English submission's outputs stay English"
    html = next((graded["course"] / "feedback" / "li" / LAB).glob("*.html")).read_text(encoding="utf-8")
    assert "这是 sum |p - q|" in html and "实验 1 · 把解码看作马尔可夫链" in html
