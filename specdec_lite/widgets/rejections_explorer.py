"""Chapter 3 explorer: Theorem 1(b) against Monte Carlo on a random chain.

``rejections_update`` draws the running mean of ``N_rej`` (±2 SE) converging to the
exact ``E[N_rej]``, and the per-position rejection rate against ``E[R_n]``; its
title carries both speed-ups. ``rejections_explorer`` wires it to controls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import decoding, theory
from .._i18n import _
from ..figures.part1 import COLORS, grid, pair, running_mean_traces, stacked_on_a_phone
from ..primitives import check_int
from ..stats import mean_and_se
from .core import explorer

#: Largest sizes the explorer draws (a few times its sliders' maxima; the chains take T V^2 numbers, the runs T each).
MAX_V, MAX_T, MAX_RUNS = 50, 500, 20_000


def rejections_update(V: int = 7, T: int = 50, quality: float = 0.0, runs: int = 2000, seed: int = 10) -> go.Figure:
    """Left: running mean of rejections vs exact ``E[N_rej]``. Right: ``E[R_n]`` vs observed rate.

    ``V <= MAX_V``, ``T <= MAX_T``, ``runs <= MAX_RUNS``. With no rejection possible (``E[N_rej] = 0``,
    to rounding) the paper's speed-up ``T / E[N_rej]`` is infinite and says so.
    """
    V = check_int(V, "V", high=MAX_V)
    T = check_int(T, "T", high=MAX_T)
    runs = check_int(runs, "runs", high=MAX_RUNS)
    draft, target, s_mc = pair(V, T, quality, seed)
    res = decoding.speculative(draft, target, runs, rng=np.random.default_rng(s_mc))
    profile = theory.rejection_profile(draft, target)
    exact = float(profile.sum())
    m, se = mean_and_se(res.rejections) if runs > 1 else (float(res.rejections[0]), 0.0)
    calls = theory.expected_oracle_calls(draft, target)
    # Equal laws give TVs of a few ulps, not 0: below 64 ulps a position, no rejection can happen.
    paper = f"{T / exact:.2f}" if exact > 64 * T * np.finfo(float).eps else "∞"

    layout, ((x1, y1), (x2, y2)) = grid(
        1,
        2,
        (_("running mean of N<sub>rej</sub> (±2 SE)"), _("rejection rate per position")),
        hspace=0.09,
        col_widths=(0.6, 0.4),
    )
    layout["xaxis"]["title"], layout["xaxis2"]["title"] = _("runs"), _("position n")
    layout["yaxis2"]["range"] = [0, 1.02]
    traces = running_mean_traces(res.rejections, exact, max_points=300)
    n = np.arange(1, T + 1)
    traces += [
        go.Scatter(x=n, y=profile, mode="lines", name=_("exact E[R<sub>n</sub>]"), line=dict(color="black")),
        go.Scatter(
            x=n,
            y=res.rejected.mean(axis=0),
            mode="markers",
            name=_("observed rate"),
            marker=dict(color=COLORS["residual"], size=5),
        ),
    ]
    for tr in traces[:3]:
        tr.update(xaxis=x1, yaxis=y1)
    for tr in traces[3:]:
        tr.update(xaxis=x2, yaxis=y2)
    fig = go.Figure(traces, layout)
    fig.update_layout(
        height=460,
        margin=dict(t=110),
        title=(
            _("exact E[N<sub>rej</sub>] = {exact:.2f}; Monte Carlo {m:.2f} ± {se:.2f} (1 SE)").format(
                exact=exact, m=m, se=se
            )
            + "<br><sup>"
            + _(
                "speed-up T / E[oracle calls] = {T}/{calls:.2f} = {speedup:.2f}; "
                "paper's T / E[N<sub>rej</sub>] = {paper}"
            ).format(T=T, calls=calls, speedup=T / calls, paper=paper)
            + "</sup>"
        ),
    )
    # on a phone the right panel would be a strip: one panel under the other
    return stacked_on_a_phone(fig, 2, height=860, gap=0.14)


def rejections_explorer() -> Any:
    """The lab widget: V, T, draft quality, runs and seed drive ``rejections_update``."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    slider = dict(continuous_update=False, style=style)
    controls = {
        "V": w.IntSlider(value=7, min=2, max=20, description=_("tokens V"), **slider),
        "T": w.IntSlider(value=50, min=1, max=200, description=_("horizon T"), **slider),
        "quality": w.FloatSlider(value=0.0, min=0, max=1, step=0.05, description=_("draft quality"), **slider),
        "runs": w.IntSlider(value=2000, min=100, max=5000, step=100, description=_("runs"), **slider),
        "seed": w.IntSlider(value=10, min=0, max=50, description=_("seed"), **slider),
    }
    return explorer(rejections_update, controls)
