"""Chapter 4 lab widget: "try to beat speculative decoding" on four tokens.

The reader picks an instance ``(p, q)``, an acceptance rule ``b`` (four sliders, or
a preset) and a rejection law ``P``. ``beat_update`` shows the output law ``P^A``
against ``q``, the rule against the speculative ``min(1, q/p)``, and where the
algorithm lands in the (rejection probability, bias) plane: every unbiased choice
sits at or right of ``TV(p, q)``, every choice left of it is visibly biased.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import tradeoff
from .._i18n import N_, _
from ..figures.part1 import stacked_on_a_phone
from ..figures.part2 import COLORS, front_dicts, panel_layout, token_labels
from ..laws import acceptance, residual, tv
from .core import choices, explorer

#: Four-token instances ``(p, q)``.
INSTANCES: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    N_("draft too confident"): ((0.55, 0.25, 0.15, 0.05), (0.25, 0.25, 0.25, 0.25)),
    N_("mirror images"): ((0.4, 0.3, 0.2, 0.1), (0.1, 0.2, 0.3, 0.4)),
    N_("draft misses a token"): ((0.5, 0.3, 0.2, 0.0), (0.3, 0.3, 0.1, 0.3)),
    N_("close models"): ((0.3, 0.3, 0.25, 0.15), (0.25, 0.3, 0.3, 0.15)),
}

#: Acceptance presets; "sliders" uses the four sliders.
ACCEPT_PRESETS = (
    N_("sliders"),
    N_("speculative min(1, q/p)"),
    N_("half of speculative"),
    N_("always accept"),
    N_("never accept"),
)

#: Rejection laws the reader can choose.
REJECTION_CHOICES = (
    N_("best for b (Theorem 4 / Corollary 1)"),
    N_("residual [q − p]₊"),
    N_("target q"),
    N_("uniform"),
    N_("draft p"),
)


def instance_laws(instance: str) -> tuple[np.ndarray, np.ndarray]:
    """``(p, q)`` of a named instance."""
    if instance not in INSTANCES:
        raise ValueError(
            _("instance: must be one of {choices}, got {got!r}").format(choices=tuple(INSTANCES), got=instance)
        )
    p, q = INSTANCES[instance]
    return np.array(p), np.array(q)


def choose_accept(p: np.ndarray, q: np.ndarray, preset: str, sliders: tuple[float, ...]) -> np.ndarray:
    """The acceptance rule ``b`` from a preset (or the sliders)."""
    spec = acceptance(p, q)
    rules = {
        "sliders": np.asarray(sliders, dtype=np.float64),
        "speculative min(1, q/p)": spec,
        "half of speculative": 0.5 * spec,
        "always accept": np.ones_like(p),
        "never accept": np.zeros_like(p),
    }
    if preset not in rules:
        raise ValueError(
            _("accept_preset: must be one of {choices}, got {got!r}").format(choices=ACCEPT_PRESETS, got=preset)
        )
    return tradeoff.check_accept(rules[preset], p.shape)


def choose_rejection(p: np.ndarray, q: np.ndarray, b: np.ndarray, choice: str) -> np.ndarray:
    """The rejection law ``P`` for the reader's choice."""
    laws = {
        REJECTION_CHOICES[0]: lambda: tradeoff.optimal_rejection_law(p, q, b),
        REJECTION_CHOICES[1]: lambda: residual(p, q),
        REJECTION_CHOICES[2]: lambda: q,
        REJECTION_CHOICES[3]: lambda: np.full_like(p, 1.0 / p.size),
        REJECTION_CHOICES[4]: lambda: p,
    }
    if choice not in laws:
        raise ValueError(
            _("rejection: must be one of {choices}, got {got!r}").format(choices=REJECTION_CHOICES, got=choice)
        )
    return laws[choice]()


def side_of_bound(reject: float, bias: float, bound: float, atol: float = 1e-9) -> str:
    """One line saying which side of the bound the algorithm is on, and whether it is unbiased."""
    if bias <= atol:
        if reject < bound - atol:  # impossible (Theorem 2): kept as a guard for the widget's own maths
            return _("unbiased below the bound?! (this would contradict Theorem 2)")
        if reject <= bound + atol:
            return _("unbiased and on the bound: this is speculative decoding")
        return _("unbiased, but rejects {excess:.3f} more than the bound").format(excess=reject - bound)
    if reject < bound - atol:
        return _("rejects less than the bound, and pays: biased by {bias:.3f}").format(bias=bias)
    return _("biased by {bias:.3f} without rejecting less: the worst of both").format(bias=bias)


def beat_update(
    instance: str = "draft too confident",
    accept_preset: str = "sliders",
    b0: float = 0.5,
    b1: float = 1.0,
    b2: float = 1.0,
    b3: float = 1.0,
    rejection: str = REJECTION_CHOICES[0],
) -> go.Figure:
    """Three panels: ``q`` vs ``P^A``; ``b`` vs ``min(1, q/p)``; the (reject, bias) plane with the bound."""
    p, q = instance_laws(instance)
    b = choose_accept(p, q, accept_preset, (b0, b1, b2, b3))
    P = choose_rejection(p, q, b, rejection)
    out = tradeoff.output_law(p, b, P)
    reject = float(tradeoff.reject_probability(p, b))
    bias = float(tv(out, q))
    bound = float(tv(p, q))
    x = token_labels(p.size)
    x3, y3 = "x3", "y3"
    data = [
        dict(
            type="bar",
            x=x,
            y=p,
            name=_("p (draft)"),
            marker=dict(color=COLORS["p"], pattern=dict(shape="/")),
            opacity=0.45,
        ),
        dict(type="bar", x=x, y=q, name=_("q (target)"), marker_color=COLORS["q"]),
        dict(type="bar", x=x, y=out, name=_("P<sup>A</sup> (yours)"), marker_color=COLORS["out"]),
        dict(type="bar", x=x, y=b, name=_("b (yours)"), marker_color=COLORS["opt"], xaxis="x2", yaxis="y2"),
        dict(
            type="scatter",
            x=x,
            y=acceptance(p, q),
            mode="markers",
            name="min(1, q/p)",
            xaxis="x2",
            yaxis="y2",
            marker=dict(symbol="line-ew-open", size=28, line=dict(width=4, color=COLORS["front"])),
        ),
        *front_dicts(bound, xaxis=x3, yaxis=y3),
        dict(
            type="scatter",
            x=[bound, bound],
            y=[0, 1],
            mode="lines",
            name=_("bound TV(p, q)"),
            xaxis=x3,
            yaxis=y3,
            line=dict(color=COLORS["front"], dash="dash"),
        ),
        dict(
            type="scatter",
            x=[reject],
            y=[bias],
            mode="markers",
            name=_("your algorithm"),
            xaxis=x3,
            yaxis=y3,
            marker=dict(color="black", size=16, symbol="x"),
        ),
    ]
    layout = panel_layout(
        (_("output law P<sup>A</sup> vs target q"), _("your rule b vs min(1, q/p)"), _("rejection vs bias")),
        widths=(0.36, 0.28, 0.36),
        gap=0.1,  # room for the next panel's y title
    )
    layout["yaxis2"].update(range=[0, 1.05])
    layout["xaxis3"].update(title=_("P(reject)"), range=[0, 1])
    layout["yaxis3"].update(title=_("bias TV(P<sup>A</sup>, q)"), range=[0, 1])
    layout.update(
        barmode="group",
        height=470,
        margin=dict(t=110),
        legend=dict(orientation="h", y=-0.15),
        title=(
            _(
                "P(reject) = {reject:.3f} vs bound TV(p, q) = {bound:.3f};  bias TV(P<sup>A</sup>, q) = {bias:.3f}"
            ).format(reject=reject, bound=bound, bias=bias)
            + f"<br><sup>{side_of_bound(reject, bias, bound)}</sup>"
        ),
    )
    # on a phone three panels side by side would be strips with titles of three lines: one under another
    return stacked_on_a_phone(go.Figure(data=data, layout=layout), 3, height=1150, gap=0.1)


def beat_explorer() -> Any:
    """The lab widget: instance, acceptance preset, four sliders for ``b`` and a rejection law."""
    import ipywidgets as w

    style = {"description_width": "initial"}

    def slider(k: int, value: float) -> Any:
        return w.FloatSlider(
            value=value, min=0, max=1, step=0.01, description=f"b(x={k})", continuous_update=False, style=style
        )

    controls = {
        "instance": w.Dropdown(
            options=choices(INSTANCES), value="draft too confident", description=_("instance"), style=style
        ),
        "accept_preset": w.Dropdown(
            options=choices(ACCEPT_PRESETS), value="sliders", description=_("rule b"), style=style
        ),
        "rejection": w.Dropdown(
            options=choices(REJECTION_CHOICES), value=REJECTION_CHOICES[0], description=_("law P"), style=style
        ),
        "b0": slider(0, 0.5),
        "b1": slider(1, 1.0),
        "b2": slider(2, 1.0),
        "b3": slider(3, 1.0),
    }
    return explorer(beat_update, controls)
