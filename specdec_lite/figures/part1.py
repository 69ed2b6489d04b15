"""Figures of Part I: TV as non-overlapping mass, the speculative step, counting rejections.

Each ``*_traces`` function returns plotly traces (so ``plotting.slider_figure`` can
stack precomputed steps); each ``*_figure`` function returns a ready figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import decoding, theory
from .._i18n import _
from ..chains import MarkovChain, draft_for
from ..chains import seeded_pair as pair
from ..laws import check_law, law_split, rejected_mass, tv
from ..plotting import grid_on_a_phone, narrow_layout, slider_figure
from ..primitives import check_int
from ..stats import running_mean

#: One colour per object, shared by every Part I figure and widget.
COLORS = {
    "p": "#E69F00",
    "q": "#0072B2",
    "shared": "#BBBBBB",
    "accept": "#009E73",
    "residual": "#CC79A7",
    "mc": "#444444",
}


#: Most tokens a figure labels one by one (beyond, no axis could show them).
MAX_TOKEN_LABELS = 100_000


def token_labels(V: int) -> list[str]:
    """Tick labels ``x=0, ..., x=V-1`` (strings, so plotly treats tokens as categories); ``V <= MAX_TOKEN_LABELS``."""
    V = check_int(V, "V", high=MAX_TOKEN_LABELS, what="number of tokens labelled ")
    return [f"x={k}" for k in range(V)]


def grid(
    rows: int,
    cols: int,
    titles: Sequence[str],
    *,
    hspace: float = 0.1,
    vspace: float = 0.16,
    col_widths: Sequence[float] | None = None,
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A subplot grid as a plain layout dict and the ``(xaxis, yaxis)`` ids of each cell, row-major.

    Does what ``plotly.subplots.make_subplots`` does for a simple grid, about ten times
    faster, which keeps the widgets' redraws well under 100 ms.
    """
    widths = np.asarray(col_widths if col_widths is not None else [1.0] * cols, dtype=float)
    widths = widths / widths.sum() * (1 - hspace * (cols - 1))
    x0 = np.concatenate([[0.0], np.cumsum(widths + hspace)[:-1]])
    h = (1 - vspace * (rows - 1)) / rows
    layout: dict[str, Any] = {"annotations": []}
    cells = []
    for r in range(rows):
        top = 1 - r * (h + vspace)
        for c in range(cols):
            k = r * cols + c + 1
            sx, sy = ("", "") if k == 1 else (str(k), str(k))
            layout[f"xaxis{sx}"] = {"domain": [x0[c], x0[c] + widths[c]], "anchor": f"y{sy}"}
            layout[f"yaxis{sy}"] = {"domain": [top - h, top], "anchor": f"x{sx}"}
            cells.append((f"x{sx}", f"y{sy}"))
            if k <= len(titles):
                layout["annotations"].append(
                    dict(
                        text=titles[k - 1],
                        x=x0[c] + widths[c] / 2,
                        y=top,
                        xref="paper",
                        yref="paper",
                        xanchor="center",
                        yanchor="bottom",
                        showarrow=False,
                        font={"size": 14},
                    )
                )
    return layout, cells


def stacked_on_a_phone(fig: Any, panels: int, height: int, gap: float = 0.1) -> Any:
    """``fig``'s grid (made by ``grid``, its panels' titles first among its annotations) one panel under another
    on a phone (``plotting.narrow_layout``): each panel the full width, ``gap`` of the height between them, its
    title over it. Returns ``fig``."""
    return grid_on_a_phone(fig, panels, height, columns=1, gap_y=gap)


# --- Chapter 1: TV as the mass that does not overlap ---------------------------


def tv_traces(p: Any, q: Any) -> list[go.Bar]:
    """Stacked bars: the shared mass ``min(p, q)`` and the two excesses (each of total TV)."""
    p, q = check_law(p, "p"), check_law(q, "q")
    x = token_labels(p.shape[-1])
    shared, q_above = law_split(p, q)
    return [
        go.Bar(x=x, y=shared, name=_("shared: min(p, q)"), marker_color=COLORS["shared"]),
        go.Bar(x=x, y=rejected_mass(q, p), name=_("p above q"), marker_color=COLORS["p"]),
        go.Bar(x=x, y=q_above, name=_("q above p"), marker_color=COLORS["q"]),
    ]


def _tv_title(p: np.ndarray, q: np.ndarray) -> str:
    return _("TV(p, q) = {tv:.3f} = orange mass = blue mass = 1 − grey mass").format(tv=tv(p, q))


def tv_figure(p: Any, q: Any) -> go.Figure:
    """TV as non-overlapping mass: grey is shared, orange and blue each add up to TV."""
    fig = go.Figure(tv_traces(p, q))
    fig.update_layout(barmode="stack", title=_tv_title(np.asarray(p), np.asarray(q)), yaxis_title=_("probability"))
    return fig


def tv_slider_figure(q: Any, other: Any, qualities: Sequence[float] = tuple(np.linspace(0, 1, 11))) -> go.Figure:
    """``tv_figure`` for the drafts ``p = quality * q + (1 - quality) * other``, one slider step each."""
    q, other = check_law(q, "q"), check_law(other, "other")
    top = float(np.maximum(q, other).max()) * 1.05
    steps = []
    for w in qualities:
        p = w * q + (1 - w) * other
        steps.append((f"{w:.2f}", tv_traces(p, q), {"title": _tv_title(p, q)}))
    return slider_figure(
        steps,
        label=_("draft quality"),
        layout={"barmode": "stack", "yaxis": {"range": [0, top], "title": _("probability")}},
    )


# --- Chapter 2: one speculative step puts exactly q on every token ----------------


def split_traces(p: Any, q: Any) -> list[Any]:
    """Where the output of one step comes from: accepted ``min(p, q)`` plus rejected ``max(q - p, 0)``.

    The two stacked bars add up to ``q`` (the black markers): Theorem 1(a) for one token.
    """
    p, q = check_law(p, "p"), check_law(q, "q")
    x = token_labels(p.shape[-1])
    accepted, rejected = law_split(p, q)
    return [
        go.Bar(x=x, y=accepted, name=_("accepted draft: p·min(1, q/p)"), marker_color=COLORS["accept"]),
        go.Bar(x=x, y=rejected, name=_("after a rejection: TV·[q − p]₊"), marker_color=COLORS["residual"]),
        go.Scatter(
            x=x, y=p, mode="markers", name=_("draft p"), marker=dict(color=COLORS["p"], size=11, symbol="diamond")
        ),
        go.Scatter(
            x=x,
            y=q,
            mode="markers",
            name=_("target q"),
            marker=dict(color="black", size=13, symbol="line-ew-open", line=dict(width=3)),
        ),
    ]


def split_slider_figure(q: Any, other: Any, qualities: Sequence[float] = tuple(np.linspace(0, 1, 11))) -> go.Figure:
    """``split_traces`` for ``p = quality * q + (1 - quality) * other``, one slider step each."""
    q, other = check_law(q, "q"), check_law(other, "other")
    top = float(np.maximum(q, other).max()) * 1.1
    steps = []
    for w in qualities:
        p = w * q + (1 - w) * other
        title = _("P(reject) = TV(p, q) = {tv:.3f}; green + pink = q on every token").format(tv=tv(p, q))
        steps.append((f"{w:.2f}", split_traces(p, q), {"title": title}))
    return slider_figure(
        steps,
        label=_("draft quality"),
        layout={"barmode": "stack", "yaxis": {"range": [0, top], "title": _("probability")}},
    )


# --- Chapter 3: the number of rejections ---------------------------------------


def plot_points(n: int, max_points: int = 400) -> np.ndarray:
    """0-based indices to draw a length-``n`` running curve with: dense early, even later."""
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    k = max(2, max_points // 2)
    idx = np.concatenate([np.geomspace(1, n, k), np.linspace(1, n, k)]).astype(int) - 1
    return np.unique(idx)


def running_mean_traces(rejections: Any, exact: float, *, max_points: int = 400) -> list[go.Scatter]:
    """Running mean of ``rejections`` with a ±2 SE band, and the exact value as a flat line."""
    mean, se = running_mean(rejections)
    n = mean.size
    idx = plot_points(n, max_points)
    idx_band = idx[idx >= 1]  # a standard error needs two runs
    runs = idx + 1
    band_x = np.concatenate([idx_band + 1, (idx_band + 1)[::-1]])
    band_y = np.concatenate([(mean + 2 * se)[idx_band], (mean - 2 * se)[idx_band][::-1]])
    return [
        go.Scatter(
            x=band_x,
            y=band_y,
            fill="toself",
            mode="lines",
            line=dict(width=0),
            fillcolor="rgba(0,114,178,0.18)",
            name=_("± 2 standard errors"),
            hoverinfo="skip",
        ),
        go.Scatter(x=runs, y=mean[idx], mode="lines", name=_("Monte Carlo running mean"), line=dict(color=COLORS["q"])),
        go.Scatter(
            x=[1, n],
            y=[exact, exact],
            mode="lines",
            name=_("exact E[N<sub>rej</sub>] (Theorem 1(b))"),
            line=dict(color="black", dash="dash"),
        ),
    ]


def _rejections_title(draft: MarkovChain, target: MarkovChain, rejections: np.ndarray) -> str:
    exact = theory.expected_rejections(draft, target)
    m = float(np.mean(rejections))
    return _("exact E[N<sub>rej</sub>] = {exact:.2f}; Monte Carlo mean of {runs} runs = {mean:.2f}").format(
        exact=exact, runs=rejections.size, mean=m
    )


def figure2_slider(
    V: int = 7,
    T: int = 50,
    runs: int = 5000,
    qualities: Sequence[float] = (0.0, 0.25, 0.5, 0.75),
    seed: int = 10,
) -> go.Figure:
    """The paper's Figure 2 (left) with our own chains: running mean of ``N_rej`` vs Theorem 1.

    ``quality = 0`` is the paper's setting (two unrelated random chains); the slider
    moves to better drafts of the same target.
    """
    steps = []
    for w in qualities:
        draft, target, s_mc = pair(V, T, w, seed)
        rej = decoding.speculative(draft, target, runs, rng=np.random.default_rng(s_mc)).rejections
        traces = running_mean_traces(rej, theory.expected_rejections(draft, target))
        steps.append((f"{w:.2f}", traces, {"title": _rejections_title(draft, target, rej)}))
    return slider_figure(
        steps,
        label=_("draft quality"),
        layout={"xaxis": {"title": _("number of runs")}, "yaxis": {"title": _("rejections per run")}, "height": 480},
    )


def quality_sweep(target: MarkovChain, qualities: Sequence[float], seed: int = 0) -> dict[str, np.ndarray]:
    """Exact ``E[N_rej]``, ``E[oracle calls]`` and both speed-ups along ``draft_for(target, quality)``.

    The same random ``other`` chain is used at every quality (same ``seed``), so the
    curves show one draft improving, not a new draft at each point.
    """
    out: dict[str, list[float]] = {"rejections": [], "calls": [], "speedup": [], "speedup_paper": []}
    for w in qualities:
        draft = draft_for(target, float(w), rng=seed)
        e = theory.expected_rejections(draft, target)
        out["rejections"].append(e)
        out["calls"].append(theory.expected_oracle_calls(draft, target))
        out["speedup"].append(theory.speedup(draft, target))
        out["speedup_paper"].append(target.T / e if e > 0 else np.inf)
    return {"quality": np.asarray(qualities, dtype=float), **{k: np.asarray(v) for k, v in out.items()}}


def quality_sweep_traces(target: MarkovChain, qualities: Sequence[float], seed: int = 0) -> list[go.Scatter]:
    """``E[N_rej]`` (left axis) and the two speed-ups (right axis, log scale) against draft quality."""
    s = quality_sweep(target, qualities, seed)
    paper = np.where(np.isfinite(s["speedup_paper"]), s["speedup_paper"], np.nan)
    return [
        go.Scatter(
            x=s["quality"],
            y=s["rejections"],
            name="E[N<sub>rej</sub>]",
            mode="lines+markers",
            line=dict(color=COLORS["residual"]),
            cliponaxis=False,  # the marker at quality 1 (no rejections) sits on the x axis: drawn whole
        ),
        go.Scatter(
            x=s["quality"],
            y=s["speedup"],
            name=_("speed-up T / E[oracle calls]"),
            mode="lines+markers",
            yaxis="y2",
            line=dict(color=COLORS["accept"]),
            cliponaxis=False,
        ),
        go.Scatter(
            x=s["quality"],
            y=paper,
            name=_("paper's T / E[N<sub>rej</sub>]"),
            mode="lines",
            yaxis="y2",
            line=dict(color=COLORS["accept"], dash="dot"),
        ),
    ]


def quality_sweep_slider(
    V: int = 7,
    Ts: Sequence[int] = (10, 25, 50, 100, 200),
    qualities: Sequence[float] = tuple(np.linspace(0, 1, 21)),
    seed: int = 10,
    active: int = 2,
) -> go.Figure:
    """``quality_sweep_traces`` with a slider over the number of tokens T (one random target per T)."""
    steps = []
    for T in Ts:
        target = MarkovChain.random(V, T, rng=seed)
        steps.append(
            (str(T), quality_sweep_traces(target, qualities, seed + 1), {"title": _("T = {T} tokens").format(T=T)})
        )
    return slider_figure(
        steps,
        label="T",
        active=active,
        layout={
            "xaxis": {"title": _("draft quality (0: unrelated chain, 1: the target itself)")},
            # both y axes push the margins as far as their tick labels and titles need, at every step of the
            # slider (T = 100's "100" is wider than T = 50's "50": on a phone a fixed margin cut the titles)
            "yaxis": {"title": _("expected rejections E[N<sub>rej</sub>]"), "rangemode": "tozero", "automargin": True},
            "yaxis2": {
                "automargin": True,
                "title": _("speed-up (log scale)"),
                "overlaying": "y",
                "side": "right",
                "type": "log",
                "tickvals": [1, 2, 5, 10, 20, 50, 100, 200],
                "showgrid": False,
            },
            "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
            "margin": {"t": 110},
            "height": 500,
        },
    )


#: How many sequences ``sequence_check_figure`` shows on a phone.
PHONE_SEQUENCES = 20


def sequence_check_figure(tokens: Any, law: Any, V: int, *, top: int = 40) -> go.Figure:
    """Observed frequency of each whole sequence (runs, T) against its exact probability ``law``.

    Shows the ``top`` most likely sequences, sorted, with ±2 SE error bars on the exact
    values; the title carries the chi-square p-value over all sequences.
    """
    from ..stats import chi_square, sequence_index

    tokens, law = np.asarray(tokens), np.asarray(law, dtype=float)
    runs = tokens.shape[0]
    counts = np.bincount(sequence_index(tokens, V), minlength=law.size)
    order = np.argsort(law)[::-1][:top]
    labels = ["".join(map(str, np.unravel_index(i, (V,) * tokens.shape[1]))) for i in order]
    gof = chi_square(counts, law)
    fig = go.Figure(
        [
            # light bars, so the exact marks and their bands show where a bar is taller than its mark
            go.Bar(x=labels, y=counts[order] / runs, name=_("observed frequency"), marker_color=COLORS["shared"]),
            go.Scatter(
                x=labels,
                y=law[order],
                mode="markers",
                name=_("exact q(x<sub>1:T</sub>)"),
                # slim marks and no caps: 40 bars leave a phone's plot about 7 pixels per bar, and a mark as
                # wide as that runs into its neighbours' (equal probabilities drew one long line)
                marker=dict(color=COLORS["q"], size=4, symbol="line-ew-open", line=dict(width=2)),
                error_y=dict(
                    type="data",
                    array=2 * np.sqrt(law[order] * (1 - law[order]) / runs),
                    color=COLORS["q"],
                    width=0,
                    thickness=1.2,
                ),
            ),
        ]
    )
    fig.update_layout(
        title=_("{runs} runs, {sequences} possible sequences; chi-square p-value {pvalue:.3f}").format(
            runs=runs, sequences=law.size, pvalue=gof.pvalue
        ),
        xaxis=dict(
            title=_("sequence x<sub>1</sub> … x<sub>T</sub> (the {top} most likely)").format(top=len(order)),
            tickangle=-90,
            tickfont=dict(size=11),
        ),
        yaxis_title=_("probability"),
        height=420,
    )
    # a phone leaves too little width for 40 bars and their error bars: it shows the most likely half
    # (the data table keeps them all), the axis title saying so
    shown = min(len(order), PHONE_SEQUENCES)
    fig.update_xaxes(range=[-0.5, len(order) - 0.5], autorange=False)
    if shown < len(order):
        narrow_layout(
            fig,
            xaxis=dict(
                range=[-0.5, shown - 0.5],
                title=dict(
                    text=_(
                        "sequence x<sub>1</sub> … x<sub>T</sub>: the {shown} most likely (the data table has {top})"
                    ).format(shown=shown, top=len(order))
                ),
            ),
        )
    return fig
