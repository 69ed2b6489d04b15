"""Figures of Chapter 8: speculative decoding with real language models.

These functions only lay out numbers measured by ``specdec_lite.llm.measure`` (or a
``GenerationResult``); they import neither torch nor transformers. Every title
carries ``label``, the line naming the model pair, so a figure never loses it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .._i18n import N_, _
from ..plotting import wrap_text

#: Okabe-Ito colours.
BLUE, ORANGE, GREEN, PINK, RED, SKY = "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"
LAW_COLORS = {"opt": BLUE, "uno": ORANGE}


#: The title the book gives its stacked panels of predicted speed-ups in English (Chapter 8).
BOOK_TITLES = (N_("Predicted speed-up from measured call costs (random weights, real shapes)"),)

#: The titles of the stacked figures of the committed results files, in English (``results_figures``).
RESULTS_TITLES = {
    "speed": N_("Wall-clock speed-up over autoregressive sampling of the target"),
    "theorem1": N_("Theorem 1 on real models: rejections per run, ±2 SE"),
    "tradeoff": N_("The quality/speed trade-off, per drafted token"),
}

#: The models of a pair as the figures name them (their names in the current language: ``role_name``).
ROLES = {"target": N_("target model"), "draft": N_("draft model")}


def role_name(role: str) -> str:
    """``role`` (``"target"``, ``"draft"``, or any other key of a losses dict) in the current language."""
    return _(ROLES[role]) if role in ROLES else role


#: The kinds of generated tokens, short (legends), in the current language.
KIND_NAMES = {"accepted": lambda: _("accepted"), "rejected": lambda: _("rejected"), "bonus": lambda: _("bonus")}


def _title(text: str, label: str) -> dict[str, Any]:
    """The title: ``text``, and under it ``label`` (the machine and the pair) in small type, broken into lines
    that fit the figure."""
    return dict(text=f"{text}<br><sup>{wrap_text(label, 80)}</sup>", x=0.02)


def _top(title: dict[str, Any]) -> int:
    """The top margin that holds ``title`` (one line, then the small lines of its label)."""
    return 50 + 18 * title["text"].count("<br>")


def _finish(fig: go.Figure, title: dict[str, Any], height: int, **layout: Any) -> go.Figure:
    """Lay out ``fig`` with ``title`` and room for it: the plot keeps ``height`` less the usual margins."""
    top = _top(title)
    fig.update_layout(title=title, height=height + top - 100, margin=dict(t=top), **layout)
    return fig


def _per_law(rows: Sequence[Any], trace: Any) -> go.Figure:
    """One scatter per rejection law present in ``rows``; ``trace(selected_rows)`` gives its data."""
    fig = go.Figure()
    for law in ("opt", "uno"):
        sel = [r for r in rows if r.rejection_law == law]
        if sel:
            fig.add_trace(go.Scatter(name=f"Decoding-{law.upper()}", line=dict(color=LAW_COLORS[law]), **trace(sel)))
    return fig


def training_figure(losses: Mapping[str, Sequence[float]], label: str) -> go.Figure:
    """Training loss per step of each model (the draft's is a distillation loss when it learned from the target)."""
    fig = go.Figure()
    for (role, hist), color in zip(losses.items(), (BLUE, ORANGE, GREEN), strict=False):
        fig.add_trace(
            go.Scatter(
                x=np.arange(1, len(hist) + 1), y=list(hist), mode="lines", name=role_name(role), line=dict(color=color)
            )
        )
    _finish(
        fig,
        _title(_("Training the offline pair"), label),
        420,
        xaxis_title=_("step"),
        yaxis_title=_("loss (nats per token)"),
    )
    return fig


def _alternate_sides(x: Sequence[float]) -> list[str]:
    """Text positions for points ordered by ``x``: above-left, below-right, above-left … so two neighbours never
    label one side, and no label sits on the diagonal ``observed = predicted`` or on its point's error bars."""
    sides = [""] * len(x)
    for rank, i in enumerate(np.argsort(x, kind="stable")):
        sides[i] = "top left" if rank % 2 == 0 else "bottom right"
    return sides


def theorem1_figure(rows: Sequence[Any], label: str) -> go.Figure:
    """Observed mean rejections against Theorem 1's prediction (mean summed TV at drafted positions), ±2 SE."""
    obs = np.array([r.observed for r in rows])
    pred = np.array([r.predicted for r in rows])
    lo, hi = float(min(obs.min(), pred.min())) * 0.9, float(max(obs.max(), pred.max())) * 1.1
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[lo, hi], y=[lo, hi], mode="lines", name=_("observed = predicted"), line=dict(color="grey", dash="dash")
        )
    )
    fig.add_trace(
        go.Scatter(
            x=pred,
            y=obs,
            mode="markers+text",
            name=_("observed mean rejections, per prompt"),
            # which prompt each row of the data table is: its number in the list of prompts
            meta={"columns": {_("prompt no."): list(range(1, len(rows) + 1))}},
            # see-through with a solid ring: prompts whose points nearly coincide still show one by one
            # small, and thin error bars: two prompts a few pixels apart keep both their bars in sight
            marker=dict(size=8, color=BLUE, opacity=0.55, line=dict(width=1.5, color=BLUE)),
            error_y=dict(type="data", array=2 * np.array([r.observed_se for r in rows]), thickness=1.2, width=3),
            error_x=dict(type="data", array=2 * np.array([r.predicted_se for r in rows]), thickness=1.2, width=3),
            # each point labelled with its prompt's number, neighbours along the x axis on alternate sides
            text=[str(n) for n in range(1, len(rows) + 1)],
            textposition=_alternate_sides(pred),
            customdata=[repr(r.prompt) for r in rows],
            hovertemplate=_("%{customdata}<br>predicted %{x:.2f}<br>observed %{y:.2f}") + "<extra></extra>",
        )
    )
    _finish(
        fig,
        _title(_(RESULTS_TITLES["theorem1"]), label),
        480,
        xaxis_title=_("predicted: mean of Σ TV(p<sub>n</sub>, q<sub>n</sub>) over drafted positions"),
        yaxis_title=_("observed: mean number of rejections"),
    )
    return fig


def tradeoff_figure(rows: Sequence[Any], label: str) -> go.Figure:
    """Rejection rate against the exact per-token TV loss for Decoding-OPT and Decoding-UNO across eps."""
    fig = _per_law(
        rows,
        lambda sel: dict(
            x=[r.reject_prob for r in sel],
            y=[r.loss for r in sel],
            mode="lines+markers",
            text=[f"ε = {r.eps:g}" for r in sel],
            hovertemplate="%{text}<br>%{x:.3f}, %{y:.3f}<extra></extra>",
            meta={"columns": {"ε": [r.eps for r in sel]}},  # each point's ε in the data table
        ),
    )
    # one label per value of ε, at the point of the law that lies further out, only where it has room
    for note in _eps_labels(rows):
        fig.add_annotation(**note)
    _finish(
        fig,
        _title(_(RESULTS_TITLES["tradeoff"]), label),
        480,
        xaxis_title=_("rejection probability Σ(1 − b)p (mean over drafted positions)"),
        yaxis_title=_("TV(Pᴬ, q): exact loss per token"),
    )
    return fig


def loglik_figure(rows: Sequence[Any], label: str) -> go.Figure:
    """The target's mean log-likelihood per generated token (a quality proxy) against eps, ±2 SE.

    The measured values of ε stand evenly spaced along the axis (they are far from evenly spaced: 0, 0.003 …
    0.1), each ticked with its value. The two laws are measured at the same ε: OPT's points are drawn a little to
    the left of it, UNO's a little to the right, so that their error bars stand side by side; the data table
    gives the true ε (``meta["x"]``)."""
    values = sorted({r.eps for r in rows})
    at = {e: i for i, e in enumerate(values)}
    fig = _per_law(
        rows,
        lambda sel: dict(
            x=[at[r.eps] + (0.08 if r.rejection_law == "uno" else -0.08) for r in sel],
            y=[r.loglik for r in sel],
            mode="lines+markers",
            error_y=dict(type="data", array=[2 * r.loglik_se for r in sel]),
            meta={"x": [r.eps for r in sel]},
            text=[f"ε = {r.eps:g}" for r in sel],
            hovertemplate="%{text}<br>%{y:.3f}<extra></extra>",
        ),
    )
    _finish(
        fig,
        _title(_("Quality proxy: the target's log-likelihood of the generated text"), label),
        460,
        xaxis_title=_("ε (over-acceptance; the values measured, evenly spaced)"),
        yaxis_title=_("mean log q(x<sub>n</sub> | x<sub>1:n−1</sub>) per token"),
    )
    fig.update_xaxes(tickvals=list(range(len(values))), ticktext=[f"{e:g}" for e in values])
    return fig


def speed_figure(rows: Sequence[Any], label: str) -> go.Figure:
    """Measured speed-up over our autoregressive sampling of the target, by lookahead, with the prediction."""
    fig = go.Figure()
    ours = sorted((r for r in rows if r.method == "speculative"), key=lambda r: r.lookahead)
    hf = sorted((r for r in rows if r.method == "HF assisted"), key=lambda r: r.lookahead)
    ks = [r.lookahead for r in ours]
    fig.add_trace(
        go.Scatter(
            x=ks, y=[r.speedup for r in ours], mode="lines+markers", name=_("ours, measured"), line=dict(color=BLUE)
        )
    )
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=[r.predicted_speedup for r in ours],
            mode="lines",
            name=_("ours, predicted"),
            line=dict(color=BLUE, dash="dot"),
        )
    )
    if hf:
        fig.add_trace(
            go.Scatter(
                x=[r.lookahead for r in hf],
                y=[r.speedup for r in hf],
                mode="markers",
                name=_("HF assisted generation"),
                marker=dict(color=ORANGE, size=11, symbol="diamond"),
            )
        )
    # the two baselines as dashed lines named in the legend (labels on the lines would collide: they are close)
    ends = [min(ks), max(ks)] if ks else [0, 1]
    for r in rows:
        if r.method == "HF autoregressive":
            fig.add_trace(
                go.Scatter(
                    x=ends, y=[r.speedup] * 2, mode="lines", name=_("HF sampling"), line=dict(color=ORANGE, dash="dash")
                )
            )
    fig.add_trace(
        go.Scatter(
            x=ends,
            y=[1.0, 1.0],
            mode="lines",
            name=_("our autoregressive sampling"),
            line=dict(color="grey", dash="dash"),
        )
    )
    _finish(
        fig,
        _title(_(RESULTS_TITLES["speed"]), label),
        480,
        # a tick at each lookahead measured, never between them (K is a whole number: 2, 3, 4, 6, not 2.5)
        xaxis=dict(tickmode="array", tickvals=sorted({r.lookahead for r in ours + hf})),
        xaxis_title=_("lookahead K"),
        yaxis_title=_("speed-up (tokens per second ratio)"),
    )
    return fig


def _eps_labels(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Labels ``ε = …`` of the trade-off figure: one per ε (beside UNO's point, the one further from the
    origin, else OPT's), skipping a label that would sit within 30% of the horizontal span (and a quarter of the
    vertical one) of a label already placed: a label is about a fifth of a phone's plot wide, and labels closer
    than that form a staircase that reads as one block."""
    points: dict[float, tuple[float, float]] = {}
    for r in sorted(rows, key=lambda r: r.rejection_law != "uno"):
        points.setdefault(r.eps, (r.reject_prob, r.loss))
    if not points:
        return []
    xs, ys = zip(*points.values(), strict=True)
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    placed: list[tuple[float, float]] = []
    notes = []
    for eps, (x, y) in sorted(points.items()):
        if any(abs(x - px) < 0.3 * span_x and abs(y - py) < 0.25 * span_y for px, py in placed):
            continue
        placed.append((x, y))
        notes.append(
            dict(
                x=x,
                y=y,
                text=f"ε = {eps:g}",
                showarrow=False,
                xanchor="left",
                yanchor="bottom",
                xshift=4,
                yshift=4,
                font=dict(size=11),
            )
        )
    return notes


def generation_figure(result: Any, label: str, tokens: Sequence[str] | None = None) -> go.Figure:
    """One run position by position: bars of TV(p_n, q_n), coloured accepted / rejected / bonus.

    The title compares the rejections with the summed TV of the drafted positions and,
    when they differ (eps > 0), with the expected rejections ``sum (1 - b) p`` of the rule.
    """
    n = len(result.drafted)
    x = np.arange(1, n + 1)
    kinds = np.where(~result.drafted, "bonus", np.where(result.accepted, "accepted", "rejected"))
    tv_drafted = np.where(result.drafted, np.nan_to_num(result.tv), np.nan)  # a bonus token was never drafted: no TV
    top = max(0.05, 1.15 * float(np.nanmax(tv_drafted, initial=0.0)))
    fig = go.Figure()
    # the kinds differ by pattern as well as colour; tokens in the hover and the data table, not on the bars
    for kind, color, pattern in (("accepted", GREEN, ""), ("rejected", RED, "/"), ("bonus", SKY, "x")):
        sel = kinds == kind
        words = [] if tokens is None else [repr(tokens[i]) for i in np.flatnonzero(sel)]
        fig.add_trace(
            go.Bar(
                x=x[sel],
                y=tv_drafted[sel],
                width=0.8,
                name=KIND_NAMES[kind]() if kind != "bonus" else _("bonus ★ (not drafted: no TV)"),
                marker=dict(color=color, pattern=dict(shape=pattern)),
                customdata=words or None,
                meta={"columns": {_("token"): words}} if words else None,
                hovertemplate=_("position %{x}<br>TV %{y:.3f}")
                + ("<br>%{customdata}" if words else "")
                + "<extra></extra>",
            )
        )
    # a bonus token has no bar (no TV): a star on the axis, its hover says what it is
    for i in np.flatnonzero(kinds == "bonus"):
        tip = _("position {n}: bonus token from the target, not drafted, so no TV").format(n=int(x[i]))
        if tokens is not None:
            tip += f"<br>{html.escape(repr(tokens[i]))}"
        fig.add_annotation(
            x=int(x[i]), y=0, text="★", showarrow=False, yanchor="bottom", font=dict(color=SKY, size=16), hovertext=tip
        )
    summed_tv = float(np.nansum(result.tv[result.drafted]))
    expected = result.predicted_rejections  # sum of (1 - b) p: the summed TV only when eps = 0
    values = dict(
        rejections=result.rejections, summed_tv=summed_tv, expected=expected, per_call=n / result.oracle_calls
    )
    if abs(expected - summed_tv) < 1e-6:
        head = _(
            "rejections: {rejections}, Σ TV at drafted positions = {summed_tv:.2f}, "
            "{per_call:.2f} tokens per target call"
        ).format(**values)
    else:
        head = _(
            "rejections: {rejections}, Σ TV at drafted positions = {summed_tv:.2f} (expected rejections under "
            "this rule {expected:.2f}), {per_call:.2f} tokens per target call"
        ).format(**values)
    _finish(
        fig,
        _title(head, label),
        420,
        xaxis_title=_("generated position n"),
        yaxis_title="TV(p<sub>n</sub>, q<sub>n</sub>)",
        yaxis_range=[0, top],
        barmode="overlay",
    )
    return fig


#: What each kind of token is, in the legend and in every token's tooltip.
TOKEN_KINDS = {
    "accepted": N_("accepted draft (solid underline)"),
    "rejected": N_("drawn from the residual after a rejection (dashed box)"),
    "bonus": N_("bonus token from the target (double underline)"),
}


def token_css() -> str:
    """The stylesheet of ``annotated_html`` (the file ``token_output.css`` next to this module)."""
    from importlib.resources import files

    return files(__package__).joinpath("token_output.css").read_text(encoding="utf-8")


def annotated_html(pieces: Sequence[str], result: Any) -> str:
    """The generated text as HTML: each token styled as an accepted draft, a draw after a rejection, or a bonus.

    The three differ by line style as well as colour (a legend says which is which),
    every token's tooltip names its kind and its ``TV(p_n, q_n)``, and the text stays
    dark on light in both page themes.
    """
    import html

    if len(pieces) != len(result.drafted):
        raise ValueError(f"pieces: {len(pieces)} strings for {len(result.drafted)} generated tokens")
    spans = []
    for i, piece in enumerate(pieces):
        kind = "bonus" if not result.drafted[i] else ("accepted" if result.accepted[i] else "rejected")
        tip = _(TOKEN_KINDS[kind]) + (f", TV {result.tv[i]:.2f}" if result.drafted[i] else "")
        spans.append(f'<span class="sdl-tok sdl-tok-{kind}" title="{html.escape(tip)}">{html.escape(piece)}</span>')
    legend = "".join(
        f'<li><span class="sdl-tok sdl-tok-{k}">&nbsp;{html.escape(KIND_NAMES[k]())}&nbsp;</span> '
        f"{html.escape(_(text))}</li>"
        for k, text in TOKEN_KINDS.items()
    )
    styles = html.escape(_("token styles"))
    return (
        f"<style>{token_css()}</style>"
        f'<pre class="sdl-tokens">{"".join(spans)}</pre>'
        f'<ul class="sdl-legend" aria-label="{styles}">{legend}</ul>'
    )


#: One colour and one dash per lookahead K of the predicted speed-up curves that is the best choice somewhere
#: (Okabe-Ito, then black), in the order of K; the other curves are drawn thin in ``K_OTHER``.
K_STYLES = [
    (BLUE, "solid"),
    (ORANGE, "dash"),
    (GREEN, "dot"),
    (PINK, "dashdot"),
    (RED, "longdash"),
    (SKY, "longdashdot"),
    ("#000000", "solid"),
    ("#999999", "dash"),
]
#: The colour of a predicted speed-up curve whose K is the best choice at no acceptance rate: half-transparent
#: grey, faint on a light and on a dark plot alike (the dark theme keeps a translucent colour as it is).
K_OTHER = "rgba(128, 128, 128, 0.55)"


def predicted_speedup_figure(
    alphas: Sequence[float], curves: Mapping[int, Sequence[float]], best: Sequence[int], label: str
) -> go.Figure:
    """Speed-up predicted from measured call costs against the acceptance rate, a curve per K, the best K marked.

    ``curves[K][i]`` is the prediction at ``alphas[i]``, ``best[i]`` the K with the largest one there, ``K = 0``
    (no drafting, speed-up 1) included; the best choice at each alpha carries a marker (on the line of
    autoregressive sampling where it is ``K = 0``), and a label where the best K changes.
    """
    fig = go.Figure()
    # in colour only the curves of a K that is the best choice somewhere: the others cross them near α = 1
    shown = sorted({int(K) for K in best} - {0})
    for K, ys in sorted(curves.items()):
        if int(K) in shown:
            color, dash = K_STYLES[shown.index(int(K)) % len(K_STYLES)]
            line = dict(color=color, dash=dash, width=2)
        else:
            line = dict(color=K_OTHER, width=1)
        fig.add_trace(go.Scatter(x=list(alphas), y=list(ys), mode="lines", name=f"K = {K}", line=line))
    top = [1.0 if int(K) == 0 else float(curves[int(K)][i]) for i, K in enumerate(best)]
    names = [_("best K = 0 (no drafting)") if int(K) == 0 else _("best K = {K}").format(K=int(K)) for K in best]
    # where the best K is 0 (on the line at 1, dozens side by side) only every fifth α and the last one keep an
    # open ring, so that the dashed line shows between them instead of a chain of beads over it
    kept = [i for i, K in enumerate(best) if int(K) or i % 5 == 0 or i + 1 == len(best) or int(best[i + 1])]
    fig.add_trace(
        go.Scatter(
            x=[alphas[i] for i in kept],
            y=[top[i] for i in kept],
            mode="markers",
            name=_("speed-up at the best K of this α (K = 0: no drafting)"),
            marker=dict(color="#000000", size=6, symbol=["circle" if int(best[i]) else "circle-open" for i in kept]),
            text=[names[i] for i in kept],
            hovertemplate=_("α = %{x:.2f}<br>%{text}<br>predicted speed-up %{y:.2f}") + "<extra></extra>",
        )
    )
    # drawn over the best-K markers (where the best K is 0 they lie on it), dashed and grey, so it shows between
    # and across them
    fig.add_trace(
        go.Scatter(
            x=[min(alphas), max(alphas)],
            y=[1.0, 1.0],
            mode="lines",
            name=_("autoregressive sampling"),
            line=dict(color="#666666", dash="dash", width=1.5),
        )
    )
    for note in _best_k_labels(alphas, top, best):
        fig.add_annotation(**note)
    _finish(
        fig,
        _title(_("Predicted speed-up from measured call costs (not a measured speed-up)"), label),
        500,
        xaxis_title=_("acceptance rate α"),
        yaxis_title=_("predicted speed-up (wall-clock model)"),
    )
    return fig


def _best_k_labels(alphas: Sequence[float], top: Sequence[float], best: Sequence[int]) -> list[dict[str, Any]]:
    """The labels ``K = …`` where the best K changes, each just above its marker and to its left; a label within a
    sixth of the horizontal span of the one before it (its box would meet that one's in a phone's narrow plot, and
    may in a laptop's) goes one line higher, so close changes of the best K stack up instead of overlapping. No
    arrows: a line from a raised label down to its marker would cross the label beside it."""
    span = (max(alphas) - min(alphas)) or 1.0
    notes: list[dict[str, Any]] = []
    last_x, level = None, 0
    for i, K in enumerate(best):
        if i > 0 and K == best[i - 1]:
            continue
        level = level + 1 if last_x is not None and alphas[i] - last_x < span / 6 else 0
        last_x = alphas[i]
        # up and to the left of its marker, clear of the curves (they lie below the best one), except near the
        # left edge, where it reads to the right
        left = alphas[i] - min(alphas) < 0.15 * span
        notes.append(
            dict(
                x=alphas[i],
                y=top[i],
                text=f"K = {int(K)}",
                showarrow=False,
                xanchor="left" if left else "right",
                xshift=2 if left else -2,
                yanchor="bottom",
                yshift=5 + 15 * level,
                font=dict(size=11),
            )
        )
    return notes


def panel_title(machine: str, draft: str, target: str, context: int) -> str:
    """The title of a panel of Figure 8.9, in the current language: the machine (``shape_costs.panel_label``)
    over the pair of shapes and the context length."""
    return _("{machine}<br>shapes {draft} → {target}, context {context}").format(
        machine=machine, draft=draft, target=target, context=context
    )


def predicted_speedup_panels(
    alphas: Sequence[float], panels: Sequence[tuple[str, str, str, int, Mapping[int, Sequence[float]], Sequence[int]]]
) -> go.Figure:
    """Figure 8.9: one panel of ``predicted_speedup_figure`` per shapes file, one under another, each headed by
    ``panel_title``; ``panels`` holds ``(machine, draft, target, context, curves, best)`` per file.

    The legend (a line per K, autoregressive sampling, the best-K markers) lies in rows under the plots, where
    it takes the width it needs instead of a scroll bar beside them.
    """
    from ..plotting import legend_below, stack

    figures = [
        predicted_speedup_figure(alphas, curves, best, f"{draft} → {target}")
        for _machine, draft, target, _context, curves, best in panels
    ]
    fig = stack(
        figures, titles=[panel_title(m, d, t, c) for m, d, t, c, _curves, _best in panels], title=BOOK_TITLES[0]
    )
    fig.update_layout(legend=legend_below(fig.layout.height, top=fig.layout.margin.t or 100, gap_px=70))
    return fig


def results_figures(rows: Sequence[tuple[Any, Any, Any]], titles: Sequence[str]) -> dict[str, go.Figure]:
    """Figures 8.6–8.8: one panel per results file, one under another, headed by ``titles``.

    ``rows`` holds each file's ``(theorem1_rows, speed_rows, sweep_rows)`` (``measure_pair.result_rows``).
    Returns the stacked ``speed_figure``, ``theorem1_figure`` and ``tradeoff_figure`` under the keys of
    ``RESULTS_TITLES``.
    """
    from ..plotting import stack

    if len(rows) != len(titles):
        raise ValueError(f"titles: need one per results file ({len(rows)}), got {len(titles)}")
    theorem1_rows, speed_rows, sweep_rows = zip(*rows, strict=True) if rows else ((), (), ())
    panels = {
        "speed": [speed_figure(r, t) for r, t in zip(speed_rows, titles, strict=True)],
        "theorem1": [theorem1_figure(r, t) for r, t in zip(theorem1_rows, titles, strict=True)],
        "tradeoff": [tradeoff_figure(r, t) for r, t in zip(sweep_rows, titles, strict=True)],
    }
    return {key: stack(figures, titles=titles, title=RESULTS_TITLES[key]) for key, figures in panels.items()}
