"""Figures of Part II: the lower bound of Theorem 2 and the Pareto front of Theorems 4-5 (Figure 4).

Each ``*_traces`` function returns plotly traces (so ``plotting.slider_figure`` can
stack precomputed steps); each ``*_figure`` function returns a ready figure. All
numbers come from ``tradeoff``, ``optimality`` and ``biased``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import biased, tradeoff
from .._i18n import N_, _
from ..chains import MarkovChain
from ..laws import over_accept, tv
from ..optimality import random_unbiased_member
from ..plotting import legend_below, narrow_layout, slider_figure
from .part1 import stacked_on_a_phone, token_labels

#: Colours shared by the Part II figures and widgets (p and q as in Part I).
COLORS = {
    "p": "#E69F00",
    "q": "#0072B2",
    "out": "#444444",
    "front": "#D55E00",
    "unattainable": "rgba(213, 94, 0, 0.15)",
    "opt": "#009E73",
    "uno": "#CC79A7",
    "random": "rgba(120, 120, 120, 0.45)",
    "unbiased": "#56B4E9",
}

#: The margins every Figure 4 sweep uses: 0, then from 0.005 to 0.5 in steps of about 1.4 times, each with at
#: most two significant digits, so that a slider step, a legend and a title can print it exactly.
EPS_GRID = (0.0, 0.005, 0.007, 0.01, 0.013, 0.018, 0.025, 0.035, 0.05, 0.07, 0.1, 0.13, 0.18, 0.25, 0.35, 0.5)


#: What the book's sweeps are of, in English (Chapter 5); a sweep's title says it in the current language.
BOOK_SWEEPS = (N_("one token"), N_("chain, V = 7, T = 50"))


def eps_label(eps: float) -> str:
    """A margin as a slider step and a title show it: two significant digits, exact on ``EPS_GRID``."""
    return f"{float(eps):.2g}"


def always_accept_dict(level: float, right: float, name: str, **axes: str) -> dict[str, Any]:
    """The always-accept end of a sequence front: a star at ``(0, level)`` (no rejections, loss
    ``TV(draft, target)`` over sequences) and a dashed line carrying that level across to ``x = right``."""
    return dict(
        type="scatter",
        x=[0, right],
        y=[level, level],
        mode="lines+markers",
        marker=dict(size=[14, 0], symbol="star"),
        cliponaxis=False,  # the star stands on the y axis: drawn whole
        line=dict(color=COLORS["p"], dash="dash"),
        name=name,
        **axes,
    )


def front_dicts(tv_pq: float, *, xaxis: str = "x", yaxis: str = "y") -> list[dict[str, Any]]:
    """The unattainable triangle below the front and the front itself, from ``(TV, 0)`` to ``(0, TV)``.

    Plain trace dicts (cheap to build; the widgets redraw them on every change).
    """
    d = float(tv_pq)
    return [
        dict(
            type="scatter",
            x=[0, d, 0, 0],
            y=[0, 0, d, 0],
            fill="toself",
            mode="lines",
            line=dict(width=0),
            fillcolor=COLORS["unattainable"],
            name=_("unattainable"),
            hoverinfo="skip",
            xaxis=xaxis,
            yaxis=yaxis,
        ),
        dict(
            type="scatter",
            x=[d, 0],
            y=[0, d],
            mode="lines",
            line=dict(color=COLORS["front"], width=3),
            name=_("Pareto front (Theorem 5)"),
            xaxis=xaxis,
            yaxis=yaxis,
        ),
    ]


def front_traces(tv_pq: float, *, xaxis: str = "x", yaxis: str = "y") -> list[go.Scatter]:
    """``front_dicts`` as plotly objects (for ``slider_figure``, which toggles their visibility)."""
    return [go.Scatter(d) for d in front_dicts(tv_pq, xaxis=xaxis, yaxis=yaxis)]


def panel_layout(titles: Sequence[str], widths: Sequence[float] | None = None, gap: float = 0.07) -> dict[str, Any]:
    """Layout of side-by-side panels (axes ``x``, ``x2``, ...), titles as annotations.

    A dict-only stand-in for ``make_subplots``, which costs tens of milliseconds per
    call: too slow for a widget that redraws on every slider move.
    """
    n = len(titles)
    w = np.asarray(widths if widths is not None else [1.0] * n, dtype=np.float64)
    w = w / w.sum() * (1 - gap * (n - 1))
    layout: dict[str, Any] = {"annotations": []}
    left = 0.0
    for i, title in enumerate(titles):
        k = "" if i == 0 else str(i + 1)
        layout[f"xaxis{k}"] = dict(domain=[left, left + w[i]], anchor=f"y{k}")
        layout[f"yaxis{k}"] = dict(anchor=f"x{k}")
        layout["annotations"].append(
            dict(
                text=title,
                x=left + w[i] / 2,
                y=1.0,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=14),
            )
        )
        left += w[i] + gap
    return layout


def front_axes(title_x: str | None = None, title_y: str | None = None) -> dict[str, Any]:
    """Axes of the rejection/loss plane (default titles: ``P(reject)`` and the loss ``TV(Pᴬ, q)``)."""
    title_x = _("P(reject)") if title_x is None else title_x
    title_y = _("loss TV(Pᴬ, q)") if title_y is None else title_y
    return dict(xaxis=dict(title=title_x, rangemode="tozero"), yaxis=dict(title=title_y, rangemode="tozero"))


# --- Figure 4(a): the front, with random algorithms above it ---------------------


def random_algorithms(p: Any, q: Any, n: int = 400, seed: int = 0) -> dict[str, np.ndarray]:
    """``(reject, loss)`` of random algorithms: any ``(b, P)``, ``b`` with its best ``P``, and members of F."""
    p, q = tradeoff.check_pair(p, q)
    gen = np.random.default_rng(seed)
    V = p.shape[-1]
    b = gen.random((n, V)) ** gen.choice([0.25, 1.0, 4.0], size=(n, 1))
    P = gen.dirichlet(np.full(V, 0.7), size=n)
    b_f, P_f = random_unbiased_member(np.broadcast_to(p, (n, V)), np.broadcast_to(q, (n, V)), gen)
    return {
        "any_reject": tradeoff.reject_probability(p, b),
        "any_loss": tradeoff.bias(p, q, b, P),
        "best_reject": tradeoff.reject_probability(p, b),
        "best_loss": tradeoff.tv_loss(p, q, b),
        "unbiased_reject": tradeoff.reject_probability(p, b_f),
        "unbiased_loss": tradeoff.bias(p, q, b_f, P_f),
    }


def pareto_figure(p: Any, q: Any, n: int = 400, seed: int = 0) -> go.Figure:
    """Figure 4(a): random ``(b, P)`` algorithms never enter the region below the front."""
    pts = random_algorithms(p, q, n, seed)
    d = float(tv(*tradeoff.check_pair(p, q)))
    fig = go.Figure(front_traces(d))
    fig.add_trace(
        go.Scatter(
            x=pts["any_reject"],
            y=pts["any_loss"],
            mode="markers",
            name=_("random (b, P)"),
            cliponaxis=False,  # a point on an axis drawn whole
            marker=dict(color=COLORS["random"], size=5),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=pts["best_reject"],
            y=pts["best_loss"],
            mode="markers",
            name=_("random b, optimal P* (Theorem 4)"),
            cliponaxis=False,  # a point on an axis drawn whole
            marker=dict(color=COLORS["opt"], size=5),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=pts["unbiased_reject"],
            y=pts["unbiased_loss"],
            mode="markers",
            name=_("random unbiased member of F"),
            cliponaxis=False,  # a point on an axis drawn whole
            marker=dict(color=COLORS["unbiased"], size=6, symbol="diamond"),
        )
    )
    # the two ends of the front are named in the legend: the unattainable triangle is too small for
    # their labels on a phone, and anywhere else a label would lie on the front or on the points
    ends = (
        (d, 0.0, _("speculative decoding: (TV, 0)"), "star"),
        (0.0, d, _("always accept: (0, TV)"), "star-square"),
    )
    for x, y, name, symbol in ends:
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                name=name,
                cliponaxis=False,
                marker=dict(color=COLORS["front"], size=14, symbol=symbol, line=dict(color="white", width=1)),
            )
        )
    fig.update_layout(
        title=_("Every algorithm lies on or above the front; TV(p, q) = {tv:.3f}").format(tv=d),
        height=560,
        **front_axes(),
        legend=legend_below(560),
    )
    # the end at (0, TV) lies on the vertical axis, beside its tick labels: they keep clear of its marker
    fig.update_yaxes(ticklabelstandoff=8)
    return fig


# --- Figure 4(b, c): eps sweeps, one token and a chain ----------------------------


def token_sweep(p: Any, q: Any, eps_grid: Sequence[float] = EPS_GRID) -> dict[str, np.ndarray]:
    """``reject`` and the losses of OPT and UNO along ``eps_grid`` for one pair of laws."""
    e = np.asarray(eps_grid, dtype=np.float64)[:, None]
    p, q = tradeoff.check_pair(p, q)
    r, l_opt = tradeoff.over_accept_point(p, q, e, "opt")
    _, l_uno = tradeoff.over_accept_point(p, q, e, "uno")
    return {"eps": e[:, 0], "reject": r, "opt": l_opt, "uno": l_uno}


def chain_sweep(draft: MarkovChain, target: MarkovChain, eps_grid: Sequence[float] = EPS_GRID) -> dict[str, np.ndarray]:
    """``biased.chain_front_point`` (target-weighted sums over positions) of OPT and UNO along ``eps_grid``.

    ``positions`` holds the number of positions summed over (``target.T``): ``sweep_figure`` then names its
    axes as the sums they are (a sum of probabilities over positions, not a probability).
    """
    out: dict[str, list[float]] = {"reject": [], "opt": [], "uno": []}
    for eps in eps_grid:
        r, l_opt = biased.chain_front_point(draft, target, eps, "opt")
        _, l_uno = biased.chain_front_point(draft, target, eps, "uno")
        out["reject"].append(r)
        out["opt"].append(l_opt)
        out["uno"].append(l_uno)
    return {
        "eps": np.asarray(eps_grid, dtype=np.float64),
        **{k: np.asarray(v) for k, v in out.items()},
        "positions": np.asarray(target.T),
    }


def sweep_names(sweep: dict[str, np.ndarray]) -> dict[str, str]:
    """What a sweep's rejection and loss are called: per token, or summed over a chain's positions."""
    if "positions" in sweep:
        return {
            "reject": _("Σ<sub>n</sub> P(reject at n)"),
            "loss": _("Σ<sub>n</sub> loss at n"),
            "both": _("Σ<sub>n</sub> loss / Σ<sub>n</sub> P(reject)"),
        }
    return {"reject": _("P(reject)"), "loss": _("loss TV(Pᴬ, q)"), "both": _("loss / P(reject)")}


def sweep_steps(
    sweep: dict[str, np.ndarray], total_tv: float, what: str, eps_axis: Sequence[float] | None = None
) -> list[tuple[str, list[Any], dict]]:
    """Slider steps: left, the plane with the front and both paths; right, losses against eps.

    ``eps_axis`` (default ``sweep["eps"]``) is where each eps is drawn on the right panel's
    axis, e.g. a small positive stand-in for 0 on a log axis.
    """
    names = sweep_names(sweep)
    steps = []
    xs_eps = np.asarray(sweep["eps"] if eps_axis is None else eps_axis, dtype=np.float64)
    eps_shown = [float(e) for e in sweep["eps"]]  # the data tables give the real ε (0, not its stand-in)
    for i, eps in enumerate(sweep["eps"]):
        traces: list[Any] = front_traces(total_tv)
        for kind in ("opt", "uno"):
            name = "OPT: P = [q − p]₊" if kind == "opt" else "UNO: P = q"
            traces.append(
                go.Scatter(
                    x=sweep["reject"],
                    y=sweep[kind],
                    mode="lines",
                    name=_("{name} (all ε)").format(name=name),
                    meta={"columns": {"ε": eps_shown}},  # the data table says which ε each point is
                    line=dict(color=COLORS[kind], dash="dot"),
                )
            )
            traces.append(
                go.Scatter(
                    x=[sweep["reject"][i]],
                    y=[sweep[kind][i]],
                    mode="markers",
                    name=_("{name} at ε = {eps}").format(name=name, eps=eps_label(eps)),
                    marker=dict(color=COLORS[kind], size=14),
                    cliponaxis=False,  # at the ends of the front the point lies on an axis
                )
            )
            traces.append(
                go.Scatter(
                    x=xs_eps,
                    meta={"x": eps_shown},
                    y=sweep[kind],
                    mode="lines+markers",
                    name=_("{kind}: {loss}").format(kind=kind.upper(), loss=names["loss"]),
                    showlegend=False,  # dotted as its legend entry, the same path over all ε
                    line=dict(color=COLORS[kind], dash="dot"),
                    marker=dict(size=5),
                    xaxis="x2",
                    yaxis="y2",
                )
            )
        traces.append(
            go.Scatter(
                x=xs_eps,
                meta={"x": eps_shown},
                y=sweep["reject"],
                mode="lines+markers",
                name=_("{reject}, both").format(reject=names["reject"]),
                line=dict(color=COLORS["out"], dash="dash"),
                xaxis="x2",
                yaxis="y2",
            )
        )
        traces.append(
            go.Scatter(
                x=[xs_eps[i]] * 2,
                meta={"x": [eps_shown[i]] * 2},
                y=[0, total_tv],
                mode="lines",
                name=_("the slider's ε"),
                showlegend=False,
                line=dict(color="black", width=1),
                xaxis="x2",
                yaxis="y2",
            )
        )
        gap = sweep["uno"][i] - sweep["opt"][i]
        title = _(
            "{what}, ε = {eps}<br><sup>{measure} {reject:.3f}; loss OPT {opt:.3f}, UNO {uno:.3f} "
            "(UNO − OPT = {gap:.3f})</sup>"
        ).format(
            what=_(what),
            measure=names["reject"],
            eps=eps_label(eps),
            reject=sweep["reject"][i],
            opt=sweep["opt"][i],
            uno=sweep["uno"][i],
            gap=gap,
        )
        steps.append((eps_label(eps), traces, {"title": title}))
    return steps


def sweep_figure(sweep: dict[str, np.ndarray], total_tv: float, what: str, active: int = 4) -> go.Figure:
    """An eps slider over ``sweep_steps``: OPT rides the front, UNO sits above it."""
    top = 1.05 * max(total_tv, float(np.max(sweep["uno"])))
    names = sweep_names(sweep)
    layout = dict(
        height=620,
        margin=dict(t=190),
        xaxis=dict(domain=[0, 0.45], title=names["reject"], range=[0, 1.05 * total_tv]),
        yaxis=dict(title=names["loss"], range=[0, top]),
        xaxis2=dict(
            domain=[0.58, 1],
            title=_("ε (log scale; ε = 0 drawn at the left edge)"),
            type="log",
            anchor="y2",
            tickvals=[0.01, 0.1],
            minor=dict(ticks="outside", tickvals=[0.003, 0.03, 0.3]),
        ),
        yaxis2=dict(title=names["both"], range=[0, top], anchor="x2"),
        legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom"),
    )
    positive = sweep["eps"][sweep["eps"] > 0]
    stand_in = positive.min() / 2 if positive.size else 1e-3
    eps_axis = np.where(sweep["eps"] > 0, sweep["eps"], stand_in)
    # the right panel's ranges reach a little past its points: the markers at eps = 0 (the left edge), at a loss
    # of 0 (the bottom) and at the largest eps are drawn whole, inside the plot
    logs = np.log10(eps_axis)
    pad = 0.04 * max(float(logs.max() - logs.min()), 1.0)
    layout["xaxis2"]["range"] = [float(logs.min()) - pad, float(logs.max()) + pad]
    layout["yaxis2"]["range"] = [-0.03 * top, top]
    fig = slider_figure(sweep_steps(sweep, total_tv, what, eps_axis), label="ε", layout=layout, active=active)
    # on a phone the two panels side by side would each get a strip 130 pixels wide: one under the other
    return narrow_layout(
        fig,
        height=780,
        xaxis=dict(domain=[0, 1]),
        yaxis=dict(domain=[0.55, 1]),
        xaxis2=dict(domain=[0, 1]),
        yaxis2=dict(domain=[0, 0.45]),
    )


# --- Beyond the paper: whole sequences ---------------------------------------------


def sequence_sweep(draft: MarkovChain, target: MarkovChain, eps_grid: Sequence[float] = EPS_GRID) -> dict[str, Any]:
    """Exact ``E[N_rej]``, sequence-level TV, and the summed per-position losses, for OPT and UNO."""
    out: dict[str, Any] = {"eps": np.asarray(eps_grid, dtype=np.float64)}
    for kind in ("opt", "uno"):
        rej, seq, summed = [], [], []
        for eps in eps_grid:
            chain = biased.biased_output_chain(draft, target, eps, kind)
            rej.append(biased.biased_expected_rejections(draft, target, eps, kind))
            seq.append(biased.sequence_tv(chain, target))
            summed.append(float(biased.loss_profile(chain, target).sum()))
        out[kind] = {"reject": np.array(rej), "seq_tv": np.array(seq), "summed_loss": np.array(summed)}
    return out


def sequence_figure(draft: MarkovChain, target: MarkovChain, eps_grid: Sequence[float] = EPS_GRID) -> go.Figure:
    """Whole sequences: ``(E[N_rej], TV of sequence laws)`` of OPT and UNO, and the per-position bound."""
    s = sequence_sweep(draft, target, eps_grid)
    fig = go.Figure()
    for kind in ("opt", "uno"):
        name = "OPT" if kind == "opt" else "UNO"
        d = s[kind]
        fig.add_trace(
            go.Scatter(
                x=d["reject"],
                y=d["seq_tv"],
                mode="lines+markers",
                name=_("{name}: sequence TV").format(name=name),
                text=[f"ε = {e:g}" for e in s["eps"]],
                line=dict(color=COLORS[kind]),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=d["reject"],
                y=d["summed_loss"],
                mode="lines",
                name=_("{name}: Σ<sub>n</sub> per-position loss").format(name=name),
                line=dict(color=COLORS[kind], dash="dot"),
            )
        )
    # a legend entry rather than a label on the line: a label as wide as the plot is crossed by the curves
    always = biased.sequence_tv(draft, target)
    right = max(float(np.max(s[kind]["reject"])) for kind in ("opt", "uno"))
    high = max(always, *(float(np.max(s[k][v])) for k in ("opt", "uno") for v in ("seq_tv", "summed_loss")))
    fig.add_trace(always_accept_dict(always, right, _("always accept (★); dashed: its sequence TV")))
    fig.update_layout(
        height=480,
        title=_("Whole sequences of length T = {T} (V = {V}), exact").format(T=target.T, V=target.V),
        # the ranges reach a little below 0: the points on an axis (ε = 0: no loss; a large ε: no rejection)
        # are drawn whole, inside the plot
        xaxis=dict(title=_("E[N<sub>rej</sub>] (exact)"), range=[-0.03 * right, 1.05 * right]),
        yaxis=dict(
            title=_("TV (solid) or Σ<sub>n</sub> loss (dotted)"),
            range=[-0.03 * high, 1.05 * high],
        ),
        legend=legend_below(480, rows=5),  # five entries, one per row
    )
    return fig


# --- Theorem 2: unbiased members of F on one token ---------------------------------


def unbiased_members_figure(p: Any, q: Any, n: int = 300, seed: int = 0) -> go.Figure:
    """Histogram of the rejection probability of random unbiased members of F against the bound TV(p, q)."""
    p, q = tradeoff.check_pair(p, q)
    V = p.shape[-1]
    b, P = random_unbiased_member(np.broadcast_to(p, (n, V)), np.broadcast_to(q, (n, V)), seed)
    reject = tradeoff.reject_probability(p, b)
    bias = tradeoff.bias(p, q, b, P)
    d = float(tv(p, q))
    fig = go.Figure(go.Histogram(x=reject, nbinsx=40, name=_("random members of F"), marker_color=COLORS["unbiased"]))
    fig.add_vline(x=d, line=dict(color=COLORS["front"], width=3), annotation_text=f"TV(p, q) = {d:.3f}")
    fig.update_layout(
        height=380,
        xaxis=dict(title=_("P(reject)"), range=[0, 1]),
        yaxis_title=_("members"),
        title=_(
            "{n} random unbiased algorithms<br><sup>min P(reject) = {low:.3f} ≥ TV(p, q) = {tv:.3f}; "
            "max bias {bias:.1e}</sup>"
        ).format(n=n, low=reject.min(), tv=d, bias=bias.max()),
    )
    return fig


def epsilon_slider_figure(p: Any, q: Any, eps_grid: Sequence[float] | None = None, active: int | None = None) -> Any:
    """Slide eps through 0: below, Corollary 1 keeps the output at q and rejections rise above TV;
    above, rejections fall below TV and even the best rejection law leaves a bias."""
    p, q = tradeoff.check_pair(p, q)
    d = float(tv(p, q))
    grid = np.round(np.linspace(-0.3, 0.3, 25), 3) if eps_grid is None else np.asarray(eps_grid, dtype=np.float64)
    x = token_labels(p.shape[-1])
    path = [tradeoff.pareto_point(p, q, over_accept(p, q, e)) for e in grid]
    steps = []
    for e, (r, loss) in zip(grid, path, strict=True):
        b = over_accept(p, q, e)
        out = tradeoff.output_law(p, b, tradeoff.optimal_rejection_law(p, q, b))
        traces = [
            go.Bar(x=x, y=q, name=_("q (target)"), marker_color=COLORS["q"]),
            go.Bar(x=x, y=out, name=_("output law, best P"), marker_color=COLORS["out"]),
            go.Scatter(
                x=x,
                y=b,
                mode="markers",
                name="b = min(1, max(0, (q + ε)/p))",
                meta={"header": _("rule b")},  # its data table's column: the formula does not fit a phone's
                marker=dict(symbol="diamond", size=11, color=COLORS["opt"]),
                cliponaxis=False,  # a diamond at b = 0 or 1 is drawn whole, over the axis line
            ),
            *front_traces(d, xaxis="x2", yaxis="y2"),
            go.Scatter(
                x=[d, d],
                y=[0, d],
                mode="lines",
                name=_("bound TV(p, q), unbiased rules"),
                xaxis="x2",
                yaxis="y2",
                line=dict(color=COLORS["front"], dash="dash"),
            ),
            go.Scatter(
                x=[pt[0] for pt in path],
                y=[pt[1] for pt in path],
                mode="lines",
                name=_("path of ✖ as ε varies"),
                meta={"columns": {"ε": [float(e) for e in grid]}},  # the data table says which ε each point is
                # over the front and along the x axis: dotted and dark, so it shows on both
                line=dict(color=COLORS["out"], width=2.5, dash="dot"),
                xaxis="x2",
                yaxis="y2",
            ),
            go.Scatter(
                x=[r],
                y=[loss],
                mode="markers",
                name=f"ε = {e:g}",
                xaxis="x2",
                yaxis="y2",
                marker=dict(color="black", size=14, symbol="x"),
                cliponaxis=False,  # whole at the panel's corners (ε = 0, ±0.3)
            ),
        ]
        side = _("unbiased (ε ≤ 0)") if loss <= 1e-12 else _("biased (ε raised b where q < p)")
        title = _(
            "ε = {eps}: {side}<br><sup>P(reject) = {reject:.3f} vs TV(p, q) = {tv:.3f}; "
            "bias with the best P = {loss:.3f}</sup>"
        ).format(eps=f"{e:g}", side=side, reject=float(r), tv=d, loss=float(loss))
        steps.append((f"{e:g}", traces, {"title": title}))
    # the gap holds the right panel's tick labels and its y-axis title clear of the left panel
    layout = panel_layout((_("output law vs target (bars), rule b (diamonds)"), _("rejection vs bias")), gap=0.13)
    # the ranges reach a little below 0 and past 1: the markers at the edges keep clear of the axis
    # lines and of the tick labels, and the two "0" labels at the right panel's origin stay apart
    top = max(d, 0.05) * 1.1
    layout["yaxis"].update(range=[-0.05, 1.08])
    layout["xaxis2"].update(title=_("P(reject)"), range=[-0.08, 1.08])  # the ✖ at (0, TV) and at (1, 0) clear
    layout["yaxis2"].update(title=_("bias TV(Pᴬ, q)"), range=[-0.04 * top, top])
    layout.update(
        height=620, margin=dict(t=190), barmode="group", legend=dict(orientation="h", x=0, y=1.12, yanchor="bottom")
    )
    centre = int(np.argmin(np.abs(grid))) if active is None else active
    fig = slider_figure(steps, label="ε", layout=layout, active=centre)
    return stacked_on_a_phone(fig, 2, height=1050, gap=0.17)


def unbiased_chain_members_figure(draft: MarkovChain, target: MarkovChain, n: int = 200, seed: int = 0) -> go.Figure:
    """Exact ``E[N_rej]`` of ``n`` random unbiased members of F on a chain, against Theorem 1's value."""
    from ..optimality import random_unbiased_chain_member

    bound = float(biased.rejection_profile_of(draft, *biased.over_accept_rule(draft, target, 0.0, "opt")).sum())
    gen = np.random.default_rng(seed)
    values = np.array(
        [
            biased.rejection_profile_of(
                draft, *random_unbiased_chain_member(draft, target, gen, spread=gen.random())
            ).sum()
            for _member in range(n)
        ]
    )
    # the bins start at the smallest member, so the gap between the line and the first bar is the gap between the
    # bound and the best member drawn (none is below the bound); 25 of them keep a bar wide enough to read on a
    # phone, and the largest value lies inside the last one (its bar drawn whole)
    bins, low = 25, float(values.min())
    size = max(float(values.max()) - low, 1e-9) / (bins - 0.5)
    fig = go.Figure(
        go.Histogram(
            x=values,
            xbins=dict(start=low, end=low + bins * size, size=size),
            name=_("random members of F"),
            marker_color=COLORS["unbiased"],
        )
    )
    fig.add_vline(
        x=bound,
        line=dict(color=COLORS["front"], width=3),
        # above the plot, where no bar can run into it
        annotation=dict(
            text=_("speculative decoding: {bound:.2f}").format(bound=bound),
            y=1,
            yref="paper",
            yanchor="bottom",
            xanchor="left",
            showarrow=False,
        ),
    )
    fig.update_layout(
        height=380,
        # a bin's width of room left of the line: nothing is drawn there
        xaxis=dict(range=[bound - 1.5 * size, low + bins * size]),
        xaxis_title=_("E[N<sub>rej</sub>] (exact)"),
        yaxis_title=_("members"),
        title=_(
            "{n} random unbiased algorithms on a chain (V = {V}, T = {T})<br><sup>smallest "
            "E[N<sub>rej</sub>] = {low:.2f} ≥ speculative decoding's {bound:.2f}</sup>"
        ).format(n=n, V=target.V, T=target.T, low=values.min(), bound=bound),
    )
    return fig
