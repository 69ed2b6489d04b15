"""Part I pages and labs: exercises with solutions, code included from the package, lab pages built."""

import inspect
import json
import re
from pathlib import Path

import pytest

import specdec_lite as sd
from specdec_lite.figures import part1 as F

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ["ch01_markov_chains", "ch02_unbiased", "ch03_rejections"]
LABS = ["lab01_markov_chains", "lab02_unbiased", "lab03_rejections"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_has_three_exercises_with_dropdown_solutions(chapter):
    text = (ROOT / "book" / f"{chapter}.md").read_text()
    exercises = re.findall(r":::\{exercise\}\n:label: (\S+)", text)
    solutions = re.findall(r":::\{solution\} (\S+)\n:class: dropdown", text)
    assert len(exercises) >= 3 and sorted(exercises) == sorted(solutions)
    kinds = text.lower()
    assert "*coding (lab" in kinds and "*exploration (lab" in kinds


def test_chapters_include_package_code_not_copies():
    ch02 = (ROOT / "book" / "ch02_unbiased.md").read_text()
    assert "```{literalinclude} ../specdec_lite/reference.py\n:language: python\n:pyobject: speculative_one" in ch02
    ch03 = (ROOT / "book" / "ch03_rejections.md").read_text()
    assert ":pyobject: rejection_profile" in ch03
    for chapter in CHAPTERS:  # no formula is redefined in a chapter
        assert not re.search(r"^def ", (ROOT / "book" / f"{chapter}.md").read_text(), re.M)


def test_built_pages_show_the_reference_code_and_slider_figures(built_book):
    ch02 = (built_book / "book" / "ch02_unbiased.html").read_text()
    assert "speculative_one" in ch02 and "oracle_calls" in ch02
    assert "oracle_calls" in inspect.getsource(sd.reference.speculative_one)
    for chapter, sliders in (("ch01_markov_chains", 1), ("ch02_unbiased", 1), ("ch03_rejections", 2)):
        html = (built_book / "book" / f"{chapter}.html").read_text()
        assert html.count('"sliders":[{') >= sliders, chapter
        assert "plotly.min.js" in html
    for lab in LABS:
        assert (built_book / "notebooks" / f"{lab}.html").is_file()


def test_grid_layout_matches_the_cells():
    layout, cells = F.grid(2, 3, ["a", "b", "c", "d"], col_widths=(1, 2, 1))
    assert cells[0] == ("x", "y") and cells[4] == ("x5", "y5") and len(cells) == 6
    assert [a["text"] for a in layout["annotations"]] == ["a", "b", "c", "d"]
    xd = [layout[k]["domain"] for k in ("xaxis", "xaxis2", "xaxis3")]
    assert xd[0][0] == 0 and xd[2][1] == pytest.approx(1) and all(d[0] < d[1] for d in xd)
    assert (xd[1][1] - xd[1][0]) == pytest.approx(2 * (xd[0][1] - xd[0][0]))
    assert layout["yaxis"]["domain"][1] == 1 and layout["yaxis4"]["domain"][0] == pytest.approx(0)
    assert json.dumps(layout)  # plain data, no plotly objects
