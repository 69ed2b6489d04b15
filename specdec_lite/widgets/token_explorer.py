"""Chapters 1-2 explorer: one speculative step on a small vocabulary.

``token_laws`` builds a draft ``p`` and a target ``q`` from a preset and a draft
quality; ``token_update`` draws p and q, the acceptance probability
``min(1, q/p)``, the residual ``[q - p]_+`` and a Monte Carlo histogram of
speculative decoding's output against ``q``; ``token_explorer`` wires it to controls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import decoding
from .._i18n import N_, _
from ..chains import one_token
from ..figures.part1 import COLORS, grid, stacked_on_a_phone, token_labels
from ..laws import acceptance, residual, tv
from ..primitives import check_int
from ..stats import chi_square
from .core import choices, explorer

#: Presets for the target ``q`` and the draft's unrelated part ``other``.
PRESETS = (N_("shifted"), N_("flat draft"), N_("random"), N_("disjoint supports"))


def _bump(V: int, centre: float, width: float) -> np.ndarray:
    w = np.exp(-0.5 * ((np.arange(V) - centre) / width) ** 2)
    return w / w.sum()


def token_laws(
    V: int = 5, preset: str = "shifted", quality: float = 0.5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``(p, q)`` on ``V`` tokens: ``q`` from the preset, ``p = quality * q + (1 - quality) * other``.

    Presets: ``shifted`` (two bumps, the draft's to the right), ``flat draft`` (peaked
    target, uniform draft), ``random`` (both Dirichlet(1), from ``seed``),
    ``disjoint supports`` (target on the first half, draft on the rest).
    """
    V = check_int(V, "V", low=2, high=50)
    if not 0.0 <= quality <= 1.0:
        raise ValueError(_("quality: must be in [0, 1], got {quality}").format(quality=quality))
    if preset == "shifted":
        q, other = _bump(V, (V - 1) / 3, V / 5), _bump(V, 2 * (V - 1) / 3, V / 4)
    elif preset == "flat draft":
        q, other = 0.5 ** np.arange(V), np.ones(V)
        q, other = q / q.sum(), other / V
    elif preset == "random":
        gen = np.random.default_rng(seed)
        q, other = gen.dirichlet(np.ones(V)), gen.dirichlet(np.ones(V))
    elif preset == "disjoint supports":
        h = V // 2
        q, other = np.r_[np.ones(h), np.zeros(V - h)] / h, np.r_[np.zeros(h), np.ones(V - h)] / (V - h)
    else:
        raise ValueError(_("preset: must be one of {choices}, got {got!r}").format(choices=PRESETS, got=preset))
    return quality * q + (1 - quality) * other, q


def token_update(
    V: int = 5, preset: str = "shifted", quality: float = 0.5, runs: int = 2000, seed: int = 0
) -> go.Figure:
    """Four panels: p and q; acceptance ``min(1, q/p)``; residual ``[q-p]_+``; MC output vs q (±2 SE)."""
    p, q = token_laws(V, preset, quality, seed)
    draft, target = one_token(p, q)
    res = decoding.speculative(draft, target, runs, rng=seed)
    counts = np.bincount(res.tokens[:, 0], minlength=V)
    freq = counts / runs
    gof = chi_square(counts, q)
    x = token_labels(V)

    layout, cells = grid(
        2,
        2,
        (
            _("draft p and target q"),
            _("acceptance probability min(1, q/p)"),
            _("residual [q − p]₊ (used after a rejection)"),
            _("speculative output, {runs} runs, vs q").format(runs=runs),
        ),
    )
    (x1, y1), (x2, y2), (x3, y3), (x4, y4) = cells
    layout["yaxis2"]["range"] = [0, 1.05]
    bars = [
        go.Bar(x=x, y=p, name=_("p (draft)"), marker=dict(color=COLORS["p"], pattern_shape="/"), xaxis=x1, yaxis=y1),
        go.Bar(x=x, y=q, name=_("q (target)"), marker_color=COLORS["q"], xaxis=x1, yaxis=y1),
        go.Bar(x=x, y=acceptance(p, q), name=_("acceptance"), marker_color=COLORS["accept"], xaxis=x2, yaxis=y2),
        go.Bar(x=x, y=residual(p, q), name=_("residual"), marker_color=COLORS["residual"], xaxis=x3, yaxis=y3),
        go.Bar(x=x, y=freq, name=_("speculative (Monte Carlo)"), marker_color=COLORS["mc"], xaxis=x4, yaxis=y4),
        go.Scatter(
            x=x,
            y=q,
            mode="markers",
            name=_("q (bars: ± 2 SE)"),
            xaxis=x4,
            yaxis=y4,
            marker=dict(color=COLORS["q"], size=10, symbol="line-ew-open", line=dict(width=3)),
            error_y=dict(type="data", array=2 * np.sqrt(q * (1 - q) / runs), color=COLORS["q"]),
        ),
    ]
    fig = go.Figure(bars, layout)
    fig.update_layout(
        barmode="group",
        height=620,
        margin=dict(t=110),
        title=(
            _("TV(p, q) = {tv:.3f} = P(reject); observed rejection rate {rate:.3f}").format(
                tv=tv(p, q), rate=res.rejections.mean()
            )
            + "<br><sup>"
            + _("chi-square test of the output against q: p-value {pvalue:.3f}").format(pvalue=gof.pvalue)
            + "</sup>"
        ),
    )
    # on a phone four panels side by side in pairs would be strips with titles of three lines: one under another
    return stacked_on_a_phone(fig, 4, height=1300, gap=0.08)


def token_explorer() -> Any:
    """The lab widget: vocabulary size, preset, draft quality, runs and seed drive ``token_update``."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "V": w.IntSlider(value=5, min=3, max=8, description=_("tokens V"), continuous_update=False, style=style),
        "preset": w.Dropdown(options=choices(PRESETS), value="shifted", description=_("preset"), style=style),
        "quality": w.FloatSlider(
            value=0.5, min=0, max=1, step=0.05, description=_("draft quality"), continuous_update=False, style=style
        ),
        "runs": w.IntSlider(
            value=2000, min=100, max=20000, step=100, description=_("runs"), continuous_update=False, style=style
        ),
        "seed": w.IntSlider(value=0, min=0, max=20, description=_("seed"), continuous_update=False, style=style),
    }
    return explorer(token_update, controls)
