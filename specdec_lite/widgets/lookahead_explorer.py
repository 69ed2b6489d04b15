"""Chapter 7 explorer: lookahead K, cost ratio c and draft quality -> predicted speed-up.

``lookahead_update`` draws the exact wall-clock speed-up against K on the book's
chain pair for the chosen draft quality (``figures.lookahead.quality_pair``), the
i.i.d. prediction of Leviathan et al. with ``alpha = 1 - mean TV`` (dotted), the
chosen K and the best K. Forward passes are cached per quality, so moving K or c
only redraws.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import lookahead as la
from .._i18n import _
from ..figures.lookahead import PALETTE, mean_acceptance, quality_pair
from .core import explorer

#: Largest lookahead the explorer's curve shows.
K_MAX = 30


@lru_cache(maxsize=32)
def _costs(quality: float) -> tuple[int, np.ndarray, np.ndarray, float]:
    """``(T, E[oracle calls], E[draft calls], alpha)`` for K = 0..K_MAX on the pair of this quality."""
    draft, target = quality_pair(quality)
    profs = la.lookahead_profiles(draft, target, range(K_MAX + 1))
    calls = np.array([p.expected_oracle_calls for p in profs])
    drafts = np.array([p.expected_draft_calls for p in profs])
    return target.T, calls, drafts, mean_acceptance(draft, target)


def lookahead_update(K: int = 4, c: float = 0.1, quality: float = 0.7) -> go.Figure:
    """Exact speed-up ``T / (E[calls] + c E[draft calls])`` against K, the chosen K and the best K."""
    K, c = la.check_lookahead(K), la.check_cost(c)
    if not 0.0 <= quality <= 1.0:
        raise ValueError(_("quality: must be in [0, 1], got {quality}").format(quality=quality))
    if K > K_MAX:
        raise ValueError(_("K: the explorer shows K <= {K_MAX}, got {K}").format(K_MAX=K_MAX, K=K))
    T, calls, drafts, alpha = _costs(round(float(quality), 6))
    Ks = np.arange(K_MAX + 1)
    curve = T / (calls + c * drafts)
    iid = np.array([la.iid_speedup(alpha, int(k), c) for k in Ks])
    best = int(np.argmax(curve))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=Ks,
            y=curve,
            mode="lines+markers",
            name=_("exact (chain)"),
            line=dict(color=PALETTE[0]),
            marker=dict(size=5),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=Ks,
            y=iid,
            mode="lines",
            name=_("i.i.d. formula, α = {alpha:.2f}").format(alpha=alpha),
            line=dict(color="black", dash="dot"),
        )
    )
    edge = dict(color="black", width=1)
    fig.add_trace(
        go.Scatter(
            x=[best],
            y=[curve[best]],
            mode="markers",
            name=_("best K = {best}").format(best=best),
            marker=dict(color=PALETTE[2], size=16, symbol="star", line=edge),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[K],
            y=[curve[K]],
            mode="markers",
            name=_("your K = {K}").format(K=K),
            marker=dict(color=PALETTE[1], size=13, symbol="circle", line=edge),
        )
    )
    fig.add_hline(y=1.0, line=dict(color="gray", dash="dash"))
    fig.update_layout(
        xaxis_title=_("lookahead K"),
        yaxis_title=_("speed-up over autoregressive (wall-clock)"),
        height=440,
        legend=dict(x=1.02, y=1),
        title=(
            _("K = {K}: {calls:.1f} oracle calls + {c:g} × {drafts:.1f} draft calls → speed-up {speedup:.2f}×").format(
                K=K, calls=calls[K], c=c, drafts=drafts[K], speedup=curve[K]
            )
            + "<br><sup>"
            + _(
                "best K = {best} ({best_speedup:.2f}×); i.i.d. formula at K = {K}: {iid:.2f}×; "
                "chain V = 7, T = {T}, draft quality {quality:.2f}"
            ).format(best=best, best_speedup=curve[best], K=K, iid=iid[K], T=T, quality=quality)
            + "</sup>"
        ),
        margin=dict(t=90),
    )
    return fig


def lookahead_explorer() -> Any:
    """The lab widget: K, cost ratio c and draft quality drive ``lookahead_update``."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    slider = dict(continuous_update=False, style=style)
    controls = {
        "K": w.IntSlider(value=4, min=0, max=K_MAX, description=_("lookahead K"), **slider),
        "c": w.FloatSlider(value=0.1, min=0.0, max=1.0, step=0.01, description=_("cost ratio c"), **slider),
        "quality": w.FloatSlider(value=0.7, min=0.0, max=1.0, step=0.05, description=_("draft quality"), **slider),
    }
    return explorer(lookahead_update, controls)
