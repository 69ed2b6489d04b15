"""Long inline formulas that may break across lines, where TeX would break them (HTML only).

MathJax 3 never breaks an inline formula, so on a phone a long one goes whole to the next line and leaves
the line before it mostly empty. TeX breaks an inline formula after a relation (``=``, ``\\le``, ``\\to``) or a
binary operator (``+``, ``-``) outside its groups. This extension offers a browser the same places: a long
formula is set as consecutive formulas cut after such a symbol outside every bracket and group (in a piece
still long, also inside its outermost brackets), with a ``<wbr>`` between them. Each piece but the last ends
with ``{}``, so the symbol keeps the space after it, and on one line the pieces read as the formula did. A
formula with an environment, an alignment or ``\\left … \\right`` is left whole, and so is a short one. A
formula that starts with a relation stays on the line of the word before it.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from docutils import nodes
from reader_pages import _CLOSING, _ancestors  # one list of closing punctuation for both extensions

#: A formula (a piece) shorter than this many visible symbols stays one piece.
LONG = 12
#: A cut inside brackets leaves at least this many symbols on each side within them.
SIDE = 3
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[{}]|\s+|.", re.S)
_RELATIONS = {
    "=", "<", ">", r"\le", r"\leq", r"\ge", r"\geq", r"\ne", r"\neq", r"\approx", r"\to", r"\rightarrow",
    r"\downarrow", r"\uparrow", r"\sim", r"\in", r"\equiv", r"\propto", r"\mapsto", r"\Rightarrow", r"\iff",
    r"\subseteq", r"\subset", r"\ll", r"\gg", r"\leftarrow", r"\gets",
}  # fmt: skip
_BINARY = {"+", "-", r"\pm", r"\times", r"\cdot"}
_OPEN = {"(", "[", r"\{", r"\lbrace", r"\langle", r"\lvert", r"\lVert", r"\lfloor", r"\lceil"}
_CLOSE = {")", "]", r"\}", r"\rbrace", r"\rangle", r"\rvert", r"\rVert", r"\rfloor", r"\rceil"}
_SIZED_OPEN = {r"\bigl", r"\Bigl", r"\biggl", r"\Biggl"}
_SIZED_CLOSE = {r"\bigr", r"\Bigr", r"\biggr", r"\Biggr"}
#: After these a "-" or "+" is a sign, not an operator, and offers no break.
_NO_OPERAND = _RELATIONS | _BINARY | _OPEN | {",", ";", ":", "{", "^", "_", "&"}
_WHOLE = re.compile(r"\\begin|\\left\b|&|\\\\")
_NAMES = re.compile(r"\\(?:mathrm|mathbf|mathit|mathcal|mathbb|operatorname|text|mathsf|mathtt)\b")


def _visible(tex: str) -> int:
    """About how many symbols the formula shows: a command counts one, a name's letters each."""
    tex = _NAMES.sub("", tex)
    return sum(1 for t in _TOKEN.findall(tex) if not t.isspace() and t not in "{}_^")


def _cuts(tokens: list[str]) -> dict[int, tuple[int, int, int, bool]]:
    """Each place after a relation, a binary operator, or a list's comma or a slash (not in a function's arguments)
    outside every group: its index, its bracket depth, the span of the brackets around it (the whole formula at
    depth 0) and whether it follows a comma or a slash."""
    cuts, braces, before = {}, 0, None  # before: the last token that is not a space
    opened, spans = [], {}  # the open brackets' indices; each bracket's index and its closing one's
    arguments = set()  # the brackets that open a function's arguments
    for i, tok in enumerate(tokens):
        if tok.isspace():
            continue
        sized = before in _SIZED_OPEN or before in _SIZED_CLOSE
        if tok == "{":
            braces += 1
        elif tok == "}":
            braces -= 1
        elif (tok in _OPEN and not sized) or tok in _SIZED_OPEN:
            opened.append(i)
            if before is not None and before not in _NO_OPERAND | _SIZED_OPEN:
                arguments.add(i)  # a function's arguments, "\\min(1, x)": never cut at their commas
        elif (tok in _CLOSE and not sized) or tok in _SIZED_CLOSE:
            if not opened:
                return {}
            spans[opened.pop()] = i
        elif braces == 0 and before not in ("^", "_", r"\not"):
            operator = tok in _BINARY and before is not None and before not in _NO_OPERAND
            listed = tok in (",", "/") and not (opened and opened[-1] in arguments)
            if tok in _RELATIONS or operator or listed:
                nxt = next((t for t in tokens[i + 1 :] if not t.isspace()), None)
                if nxt is not None and nxt not in ("^", "_") and nxt not in _RELATIONS:
                    cuts[i + 1] = (len(opened), opened[-1] if opened else -1, listed)
        before = tok
    if braces or opened:
        return {}
    spans[-1] = len(tokens)
    return {i: (depth, start, spans[start], listed) for i, (depth, start, listed) in cuts.items()}


#: Spacing after a cut stays with the piece before it: a line never starts with a space ("(0,\\ 0,\\ 0.1)").
_SPACING = {r"\ ", r"\,", r"\:", r"\;", r"\!", r"\quad", r"\qquad"}


def _past_spacing(tokens: list[str], i: int) -> int:
    while i < len(tokens) - 1 and (tokens[i].isspace() or tokens[i] in _SPACING):
        i += 1
    return i


def _trimmed(tokens: list[str]) -> list[str]:
    """Without the white space at either end (a token, so that the space of a "\\ " stays)."""
    a, b = 0, len(tokens)
    while a < b and tokens[a].isspace():
        a += 1
    while b > a and tokens[b - 1].isspace():
        b -= 1
    return tokens[a:b]


def pieces(tex: str) -> list[str]:
    """``tex`` cut after each relation or binary operator outside every bracket; a piece still long is cut
    again at the shallowest such symbol, list's comma or slash that has a few symbols on each side within its
    brackets and the piece."""
    if _visible(tex) < LONG or _WHOLE.search(tex):
        return [tex]
    tokens = _TOKEN.findall(tex)
    cuts = _cuts(tokens)
    chosen = [i for i, (depth, _, _, listed) in cuts.items() if depth == 0 and not listed]
    bounds = [0, *chosen, len(tokens)]
    for a, b in pairwise(bounds):
        if _visible("".join(tokens[a:b])) < LONG:
            continue
        inner = {
            i: depth
            for i, (depth, start, end, _) in cuts.items()
            if a < i < b
            and _visible("".join(tokens[max(start + 1, a) : i - 1])) >= SIDE
            and _visible("".join(tokens[i : min(end, b)])) >= SIDE
        }
        chosen += [i for i, depth in inner.items() if depth == min(inner.values())]
    bounds = [0, *sorted(_past_spacing(tokens, i) for i in chosen), len(tokens)]
    out = ["".join(_trimmed(tokens[a:b])) for a, b in pairwise(bounds)]
    return [p + "{}" for p in out[:-1]] + [out[-1]]


def _split(doctree: nodes.document) -> None:
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None or any(isinstance(a, (nodes.title, nodes.subtitle)) for a in _ancestors(parent)):
            continue
        parts = pieces(math.astext())
        at = parent.index(math)
        new: list[nodes.Node] = []
        for k, tex in enumerate(parts):
            if k:
                new.append(nodes.raw("", "<wbr>", format="html"))
            new.append(nodes.math(tex, tex) if len(parts) > 1 else math)
        parent[at : at + 1] = new
        _glue_to_word_before(new[0])


#: The word a formula that starts with a relation is kept with: the last word in Latin letters, or one character.
_LAST_WORD = re.compile(r"([A-Za-z0-9_.,;:()'\u2019-]+|\S)(\s*)$")


def _glue_to_word_before(math: nodes.math) -> None:
    """A formula that starts with a relation ("of total 0.4 $= \\mathrm{TV}(p, q)$") never starts a line, as TeX
    never breaks before a relation: its first piece and the word before it go in one ``sd-whole-unit`` span
    (reader_pages.css: no wrap). A no-break space alone would not do: a browser may break beside a formula's box."""
    first = next((t for t in _TOKEN.findall(math.astext()) if not t.isspace()), None)
    parent = math.parent
    at = parent.index(math)
    before = parent[at - 1] if at else None
    if first not in _RELATIONS or not isinstance(before, nodes.Text):
        return
    unit = nodes.inline(classes=["sd-whole-unit"])
    m = _LAST_WORD.search(before.astext())
    word = parent[at - 2] if at >= 2 else None
    if m is not None:
        unit += nodes.Text(m[1] + ("\u00a0" if m[2] else ""))
        parent[at - 1] = nodes.Text(before.astext()[: m.start()])
    elif isinstance(word, nodes.inline) and before.astext().isspace():  # a computed number, then a space
        parent.remove(word)
        at -= 1
        unit += word
        unit += nodes.Text("\u00a0")
        parent[at - 1] = nodes.Text("")
    else:
        return
    parent.remove(math)
    unit += math
    after = parent[at] if at < len(parent) else None
    close = _CLOSING.match(after.astext()) if isinstance(after, nodes.Text) else None
    if close:  # its punctuation too, as reader_pages does for every formula ("sd-math-punct")
        unit += nodes.Text(close.group())
        parent[at] = nodes.Text(after.astext()[close.end() :])
    parent.insert(at, unit)


def _resolved(app: Any, doctree: nodes.document, docname: str) -> None:
    if app.builder.format == "html":
        _split(doctree)


def setup(app: Any) -> dict[str, Any]:
    # before reader_pages, which keeps the last piece on one line with the punctuation after it
    app.connect("doctree-resolved", _resolved, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
