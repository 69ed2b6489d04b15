"""Figures of Chapter 6: batch speculative decoding (Algorithm 4) and the draft tree.

Every number drawn comes from ``specdec_lite.batch``; these functions only lay out
traces. ``*_traces`` return plotly traces (for ``plotting.slider_figure``),
``*_figure`` a ready figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import batch, theory
from .._i18n import _
from ..chains import MarkovChain, one_token
from ..plotting import legend_below, slider_figure
from ..stats import mean_and_se, running_mean
from .part1 import grid, pair, plot_points, stacked_on_a_phone

#: Okabe-Ito colours: Algorithm 4, the tree, limits, Monte Carlo.
COLORS = {"batch": "#0072B2", "tree": "#D55E00", "limit": "#009E73", "thm1": "#999999", "extra": "#CC79A7"}
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]


def draft_counts(M: int, dense_up_to: int = 16, points: int = 14) -> np.ndarray:
    """The numbers of drafts ``1..M`` to draw a curve at: all of them up to ``dense_up_to``, then geometric."""
    if M <= dense_up_to:
        return np.arange(1, M + 1)
    return np.unique(np.r_[np.arange(1, dense_up_to + 1), np.geomspace(dense_up_to, M, points).round()].astype(int))


# --- Figure 2 (middle): running means against Theorem 3 -------------------------------


def running_means_figure(
    draft: MarkovChain, target: MarkovChain, Ms: Sequence[int] = (4, 5), *, runs: int = 5000, seed: int = 0
) -> go.Figure:
    """Running mean of ``N_rej`` under Algorithm 4 for each M (±2 SE), with Theorem 3's exact values."""
    gen = np.random.default_rng(seed)
    fig = go.Figure()
    for i, M in enumerate(Ms):
        color = PALETTE[i % len(PALETTE)]
        rej = batch.batch_speculative(draft, target, M, runs, gen).rejections
        mean, se = running_mean(rej)
        idx = plot_points(runs, 300)
        idx = idx[idx >= 1]
        exact = batch.expected_rejections_batch(draft, target, M)
        fig.add_trace(
            go.Scatter(
                x=np.r_[idx + 1, (idx + 1)[::-1]],
                y=np.r_[(mean + 2 * se)[idx], (mean - 2 * se)[idx][::-1]],
                fill="toself",
                mode="lines",
                line=dict(width=0),
                fillcolor=color,
                opacity=0.2,
                name=_("M = {M}: running mean ± 2 SE").format(M=M),  # names the band's data table
                showlegend=False,
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=idx + 1,
                y=mean[idx],
                mode="lines",
                name=_("M = {M}: running mean").format(M=M),
                line=dict(color=color),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[1, runs],
                y=[exact, exact],
                mode="lines",
                name=_("M = {M}: Theorem 3 ({exact:.2f})").format(M=M, exact=exact),
                line=dict(color=color, dash="dash"),
            )
        )
    thm1 = theory.expected_rejections(draft, target)
    fig.add_trace(
        go.Scatter(
            x=[1, runs],
            y=[thm1, thm1],
            mode="lines",
            name=_("M = 1: Theorem 1 ({exact:.2f})").format(exact=thm1),
            line=dict(color=COLORS["thm1"], dash="dot"),
        )
    )
    fig.update_layout(
        xaxis_title=_("number of runs"),
        yaxis_title=_("rejections per run"),
        height=460,
        title=_("Algorithm 4 on two random chains (V = {V}, T = {T})").format(V=target.V, T=target.T),
    )
    return fig


# --- Figure 2 (right) and the tree: rejections against M -------------------------------


def rejections_vs_M_traces(
    draft: MarkovChain,
    target: MarkovChain,
    Ms: Sequence[int],
    *,
    tree: bool = False,
    tree_Ms: Sequence[int] | None = None,
    mc_Ms: Sequence[int] = (),
    runs: int = 500,
    seed: int = 0,
) -> list[go.Scatter]:
    """Exact ``E[N_rej]`` of Algorithm 4 against M, Proposition 1's limit as a line, optionally the tree.

    With ``mc_Ms``, Monte Carlo means (±2 SE, ``runs`` runs) of each algorithm drawn are added as markers.
    """
    Ms = np.asarray(Ms, dtype=int)
    values = batch.rejections_by_M(draft, target, Ms)
    limit = batch.batch_rejection_limit(draft, target)
    ends = [int(Ms.min()), int(Ms.max())]
    traces = [
        go.Scatter(
            x=Ms,
            y=values,
            mode="lines+markers",
            name=_("Algorithm 4 (Theorem 3)"),
            line=dict(color=COLORS["batch"]),
            marker=dict(size=5),
        ),
        go.Scatter(
            x=ends,
            y=[limit, limit],
            mode="lines",
            name=_("limit M → ∞ (Proposition 1): {limit:.2f}").format(limit=limit),
            line=dict(color=COLORS["limit"], dash="dash"),
        ),
    ]
    if tree:
        tMs = np.asarray(tree_Ms if tree_Ms is not None else Ms, dtype=int)
        tvals = batch.rejections_by_M(draft, target, tMs, tree=True)
        traces.append(
            go.Scatter(
                x=tMs,
                y=tvals,
                mode="lines+markers",
                name=_("draft tree (this book)"),
                line=dict(color=COLORS["tree"]),
                marker=dict(size=5, symbol="diamond"),
            )
        )
    if len(mc_Ms):
        gen = np.random.default_rng(seed)
        samplers = [("batch", _("Algorithm 4"), batch.batch_speculative)]
        samplers += [("tree", _("draft tree"), batch.tree_speculative)] if tree else []
        for key, label, sampler in samplers:
            stats = np.array([mean_and_se(sampler(draft, target, int(M), runs, gen).rejections) for M in mc_Ms])
            traces.append(
                go.Scatter(
                    x=list(mc_Ms),
                    y=stats[:, 0],
                    mode="markers",
                    name=_("{label}: Monte Carlo ({runs} runs, ±2 SE)").format(label=label, runs=runs),
                    error_y=dict(type="data", array=2 * stats[:, 1], visible=True),
                    marker=dict(color=COLORS[key], size=10, symbol="circle-open", line=dict(width=2)),
                )
            )
    return traces


def rejections_vs_M_figure(
    draft: MarkovChain, target: MarkovChain, M_max: int = 64, *, tree: bool = False, log_x: bool = True
) -> go.Figure:
    """Figure 2 (right): ``E[N_rej]`` for M = 1..M_max flattening to the Proposition 1 limit."""
    Ms = np.arange(1, M_max + 1)
    fig = go.Figure(rejections_vs_M_traces(draft, target, Ms, tree=tree, tree_Ms=draft_counts(M_max)))
    ticks = dict(tickvals=[1, 2, 4, 8, 16, 32, 64]) if log_x else {}
    fig.update_layout(
        xaxis=dict(title=_("number of drafts M"), type="log" if log_x else "linear", **ticks),
        yaxis_title=_("expected rejections E[N<sub>rej</sub>]"),
        height=440,
        title=_("More drafts help less and less (V = {V}, T = {T})").format(V=target.V, T=target.T),
    )
    return fig


def tree_vs_batch_slider(
    qualities: Sequence[float] = (0.0, 0.25, 0.5, 0.75),
    *,
    V: int = 7,
    T: int = 50,
    M_max: int = 64,
    mc_Ms: Sequence[int] = (),
    runs: int = 500,
    seed: int = 10,
) -> go.Figure:
    """Algorithm 4 against the draft tree for M = 1..M_max, one slider step per draft quality.

    Exact curves, Proposition 1's floor, and Monte Carlo points of both samplers at ``mc_Ms``.
    """
    Ms = draft_counts(M_max, dense_up_to=8, points=10)
    steps = []
    for w in qualities:
        draft, target, _seed = pair(V, T, float(w), seed)
        traces = rejections_vs_M_traces(draft, target, Ms, tree=True, mc_Ms=mc_Ms, runs=runs, seed=seed)
        b, t = traces[0].y[-1], traces[2].y[-1]
        title = _("M = {M}: Algorithm 4 {batch:.2f}, tree {tree:.2f} rejections").format(M=M_max, batch=b, tree=t)
        steps.append((f"{w:.2f}", traces, {"title": title}))
    return slider_figure(
        steps,
        label=_("draft quality"),
        layout={
            "xaxis": {
                "title": {"text": _("number of drafts M"), "standoff": 14},
                "type": "log",
                "tickvals": [1, 2, 4, 8, 16, 32, 64],
            },
            "yaxis": {"title": "E[N<sub>rej</sub>]"},
            "height": 480,
        },
    )


# --- Figure 3: the batch improvement of one token --------------------------------------


def batch_improvement_mc(
    p: np.ndarray, q: np.ndarray, M: int, runs: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Monte Carlo batch improvement ``TV(p, q) - P(reject)`` of Algorithm 4 on one token, with its SE."""
    draft, target = one_token(p, q)
    rejected = batch.batch_speculative(draft, target, M, runs, rng).rejected[:, 0]
    m, se = mean_and_se(rejected)
    return float(theory.tv(p, q)) - m, se


def figure3(
    us: Sequence[float] = (0.6, 0.7, 0.8, 0.9),
    rs: Sequence[float] = (1.5, 2.0, 3.0, 6.0),
    *,
    V: int = 12,
    M_max: int = 16,
    runs: int = 4000,
    seed: int = 0,
) -> go.Figure:
    """Batch improvement against M: Bernoulli (p = Ber(u), q = Ber(1/2)) and uniform (r = V/V').

    Lines: the closed forms. Markers (±2 SE): Monte Carlo of Algorithm 4 on one token.
    """
    gen = np.random.default_rng(seed)
    Ms = np.arange(1, M_max + 1)
    mc_Ms = np.array([1, 2, 3, 4, 6, 8, 12, 16])
    mc_Ms = mc_Ms[mc_Ms <= M_max]
    layout, cells = grid(
        1,
        2,
        (_("Bernoulli<br>p = Ber(u), q = Ber(1/2)"), _("uniform<br>p = Unif(V), q = Unif(V′), r = V/V′")),
        hspace=0.1,
    )
    traces: list[go.Scatter] = []
    panels = [
        [
            (
                f"u = {u:g}",
                lambda M, u=u: batch.batch_improvement_bernoulli(u, 0.5, M),
                np.array([1 - u, u]),
                np.array([0.5, 0.5]),
            )
            for u in us
        ],
        [
            (
                f"r = {r:g}",
                lambda M, r=r: batch.batch_improvement_uniform(r, M),
                np.full(V, 1 / V),
                np.r_[np.full(round(V / r), 1 / round(V / r)), np.zeros(V - round(V / r))],
            )
            for r in rs
        ],
    ]
    styles = [(_("Bernoulli"), "solid"), (_("uniform"), "dash")]
    for (xa, ya), panel, (group, dash) in zip(cells, panels, styles, strict=True):
        for i, (name, closed, p, q) in enumerate(panel):
            color = PALETTE[i % len(PALETTE)]
            traces.append(
                go.Scatter(
                    x=Ms,
                    y=[closed(int(M)) for M in Ms],
                    mode="lines",
                    name=_("{name} (closed form)").format(name=name),
                    line=dict(color=color, dash=dash),
                    xaxis=xa,
                    yaxis=ya,
                    legendgroup=group,
                    legendgrouptitle_text=group if i == 0 else None,
                )
            )
            mc = np.array([batch_improvement_mc(p, q, int(M), runs, gen) for M in mc_Ms])
            traces.append(
                go.Scatter(
                    x=mc_Ms,
                    y=mc[:, 0],
                    mode="markers",
                    name=_("{name} (Monte Carlo, {runs:,} runs)").format(name=name, runs=runs),
                    error_y=dict(type="data", array=2 * mc[:, 1], visible=True),
                    marker=dict(color=color, size=7, symbol="circle-open"),
                    xaxis=xa,
                    yaxis=ya,
                    showlegend=False,
                    legendgroup=group,
                )
            )
    fig = go.Figure(traces, layout)
    fig.update_layout(
        height=560,
        xaxis_title=_("number of drafts M"),
        xaxis2_title=_("number of drafts M"),
        yaxis_title=_("batch improvement TV − Π r<sub>m</sub>"),
        margin=dict(t=70),
        legend=legend_below(560, top=70),
    )
    # on a phone the two panels side by side would each get a strip about 120 pixels wide: one under the other
    return stacked_on_a_phone(fig, 2, height=860, gap=0.2)
