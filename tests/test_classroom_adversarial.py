"""An adversarial class, graded by the real nbgrader with the instructors page's own commands.

The block ``grading-cycle`` of ``book/instructors.md`` is run as written, once for Lab 1
and once for Lab 3 (the lab's name, the downloads folders and the student ``jane``
replaced), on downloads that do what real students do:

* Lab 3: a Colab copy (``Copy of lab03_rejections.ipynb``), a ``<student>_... (1).ipynb.ipynb``
  name, a notebook known only by its content (``homework.ipynb``), a cell that exits the
  kernel, an endless loop (with a short cell limit), a PDF, a notebook with no student id,
  and a student of the roster who sent nothing; the student whose kernel died sends a
  corrected notebook later and is graded again alone.
* Lab 1: a solution that hands the work to the package's own function, and one that
  patches the checks so that they always pass.

Each student ends with the grade an instructor would expect, and every one who is not
fully graded has a line in the report. Autograded points only: the written answers wait
for the instructor (formgrader) and count 0 here.
"""

from __future__ import annotations

import copy
import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from specdec_lite import classroom

from .test_classroom import COURSE, ROOT, nb_meta

#: The cell limit of the test course: the loop costs twice this (it is tried twice). Lab 3's slowest cell takes
#: 4 s on an idle 2-core machine and took up to 25 s at a load average of 15 to 20 (benchmarks/grading_runs.json);
#: the suite's two workers keep the load near 4.
TEST_LIMIT_S = 45
LAB1, LAB3 = "lab01_markov_chains", "lab03_rejections"
#: Autograded points of each lab: two checks of 2 points.
AUTO = 4.0


def page_commands() -> list[str]:
    """The commands of the instructors page's ``grading-cycle`` block, one per line."""
    page = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    m = re.search(r"```\{code-block\} bash\n:name: grading-cycle\n(.*?)\n```", page, re.S)
    assert m, "book/instructors.md: no ```{code-block} bash with :name: grading-cycle"
    lines = [ln.split("  #")[0].strip() for ln in m[1].splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def master(lab: str) -> nbformat.NotebookNode:
    return nbformat.read(COURSE / "source" / lab / f"{lab}.ipynb", as_version=4)


def index_of(nb: nbformat.NotebookNode, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if nb_meta(c).get("grade_id") == grade_id)


def with_code(nb: nbformat.NotebookNode, grade_id: str, code: str, new_cell: bool) -> nbformat.NotebookNode:
    """A copy of ``nb`` with ``code`` added to the cell ``grade_id``, or in a new cell after it."""
    nb = copy.deepcopy(nb)
    i = index_of(nb, grade_id)
    if new_cell:
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell(code))
    else:
        nb.cells[i].source += "\n" + code
    return nb


def write(path: Path, nb_or_bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb_or_bytes, bytes):
        path.write_bytes(nb_or_bytes)
    else:
        nbformat.write(nb_or_bytes, path)


#: It sleeps between its steps, so that the grader's wait costs wall time but no core (the other tests run meanwhile).
LOOP = (
    "while True:  # a student's search that never ends, deaf to interrupts\n"
    "    try:\n        import time\n        time.sleep(0.5)\n    except KeyboardInterrupt:\n        pass"
)

#: Lab 1's delegating student: each function returns what the package computes.
DELEGATE = {
    "marginals": "def marginals(chain):\n    return chain.marginals()",
    "tv": "def tv(p, q):\n    return sd.tv(p, q)",
}
#: Lab 1's patching student: stubs, and checks made to pass whatever the answer.
PATCH = (
    "def marginals(chain):\n    raise NotImplementedError()\n"
    "import specdec_lite.exercises.feedback as _fb\n"
    "try:\n    _fb.Feedback.assert_correct = lambda self: None\nexcept Exception:\n    pass\n"
    "class _Pass:\n    def assert_correct(self):\n        return None\n"
    "check_marginals = check_tv = lambda *a, **k: _Pass()"
)


def downloads(tmp: Path) -> dict[str, Path]:
    """The downloads folders of each lab (and the late ones), as an LMS export gives them."""
    m3, m1 = master(LAB3), master(LAB1)
    d3, late3, d1, late1 = (tmp / n for n in ("dl3", "dl3_late", "dl1", "dl1_late"))
    write(d3 / "renamed" / f"Copy of {LAB3}.ipynb", m3)
    write(d3 / f"dupname_{LAB3} (1).ipynb.ipynb", m3)
    write(d3 / "contentonly" / "homework.ipynb", m3)
    write(d3 / "exits" / f"{LAB3}.ipynb", with_code(m3, "speedup", "import os\nos._exit(1)", new_cell=False))
    write(d3 / "loops" / "LAB03_Rejections.IPYNB", with_code(m3, "check_expected_rejections_two_state", LOOP, True))
    write(d3 / "pdfstudent" / f"{LAB3}.pdf", b"%PDF-1.4\n% a printout of the notebook\n")
    write(d3 / f"Copy of {LAB3}.ipynb", m3)  # no student id: listed, never guessed
    write(late3 / "exits" / f"Copy of {LAB3} (2).ipynb", m3)
    delegate = copy.deepcopy(m1)
    for gid, code in DELEGATE.items():
        delegate.cells[index_of(delegate, gid)].source = code
    write(d1 / "delegates" / f"{LAB1}.ipynb", delegate)
    patched = copy.deepcopy(m1)
    patched.cells[index_of(patched, "marginals")].source = PATCH
    patched.cells[index_of(patched, "tv")].source = "def tv(p, q):\n    raise NotImplementedError()"
    write(d1 / "patches" / f"{LAB1}.ipynb", patched)
    write(late1 / "delegates" / f"{LAB1}.ipynb", m1)
    return {LAB3: d3, f"{LAB3}_late": late3, LAB1: d1, f"{LAB1}_late": late1}


ROSTER = ["renamed", "dupname", "contentonly", "exits", "loops", "pdfstudent", "absent", "delegates", "patches"]
#: Who sends a corrected notebook later, per lab (``jane`` in the page's commands).
LATE = {LAB1: "delegates", LAB3: "exits"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Run the page's commands for Lab 1, then Lab 3; keep each command's output and each export."""
    tmp = tmp_path_factory.mktemp("adversarial")
    course = tmp / "notebooks"
    (course / "source").mkdir(parents=True)
    config = (COURSE / "nbgrader_config.py").read_text()
    limits = {lab: TEST_LIMIT_S for lab in (LAB1, LAB3)}
    (course / "nbgrader_config.py").write_text(config + f"\nc.GradingExecute.lab_timeouts = {limits!r}\n")
    for lab in (LAB1, LAB3):
        shutil.copytree(COURSE / "source" / lab, course / "source" / lab)
    rows = ["id,first_name,last_name,email"] + [f"{s},{s.title()},Student,{s}@example.org" for s in ROSTER]
    (course / "roster.csv").write_text("\n".join(rows) + "\n")
    folders = downloads(tmp)
    env = classroom.nbgrader_env()
    runs: dict[str, list[tuple[str, subprocess.CompletedProcess]]] = {}
    exports: dict[str, list[list[dict]]] = {}
    for lab in (LAB1, LAB3):
        runs[lab], exports[lab] = [], []
        for line in page_commands():
            if line.startswith("cd notebooks"):
                continue  # the scratch course is the working folder
            line = line.replace("~/Downloads/lab03_rejections_late", str(folders[f"{lab}_late"]))
            line = line.replace("~/Downloads/lab03_rejections", str(folders[lab]))
            line = line.replace("lab03_rejections", lab).replace("--student jane", f"--student {LATE[lab]}")
            proc = subprocess.run(
                ["bash", "-c", line], cwd=course, env=env, capture_output=True, text=True, timeout=1500
            )
            runs[lab].append((line, proc))
            if "nbgrader export" in line and proc.returncode == 0:
                with (course / "grades.csv").open() as f:
                    exports[lab].append(list(csv.DictReader(f)))
    return {"course": course, "runs": runs, "exports": exports}


def output_of(graded, lab: str, command: str) -> str:
    """The printed output of the first command of the run that starts with ``command``."""
    return next(p.stdout for line, p in graded["runs"][lab] if line.startswith(command))


def scores(graded, lab: str, export: int) -> dict[str, float]:
    """``{student: score}`` of ``lab`` in the run's ``export``-th export (0: first, -1: after the rerun)."""
    return {r["student_id"]: float(r["score"]) for r in graded["exports"][lab][export] if r["assignment"] == lab}


def report_lines(graded, lab: str, student: str) -> list[str]:
    text = output_of(graded, lab, "python -m specdec_lite.classroom report")
    return [ln for ln in text.splitlines() if ln.startswith(f"{lab}  {student}: ")]


def feedback(graded, lab: str, student: str) -> Path:
    return graded["course"] / "feedback" / student / lab / f"{lab}.html"


def test_every_command_of_the_page_runs(graded):
    for runs in graded["runs"].values():
        assert len(runs) >= 10, "the page's cycle lost commands"
        for line, proc in runs:
            assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    text = "\n".join(page_commands())
    for command in [
        "nbgrader db student import roster.csv",
        "python -m specdec_lite.classroom collect ~/Downloads/lab03_rejections --lab lab03_rejections",
        "python -m specdec_lite.classroom autograde lab03_rejections",
        "python -m specdec_lite.classroom report lab03_rejections",
        "nbgrader generate_feedback lab03_rejections",
        "nbgrader export --to grades.csv",
        "nbgrader autograde lab03_rejections --student jane --force",
    ]:
        assert command in text, command


@pytest.mark.parametrize("student", ["renamed", "dupname", "contentonly"])
def test_renamed_notebooks_are_collected_and_graded(graded, student):
    """``Copy of ...``, ``<student>_... (1).ipynb.ipynb``, ``homework.ipynb``: full autograded marks."""
    target = graded["course"] / "submitted" / student / LAB3 / f"{LAB3}.ipynb"
    assert target.is_file()
    assert scores(graded, LAB3, 0)[student] == AUTO
    assert feedback(graded, LAB3, student).is_file()
    assert not report_lines(graded, LAB3, student), "a fully graded submission has nothing to report"
    collected = output_of(graded, LAB3, "python -m specdec_lite.classroom collect")
    assert f"-> submitted/{student}/{LAB3}/{LAB3}.ipynb" in collected


def test_a_cell_that_exits_the_kernel_costs_only_its_exercise(graded):
    """``os._exit(1)`` in the second exercise's cell: the first check's 2 points, feedback, a line; then regraded."""
    assert scores(graded, LAB3, 0)["exits"] == AUTO - 2
    (line,) = report_lines(graded, LAB3, "exits")
    cell = index_of(master(LAB3), "speedup") + 1
    assert f"kernel died in cell {cell} (speedup)" in line and "scored 2 of " in line, line
    assert feedback(graded, LAB3, "exits").is_file()
    assert scores(graded, LAB3, -1)["exits"] == AUTO, "graded again alone after the corrected notebook"
    assert {s: v for s, v in scores(graded, LAB3, -1).items() if s != "exits"} == {
        s: v for s, v in scores(graded, LAB3, 0).items() if s != "exits"
    }, "the rerun of one student leaves the others alone"


def test_an_endless_loop_costs_its_cell_limit_and_nothing_else(graded):
    """A loop that ignores interrupts, in a cell of its own after the first check: every check still passes."""
    assert scores(graded, LAB3, 0)["loops"] == AUTO
    (line,) = report_lines(graded, LAB3, "loops")
    cell = index_of(master(LAB3), "check_expected_rejections_two_state") + 2
    assert f"timeout in cell {cell} (while True:" in line, line
    assert feedback(graded, LAB3, "loops").is_file()
    nb = nbformat.read(graded["course"] / "autograded" / "loops" / LAB3 / f"{LAB3}.ipynb", as_version=4)
    errors = [o for o in nb.cells[cell - 1].outputs if o.output_type == "error"]
    assert [o.ename for o in errors] == ["CellTimeoutError"], "one error, saying what happened"
    assert f"longer than {TEST_LIMIT_S} s" in errors[0].evalue


def test_uploads_that_cannot_be_placed_are_listed(graded):
    """A PDF and a notebook with no student id: in collect's output and in the report; the PDF's author has 0."""
    collected = output_of(graded, LAB3, "python -m specdec_lite.classroom collect")
    assert re.search(rf"NOT PLACED pdfstudent/{LAB3}\.pdf: not a notebook", collected), collected
    assert re.search(rf"NOT PLACED Copy of {LAB3}\.ipynb: no student id", collected), collected
    pdf = report_lines(graded, LAB3, "pdfstudent")
    assert any("not placed: not a notebook" in ln for ln in pdf), pdf
    assert any("no submission (0 in the export)" in ln for ln in pdf), pdf
    report = output_of(graded, LAB3, "python -m specdec_lite.classroom report")
    assert f"?: download Copy of {LAB3}.ipynb not placed: no student id" in report, report
    assert scores(graded, LAB3, 0)["pdfstudent"] == 0


def test_the_roster_puts_absent_students_in_the_export(graded):
    assert set(scores(graded, LAB3, 0)) == set(ROSTER)
    assert scores(graded, LAB3, 0)["absent"] == 0
    assert report_lines(graded, LAB3, "absent") == [f"{LAB3}  absent: no submission (0 in the export); scored 0 of 8"]


def test_autograde_prints_the_report(graded):
    text = output_of(graded, LAB3, "python -m specdec_lite.classroom autograde")
    assert f"autograde {LAB3}: done" in text
    assert any(ln.startswith(f"{LAB3}  loops: timeout in cell") for ln in text.splitlines()), text


def test_a_solution_that_calls_the_package_scores_nothing(graded):
    assert scores(graded, LAB1, 0)["delegates"] == 0
    assert scores(graded, LAB1, -1)["delegates"] == AUTO, "the corrected notebook, graded again, has full marks"


def test_a_solution_that_patches_the_checks_scores_nothing(graded):
    assert scores(graded, LAB1, 0)["patches"] == 0


def test_report_on_an_empty_course_says_so(tmp_path):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy2(COURSE / "nbgrader_config.py", course)
    shutil.copytree(COURSE / "source" / LAB3, course / "source" / LAB3)
    proc = subprocess.run(
        [sys.executable, "-m", "specdec_lite.classroom", "report"],
        cwd=course,
        env=classroom.nbgrader_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "every submission is autograded, with nothing to report" in proc.stdout


def test_collect_finds_the_student_and_the_lab_of_odd_names(tmp_path):
    """Names alone (no nbgrader): prefixes, Colab copies, duplicates, double extensions, a class zip."""
    import zipfile

    from specdec_lite.classroom import collect

    labs = [LAB1, LAB3]
    for name, student, lab in [
        (f"Copy of {LAB3}.ipynb", None, LAB3),
        (f"{LAB3} (1).ipynb", None, LAB3),
        (f"{LAB3}.ipynb.ipynb", None, LAB3),
        ("LAB03_Rejections.IPYNB", None, LAB3),
        (f"jane_Copy of {LAB3} (1).ipynb", "jane", LAB3),
        ("jane.doe@uni.edu - Lab 1.ipynb", "jane.doe@uni.edu", LAB1),
        ("bob_homework.ipynb", "bob", None),
        ("homework.ipynb", None, None),
    ]:
        assert collect.student_from_name(name) == student, name
        assert collect.lab_from_name(name, labs) == lab, name
    m3 = nbformat.writes(master(LAB3)).encode()
    with zipfile.ZipFile(tmp_path / "class.zip", "w") as zf:
        zf.writestr("ann/Copy of notebook.ipynb", m3)
        zf.writestr("ann/lab03_notes.txt", b"not a notebook")
    (tmp_path / "dl").mkdir()
    shutil.move(tmp_path / "class.zip", tmp_path / "dl" / "class.zip")
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    for lab in labs:
        shutil.copytree(COURSE / "source" / lab, course / "source" / lab)
    outcomes = {o.source: o for o in collect.collect(tmp_path / "dl", course)}
    assert outcomes["class.zip:ann/Copy of notebook.ipynb"].target == f"submitted/ann/{LAB3}/{LAB3}.ipynb"
    assert (course / "submitted" / "ann" / LAB3 / f"{LAB3}.ipynb").read_bytes() == m3
    assert outcomes["class.zip:ann/lab03_notes.txt"].reason.startswith("not a notebook")
    assert {o.source for o in collect.logged(course)} == set(outcomes), "collect keeps a record of every file"
