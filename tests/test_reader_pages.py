"""Lab pages say what they are and show what their explorers draw (``book/_ext/reader_pages.py``).

The lab notebooks are the student copies and are not run for the book: each lab page opens with a
banner saying so and how to run it, and after each cell that calls an explorer the page shows a
still, the figure the explorer's own update function draws at the explorer's first settings.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import reader_pages  # noqa: E402

LABS = sorted((ROOT / "notebooks").glob("lab[0-9][0-9]_*.ipynb"))
ZH_LABS = sorted((ROOT / "zh" / "notebooks").glob("lab[0-9][0-9]_*.ipynb"))


def explorer_calls(notebook: Path) -> list[str]:
    """The explorer names that the notebook's code cells call (a cell ending in ``name_explorer(...)``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return [m["name"] for s in sources if (m := reader_pages._EXPLORER_CALL.match(s))]


def test_every_lab_explorer_call_is_found_and_names_an_explorer_of_the_package():
    calls = {lab.stem: explorer_calls(lab) for lab in LABS}
    assert all(calls.values()), f"a lab without an explorer call the page could show: {calls}"
    # every line of a lab that calls an explorer is a cell of its own, as the pattern expects
    for lab in [*LABS, *ZH_LABS]:
        cells = json.loads(lab.read_text(encoding="utf-8"))["cells"]
        lines = [line for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()]
        assert len([x for x in lines if re.match(r"\s*\w+_explorer\(", x)]) == len(explorer_calls(lab)), lab.name
    for name in {n for names in calls.values() for n in names}:
        assert callable(reader_pages._explorer(name))
    with pytest.raises(LookupError):
        reader_pages._explorer("no_such_explorer")


def test_the_still_is_the_figure_the_explorers_update_function_draws_at_its_first_settings():
    from specdec_lite.widgets.token_explorer import token_update

    html, offline, stepped, settings = reader_pages.explorer_still("token_explorer")
    title = token_update().layout.title.text.split("<br>")[0]
    assert not offline and not stepped and 'class="sd-figure"' in html and title in html, title
    # the still names the settings its controls show, as the reader would set them
    assert settings and all(" = " in part for part in settings.split(", ")), settings
    # another seed draws another figure: the still is not any figure of the explorer
    assert token_update(seed=3).layout.title.text.split("<br>")[0] not in html
    svg, _, stepped, _ = reader_pages.explorer_still("round_explorer")
    # the round explorer's step slider at its last step: the still shows the whole round
    assert stepped and svg.startswith("<p><b>step ") and "<svg" in svg
    last = re.match(r"<p><b>step (\d+) of (\d+)", svg)
    assert last and last[1] == last[2], svg[:80]


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_lab_pages_say_they_are_the_student_copy_and_show_each_explorer(built_book, edition):
    words = {"": "This page is the lab's student copy", "zh/": "本页是实验的学生版"}[edition]
    for lab in LABS:
        page = (built_book / edition / "notebooks" / f"{lab.stem}.html").read_text(encoding="utf-8")
        article = page.split('<article class="bd-article"', 1)[1]
        assert words in article.split('class="cell', 1)[0], f"{edition}{lab.stem}: no banner before its first cell"
        stills = article.count('class="sd-explorer-still"')
        assert stills == len(explorer_calls(lab)) > 0, f"{edition}{lab.stem}: {stills} stills"


@pytest.mark.parametrize(
    "title, lines",
    [
        ("实验 1 · 把解码看作马尔可夫链", ["实验 1 · 把解码看作", "马尔可夫链"]),
        ("马尔可夫链上的精确前向递推", ["马尔可夫链", "上的", "精确前向递推"]),
        ("实验 6 · 批量推测解码与草稿树", ["实验 6 · 批量", "推测解码", "与草稿树"]),
        ("实验 2 · 推测解码是无偏的", ["实验 2 · 推测解码", "是无偏的"]),  # no piece of one character
        ("过度接受：Decoding-OPT 与 Decoding-UNO", ["过度接受：Decoding\u2011OPT 与 Decoding\u2011UNO"]),
    ],
)
def test_a_chinese_heading_breaks_between_its_words_never_inside_a_term(title, lines):
    """The zero-width spaces of a Chinese heading: around the terms of zh/terms.yml and after a joining particle."""
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.section("", nodes.title("", title))
    reader_pages._headings(doc, chinese=True)
    shown = next(doc.findall(nodes.title)).astext()
    assert shown.split("\u200b") == lines and shown.replace("\u200b", "").replace("\u2011", "-") == title
    for term in reader_pages._terms():
        assert "\u200b" not in chinese_term_in(shown, term), term


def chinese_term_in(text: str, term: str) -> str:
    """The part of ``text`` that reads as ``term`` once its zero-width spaces are dropped ("" if none)."""
    m = re.search("\u200b?".join(map(re.escape, term)), text)
    return m.group(0) if m else ""


@pytest.mark.parametrize(
    "text, units",
    [
        ("作业：实验 3，以及练习\u00a03.1–\u20603.5。", ["实验 3", "练习\u00a03.1–\u20603.5"]),
        ("见第 7 章，共 50 次运行", ["第 7 章", "50 次"]),
        ("由定理 1(b) 可知", ["定理 1(b) 可"]),
        ("之前讲完第 4 章，每道探索题 1 分，质量为\u00a01 时", ["第 4 章", "1 分", "1 时"]),  # no piece of 讲完, 探索题
        ("随机 7 状态链上", ["7 状态"]),  # 状态 whole after its number
        ("以 int16 存储，用 Qwen2 模型", []),  # a number inside a name is not a number of its own
        ("T = 50 and 2 tokens", []),  # no Chinese word beside a number: nothing is held together
    ],
)
def test_a_chinese_word_and_its_number_stay_on_one_line(text, units):
    """A Chinese word with its number ("练习 3.1") never wraps: a line breaks before 练习, not inside it."""
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.paragraph("", text)
    doc += nodes.paragraph("", "", nodes.literal("", "实验 3"))  # code is left as it is
    reader_pages._chinese_numbers(doc)
    spans = [n.astext() for n in doc.findall(nodes.inline) if "sd-whole-unit" in n["classes"]]
    assert spans == units
    assert doc[0].astext() == text and not list(doc[1].findall(nodes.inline))


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_reference_ends_with_its_link_and_keeps_its_chinese_words_whole(built_book, edition):
    """No full stop follows an entry's last link (on a phone it could wrap alone onto the next line), and the
    Chinese connectives ("预印本", "网址", "载于") never break inside a word: the entries' only Chinese words."""
    refs = (built_book / edition / "book" / "references.html").read_text(encoding="utf-8")
    entries = re.findall(r'<div class="citation"[^>]*>.*?<p>(.*?)</p>', refs, re.S)
    assert len(entries) >= 20, len(entries)
    for entry in entries:
        if "<a " in entry:  # an entry with a URL or a DOI: the link is last
            assert entry.rstrip().endswith("</a>"), entry[-120:]
        text = html.unescape(re.sub("<[^>]+>", "", entry))
        assert not re.search("[\u4e00-\u9fff]{2}", text), text  # two Chinese characters with no word joiner
    if edition:
        assert "预\u2060印\u2060本" in html.unescape(refs) and "网\u2060址" in html.unescape(refs)


def test_a_chinese_link_has_no_space_beside_a_chinese_word():
    """ "由 命题 1.1 得" reads "由命题 1.1 得": the space before a Chinese link text goes, the one after a number stays;
    beside a Latin word both stay."""
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.paragraph(
        "",
        "",
        nodes.Text("由 "),
        nodes.reference("", "命题 1.1", refuri="#p"),
        nodes.Text(" 得，见 "),
        nodes.reference("", "第 3 章", refuri="#c"),
        nodes.Text(" 的 "),
        nodes.reference("", "Decoding-OPT", refuri="#d"),
        nodes.Text(" 一节"),
    )
    reader_pages._chinese_link_spaces(doc)
    assert doc.astext() == "由命题 1.1 得，见第 3 章的 Decoding-OPT 一节"


def test_long_inline_code_breaks_after_its_dots_and_an_option_only_there():
    """A path or dotted name gets a break point after each dot, slash and underscore; an option's chunks stay
    whole (no break after "--" nor at "="), and a line may break before code that starts with "-"."""
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.paragraph(
        "",
        "",
        nodes.Text("学生。"),
        nodes.literal("", "--GradingExecute.measurements=full"),
        nodes.Text(" and "),
        nodes.literal("", "specdec_lite.classroom.execute"),
        nodes.Text(" or "),
        nodes.literal("", "--json"),
        nodes.Text(" ("),
        nodes.literal("", "--nthreads 1"),
        nodes.Text(")"),
    )
    reader_pages._short_code(doc)
    reader_pages._break_before_options(doc)
    reader_pages._prose_code(doc)
    shown = "".join(n.astext() for n in doc[0].children)
    assert shown.startswith("学生。<wbr><code") and " or <wbr>--json (<code" in shown  # not after "("
    assert (
        '<span class="pre sd-whole-token">--GradingExecute.</span><wbr>'
        '<span class="pre sd-whole-token">measurements=full</span>'
    ) in shown
    assert '<span class="pre">specdec_lite.<wbr>classroom.<wbr>execute</span>' in shown  # parts, not "_"
    assert [lit.astext() for lit in doc.findall(nodes.literal)] == ["--json"]  # short: left whole (sd-whole)
    # in the text: a short first part stays with the next ("sd.", "zh/"); only a long part breaks at "_"
    assert reader_pages._prose_chunks("sd.acceptance(p, q)") == ["sd.acceptance(p, q)"]
    assert reader_pages._prose_chunks("zh/notebooks/lab01_markov_chains.ipynb") == [
        "zh/notebooks/",
        "lab01_",
        "markov_",
        "chains.ipynb",
    ]
    assert reader_pages._prose_chunks("sd.theory.pareto_point") == ["sd.theory.", "pareto_point"]
    assert reader_pages._prose_chunks("check_expected_rejections_two_state")[:2] == ["check_", "expected_"]
    # after "_" too, never a short last part alone ("rejection_" over "law")
    assert reader_pages._prose_chunks("check_unbiased_rejection_law") == ["check_", "unbiased_", "rejection_law"]
    # a file keeps its extension; a version its numbers
    assert reader_pages._code_chunks("notebooks/lab03_rejections.ipynb") == ["notebooks/", "lab03_", "rejections.ipynb"]
    assert reader_pages._code_chunks("grading_cost.py --runs 3") == ["grading_", "cost.py --runs 3"]
    assert reader_pages._code_chunks("ipykernel==6.31.0") == ["ipykernel==6.31.0"]


def test_a_date_a_key_chord_and_a_numbered_name_stay_whole():
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.paragraph(
        "",
        "Measured on 2026-12-06; Ctrl-C stops it; draft-tree and wall-clock stay; Theorem 1(a) and Exercise 3.4 hold;"
        " SHA-256 of pythia-410m, Decoding-OPT (TensorRT-LLM).",
    )
    reader_pages._whole_units(doc, reader_pages._WHOLE_UNIT)
    spans = [n.astext() for n in doc.findall(nodes.inline) if "sd-whole-unit" in n["classes"]]
    assert spans == [
        "2026-12-06",
        "Ctrl-C",
        "Theorem 1(a)",
        "Exercise 3.4",
        "SHA-256",
        "pythia-410m",
        "Decoding-OPT",
        "TensorRT-LLM",
    ]


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_phone_cards_labels_keep_the_headers_code(built_book, edition):
    """On a phone the Instructors page's tables read as cards, each line labelled with its column's header: a
    header's code name (``--jobs 1``) stays code in the label, as it is in the header row."""
    page = (built_book / edition / "book" / "instructors.html").read_text(encoding="utf-8")
    labels = re.findall(r'<span class="sd-cell-label" aria-hidden="true">(.*?)</span>', page, re.S)
    assert labels, "no card labels on the Instructors page"
    assert any("<code" in label and "--jobs" in label for label in labels), labels[:20]
    assert not any("&lt;code" in label for label in labels)


def test_a_chinese_ordinal_and_measure_word_stay_with_a_short_formula_or_a_computed_number():
    """ "在第 $m \\le k$ 阶段", "持有 $1$ 个", "{glue} 个位置": no-break spaces; a long formula keeps its spaces, and so
    does a Chinese name with hyphens that is no number ("ml-explore" is kept whole by its own rule)."""
    from docutils import nodes

    doc = nodes.document(None, None)
    glued = nodes.inline("", "12", classes=["pasted-text"])
    doc += nodes.paragraph(
        "", "", nodes.Text("在第 "), nodes.math("", r"m \le k"), nodes.Text(" 阶段接受，持有 "), nodes.math("", "1"),
        nodes.Text(" 个；共 "), glued, nodes.Text(" 个位置，"), nodes.math("", r"\sum_x \max(0, p(x) - q(x))"),
        nodes.Text(" 很长。"),
    )  # fmt: skip
    reader_pages._chinese_math_numbers(doc)
    # a formula is a box a browser may break beside: it goes in one never-wrapping span with its words
    units = [n.astext() for n in doc[0].children if isinstance(n, nodes.inline) and "sd-whole-unit" in n["classes"]]
    assert units == ["第\u00a0m \\le k\u00a0阶", "1\u00a0个"]
    texts = [n.astext() for n in doc[0].children if isinstance(n, nodes.Text)]
    assert texts == ["在", "段接受，持有 ", "；共 ", "\u00a0个位置，", " 很长。"]
    assert reader_pages._ASCII_HYPHEN_NAME.findall("见 ml-explore/mlx-swift-lm #459，top-k 与中文") == [
        "ml-explore",
        "mlx-swift-lm",
        "top-k",
    ]


def test_a_word_hyphenated_to_a_formula_and_a_repository_name_stay_whole():
    """ "top-$k$/top-$p$", "min-$p$" and "$m$-th" never break at their hyphen (a browser breaks after a hyphen,
    even beside a formula's box); nor does a repository's name in the text ("vllm-project/vllm")."""
    from docutils import nodes

    def unit_texts(*parts: str) -> list[str]:
        doc = nodes.document(None, None)
        para = nodes.paragraph()
        for part in parts:
            para += nodes.math(part[1:], part[1:]) if part.startswith("$") else nodes.Text(part)
        doc += para
        reader_pages._hyphenated_math(doc)
        reader_pages._whole_units(doc, reader_pages._REPOSITORY)
        return [n.astext() for n in doc.findall(nodes.inline) if "sd-whole-unit" in n["classes"]]

    assert unit_texts("no top-", "$k", "/top-", "$p", " filtering, a ", "$p", "-value of 0") == [
        "top-k/top-p",
        "p-value",
    ]
    assert unit_texts("（temperature、top-", "$k", "、min-", "$p", "、惩罚项") == ["top-k", "min-p"]
    assert unit_texts("the ", "$m", "-th token; a ", "$k", " - 1 draft") == ["m-th"]
    assert unit_texts("see vllm-project/vllm #10198 and jaymody/speculative-sampling; 1/s and/or") == [
        "vllm-project/vllm",
        "jaymody/speculative-sampling",
    ]


def test_short_code_keeps_its_words_together_and_a_short_english_word_may_end_a_line():
    from docutils import nodes

    assert "tv(p,\u00a0q)" in reader_pages._breakable_code("tv(p, q)")  # a table's short code: whole
    assert "u\u00a0&lt;=\u00a0b" in reader_pages._breakable_code("u <= b")
    doc = nodes.document(None, None)
    doc += nodes.paragraph("", "", nodes.literal("", "Copy of lab03_rejections.ipynb"))
    reader_pages._prose_code(doc)
    shown = doc[0][0].astext()
    # "of" stays with "Copy", and the line may break after it
    assert '<span class="pre">Copy</span>\u00a0<span class="pre">of</span> <span' in shown


def test_no_line_ends_with_an_opening_bracket_before_a_unit():
    """ "（" before a formula kept with its measure word ("禁止的词元（$q = 0$ 的词元"), and "top-$k$" whose formula
    is already in such a unit, stay with it."""
    from docutils import nodes

    doc = nodes.document(None, None)
    para = nodes.paragraph()
    para += [nodes.Text("不做 top-"), nodes.math("k", "k"), nodes.Text(" 过滤（"), nodes.math("q = 0", "q = 0")]
    para += nodes.Text(" 的词元）")
    doc += para
    reader_pages._chinese_math_numbers(doc)
    reader_pages._hyphenated_math(doc)
    reader_pages._openings_into_units(doc)
    units = [n.astext() for n in para.children if isinstance(n, nodes.inline)]
    assert units == ["top-k\u00a0过", "（q = 0\u00a0的"], units
