"""Chapter 6 explorer: Algorithm 4 against the draft tree as the number of drafts grows.

``batch_update`` draws, for m = 1..M drafts, the exact expected rejections of
Algorithm 4 (Theorem 3) and of the draft tree, Proposition 1's limit and Theorem 1's
value as lines, and Monte Carlo means (±2 SE) of both samplers at m = M.
``batch_explorer`` wires it to controls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import batch, theory
from .._i18n import _
from ..figures.batch import COLORS, draft_counts
from ..figures.part1 import pair
from ..primitives import check_int
from ..stats import mean_and_se
from .core import explorer

#: Largest number of drafts the explorer offers.
M_MAX = 64


def batch_update(
    M: int = 8, V: int = 7, quality: float = 0.0, T: int = 50, runs: int = 200, seed: int = 10
) -> go.Figure:
    """Exact ``E[N_rej]`` of Algorithm 4 and of the tree for m = 1..M, with Monte Carlo points at M."""
    M = check_int(M, "M", high=M_MAX, what=_("number of drafts "))
    draft, target, s_mc = pair(V, T, quality, seed)
    Ms = draft_counts(M, dense_up_to=8, points=7)
    exact_batch = batch.rejections_by_M(draft, target, Ms)
    exact_tree = batch.rejections_by_M(draft, target, Ms, tree=True)
    limit = batch.batch_rejection_limit(draft, target)
    thm1 = theory.expected_rejections(draft, target)
    gen = np.random.default_rng(s_mc)
    mc_Ms = [int(M)]
    mc = {
        name: np.array([mean_and_se(sampler(draft, target, m, runs, gen).rejections) for m in mc_Ms])
        for name, sampler in (("batch", batch.batch_speculative), ("tree", batch.tree_speculative))
    }
    ends = [1, max(int(M), 2)]
    traces = [
        go.Scatter(
            x=Ms,
            y=exact_batch,
            mode="lines",
            name=_("Algorithm 4: exact (Theorem 3)"),
            line=dict(color=COLORS["batch"]),
        ),
        go.Scatter(
            x=Ms,
            y=exact_tree,
            mode="lines",
            name=_("draft tree: exact"),
            line=dict(color=COLORS["tree"], dash="dashdot"),
        ),
        go.Scatter(
            x=ends,
            y=[limit, limit],
            mode="lines",
            name=_("Algorithm 4 as M → ∞ (Proposition 1): {limit:.2f}").format(limit=limit),
            line=dict(color=COLORS["limit"], dash="dash"),
        ),
        go.Scatter(
            x=ends,
            y=[thm1, thm1],
            mode="lines",
            name=_("one draft (Theorem 1): {thm1:.2f}").format(thm1=thm1),
            line=dict(color=COLORS["thm1"], dash="dot"),
        ),
    ]
    monte_carlo = {
        "batch": _("Algorithm 4: Monte Carlo ({runs} runs, ±2 SE)"),
        "tree": _("draft tree: Monte Carlo ({runs} runs, ±2 SE)"),
    }
    for name, symbol in (("batch", "circle-open"), ("tree", "diamond-open")):
        traces.append(
            go.Scatter(
                x=mc_Ms,
                y=mc[name][:, 0],
                mode="markers",
                name=monte_carlo[name].format(runs=runs),
                error_y=dict(type="data", array=2 * mc[name][:, 1], visible=True),
                marker=dict(color=COLORS[name], size=9, symbol=symbol),
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        height=460,
        margin=dict(t=90),
        xaxis_title=_("number of drafts M"),
        yaxis_title=_("expected rejections E[N<sub>rej</sub>]"),
        title=(
            _("M = {M}: Algorithm 4 {batch:.2f}, draft tree {tree:.2f} rejections").format(
                M=M, batch=exact_batch[-1], tree=exact_tree[-1]
            )
            + "<br><sup>"
            + _("V = {V}, T = {T}, draft quality {quality:.2f}; Theorem 1 (M = 1): {thm1:.2f}").format(
                V=V, T=T, quality=quality, thm1=thm1
            )
            + "</sup>"
        ),
    )
    return fig


def batch_explorer() -> Any:
    """The lab widget: M, V, draft quality and T drive ``batch_update``."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    slider = dict(continuous_update=False, style=style)
    controls = {
        "M": w.IntSlider(value=8, min=1, max=M_MAX, description=_("drafts M"), **slider),
        "V": w.IntSlider(value=7, min=2, max=20, description=_("tokens V"), **slider),
        "quality": w.FloatSlider(value=0.0, min=0, max=1, step=0.05, description=_("draft quality"), **slider),
        "T": w.IntSlider(value=50, min=1, max=100, description=_("horizon T"), **slider),
    }
    return explorer(batch_update, controls, columns=2)
