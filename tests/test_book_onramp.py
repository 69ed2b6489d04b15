"""What a newcomer meets in the chapters: takeaways, numbered figures, primers, the worked round."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "book").glob("ch0*.md"))
#: Figures drawn only for some model pairs: captioned, but the prose cannot point at a number that may not exist.
CONDITIONAL_FIGURES = {"fig-ch08-training"}
#: A line of a code cell that displays a figure (plotly through ``show``, or an SVG or HTML picture).
FIGURE_CALL = r"^\s*show\(|^SVG\(|^HTML\("
#: Tools beyond basic probability, each introduced by a primer where it first appears.
PRIMERS = {
    "hybrid argument": "Primer: the hybrid argument",
    "Horner's rule": "Primer: Horner's rule",
    "renewal–reward": "Primer: the renewal–reward theorem",
    "Wald's identity": "Primer: stopping times, Wald's identity",
    "Lambert $W$": "Primer: the Lambert $W$ function",
}


def text(chapter: str) -> str:
    return (ROOT / "book" / f"{chapter}.md").read_text()


def code_cells(source: str) -> list[tuple[str, str]]:
    """``(header, body)`` of every code cell; the header holds its options or YAML metadata."""
    cell = r"```\{code-cell\} ipython3\n(---\n.*?\n---\n|(?::[^\n]*\n)*)(.*?)```"
    return re.findall(cell, source, re.S)


def test_every_chapter_is_found():
    assert len(CHAPTERS) == 8


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_ends_with_key_takeaways_before_the_exercises(chapter):
    source = text(chapter)
    match = re.search(r"\n## Key takeaways\n\n(.*?)\n## (.*?)\n", source, re.S)
    assert match, "a '## Key takeaways' section is missing"
    assert match[2] == "Exercises", "the takeaways come just before the exercises"
    bullets = re.findall(r"^\* ", match[1], re.M)
    assert 3 <= len(bullets) <= 5, f"{len(bullets)} bullets"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_cell_is_numbered_captioned_and_referenced(chapter):
    source = text(chapter)
    figures = 0
    for header, body in code_cells(source):
        if not re.search(FIGURE_CALL, body, re.M):
            continue
        figures += 1
        assert "mystnb:\n  figure:\n    caption:" in header, f"a figure without a caption:\n{body[:200]}"
        name = re.search(r"\n    name: (\S+)\n", header)
        assert name and name[1].startswith(f"fig-{chapter[:4]}-"), header
        assert len(re.findall(FIGURE_CALL, body, re.M)) == 1, "one figure per cell: each gets its number"
        if name[1] not in CONDITIONAL_FIGURES:
            assert f"{{numref}}`{name[1]}`" in source, f"{name[1]} is never referenced from the text"
    assert figures >= 1
    assert "Figure (a)" not in source and "figure (b)" not in source.lower()


def test_primers_where_each_tool_first_appears():
    for tool, title in PRIMERS.items():
        first = next(c for c in CHAPTERS if tool in text(c))
        source = text(first)
        primer = re.search(rf":::\{{admonition\}} {re.escape(title)}.*?\n:class: dropdown\n(.*?)\n:::", source, re.S)
        assert primer, f"{tool}: no dropdown primer in {first}"
        assert source.index(tool) <= source.index(title) + 200, f"{tool}: the primer should follow its first use"


def test_hidden_table_code_in_chapters_5_and_8():
    """Cells that print or display a table (a loop of prints or of Markdown rows) show their output and fold their
    code."""
    for chapter in ("ch05_tradeoff", "ch08_real_models"):
        tables = 0
        for header, body in code_cells(text(chapter)):
            if re.search(r"^for .*:$", body, re.M) and ("print(" in body or "display(Markdown(" in body):
                tables += 1
                assert "hide-input" in header or "remove-input" in header, f"{chapter}: {body[:120]}"
        assert tables >= 2, chapter


def test_worked_round_numbers_are_glued_not_typed():
    source = text("ch02_unbiased")
    section = source[source.index("## One round, step by step") : source.index("## The rejection-sampling step")]
    prose = re.sub(r"```\{code-cell\}.*?```", "", section, flags=re.S)
    prose = re.sub(r"\$\$.*?\$\$", "", prose, flags=re.S)  # the example's laws themselves are its data
    glued = re.findall(r"\{glue:text\}`([\w-]+)", prose)
    assert len(glued) >= 10
    # every computed probability of the walk-through comes from a glue, none typed by hand
    for typed in ("0.667", "0.25 ", "0.75", "0.216", "0.4 "):
        assert typed not in prose, typed


def test_built_chapters_number_every_figure(built_book):
    for chapter in CHAPTERS:
        html = (built_book / "book" / f"{chapter}.html").read_text()
        figures = re.findall(r"<figure\b.*?</figure>", html, re.S)
        plots = html.count('class="plotly-graph-div"')
        in_figures = sum(f.count('class="plotly-graph-div"') for f in figures)
        assert in_figures == plots, f"{chapter}: {plots - in_figures} plotly figures outside a numbered figure"
        for f in figures:
            assert re.search(r'<span class="caption-number">[^<]*\d', f), f"{chapter}: a figure without a number"
    ch02 = (built_book / "book" / "ch02_unbiased.html").read_text()
    assert "one round of speculative decoding" in ch02.lower() and re.search(r'<img[^>]+\.svg"', ch02)
    walk = re.sub(r"<[^>]+>", "", ch02[ch02.index("One round, step by step") :])
    assert "0.667" in walk and "0.250" in walk and "0.216" in walk


def test_chapter8_numbers_come_from_the_shipped_pair_not_from_typing():
    """The pair's sizes, training and the eps sweep are glued; claims without data are gone."""
    source = text("ch08_real_models")
    for typed in (
        "nine times",
        "three minutes",
        "thousandths",
        "few hundredths",
        "2048 tokens",
        "$c_K$ stays",
        "carry over unchanged",
    ):
        assert typed not in source, typed
    glued = set(re.findall(r"\{glue:text\}`([\w-]+)", source))
    assert {"ch08-param-ratio", "ch08-train-minutes", "ch08-size-mib", "ch08-rej-eps1", "ch08-gpu-note"} <= glued
    assert "load_pair(hub=False" in source  # the page never takes the hub branch
    assert "progress=False" in source and "set_verbosity_error" in source
