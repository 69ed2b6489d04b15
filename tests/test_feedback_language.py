"""The labs' feedback speaks the student's language: every message of every check exists in Chinese.

The messages are written in English in ``specdec_lite`` and wrapped in ``_()`` with named
placeholders; ``pybabel extract`` (configured in ``pyproject.toml``) lists them and the gettext
catalogue ``specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.po`` translates them. These tests
fail when a message has no translation, when a translation drops, adds or renames a placeholder
(or changes its format), when the catalogue keeps a message the source no longer has, when the
compiled ``.mo`` the package ships lags behind the ``.po``, and when a translation leaves the
terminology of ``zh/terms.yml``. A lab chooses the language in its setup cell
(``SPECDEC_LITE_LANGUAGE=zh_CN``); the last tests run checks in both languages.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import string
from pathlib import Path

import numpy as np
import pytest
import tomllib
import yaml
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from specdec_lite import _i18n
from specdec_lite.exercises import NotYet, bugs
from specdec_lite.exercises.part1 import check_tv
from tools.labs_zh import DECIDED  # terms decided for this round, where zh/terms.yml may lag

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "specdec_lite" / "locale" / "zh_CN" / "LC_MESSAGES" / "specdec_lite.po"
MO = PO.with_suffix(".mo")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


#: Places where a term's English word is not the term (the verb "rounds"): left out of the terminology check.
NOT_THE_TERM = {
    "round": ("rounds the scaled logits",),
    "cell": ("counts per cell", "{cells:,} cells"),  # an array's cells (元素, 格子), not a notebook's
    # the checking itself (这次检查), a verb, an argument (check=False)
    "check": ("drawn for this check", "check the sign", "``check=False``", "checks ``rho``"),
}


def is_code_text(files: list[str]) -> bool:
    """A docstring or comment of package code a Chinese page includes: shown as written, no template."""
    return all(Path(f).as_posix().startswith("zh/book/") for f in files)


def source_messages() -> dict[str, list[str]]:
    """Every message of the source, as ``pybabel extract`` with the pyproject mapping lists them (id -> files)."""
    method_map = [(m["pattern"], m["method"]) for m in PYPROJECT["tool"]["babel"]["mappings"]]
    found: dict[str, list[str]] = {}
    for filename, _lineno, message, _comments, _context in extract_from_dir(str(ROOT), method_map):
        assert isinstance(message, str), f"{filename}: plural or tuple message {message!r}"
        found.setdefault(message, []).append(filename)
    return found


def catalogue():
    with PO.open("rb") as f:
        return read_po(f)


def fields(message: str) -> list[tuple[str, str, str]]:
    """The placeholders of a ``str.format`` template: (name, conversion, format spec), sorted."""
    return sorted(
        (name, conversion or "", spec or "")
        for _text, name, spec, conversion in string.Formatter().parse(message)
        if name is not None
    )


def test_the_source_has_messages_and_names_its_placeholders():
    messages = source_messages()
    assert len(messages) > 250, len(messages)
    templates = [m for m, files in messages.items() if not is_code_text(files)]
    positional = [m for m in templates if any(name == "" or name.isdigit() for name, _c, _s in fields(m))]
    assert not positional, f"placeholders without a name: {positional}"


def test_every_message_has_its_chinese_with_the_same_placeholders():
    cat = catalogue()
    problems = []
    for message, files in source_messages().items():
        entry = cat.get(message)
        if entry is None or not entry.string or entry.fuzzy:
            problems.append(f"{files[0]}: no Chinese for {message!r}")
        elif not is_code_text(files) and fields(entry.string) != fields(message):
            problems.append(f"{files[0]}: {message!r} has {fields(message)}, its Chinese {fields(entry.string)}")
    assert not problems, "\n".join(problems) + "\n(see the header of the .po for the commands)"


def test_the_catalogue_holds_only_messages_of_the_source():
    source = source_messages()
    stale = [m.id for m in catalogue() if m.id and m.id not in source]
    assert not stale, f"messages the source no longer has: {stale}"


def test_the_shipped_mo_is_the_po_compiled():
    with MO.open("rb") as f:
        compiled = {m.id: m.string for m in read_mo(f) if m.id}
    assert compiled == {m.id: m.string for m in catalogue() if m.id}, "run pybabel compile (see the .po's header)"


def test_the_mo_is_package_data():
    """Colab installs the package with pip from git: the compiled catalogue must be among its package data."""
    package_data = PYPROJECT["tool"]["setuptools"]["package-data"]
    relative = MO.relative_to(ROOT / "specdec_lite").as_posix()
    assert any(fnmatch.fnmatch(relative, pattern) for pattern in package_data.get("specdec_lite", []))
    assert _i18n.translations("zh_CN").gettext("Correct.") != "Correct."


def terms() -> dict[str, str]:
    table = yaml.safe_load((ROOT / "zh" / "terms.yml").read_text(encoding="utf-8"))
    return {t["en"]: t["zh"] for t in table} | DECIDED


@pytest.mark.parametrize("en", sorted(terms()))
def test_chinese_messages_use_the_terminology(en):
    zh = terms()[en]
    pattern = re.compile(rf"\b{re.escape(en)}(s|es)?\b", re.IGNORECASE)
    missing = [
        (m.id, m.string)
        for m in catalogue()
        if m.id
        and pattern.search(m.id)
        and zh not in m.string
        and not any(phrase in m.id for phrase in NOT_THE_TERM.get(en, ()))
    ]
    assert not missing, f"{en} -> {zh}: " + "\n".join(map(repr, missing))


def test_chinese_messages_follow_the_style_of_the_chinese_edition():
    """Models named in full, mass as 概率质量, no space after full-width punctuation."""
    problems = []
    for m in catalogue():
        if not m.id:
            continue
        if re.search(r"\bthe (draft|target)\b(?! (token|call|tree|law))", m.id) and not re.search(
            "草稿模型|目标模型", m.string
        ):
            problems.append(f"the model unnamed: {m.string}")
        # 质量 alone is quality, not mass; 草稿质量 is the term for draft quality
        if re.search("(?<!概率)(?<!草稿)质量", m.string) and "quality" not in m.id.lower():
            problems.append(f"bare 质量: {m.string}")
        if re.search("[，。；：！？、（）] ", m.string):
            problems.append(f"space after full-width punctuation: {m.string}")
    assert not problems, "\n".join(problems)


def doubled_tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.abs(p - q).sum())


@pytest.mark.parametrize(
    ("language", "expected", "verdict"),
    [
        (None, "you returned 0.6000 instead of 0.3000: that is sum |p - q|; TV has a factor 1/2", "Not yet. For p"),
        ("zh_CN", "你返回的是 0.6000，而不是 0.3000：这是 sum |p - q|；TV 有一个因子 1/2", "还不对。对 p"),
    ],
)
def test_a_check_answers_in_the_language_of_the_lab(monkeypatch, language, expected, verdict):
    """The diagnosis of a typical mistake, with its numbers, in the language the setup cell chose."""
    if language is None:
        monkeypatch.delenv(_i18n.ENV, raising=False)
    else:
        monkeypatch.setenv(_i18n.ENV, language)
    fb = check_tv(doubled_tv)
    assert not fb.ok and expected in fb.message, fb.message
    with pytest.raises(NotYet) as raised:
        fb.assert_correct()
    assert str(raised.value).startswith(verdict), raised.value
    stub = check_tv(None).message
    assert stub.split("：" if language else ": ")[1].startswith(
        _i18n.translations(_i18n.language()).gettext("not attempted yet")
    ), stub


def test_an_unknown_language_is_english(monkeypatch):
    monkeypatch.setenv(_i18n.ENV, "fr")
    assert _i18n.language() == "en"
    assert check_tv(lambda p, q: 0.5 * float(np.abs(p - q).sum())).message.startswith("TV is half")


#: The figures' modules outside ``specdec_lite/figures`` whose words a reader sees.
FIGURE_MODULES = [ROOT / "specdec_lite" / "figure_data.py", ROOT / "specdec_lite" / "plotting.py"]

#: Literals of the figures' modules with English words that are not messages (beside HTML and SVG markup,
#: which starts with "<"): plotly's positions, keys of measured rows, and the errors of a builder called
#: with arguments it cannot draw (for the code that calls it, not for a reader of the figure).
FIGURE_NOT_MESSAGES = {
    "top right",
    "top left",
    "bottom right",
    "HF autoregressive",
    "HF assisted",
    "number of tokens labelled ",
    "n: must be >= 1, got ",
    "pieces:  strings for  generated tokens",
    "u: must be in [0, 1), got ",
    "p, q: need one probability per token of vocab (), got , ",
    "drafts: not in vocab: ",
    "drafts: the draft cannot propose a token it gives probability 0",
    "a step index: ",
    "rounds, titles: need one title per round, and at least one round",
    "u: the test of draft  needs a uniform, got only ",
    'if (window.sdFigures) window.sdFigures.init("{plot_id}", ',
    "steps: need at least one step",
    "steps: every step must have the same number of traces",
    "active: must index a step, got ",
    "figures: need at least one figure",
    "titles: need one per figure (), got ",
    "titles: need one per results file (), got ",
}

#: Literals of the check modules with English words that are not messages, each with where it goes.
NOT_MESSAGES = {
    "first only": "a key naming a mistake of Lab 8 (its message is the _() text under the same key)",
    "Feedback is read-only": "AttributeError for code that rewrites a Feedback, not a check's message",
    ". is read-only": "the same, for the check modules' names (f-string: the literal text of the f-string)",
    # The modules a student meets outside the checks (STUDENT_MODULES below):
    "HF assisted": "a method's name in a results file and in Chapter 8's tables (Hugging Face's assisted generation)",
    "HF autoregressive": "the same, Hugging Face's own autoregressive sampling",
    "every stage": "the stage a knob of llm.budget sizes (a key, never printed)",
    "model name": "the line of /proc/cpuinfo that names the CPU",
    "unknown CPU": "the device's name written into a results file (files stay English: the book reads them)",
    "distillation from the target": "the objective written into the offline pair's meta.json",
    "next-token cross-entropy": "the same",
    "Give three tips for staying healthy.": "a prompt the models continue (llm.runs.TEXT_PROMPTS): data",
    "Explain why the sky is blue to a ten-year-old.": "the same",
    "Write a short story about a robot that learns to paint.": "the same",
    "What are the main differences between a list and a tuple in Python?": "the same",
    "import os\nimport sys\n\n": "a code prompt of the offline pair (llm.runs.CODE_PROMPTS): data",
    "        for i in range(len(": "the same",
    "class Error(Exception):\n    ": "the same",
}

#: Files whose English literals are data a results file keeps, not messages: the model-shape measurement
#: (``python -m specdec_lite.llm.shapes``) writes its skip reasons, labels and command into its results
#: file, which the book reads in English; its errors and help do go through ``_()``.
RESULTS_FILE_WRITERS = ("llm/shapes.py", "llm/shape_costs.py")

_WORDS = re.compile(r"[A-Za-z]{2,}[,;:)']* +\(?[A-Za-z]{2,}")  # two words with a space between


def unwrapped_literals(path: Path) -> list[str]:
    """String literals with English words in ``path`` outside ``_()``/``N_()``, docstrings left out.

    An f-string counts by its literal text; a message must be a ``_()`` template with named
    placeholders, so an f-string or a plain string with words in a check module is one it forgot.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def inside(node: ast.AST, test) -> bool:
        while node in parents:
            node = parents[node]
            if test(node):
                return True
        return False

    def marked(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")

    marked_elsewhere = {
        node.args[0].value
        for node in ast.walk(tree)
        if marked(node) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if isinstance(parents.get(node), ast.Expr):  # a docstring
                continue
            text = node.value
        else:
            continue
        if inside(node, lambda n: isinstance(n, ast.JoinedStr)) or inside(node, marked):
            continue
        if text.startswith(("<", "(function")):  # HTML or JavaScript the package writes, not words for a reader
            continue
        if text in marked_elsewhere:  # the value of a choice whose label is N_(text): an identifier
            continue
        if _WORDS.search(text) and text not in NOT_MESSAGES:
            found.append(f"{path.name}:{node.lineno}: {text[:70]!r}")
    return found


def test_every_message_of_the_checks_is_marked_for_translation():
    """A check's words reach the student only through ``_()``: a plain or f-string message stays English in Chinese."""
    modules = sorted((ROOT / "specdec_lite" / "exercises").rglob("*.py"))  # Lab 9's checks: exercises/bugs/
    modules += sorted((ROOT / "specdec_lite" / "figures").glob("*.py")) + FIGURE_MODULES
    assert any(p.parent.name == "bugs" and p.name == "draft_law.py" for p in modules)
    found = [line for path in modules for line in unwrapped_literals(path)]
    found = [line for line in found if not figure_literal(line)]
    assert not found, "wrap these in _() with named placeholders:\n" + "\n".join(found)


def figure_literal(line: str) -> bool:
    """True for a literal of ``unwrapped_literals`` that is markup or one of :data:`FIGURE_NOT_MESSAGES`."""
    text = ast.literal_eval(line.split(": ", 1)[1])
    return text.startswith("<") or text in FIGURE_NOT_MESSAGES


PACKAGE = ROOT / "specdec_lite"

#: What a student meets outside the checks: the explorers, the model-pair lines, every module's validators.
STUDENT_MODULES = sorted(
    [*(PACKAGE / "widgets").glob("*.py"), *(PACKAGE / "llm").glob("*.py"), *PACKAGE.glob("*.py")],
)

#: The figures' text (scanned with the checks' text above too).
ALL_FIGURE_MODULES = sorted([*(PACKAGE / "figures").glob("*.py"), PACKAGE / "figure_data.py", PACKAGE / "plotting.py"])


def _scan(paths: list[Path]) -> list[str]:
    return [
        line
        for path in paths
        if path.relative_to(PACKAGE).as_posix() not in RESULTS_FILE_WRITERS
        for line in unwrapped_literals(path)
    ]


def test_every_message_a_student_meets_is_marked_for_translation():
    """Explorers, llm lines and validators (laws, primitives, chains, stats...) reach the student through ``_()``."""
    names = {p.relative_to(PACKAGE).as_posix() for p in STUDENT_MODULES}
    assert {"laws.py", "primitives.py", "widgets/beat_speculative.py", "llm/speed.py"} <= names
    found = _scan([p for p in STUDENT_MODULES if p.name not in ("figure_data.py", "plotting.py")])
    assert not found, "wrap these in _() with named placeholders:\n" + "\n".join(found)


def test_every_message_of_the_figures_is_marked_for_translation():
    found = [line for line in _scan(ALL_FIGURE_MODULES) if not figure_literal(line)]
    assert not found, "wrap these in _() with named placeholders:\n" + "\n".join(found)


#: The benchmark's modules that write ``benchmarks/results.json`` and the benchmark's log: their English is data the
#: Performance page reads (in English, as the file keeps it), showing its names through ``bench.report``'s N_ tables.
BENCH_RESULTS_WRITERS = ("__init__.py", "__main__.py", "engines.py", "llm.py", "sections.py", "timing.py")


def test_every_word_of_the_performance_page_is_marked_for_translation():
    """The figures, tables and sentences of book/performance.md (``bench.report``) reach the reader through ``_()``."""
    modules = [p for p in sorted((PACKAGE / "bench").glob("*.py")) if p.name not in BENCH_RESULTS_WRITERS]
    assert "report.py" in {p.name for p in modules}
    found = _scan(modules)
    assert not found, "wrap these in _() with named placeholders:\n" + "\n".join(found)


def test_the_literal_scan_finds_an_unwrapped_message(tmp_path):
    """The scan above is not blind: it catches an f-string message, a message kept in a dict and a widget's
    label, not ``_()`` ones, nor a choice's value whose label is ``N_()``-marked, nor HTML."""
    source = tmp_path / "m.py"
    source.write_text(
        '"""A docstring with words."""\n'
        'PRESETS = (N_("flat draft"),)\n'
        "def check(x):\n"
        '    """Docstring."""\n'
        '    mistakes = {"you swapped the letters": 1}\n'
        '    ok = _("the output follows q ({x:.3f})").format(x=x)\n'
        '    flat = x == "flat draft"\n'
        '    slider = dict(description="draft quality", html=f"<div class=\\"sd x\\">{x}</div>")\n'
        '    return wrong(f"you returned {x:.3f} instead of p")\n',
        encoding="utf-8",
    )
    found = [line.split(": ", 1)[1] for line in unwrapped_literals(source)]
    assert sorted(found) == ["'draft quality'", "'you returned  instead of p'", "'you swapped the letters'"], found


_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}")


def _one_hot_draft(logits, rng):
    """Lab 9's race fixed, handing the verifier no law (the n-gram path of vllm #40149)."""
    return bugs.buggy_draft(np.array(logits, dtype=float).copy(), rng)[0], None


@pytest.mark.parametrize("draft", [bugs.buggy_draft, _one_hot_draft], ids=["in-place-division", "no-law"])
def test_lab9_draft_check_answers_in_chinese(monkeypatch, draft):
    """The check of the draft's law (Lab 9, section 8) diagnoses its bugs in Chinese, numbers and all."""
    monkeypatch.setenv(_i18n.ENV, "zh_CN")
    fb = bugs.check_draft_probs(draft, runs=2000)
    assert not fb.ok and re.search("[\u4e00-\u9fff]", fb.message), fb.message
    assert not _ENGLISH_RUN.search(fb.message), fb.message
    assert "#16952" in fb.message if draft is bugs.buggy_draft else "#40149" in fb.message, fb.message


@pytest.mark.parametrize(
    "x, digits, written",
    [(0.002997001, 1, "3.0 × 10⁻³"), (1e-12, 0, "1 × 10⁻¹²"), (2.4e-9, 0, "2 × 10⁻⁹"), (12345.0, 0, "1 × 10⁴")],
)
def test_a_small_number_in_the_prose_is_written_with_powers_of_ten_and_no_place_to_break(x, digits, written):
    """``scientific``: a number as a reader writes it, whose spaces are no-break ones (no hyphen for a line to break
    at, as ``3.0e-03`` had on the Chinese instructors page)."""
    got = _i18n.scientific(x, digits)
    assert got.replace("\u00a0", " ") == written and " " not in got and "-" not in got


def test_a_bound_in_the_prose_is_rounded_up():
    """``scientific(..., up=True)``: an upper bound stays an upper bound once rounded (6.2004e-5 is "6.3 × 10⁻⁵")."""
    assert _i18n.scientific(6.2004e-5, 1, up=True).replace("\u00a0", " ") == "6.3 × 10⁻⁵"
    assert _i18n.scientific(9.96e-5, 1, up=True).replace("\u00a0", " ") == "1.0 × 10⁻⁴"
    assert _i18n.scientific(3e-6, 1, up=True).replace("\u00a0", " ") == "3.0 × 10⁻⁶"
