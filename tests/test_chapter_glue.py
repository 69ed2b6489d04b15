"""Chapters 3, 5, 6 and 7 glue the numbers they compute instead of typing them.

Static checks on the MyST sources (the built book's check is that it builds with
``-W``, which fails on a missing glue key): every ``{glue:text}`` key the prose uses
is produced by a ``glue(...)`` call of the same page, every glued value is a plain
Python number or the text of ``scientific`` (``np.float64`` prints as ``np.float64(...)``, which MyST-NB cannot
format), and the sentences that once quoted hand-computed numbers no longer do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = ["ch03_rejections", "ch05_tradeoff", "ch06_batch", "ch07_lookahead"]


def source(chapter: str) -> str:
    return (BOOK / f"{chapter}.md").read_text()


def glue_calls(text: str) -> list[tuple[str, str]]:
    """``(key pattern, value expression)`` of every ``glue(...)`` call in the page's code cells."""
    cells = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, flags=re.S))
    return re.findall(r'glue\(f?"([^"]+)", (.*?), display=False\)', cells)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_glued_key_is_computed_on_its_page(chapter):
    text = source(chapter)
    patterns = [re.compile(re.sub(r"\\\{[^}]*\\\}", r"[\\w-]+", re.escape(key)) + "$") for key, _ in glue_calls(text)]
    used = set(re.findall(r"\{glue:text\}`([\w-]+)", text))
    assert len(used) >= 5, chapter
    missing = sorted(k for k in used if not any(p.match(k) for p in patterns))
    assert not missing, f"{chapter}: glued in the prose but never computed: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_glued_values_are_plain_numbers(chapter):
    calls = glue_calls(source(chapter))
    assert calls
    for key, value in calls:
        # scientific(...) returns the text "9.3 × 10⁻⁶", which MyST-NB shows as it is
        assert value.startswith(("float(", "int(", "scientific(")), f"{chapter}: glue {key!r} is not converted: {value}"


def test_the_hand_computed_claims_are_gone():
    ch03, ch05, ch06, ch07 = (source(c) for c in CHAPTERS)
    assert "roughly doubles" not in ch03 and "{glue:text}`ch03-halving-1" in ch03
    assert r"K \ge 20" not in ch07 and "{glue:text}`ch07-cross-q30`" in ch07
    assert "800 random small instances" not in ch05 and "{glue:text}`ch05-instances`" in ch05
    assert "in every random instance the tests try" not in ch06
    assert "0.5256" not in ch06 and "$0.832$" not in ch03 and "1.674" not in ch07
    for page in [*CHAPTERS, "notation"]:
        assert not re.search(r"O\(TV", source(page)), f"{page}: O(TV...) reads as total variation"
