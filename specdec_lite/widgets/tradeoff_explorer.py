"""Chapter 5 lab widget: sweep the over-acceptance margin eps, Decoding-OPT against Decoding-UNO.

``tradeoff_update`` draws three panels for a small chain pair (target random,
draft ``draft_for(target, quality)``): the first position's single-token front,
the front summed over positions (prefixes weighted by the target), and the exact
whole-sequence picture (expected rejections against the TV of sequence laws).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import biased, theory
from .._i18n import _
from ..chains import MarkovChain, draft_for, one_token
from ..figures.part1 import stacked_on_a_phone
from ..figures.part2 import (
    COLORS,
    EPS_GRID,
    always_accept_dict,
    chain_sweep,
    front_dicts,
    panel_layout,
    sequence_sweep,
    token_sweep,
)
from ..laws import tv
from ..tradeoff import check_eps
from .core import explorer

#: Chain size of the explorer: small enough to enumerate all V^T sequences instantly.
V, T = 4, 6


@lru_cache(maxsize=64)
def explorer_pair(seed: int, quality: float) -> tuple[MarkovChain, MarkovChain]:
    """``(draft, target)``: a random target (concentration 0.5, random first token) and ``draft_for``."""
    if not 0.0 <= quality <= 1.0:
        raise ValueError(_("quality: must be in [0, 1], got {quality}").format(quality=quality))
    s_target, s_draft = np.random.SeedSequence(int(seed)).spawn(2)
    kw = dict(concentration=0.5, uniform_init=False)  # a random first token, so the first panel is not trivial
    target = MarkovChain.random(V, T, rng=np.random.default_rng(s_target), **kw)
    return draft_for(target, quality, rng=np.random.default_rng(s_draft), **kw), target


@lru_cache(maxsize=64)
def _sweeps(seed: int, quality: float) -> tuple[dict, dict, dict]:
    draft, target = explorer_pair(seed, quality)
    return token_sweep(draft.init, target.init), chain_sweep(draft, target), sequence_sweep(draft, target)


def tradeoff_update(eps: float = 0.05, quality: float = 0.5, seed: int = 0) -> go.Figure:
    """OPT and UNO at margin ``eps`` on the three levels: first token, summed positions, whole sequences."""
    eps = float(check_eps(eps))
    draft, target = explorer_pair(seed, quality)
    tok, ch, seq = _sweeps(seed, quality)
    p1, q1 = draft.init, target.init
    tv1, total = float(tv(p1, q1)), theory.expected_rejections(draft, target)
    data: list[dict[str, Any]] = []
    current = {}
    # OPT and UNO differ by dash and marker as well as colour
    looks = {"opt": ("dot", "circle"), "uno": ("dash", "diamond")}
    for kind in ("opt", "uno"):
        name = "OPT" if kind == "opt" else "UNO"
        col = COLORS[kind]
        dash, symbol = looks[kind]
        r1, l1 = biased.chain_front_point(*one_token(draft.init, target.init), eps, kind)
        rc, lc = biased.chain_front_point(draft, target, eps, kind)
        rs, ls = biased.sequence_point(draft, target, eps, kind)
        current[kind] = (l1, lc, ls, rs)
        panels = [
            (tok["reject"], tok[kind], (r1, l1)),
            (ch["reject"], ch[kind], (rc, lc)),
            (seq[kind]["reject"], seq[kind]["seq_tv"], (rs, ls)),
        ]
        for c, (xs, ys, pt) in enumerate(panels):
            axes = dict(
                xaxis=f"x{c + 1 if c else ''}", yaxis=f"y{c + 1 if c else ''}", legendgroup=kind, showlegend=c == 0
            )
            data.append(
                dict(
                    type="scatter",
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=dict(color=col, dash=dash),
                    name=_("{name}, all ε").format(name=name),
                    meta={"columns": {"ε": [float(e) for e in EPS_GRID]}},  # the data table says which ε each point is
                    **axes,
                )
            )
            data.append(
                dict(
                    type="scatter",
                    x=[pt[0]],
                    y=[pt[1]],
                    mode="markers",
                    marker=dict(color=col, size=14, symbol=symbol),
                    name=_("{name} at ε = {eps:g}").format(name=name, eps=eps),
                    **axes,
                )
            )
    for c, d in ((0, tv1), (1, total)):
        for trace in front_dicts(d, xaxis=f"x{c + 1 if c else ''}", yaxis=f"y{c + 1 if c else ''}"):
            data.append({**trace, "showlegend": c == 0})
    always = biased.sequence_tv(draft, target)
    data.append(
        always_accept_dict(always, total, _("always accept (★); dashed: its sequence TV"), xaxis="x3", yaxis="y3")
    )
    layout = panel_layout(
        (_("first token: Theorem 5"), _("summed over positions (prefixes ~ q)"), _("whole sequences, exact")),
        gap=0.1,  # room for the next panel's y title
    )
    x_titles = {"": _("P(reject)"), "2": _("Σ P(reject) over positions"), "3": _("E[N<sub>rej</sub>], exact")}
    for c in ("", "2", "3"):
        layout[f"xaxis{c}"].update(title=x_titles[c], rangemode="tozero")
        layout[f"yaxis{c}"].update(title=_("loss (TV)"), rangemode="tozero")
    layout.update(
        height=460,
        legend=dict(orientation="h", y=-0.2),
        margin=dict(t=110),
        title=(
            _(
                "ε = {eps:g}: loss OPT / UNO — first token {opt_token:.3f} / {uno_token:.3f}, "
                "summed {opt_summed:.3f} / {uno_summed:.3f}, sequences {opt_sequences:.3f} / {uno_sequences:.3f}"
            ).format(
                eps=eps,
                opt_token=current["opt"][0],
                uno_token=current["uno"][0],
                opt_summed=current["opt"][1],
                uno_summed=current["uno"][1],
                opt_sequences=current["opt"][2],
                uno_sequences=current["uno"][2],
            )
            + "<br><sup>"
            + _(
                "exact E[N<sub>rej</sub>]: OPT {opt:.3f}, UNO {uno:.3f}; speculative decoding (ε = 0, OPT): {total:.3f}"
            ).format(opt=current["opt"][3], uno=current["uno"][3], total=total)
            + "</sup>"
        ),
    )
    # on a phone three panels side by side would be strips with titles of three lines: one under another
    return stacked_on_a_phone(go.Figure(data=data, layout=layout), 3, height=1150, gap=0.1)


def tradeoff_explorer() -> Any:
    """The lab widget: ε (on the sweep's grid and between), draft quality and chain seed."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "eps": w.FloatLogSlider(
            value=0.05,
            base=10,
            min=-3,
            max=np.log10(max(EPS_GRID)),
            step=0.1,
            description="ε",
            continuous_update=False,
            style=style,
        ),
        "quality": w.FloatSlider(
            value=0.5, min=0, max=1, step=0.05, description=_("draft quality"), continuous_update=False, style=style
        ),
        "seed": w.IntSlider(value=0, min=0, max=20, description=_("chain seed"), continuous_update=False, style=style),
    }
    return explorer(tradeoff_update, controls)
