"""One round of speculative decoding, worked out with numbers and drawn as a picture.

``worked_round`` plays one round on a small vocabulary with given uniforms, so every
number of the round (acceptance probabilities ``min(1, q/p)``, the tests, the residual
``[q - p]_+`` and the token drawn from it, or the bonus token) comes from ``laws``;
``round_svg`` draws one or more such rounds (``describe_round`` says in words what
each picture shows, its text alternative): the draft proposes, one oracle call
scores every draft, the drafts are checked left to right, the first rejection is
replaced by a residual draw, and a round that accepts all its drafts adds a bonus
token from the target. To keep the arithmetic short the two models here ignore the
context: every position uses the same ``p`` and ``q``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from .._i18n import N_, _, language
from ..laws import acceptance, check_law, residual
from ..primitives import check_int, cumulative, sample_rows


@dataclass(frozen=True)
class WorkedRound:
    """Everything that happens in one round (token ids index ``vocab``)."""

    vocab: tuple[str, ...]
    p: np.ndarray
    q: np.ndarray
    drafts: tuple[int, ...]
    #: ``min(1, q/p)`` of each drafted token.
    accept_prob: tuple[float, ...]
    #: The uniforms of the tests that were run (one per examined draft).
    u: tuple[float, ...]
    #: How many drafts were accepted before the first rejection (``len(drafts)``: all).
    n_accepted: int
    #: ``[q - p]_+`` (used only when a draft is rejected).
    residual: np.ndarray
    #: The token drawn after the tests: from the residual after a rejection, else the bonus from ``q``.
    last_token: int
    #: The uniform that drew ``last_token`` by inversion of its law.
    u_last: float

    @property
    def rejected(self) -> bool:
        return self.n_accepted < len(self.drafts)

    @property
    def output(self) -> tuple[int, ...]:
        """The tokens this round writes: the accepted drafts, then the residual or bonus token."""
        return (*self.drafts[: self.n_accepted], self.last_token)


def draw_by_inversion(law: np.ndarray, u: float) -> int:
    """The token ``x`` with ``F(x-1) <= u < F(x)``, ``F`` the cumulative ``law``.

    A draw from ``law`` when ``u`` is uniform on [0, 1) (sampling by inversion).
    """
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u: must be in [0, 1), got {u}")
    return int(sample_rows(cumulative(np.asarray(law, float))[None], np.zeros(1, int), np.array([u]))[0])


def worked_round(
    vocab: Sequence[str],
    p: Sequence[float],
    q: Sequence[float],
    drafts: Sequence[str],
    u: Sequence[float],
    u_last: float,
) -> WorkedRound:
    """Play one round: test ``drafts`` left to right with uniforms ``u`` (accept when ``u < min(1, q/p)``),
    then draw the residual token after the first rejection, or the bonus token from ``q``
    if every draft is accepted, by inversion of ``u_last``.

    ``u`` needs one uniform per draft that gets tested (extra ones are ignored).
    """
    vocab = tuple(vocab)
    p_arr, q_arr = check_law(np.asarray(p, float), "p"), check_law(np.asarray(q, float), "q")
    if p_arr.shape != (len(vocab),) or q_arr.shape != (len(vocab),):
        raise ValueError(
            f"p, q: need one probability per token of vocab ({len(vocab)}), got {p_arr.shape}, {q_arr.shape}"
        )
    unknown = [d for d in drafts if d not in vocab]
    if unknown:
        raise ValueError(f"drafts: not in vocab: {unknown}")
    ids = tuple(vocab.index(d) for d in drafts)
    if any(p_arr[i] == 0 for i in ids):
        raise ValueError("drafts: the draft cannot propose a token it gives probability 0")
    b = acceptance(p_arr, q_arr)[list(ids)]
    n_accepted, used = 0, []
    for i, b_i in enumerate(b):
        if i >= len(u):
            raise ValueError(f"u: the test of draft {i + 1} needs a uniform, got only {len(u)}")
        if not 0.0 <= u[i] < 1.0:
            raise ValueError(f"u: must be in [0, 1), got {u[i]}")
        used.append(float(u[i]))
        if u[i] >= b_i:
            break
        n_accepted += 1
    res = residual(p_arr, q_arr)
    last = draw_by_inversion(res if n_accepted < len(ids) else q_arr, u_last)
    return WorkedRound(
        vocab, p_arr, q_arr, ids, tuple(float(x) for x in b), tuple(used), n_accepted, res, last, float(u_last)
    )


# --- the picture ------------------------------------------------------------------------

#: Box width and height, the gap between columns, the left margin, and a row's label line: the picture is
#: about 350 units wide for three drafts, so that on a phone (about 270 CSS pixels for the picture) its
#: smallest text (13 units) still reads at 10 pixels; each row's name sits on its own line above the row.
_BOX_W, _BOX_H, _GAP, _LEFT, _LABEL = 80, 34, 8, 4, 20

#: The titles the book gives its rounds in English (Chapter 2, and Figure 0.1 on the landing page); a title is
#: drawn in the current language.
BOOK_TITLES = (
    N_("One round with a rejection"),
    N_("(a) A round with a rejection"),
    N_("(b) A round that keeps every draft"),
    N_("Round (a), step by step"),
)
#: The weather vocabulary of the book's rounds (the intro, Chapter 2, the worked example), in English.
WEATHER = (N_("sun"), N_("rain"), N_("snow"), N_("wind"))


def weather() -> tuple[str, ...]:
    """The weather vocabulary in the reader's language (晴, 雨, 雪, 风 in Chinese)."""
    return tuple(_(word) for word in WEATHER)


#: The picture's ink: darker shades of the book's colours (``part1.COLORS``), so that every
#: label reads at 4.5:1 or more on the white picture and on each box's fill, and every box
#: outline stands out at 3:1 or more (WCAG 2.1 AA). The picture keeps a white background in
#: the page's dark mode too.
INK = {"p": "#8A5A00", "q": "#005A8C", "accept": "#00704F", "residual": "#A0367A", "grey": "#666666"}
#: The boxes' fills (light tints of the same colours) and the picture's background.
FILLS = {"p": "#FDF1D8", "q": "#DCEBF5", "accept": "#D6F0E7", "residual": "#F6E1EE", "grey": "#F2F2F2"}
BACKGROUND = "#FFFFFF"
_GREY, _TEXT = INK["grey"], "#222222"


def _box(x: float, y: float, fill: str, text: str, *, dashed: bool = False, stroke: str = _TEXT) -> str:
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    return (
        f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" fill="{fill}" stroke="{stroke}"'
        f' stroke-width="1.5"{dash}/>'
        f'<text x="{x + _BOX_W / 2}" y="{y + _BOX_H / 2 + 6}" text-anchor="middle" font-size="16"'
        f' fill="{_TEXT}">{escape(text)}</text>'
    )


def _note(x: float, y: float, text: str, color: str = _TEXT, size: int = 13, anchor: str = "middle") -> str:
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}" fill="{color}">{escape(text)}</text>'


def stages(r: WorkedRound) -> list[str]:
    """The steps of round ``r`` in order: draft, score, one test per examined draft, then the last draw."""
    tests = [_("test draft {n}").format(n=i + 1) for i in range(len(r.u))]
    return [_("draft"), _("score"), *tests, _("residual draw") if r.rejected else _("bonus token")]


def _round_rows(
    r: WorkedRound, y0: float, title: str, upto: int | None = None, span: tuple[int, int] | None = None
) -> tuple[list[str], float]:
    """The picture of round ``r`` from height ``y0`` down, and the height below it. With ``span = (a, b)`` only its
    columns ``a`` to ``b - 1`` (one row of a round wrapped onto several, ``round_svg``'s ``per_row``), the title
    over the first of them."""
    k = len(r.drafts)
    a, b = span if span is not None else (0, k + 1)
    xs = {i: _LEFT + (i - a) * (_BOX_W + _GAP) for i in range(a, b)}
    last = len(stages(r)) - 1
    out = []
    if a == 0:
        heading = _note(_LEFT, y0 + 17, title, size=15, anchor="start")
        out.append(heading.replace("<text", '<text font-weight="bold"', 1))
        y0 += 30
    else:
        y0 += 6

    def put(stage: int, item: str) -> None:
        """Draw ``item``, which belongs to step ``stage``, if the picture goes that far."""
        if upto is None or stage <= upto:
            out.append(item)

    # each row: its name on a line of its own, then its boxes (the verify row: three lines of text)
    labels = [_("1 · draft"), _("2 · score"), _("3 · verify: keep a draft if u < min(1, q/p)"), _("4 · output")]
    heights = [_BOX_H + 20, _BOX_H + 20, 52, _BOX_H + 20]
    drafts = [i for i in range(k) if i in xs]
    ys, y = [], y0
    for band, (label, h) in enumerate(zip(labels, heights, strict=True)):
        ys.append(y + _LABEL)
        if drafts or band in (1, 3):  # a bonus token's column alone: no draft and no test, only score and output
            out.append(_note(_LEFT, y + 14, label, _GREY, anchor="start"))
            y += _LABEL + h + 6
    # 1. the draft proposes k tokens (free)
    for i in drafts:
        tok = r.drafts[i]
        put(0, _box(xs[i], ys[0], FILLS["p"], r.vocab[tok], stroke=INK["p"]))
        put(0, _note(xs[i] + _BOX_W / 2, ys[0] + _BOX_H + 15, f"p = {r.p[tok]:.2f}", INK["p"]))
    # 2. one oracle call scores every draft; a round that may end with a bonus token also
    #    needs q at the position after the last draft, which the same call computes
    cols = [i for i in range(k if r.rejected else k + 1) if i in xs]
    if cols:
        x0, x_end = xs[cols[0]], xs[cols[-1]] + _BOX_W
        put(
            1,
            f'<rect x="{x0}" y="{ys[1]}" width="{x_end - x0}" height="{_BOX_H}" rx="6" fill="{FILLS["q"]}"'
            f' stroke="{INK["q"]}" stroke-width="1.5"/>',
        )
        if a > 0:
            call = _("same call")
        elif r.rejected:
            call = _("one target call scores all {k} drafted tokens").format(k=k)
        else:
            call = _("one target call: {k} drafted tokens + the next position").format(k=k)
        put(1, _note((x0 + x_end) / 2, ys[1] + _BOX_H / 2 + 5, call))
    for i in drafts:
        put(1, _note(xs[i] + _BOX_W / 2, ys[1] + _BOX_H + 15, f"q = {r.q[r.drafts[i]]:.2f}", INK["q"]))
    # 3. verify left to right: accept with probability min(1, q/p), stop at the first rejection
    for i in drafts:
        cx = xs[i] + _BOX_W / 2
        if i < len(r.u):
            ok = i < r.n_accepted
            color = INK["accept"] if ok else INK["residual"]
            mark = _("✓ keep") if ok else _("✗ reject")
            put(2 + i, _note(cx, ys[2] + 13, f"u = {r.u[i]:.2f}"))
            put(2 + i, _note(cx, ys[2] + 29, f"{'<' if ok else '≥'} {r.accept_prob[i]:.2f}"))
            put(2 + i, _note(cx, ys[2] + 47, mark, color, size=15))
        else:
            put(last, _note(cx, ys[2] + 29, _("not examined"), _GREY))
    # output: accepted drafts, then the residual draw (or the bonus token), then discarded drafts
    for i in range(r.n_accepted):
        if i in xs:
            put(2 + i, _box(xs[i], ys[3], FILLS["accept"], r.vocab[r.drafts[i]], stroke=INK["accept"]))
    j = r.n_accepted
    below = ys[3] + _BOX_H + 15
    if r.rejected:
        if j in xs:
            put(last, _box(xs[j], ys[3], FILLS["residual"], r.vocab[r.last_token], stroke=INK["residual"]))
            put(last, _note(xs[j] + _BOX_W / 2, below, _("from [q − p]₊"), INK["residual"]))
        for i in range(j + 1, k):
            if i in xs:
                put(last, _box(xs[i], ys[3], FILLS["grey"], r.vocab[r.drafts[i]], dashed=True, stroke=_GREY))
                put(last, _note(xs[i] + _BOX_W / 2, below, _("discarded"), _GREY))
    elif k in xs:
        put(last, _box(xs[k], ys[3], FILLS["q"], r.vocab[r.last_token], stroke=INK["q"]))
        put(last, _note(xs[k] + _BOX_W / 2, below, _("bonus, from q"), INK["q"]))
    return out, below + 10


def _words(names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    return _("{first} and {last}").format(first=_(", ").join(names[:-1]), last=names[-1])


def describe_round(r: WorkedRound, title: str, upto: int | None = None) -> str:
    """In words, what the picture of round ``r`` shows (up to step ``upto`` of ``stages(r)``): its text alternative."""
    last = len(stages(r)) - 1
    upto = last if upto is None else min(upto, last)
    names = [r.vocab[t] for t in r.drafts]
    title = _(title)
    out = [
        _("{title}.").format(title=title),
        _("The draft proposes {names}, with p = {p}.").format(
            names=_words(names), p=_words([f"{r.p[t]:.2f}" for t in r.drafts])
        ),
    ]
    if upto >= 1:
        out.append(_("One target call scores them: q = {q}.").format(q=_words([f"{r.q[t]:.2f}" for t in r.drafts])))
    for i, u in enumerate(r.u):
        if upto < 2 + i:
            break
        ok = i < r.n_accepted
        b = f"{r.accept_prob[i]:.2f}"
        values = dict(n=i + 1, name=names[i], b=b, u=f"{u:.2f}")
        if ok:
            out.append(_("Draft {n}, {name}: min(1, q/p) = {b}, u = {u} < {b}, kept.").format(**values))
        else:
            out.append(_("Draft {n}, {name}: min(1, q/p) = {b}, u = {u} ≥ {b}, rejected.").format(**values))
    if upto == last:
        if r.rejected:
            rest = names[r.n_accepted + 1 :]
            out.append(
                _("The token {token} is drawn from the residual [q − p]₊ in its place.").format(
                    token=r.vocab[r.last_token]
                )
            )
            if rest:
                out.append(
                    _("The later drafts ({names}) are never examined: they are discarded.").format(names=_words(rest))
                )
        else:
            out.append(
                _("A bonus token, {token}, is drawn from q at the next position.").format(token=r.vocab[r.last_token])
            )
        out.append(_("Output: {names}.").format(names=_words([r.vocab[t] for t in r.output])))
    return ("" if language() == "zh_CN" else " ").join(out)  # Chinese sentences end in 。, with no space


def columns(r: WorkedRound) -> int:
    """How many columns the picture of round ``r`` takes: one per draft, and one for a bonus token."""
    return len(r.drafts) + (0 if r.rejected else 1)


def round_svg(
    rounds: Sequence[WorkedRound],
    titles: Sequence[str],
    *,
    upto: int | None = None,
    background: bool = True,
    per_row: int | None = None,
) -> str:
    """An SVG picture of each round, one under the other (it scales to any width).

    With ``upto``, each round is drawn only up to that step of ``stages(round)`` (0: the
    drafts alone), so a slider can walk through a round. Without ``background`` the picture is
    drawn on no background of its own, for a box that gives it ``BACKGROUND``. With ``per_row``, a round of
    more columns is wrapped onto several rows of at most ``per_row`` columns (a narrow picture, for a phone).
    """
    if len(rounds) != len(titles) or not rounds:
        raise ValueError("rounds, titles: need one title per round, and at least one round")
    if upto is not None:
        upto = check_int(upto, "upto", low=0, what="a step index: ")
    if per_row is not None:
        per_row = check_int(per_row, "per_row", low=2)
    titles = [_(t) for t in titles]
    k = max(len(r.drafts) for r in rounds)
    shown = k + 1 if per_row is None else min(k + 1, per_row, max(columns(r) for r in rounds))
    width = 2 * _LEFT + shown * (_BOX_W + _GAP) - _GAP
    parts, y = [], 0.0
    label = escape(" ".join(describe_round(r, t, upto) for r, t in zip(rounds, titles, strict=True)))
    for r, title in zip(rounds, titles, strict=True):
        n = columns(r) if per_row is not None else k + 1
        step = n if per_row is None else per_row
        for a in range(0, n, step):
            rows, y = _round_rows(r, y, title, upto, (a, min(a + step, n)) if per_row is not None else None)
            parts += rows
        y += 14
    # the language named, for the Chinese glyphs and a screen reader
    lang = ' xml:lang="zh-CN" lang="zh-CN"' if language() == "zh_CN" else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {y:.0f}" width="{width}" height="{y:.0f}"'
        # a sans face for Chinese too: a viewer without one of these falls back to a serif face
        " font-family=\"Helvetica, Arial, 'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', "
        f'\'Microsoft YaHei\', sans-serif"{lang} role="img" aria-label="{label}">'
        f"<title>{label}</title>"
        + (f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>' if background else "")
        + "".join(parts)
        + "</svg>"
    )
