"""The Chinese labs are their English labs with the text translated: same assignment, same grading.

``tools/labs_zh.py`` makes each Chinese master from its English master and a translation file with
one entry per Markdown cell and per code cell with English text, stamped with the fingerprint of the
English cell it translates. The first test is the one a contributor meets: it fails when an English
lab changed after its Chinese text was written, when a Chinese master or student copy is not what the
translation and the release make, or when a program, cell id, grade id, point count or any nbgrader
metadata differs: a translated code cell is its English program once comments are dropped and strings
blanked, with only its shown strings changed. The
Chinese labs are not executed again (nbval runs the English masters): these tests prove them the
same instead. The others show that each kind of drift is caught.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import tomllib

from specdec_lite import _i18n
from specdec_lite.classroom.release import ZH_COURSE, masters
from tools import labs_zh

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab01_markov_chains"


def test_the_chinese_labs_follow_the_english_ones():
    problems = labs_zh.check()
    assert not problems, "\n".join(problems)


def test_every_english_lab_has_its_chinese_lab():
    assert labs_zh.translated() == labs_zh.labs()
    assert [m.stem for m in masters(ZH_COURSE)] == labs_zh.labs()


def test_the_chinese_course_grades_as_the_english_one():
    """Same nbgrader configuration; only the text that replaces a model answer or model code in the copies differs."""
    en = (ROOT / "notebooks" / "nbgrader_config.py").read_text(encoding="utf-8")
    zh = (ROOT / "zh" / "notebooks" / "nbgrader_config.py").read_text(encoding="utf-8")
    assert zh.startswith(en)
    added = [ln for ln in zh[len(en) :].splitlines() if ln.strip() and not ln.startswith("#")]
    assert added == [
        f'c.ClearSolutions.text_stub = "{labs_zh.ANSWER_STUB}"',
        f'c.ClearSolutions.code_stub = {{"python": {labs_zh.CODE_STUB!r}}}'.replace("'", '"'),
    ], added


def test_the_setup_line_makes_the_checks_answer_in_chinese(monkeypatch):
    monkeypatch.setenv(_i18n.ENV, "")  # put back as it was after the test
    exec(labs_zh.SETUP_LINE, {"os": __import__("os")})  # what the Chinese setup cell adds, run as it runs there
    assert _i18n.language() == "zh_CN"
    master = nbformat.read(ZH_COURSE / "source" / LAB / f"{LAB}.ipynb", as_version=4)
    assert master.cells[1].source.endswith("\n" + labs_zh.SETUP_LINE)


def test_the_chinese_labs_stay_out_of_the_test_run():
    """nbval runs the English masters; the Chinese ones, the same code, are compared, not run again."""
    paths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    assert not any(p.startswith("zh") for p in paths), paths


# --- each kind of drift is caught -----------------------------------------------------------------


def _pair() -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    zh, problems = labs_zh.chinese(LAB)
    assert not problems
    return labs_zh.english(LAB), zh


def test_a_changed_english_cell_asks_for_its_chinese(monkeypatch):
    en = labs_zh.english(LAB)
    changed = next(c for c in en.cells if c.cell_type == "markdown" and c.source.startswith("## 3."))
    changed.source += " One more sentence."
    monkeypatch.setattr(labs_zh, "english", lambda lab: copy.deepcopy(en))
    _nb, problems = labs_zh.chinese(LAB)
    assert len(problems) == 1 and changed.id in problems[0] and "stamp" in problems[0], problems


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (lambda nb: setattr(nb.cells[7], "source", nb.cells[7].source + "\nprint(1)"), "the code differs"),
        (lambda nb: nb.cells[7].metadata["nbgrader"].update(points=3), "the metadata differ"),
        (lambda nb: nb.cells[6].metadata["nbgrader"].update(grade_id="marginals2"), "the metadata differ"),
        (lambda nb: nb.cells[6].metadata.pop("nbgrader"), "the metadata differ"),
        (lambda nb: nb.cells.pop(4), "the cells differ"),
        (lambda nb: setattr(nb.cells[1], "source", nb.cells[1].source.rsplit("\n", 1)[0]), "the code differs"),
        (lambda nb: nb.metadata.update(language_info={"name": "R"}), "notebook metadata"),
    ],
)
def test_a_difference_beyond_the_text_is_caught(change, found):
    en, zh = _pair()
    assert labs_zh.structure(en, zh) == []
    change(zh)
    assert any(found in p for p in labs_zh.structure(en, zh)), labs_zh.structure(en, zh)


def test_a_model_answer_keeps_its_solution_region():
    en, zh = _pair()
    answer = next(c for c in zh.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "explore_q1")
    answer.source = answer.source.replace("### END SOLUTION", "")
    assert any("SOLUTION region" in p for p in labs_zh.structure(en, zh))


def test_an_untranslated_or_stray_entry_is_caught(monkeypatch):
    words = labs_zh.translation(LAB)
    first = next(iter(words))
    english_text = labs_zh.english(LAB).cells[0].source
    monkeypatch.setattr(
        labs_zh,
        "translation",
        lambda lab: {**words, first: {**words[first], "zh": english_text}, "no-such-cell": words[first]},
    )
    _nb, problems = labs_zh.chinese(LAB)
    assert any("not translated yet" in p for p in problems) and any("no-such-cell" in p for p in problems)


def test_the_badge_opens_the_chinese_student_copy():
    zh, _ = labs_zh.chinese(LAB)
    url = labs_zh.colab_url(f"zh/notebooks/{LAB}.ipynb")
    assert f"]({url})" in zh.cells[0].source and "/blob/main/zh/notebooks/" in url


def test_a_student_copy_edited_by_hand_is_caught(tmp_path, monkeypatch):
    """A Chinese student copy must be what the release writes: its text, and nbgrader's checksums of it."""
    lab_copy = ZH_COURSE / f"{LAB}.ipynb"
    nb = nbformat.read(lab_copy, as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "explore_q1")
    answer.source += " 已填写"
    fake = tmp_path / "zh" / "notebooks"
    shutil.copytree(ZH_COURSE / "source" / LAB, fake / "source" / LAB)
    nbformat.write(nb, fake / f"{LAB}.ipynb")
    monkeypatch.setattr(labs_zh, "ZH_COURSE", fake)
    monkeypatch.setattr(labs_zh, "translated", lambda: [LAB])
    monkeypatch.setattr(labs_zh, "labs", lambda: [LAB])
    monkeypatch.setattr(labs_zh, "ROOT", tmp_path)
    found = labs_zh.check()
    assert any("checksum" in p for p in found) and any("not its master's text" in p for p in found), found


def _literal_emphasis(markdown: str) -> list[str]:
    """Asterisks that a plain CommonMark renderer (Jupyter's and Colab's kind) leaves on the page.

    CommonMark closes ``**`` only after a character that is not punctuation, or before whitespace or
    punctuation: ``**回答。**后`` shows its asterisks there, while ``**回答**。后`` is bold. Formulas and code
    are left out (``$q^*$`` is not emphasis).
    """
    from markdown_it import MarkdownIt

    prose = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", "", markdown, flags=re.S)
    found = []
    for block in MarkdownIt("commonmark").parse(prose):
        for child in block.children or []:
            if child.type == "text" and "*" in child.content:
                found.append(child.content)
    return found


def test_chinese_emphasis_renders_in_a_plain_commonmark_notebook():
    """Full-width punctuation sits outside bold and italic, so the emphasis works in Jupyter and Colab too."""
    problems = []
    for lab in labs_zh.labs():
        nb = nbformat.read(ROOT / "zh" / "notebooks" / f"{lab}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                problems += [f"{lab} {cell.get('id')}: {text!r}" for text in _literal_emphasis(cell.source)]
    assert not problems, "\n".join(problems)


def test_the_emphasis_check_sees_punctuation_inside_bold():
    assert _literal_emphasis("**问题 1 的回答。**草稿分布") == ["**问题 1 的回答。**草稿分布"]
    assert _literal_emphasis("**问题 1 的回答**。草稿分布，$q^*$ 与 `a*b`") == []


# --- a translated code cell is the English program --------------------------------------------------

EN_CODE = """def residual(p, q):
    ### BEGIN SOLUTION
    pos = np.maximum(q - p, 0.0)  # the target's excess
    return pos / pos.sum()
    ### END SOLUTION
print('p-value against q:', f'{x:.3f} runs', table['speed'])
"""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("# the target's excess", "# 目标分布超出的部分"),
        ("'p-value against q:'", "'对 q 的 p 值：'"),
        ("f'{x:.3f} runs'", "f'{x:.3f} 次运行'"),
        ("    return pos", "    # 归一化\n    return pos"),
    ],
)
def test_comments_and_shown_strings_may_be_translated(old, new):
    assert labs_zh.program_problems(EN_CODE, EN_CODE.replace(old, new)) == []


@pytest.mark.parametrize(
    ("old", "new", "found"),
    [
        ("q - p, 0.0", "q - p, 0", "not the same program"),
        ("pos.sum()", "pos.sum() + 0", "not the same program"),
        ("table['speed']", "table['速度']", "read by the program"),
        ("f'{x:.3f} runs'", "f'{x:.4f} runs'", "read by the program"),
        ("### BEGIN SOLUTION", "### 开始 SOLUTION", "nbgrader markers"),
        ("print(", "print (", ""),  # spacing is not the program: no problem
    ],
)
def test_a_translation_that_changes_the_program_is_caught(old, new, found):
    problems = labs_zh.program_problems(EN_CODE, EN_CODE.replace(old, new))
    assert (not problems) if not found else any(found in p for p in problems), problems


def test_a_string_handed_to_a_call_stays():
    en = "p, q = instance_laws('mirror images')\nnp.errstate(invalid='ignore')"
    zh = "p, q = instance_laws('镜像')\nnp.errstate(invalid='忽略')"
    assert len(labs_zh.program_problems(en, zh)) == 2


def test_english_left_in_a_code_cell_is_counted_and_asked_for(monkeypatch):
    assert labs_zh.english_text(EN_CODE) == ["# the target's excess", "p-value against q:", " runs"]
    words = labs_zh.translation(LAB)
    code_id = next(k for k, v in words.items() if "code" in v)
    monkeypatch.setattr(labs_zh, "translation", lambda lab: {k: v for k, v in words.items() if k != code_id})
    _nb, problems = labs_zh.chinese(LAB)
    assert len(problems) == 1 and code_id in problems[0] and "code cell" in problems[0], problems


def test_a_changed_english_code_cell_asks_for_its_chinese(monkeypatch):
    en = labs_zh.english(LAB)
    words = labs_zh.translation(LAB)
    cell = next(c for c in en.cells if "code" in words.get(c.id, {}))
    cell.source += "\nprint(0)"
    monkeypatch.setattr(labs_zh, "english", lambda lab: copy.deepcopy(en))
    _nb, problems = labs_zh.chinese(LAB)
    assert len(problems) == 1 and cell.id in problems[0] and "stamp" in problems[0], problems


def test_the_student_copies_show_the_chinese_code_stub():
    nb = nbformat.read(ZH_COURSE / f"{LAB}.ipynb", as_version=4)
    stubbed = [c.source for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    first = labs_zh.CODE_STUB.splitlines()[0]
    assert stubbed and all(first in s and "YOUR CODE" not in s for s in stubbed), stubbed
