"""Long inline formulas offer a browser TeX's line breaks (``book/_ext/math_breaks.py``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import math_breaks  # noqa: E402

INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$(?!\$)")
CODE = re.compile(r"^(```|~~~).*?^\1|`[^`\n]+`", re.S | re.M)  # code blocks and inline code: no formulas


@pytest.mark.parametrize(
    ("tex", "expected"),
    [
        (r"1 + \mathrm{Binomial}(k - m, p_n(x))", [r"1 +{}", r"\mathrm{Binomial}(k - m, p_n(x))"]),
        (r"\rho_n \downarrow q_n(\{x : p_n(x) = 0\})", [r"\rho_n \downarrow{}", r"q_n(\{x : p_n(x) = 0\})"]),
        (r"G_\infty = q\,\mathbf 1\{p = 0\} \le G_{M+1}", [r"G_\infty ={}", r"q\,\mathbf 1\{p = 0\} \le{}", "G_{M+1}"]),
        # a pair: cut inside it, since nothing is outside (not after "k", one symbol)
        (
            r"(x, 1 + \mathrm{Binomial}(k - m, p_n(x \mid u)))",
            [r"(x, 1 +{}", r"\mathrm{Binomial}(k - m, p_n(x \mid u)))"],
        ),
        # a sign is no operator; a sized bracket is a bracket
        (
            r"\bigl[\mathrm{TV} - \rho\bigr](x) = -1 + y_{n-1}",
            [r"\bigl[\mathrm{TV} - \rho\bigr](x) ={}", r"-1 +{}", "y_{n-1}"],
        ),
        # nothing outside the brackets and more than one pair: whole
        (r"(v - u)(1 - (1-u)^{M-1}) (w + z)", [r"(v - u)(1 - (1-u)^{M-1}) (w + z)"]),
        # short, an environment, \left ... \right: whole
        (r"h = \max(q - p, 0)", [r"h = \max(q - p, 0)"]),
        # a very long piece with no outer place: cut inside its brackets where each side holds a few symbols
        (r"\sum_x \max(0, b(x)\,p(x) - q(x))", [r"\sum_x \max(0, b(x)\,p(x) -{}", "q(x))"]),
        (r"(D + 1)\bigl(s(s + 2) - D(D + 2)\bigr) \ge 0", [r"(D + 1)\bigl(s(s + 2) -{}", r"D(D + 2)\bigr) \ge{}", "0"]),
        (r"a = \begin{cases} 1 & x = 0 \\ 2 + y + z + w & \end{cases}", None),
        (r"\left( a + b + c + d + e + f + g + h \right) = 0 + 1 + 2", None),
        # a list's commas (never a function's arguments'), the spacing after a cut kept before it
        (r"\tilde x_{n_0}, \dots, \tilde x_{n_0+k-1}", [r"\tilde x_{n_0},{}", r"\dots,{}", r"\tilde x_{n_0+k-1}"]),
        (
            r"h = (0,\ 0,\ 0.25,\ 0.75) + \min(1, 0.4, 0.7)",
            [r"h ={}", r"(0,\ 0,\ {}", r"0.25,\ {}", r"0.75) +{}", r"\min(1, 0.4, 0.7)"],
        ),
        # a slash between long parts, never inside a function's arguments
        (
            r"\mathcal P = (q - b\,p) / \sum_y (1 - b(y))\, p(y)",
            [r"\mathcal P ={}", r"(q - b\,p) /{}", r"\sum_y (1 - b(y))\, p(y)"],
        ),
        # a slash in a formula short enough between its relations is no break: only a long piece's
        (r"b(x) = q(x)/p(x) + r(x)/s(x)", [r"b(x) ={}", r"q(x)/p(x) +{}", r"r(x)/s(x)"]),
        # a relation with a script, two relations in a row: no cut at the first
        (r"a_1 + a_2 \to_{n} b \le = c_1 c_2 c_3", [r"a_1 +{}", r"a_2 \to_{n} b \le ={}", "c_1 c_2 c_3"]),
    ],
)
def test_a_long_formula_is_cut_after_its_outer_relations_and_operators(tex, expected):
    assert math_breaks.pieces(tex) == (expected or [tex])


def _balanced(tex: str) -> bool:
    depth = 0
    for tok in math_breaks._TOKEN.findall(tex):
        depth += (tok == "{") - (tok == "}")
        if depth < 0:
            return False
    return depth == 0


def test_every_piece_of_every_inline_formula_of_the_book_is_a_formula_and_they_read_as_the_whole():
    """Each piece has balanced groups and no ``\\left`` without its ``\\right``; the pieces, joined without their
    closing ``{}``, are the formula (spaces aside). Both editions' chapters, appendices and labs."""
    sources = [*ROOT.glob("book/*.md"), *ROOT.glob("zh/book/*.md")]
    prose = [CODE.sub("", s.read_text(encoding="utf-8")) for s in sources]
    formulas = {m.group(1) for text in prose for m in INLINE.finditer(text)}
    assert len(formulas) > 500, len(formulas)
    cut = 0
    for tex in formulas:
        parts = math_breaks.pieces(tex)
        cut += len(parts) > 1
        for piece in parts:
            assert _balanced(piece), (tex, piece)
            assert len(re.findall(r"\\left\b", piece)) == len(re.findall(r"\\right\b", piece)), (tex, piece)
        joined = "".join(p.removesuffix("{}") if k < len(parts) - 1 else p for k, p in enumerate(parts))
        assert re.sub(r"\s", "", joined) == re.sub(r"\s", "", tex)
    assert cut > 50, cut  # the long formulas are many: the rule does reach them


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_long_inline_formula_on_a_page_is_pieces_with_a_break_between(built_book, edition):
    """Chapter 6's count of survivors after an acceptance, ``k' ~ 1 + Binomial(k − m, p_n(x | u))``, may break
    after its "~" and its "+" on a phone: three formulas with a ``<wbr>`` between each two."""
    page = (built_book / edition / "book" / "ch06_batch.html").read_text(encoding="utf-8")
    math = r'(<span class="sd-math-punct">)?<span class="math[^"]*">\\\('
    pieces = [
        r"k' \\sim\{\}\\\)</span><wbr>",
        r"1 \+\{\}\\\)</span><wbr>",
        r"\\mathrm\{Binomial\}\(k - m, p_n\(x \\mid u\)\)",
    ]
    assert re.search(math.join(pieces), page)


def test_a_formula_that_starts_with_a_relation_never_starts_a_line():
    """ "of total 0.4 $= TV(p, q) =$": the space before the "=" becomes a no-break space; other spaces stay."""
    from docutils import nodes

    doc = nodes.document(None, None)
    doc += nodes.paragraph(
        "", "", nodes.Text("of total 0.4 "), nodes.math("", r"= \mathrm{TV}(p, q) ="), nodes.Text(" and "),
        nodes.math("", r"x + 1"),
    )  # fmt: skip
    math_breaks._split(doc)
    texts = [n.astext() for n in doc[0].children if isinstance(n, nodes.Text)]
    assert texts == ["of total ", " and "]
    unit = doc[0][1]  # the word before and the formula's first piece, in one never-wrapping span
    assert unit["classes"] == ["sd-whole-unit"] and unit[0].astext() == "0.4\u00a0" and isinstance(unit[1], nodes.math)
