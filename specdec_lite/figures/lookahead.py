"""Figures of Chapter 7: finite lookahead, Leviathan et al.'s formula, the best K for a cost ratio.

Every number drawn comes from ``specdec_lite.lookahead``; these functions only lay
out traces. ``*_traces`` return plotly traces (for ``plotting.slider_figure``),
``*_figure`` a ready figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from .. import lookahead as la
from .. import theory
from .._i18n import N_, _
from ..chains import MarkovChain
from ..plotting import legend_below, slider_figure
from ..primitives import check_int
from ..stats import mean_and_se
from ..theory import mean_acceptance
from .part1 import grid, pair, stacked_on_a_phone

#: The names the book gives its chain pairs in English (Chapter 7); a legend shows them in the current language.
BOOK_PAIRS = (N_("constant TV (i.i.d.)"), N_("TV varies by state"), N_("TV in stretches"))

#: Okabe-Ito colours, one per draft quality / curve.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]


@lru_cache(maxsize=64)
def quality_pair(quality: float, V: int = 7, T: int = 50, seed: int = 10) -> tuple[MarkovChain, MarkovChain]:
    """The book's (draft, target) pair for a draft quality (``figures.part1.pair``), cached."""
    draft, target, _seed = pair(V, T, float(quality), seed)
    return draft, target


# --- exact finite-K values against Monte Carlo ------------------------------------------


def finite_k_figure(
    draft: MarkovChain, target: MarkovChain, Ks: Sequence[int], *, runs: int = 2000, seed: int = 0
) -> go.Figure:
    """Exact ``E[oracle calls]`` (left) and ``E[N_rej]`` (right) against K, with Monte Carlo means (±2 SE)
    and Theorem 1's K = infinity values as dashed lines: two panels, as the two counts meet near their limits."""
    Ks = [int(K) for K in Ks]
    profs = la.lookahead_profiles(draft, target, Ks)
    rng = np.random.default_rng(seed)
    mc = [la.speculative_k(draft, target, K, runs, rng) for K in Ks]
    layout, cells = grid(1, 2, (_("oracle calls"), _("rejections")), hspace=0.12)
    series = [  # each Monte Carlo entry names its count: the two share a colour with their exact curve only
        (
            _("exact E[oracle calls]"),
            _("oracle calls, Monte Carlo ({runs} runs, ±2 SE)").format(runs=runs),
            [p.expected_oracle_calls for p in profs],
            [r.oracle_calls for r in mc],
            theory.expected_oracle_calls(draft, target),
            _("oracle calls, K = ∞ (Algorithm 1): {limit:.2f}"),
            PALETTE[0],
        ),
        (
            _("exact E[rejections]"),
            _("rejections, Monte Carlo ({runs} runs, ±2 SE)").format(runs=runs),
            [p.expected_rejections for p in profs],
            [r.rejections for r in mc],
            theory.expected_rejections(draft, target),
            _("rejections, K = ∞ (paper's Theorem 1): {limit:.2f}"),
            PALETTE[1],
        ),
    ]
    fig = go.Figure(layout=layout)
    limits = []
    for (xa, ya), (name, mc_name, exact, samples, limit, limit_name, color) in zip(cells, series, strict=True):
        on = dict(xaxis=xa, yaxis=ya)
        stats = np.array([mean_and_se(s) for s in samples])
        fig.add_trace(go.Scatter(x=Ks, y=exact, mode="lines", name=name, line=dict(color=color), **on))
        fig.add_trace(
            go.Scatter(
                x=Ks,
                y=stats[:, 0],
                mode="markers",
                name=mc_name,
                marker=dict(color=color, symbol="circle-open", size=9),
                error_y=dict(type="data", array=2 * stats[:, 1], visible=True),
                **on,
            )
        )
        # K = ∞ as a dashed grey line over the curve that runs onto it, named in the legend
        limits.append(
            go.Scatter(
                x=[min(Ks), max(Ks)],
                y=[limit, limit],
                mode="lines",
                line=dict(color="#555555", dash="dash", width=2),
                name=limit_name.format(limit=limit),
                **on,
            )
        )
    fig.add_traces(limits)
    k_title = _("lookahead K (drafted tokens per round)")
    fig.update_layout(
        xaxis_title=k_title,
        xaxis2_title=k_title,
        yaxis_title=_("expected count per sequence"),
        height=500,
        legend=legend_below(500, rows=6),  # six entries, one per row
        title=_("Finite lookahead on a chain with V = {V}, T = {T}").format(V=target.V, T=target.T),
    )
    # on a phone the two panels side by side would each get a strip about 150 pixels wide: one under the other
    return stacked_on_a_phone(fig, 2, height=1000, gap=0.16)


# --- Leviathan et al.'s formula ------------------------------------------------------------


def leviathan_figure(
    pairs: Sequence[tuple[str, MarkovChain, MarkovChain]], alpha: float, Ks: Sequence[int]
) -> go.Figure:
    """Exact tokens per oracle call ``T / E[oracle calls]`` of several chain pairs against
    Leviathan et al.'s ``(1 - alpha^(K+1)) / (1 - alpha)`` (the line)."""
    Ks = [int(K) for K in Ks]
    grid = np.arange(0, max(Ks) + 1)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=[la.expected_tokens_per_call(alpha, K) for K in grid],
            mode="lines",
            name=_("Leviathan et al., α = {alpha:.2f}").format(alpha=alpha),
            line=dict(color="black"),
        )
    )
    # the pairs' points often coincide: the first pair's open circles, larger, are drawn last (on top) and
    # still listed first (legendrank); the others are filled
    markers = [dict(symbol="circle-open", size=14, line=dict(width=2)), dict(symbol="square"), dict(symbol="diamond")]
    traces = []
    for i, (label, draft, target) in enumerate(pairs):
        calls = np.array([p.expected_oracle_calls for p in la.lookahead_profiles(draft, target, Ks)])
        traces.append(
            go.Scatter(
                x=Ks,
                y=target.T / calls,
                mode="markers",
                name=_(label),
                legendrank=1000 + i,
                marker={"size": 9, "color": PALETTE[i % len(PALETTE)], **markers[i % 3]},
            )
        )
    fig.add_traces(traces[::-1])
    fig.update_layout(
        xaxis_title=_("lookahead K"),
        yaxis_title=_("tokens per oracle call"),
        height=480,
        legend=legend_below(480),
        title=_("Exact finite-K chains against the i.i.d. formula"),
    )
    return fig


# --- the best K ----------------------------------------------------------------------------------


#: Largest lookahead a speed-up curve is drawn to (one point per K).
MAX_PLOTTED_K = 1000


def best_k_text(K: int, K_max: int, T: int) -> str:
    """A best K as a figure writes it: ``≥ K_max`` where the best K found is the end of a range that stops
    short of ``T`` (a longer lookahead might be better still)."""
    return f"≥ {K}" if K == K_max < T else str(K)


def speedup_traces(
    draft: MarkovChain,
    target: MarkovChain,
    c: float,
    K_max: int,
    *,
    name: str,
    color: str,
    iid: bool = True,
    star_size: int = 16,
) -> list[go.Scatter]:
    """Exact wall-clock speed-up against K, a star at the best K and (dashed) the i.i.d. prediction.

    ``K_max <= MAX_PLOTTED_K``; the curve is computed up to ``K = T`` (every ``K >= T`` behaves like ``K = T``).
    """
    K_max = check_int(la.check_lookahead(K_max, "K_max"), "K_max", low=0, high=MAX_PLOTTED_K, what="lookahead ")
    Ks = np.arange(K_max + 1)
    top = min(K_max, target.T)
    curve = la.speedup_curve(draft, target, c, range(top + 1))
    curve = np.concatenate([curve, np.full(K_max - top, curve[-1])])
    best = int(np.argmax(curve))
    if best_k_text(best, K_max, target.T) == str(best):
        star, hover = _("best K = {K}"), _("{name}<br>best K = {K}<br>speed-up = {speedup:.2f}×")
    else:  # the end of the plotted range, not an optimum
        star = _("best K ≥ {K}")
        hover = _("{name}<br>best K ≥ {K} (the end of the plotted range)<br>speed-up = {speedup:.2f}×")
    traces = [
        go.Scatter(x=Ks, y=curve, mode="lines+markers", name=name, line=dict(color=color), marker=dict(size=4)),
        go.Scatter(
            x=[best],
            y=[curve[best]],
            mode="markers",
            name=star.format(K=best),
            showlegend=False,
            # its data table says whose star it is: "quality 0.30: best K = 4"
            meta={"header": _("{trace}: {column}").format(trace=name, column=star.format(K=best))},
            # see-through, outlined: where the best K of two curves is the same or next to each other (a large
            # cost ratio: K = 0 and 1), each star still shows its whole outline over the other's
            marker=dict(color=color, size=star_size, symbol="star", opacity=0.7, line=dict(color="black", width=1.5)),
            hovertemplate=hover.format(name=name, K=best, speedup=curve[best]) + "<extra></extra>",
        ),
    ]
    if iid:
        alpha = mean_acceptance(draft, target)
        traces.append(
            go.Scatter(
                x=Ks,
                y=[la.iid_speedup(alpha, int(K), c) for K in Ks],
                mode="lines",
                showlegend=False,
                line=dict(color=color, dash="dot", width=1),
                name=_("i.i.d. formula, α = {alpha:.2f}").format(alpha=alpha),
            )
        )
    return traces


def best_k_slider_figure(
    qualities: Sequence[float],
    costs: Sequence[float],
    *,
    K_max: int = 30,
    active: int = 0,
    V: int = 7,
    T: int = 50,
    seed: int = 10,
) -> go.Figure:
    """Speed-up against K for several draft qualities; the slider moves the cost ratio c."""
    steps = []
    for c in costs:
        traces, bests = [], []
        for i, quality in enumerate(qualities):
            draft, target = quality_pair(float(quality), V, T, seed)
            traces += speedup_traces(
                draft,
                target,
                c,
                K_max,
                name=_("quality {quality:.2f}").format(quality=quality),
                color=PALETTE[i % len(PALETTE)],
                # each star smaller than the one before: stars at the same K stay visible, one inside the other;
                # small enough that stars at K = 0 and K = 1 (a large c) barely touch on a laptop
                star_size=16 - 6 * i // max(len(qualities) - 1, 1),
            )
            best = la.best_lookahead(draft, target, c, K_max=K_max)[0]
            # no-break spaces: a narrow title breaks between the pairs, never inside one
            bests.append(f"{quality:.2f}\u00a0→\u00a0{best_k_text(best, K_max, target.T)}".replace("≥ ", "≥\u00a0"))
        title = _("cost ratio c = {c}; best K per draft quality: {bests}").format(c=f"{c:g}", bests=_(", ").join(bests))
        steps.append((f"{c:g}", traces, dict(title=title)))
    return slider_figure(
        steps,
        label=_("cost ratio c"),
        active=active,
        layout=dict(
            xaxis_title=_("lookahead K"),
            yaxis_title=_("speed-up over autoregressive (wall-clock)"),
            height=520,
            legend=dict(x=1.02, y=1),
            shapes=[dict(type="line", xref="paper", x0=0, x1=1, y0=1, y1=1, line=dict(dash="dash", color="gray"))],
        ),
    )


#: The colour of K = 0 (speculation does not pay) on the map of the best K.
K0_GREY = "#8c8c8c"


def k0_colorscale(K_cap: int, zero: str = K0_GREY) -> list[list]:
    """Viridis over K = 1..K_cap, with K = 0 (the lowest half step) in ``zero``."""
    from plotly.colors import sequential

    edge = 0.5 / K_cap
    stops = sequential.Viridis
    scale = [[0.0, zero], [edge, zero]]
    scale += [[edge + (1 - edge) * i / (len(stops) - 1), c] for i, c in enumerate(stops)]
    scale[-1][0] = 1.0  # exactly (plotly refuses a scale that ends short of 1 by rounding)
    return scale


def best_k_map_figure(alphas: Sequence[float], costs: Sequence[float], *, K_cap: int = 40) -> go.Figure:
    """Heat map of Leviathan et al.'s best K (closed form) over acceptance rate and cost ratio."""
    alphas, costs = np.asarray(alphas, float), np.asarray(costs, float)
    z = np.array([[min(la.best_lookahead_iid(a, c, K_max=K_cap), K_cap) for a in alphas] for c in costs])
    fig = go.Figure(
        go.Heatmap(
            x=alphas,
            y=costs,
            z=z,
            # K = 0 (speculation does not pay) in grey of its own, apart from K = 1's dark violet
            colorscale=k0_colorscale(K_cap),
            zmin=0,
            zmax=K_cap,
            colorbar=dict(title=dict(text=_("best K"), side="right")),
            hovertemplate=_("α = %{x:.2f}<br>c = %{y:.3f}<br>best K = %{z}") + "<extra></extra>",
        )
    )
    grid = alphas[(alphas >= costs.min()) & (alphas <= costs.max())]
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=grid,
            mode="lines",
            line=dict(color="white", dash="dash"),
            name=_("α = c: above it (grey) the best K is 0"),
            showlegend=True,
        )
    )
    fig.update_layout(
        xaxis_title=_("acceptance rate α = 1 − TV"),
        yaxis_title=_("cost ratio c (log scale)"),
        height=460,
        # the range is the heat map's own extent (plotly would pad it with an empty strip)
        yaxis=dict(
            type="log",
            tickvals=[0.003, 0.01, 0.03, 0.1, 0.3, 1],
            range=[float(np.log10(costs.min())), float(np.log10(costs.max()))],
        ),
        title=_("Best lookahead (i.i.d. acceptances; capped at {K_cap})").format(K_cap=K_cap),
        # the legend on the grey of K = 0, as the line's white dashes lie on the map (on the page's white they
        # would not show); its words in black, readable on that grey in both themes
        legend=dict(legend_below(460), bgcolor=K0_GREY, font=dict(color="#000000")),
    )
    return fig
