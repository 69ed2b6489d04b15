"""Chapter 2 explorer: step through one round of speculative decoding.

``random_round`` plays a round on the laws of ``token_laws`` with drafts drawn from
``p`` and test uniforms drawn from one seed; ``round_update`` draws it up to a step
(the picture of ``figures.round``); ``round_explorer`` wires it to controls, with a
slider that walks through the round: draft, score, one test per draft, last draw.
``round_stepper_html`` does the stepping for one given round without Python behind
the page (every step is drawn beforehand), so it works in the static book too.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from typing import Any

import numpy as np

from .._i18n import _
from ..figures.part1 import token_labels
from ..figures.round import BACKGROUND, WorkedRound, columns, round_svg, stages, worked_round
from ..primitives import check_int
from .core import choices
from .token_explorer import PRESETS, token_laws


def random_round(V: int = 5, preset: str = "shifted", quality: float = 0.5, K: int = 4, seed: int = 0) -> WorkedRound:
    """One round of ``K`` drafts on ``token_laws(V, preset, quality, seed)``, its randomness from ``seed``."""
    K = check_int(K, "K", high=12)
    p, q = token_laws(V, preset, quality, seed)
    gen = np.random.default_rng([seed, 2])  # a stream apart from the one token_laws uses
    labels = token_labels(V)
    drafts = [labels[i] for i in gen.choice(V, size=K, p=p)]
    return worked_round(labels, p, q, drafts, gen.random(K), float(gen.random()))


def round_update(
    V: int = 5, preset: str = "shifted", quality: float = 0.5, K: int = 4, seed: int = 0, step: int = 0
) -> str:
    """HTML: which step this is, and the round drawn up to it (later steps than the round has show all of it)."""
    r = random_round(V, preset, quality, K, seed)
    names = stages(r)
    step = min(int(step), len(names) - 1)
    if step < 0:
        raise ValueError(_("step: must be >= 0, got {step}").format(step=step))
    head = "<p><b>" + step_label(step, names) + "</b></p>"
    title = _("K = {K} drafted tokens, draft quality {quality:g}, seed {seed}").format(K=K, quality=quality, seed=seed)
    wide = round_svg([r], [title], upto=step, background=False)
    narrow = round_svg([r], [title], upto=step, background=False, per_row=PER_ROW) if columns(r) > PER_ROW else None
    return head + fitted(wide, narrow)


#: The smallest share of its own size an explorer's picture is shrunk to, to fit its box: its smallest words (13
#: units) stay 11 pixels high or more. A box narrower than that shows the round wrapped onto rows of ``PER_ROW``
#: columns (a phone; the whole round in view, no scrolling); narrower still (a picture that still does not fit),
#: the picture scrolls sideways.
MIN_SCALE = 0.85
#: Columns a row of the narrow picture: four draft boxes fit a phone's width with words 11 pixels high or more.
PER_ROW = 4

#: The picture's white background, with a shadow at each edge of its box beyond which it goes on (the cue that
#: it scrolls sideways): each edge's white cover moves with the picture (``local``) and hides that edge's shadow
#: (``scroll``, fixed to the box) once the picture's end has come into view.
_SCROLLER = (
    '<div style="overflow-x:auto;background:'
    f"linear-gradient(to right,{BACKGROUND} 40%,#fff0) left/48px 100% no-repeat local,"
    f"linear-gradient(to left,{BACKGROUND} 40%,#fff0) right/48px 100% no-repeat local,"
    "radial-gradient(farthest-side at 0 50%,#0006,#0000) left/16px 100% no-repeat scroll,"
    "radial-gradient(farthest-side at 100% 50%,#0006,#0000) right/16px 100% no-repeat scroll,"
    f'{BACKGROUND}">'
)


def _sized(svg: str) -> tuple[str, int]:
    """``svg`` as wide as its box, never wider than drawn nor narrower than ``MIN_SCALE`` of that; its width."""
    width = int(re.search(r'<svg [^>]*?\bwidth="(\d+)"', svg)[1])
    style = f"width:100%;min-width:{round(MIN_SCALE * width)}px;max-width:{width}px;height:auto"
    return svg.replace("<svg ", f'<svg style="{style}" ', 1), width


def fitted(svg: str, narrow: str | None = None) -> str:
    """``svg`` (drawn without a background) as wide as its box, never wider than drawn nor narrower than
    ``MIN_SCALE`` of that, in a box that scrolls sideways when the picture is wider still, with a shadow at an
    edge it goes on beyond. With ``narrow`` (the same round wrapped onto several rows), a box too narrow for
    ``svg`` at ``MIN_SCALE`` shows ``narrow`` instead (a container query: no script), so a phone shows the whole
    round with words that read, where the one-row picture was cut at the screen's edge or shrunk to 8 pixels."""
    svg, width = _sized(svg)
    if narrow is None:
        return _SCROLLER + svg + "</div>"
    narrow, _width = _sized(narrow)
    least = round(MIN_SCALE * width)
    box = f"sd-round-fit-{least}"  # one rule per width: equal pictures share it
    style = (
        f"<style>.{box}{{container-type:inline-size}}.{box}>.sd-fit-narrow{{display:none}}"
        f"@container (max-width:{least - 1}px){{.{box}>.sd-fit-wide{{display:none}}"
        f".{box}>.sd-fit-narrow{{display:block}}}}</style>"
    )
    return (
        f'{style}<div class="{box}">'
        f'<div class="sd-fit-wide">{_SCROLLER}{svg}</div></div>'
        f'<div class="sd-fit-narrow">{_SCROLLER}{narrow}</div></div></div>'
    )


def step_label(step: int, names: list[str]) -> str:
    """``step k of n: <stage>`` in the lab's language (``step`` counts from 0)."""
    return _("step {k} of {n}: {stage}").format(k=step + 1, n=len(names), stage=names[step])


def round_explorer() -> Any:
    """The lab widget: laws and round from the controls; the ``step`` slider walks through the round."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "V": w.IntSlider(value=5, min=3, max=8, description=_("tokens V"), continuous_update=False, style=style),
        "preset": w.Dropdown(options=choices(PRESETS), value="shifted", description=_("preset"), style=style),
        "quality": w.FloatSlider(
            value=0.5, min=0, max=1, step=0.05, description=_("draft quality"), continuous_update=False, style=style
        ),
        "K": w.IntSlider(
            value=4, min=1, max=8, description=_("drafted tokens K"), continuous_update=False, style=style
        ),
        "seed": w.IntSlider(value=0, min=0, max=20, description=_("seed"), continuous_update=False, style=style),
        "step": w.IntSlider(value=0, min=0, max=6, description=_("step"), style=style),
    }
    picture = w.HTML()

    def redraw(*_: Any) -> None:
        values = {name: c.value for name, c in controls.items()}
        controls["step"].max = values["K"] + 2  # draft, score, at most K tests, the last draw
        picture.value = round_update(**{**values, "step": controls["step"].value})

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    items = list(controls.values())
    # three controls a row, wrapped onto more rows where they do not fit (a phone)
    rows = [w.HBox(items[i : i + 3], layout=w.Layout(flex_flow="wrap")) for i in range(0, len(items), 3)]
    return w.VBox([*rows, picture])


def round_stepper_html(r: WorkedRound, title: str) -> str:
    """HTML with every step of round ``r`` drawn beforehand and a range slider that shows one.

    Needs no kernel: a few lines of JavaScript switch which picture is visible.
    """
    names = stages(r)
    root = f"sd-round-{uuid.uuid4().hex[:12]}"
    pictures = "".join(
        f'<div data-step="{k}"{"" if k == 0 else " hidden"}>'
        + round_svg([r], [title], upto=k).replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
        + "</div>"
        for k in range(len(names))
    )
    first = html.escape(step_label(0, names))
    label_of = json.dumps(_("step {k} of {n}: {stage}"))
    aria = html.escape(_("step of the round"))
    # the control as the book's figure sliders are (figures.css's .sd-slider): a visible label, the slider at a
    # fixed place, the step's words under it (their length changes; nothing moves); the input says the step
    # (aria-valuetext), the readout is not read twice
    script = (
        "(function () {"
        f'var root = document.getElementById("{root}"), names = {json.dumps(names)}, label_of = {label_of};'
        'var input = root.querySelector("input"), label = root.querySelector(".sd-step-label");'
        "function show() { var k = +input.value;"
        ' root.querySelectorAll("[data-step]").forEach(function (d) { d.hidden = +d.dataset.step !== k; });'
        ' label.textContent = label_of.replace("{k}", k + 1).replace("{n}", names.length)'
        '.replace("{stage}", names[k]); input.setAttribute("aria-valuetext", label.textContent); }'
        ' input.addEventListener("input", show); show(); })();'
    )
    return (
        f'<div id="{root}" class="sd-round-stepper">'
        '<div class="sd-slider sd-step-slider">'
        f'<label for="{root}-step">{aria}</label>'
        f'<input type="range" id="{root}-step" min="0" max="{len(names) - 1}" value="0" step="1"'
        f' aria-valuetext="{first}">'
        f'<output for="{root}-step" class="sd-step-label" aria-hidden="true">{first}</output>'
        f"</div>{pictures}</div><script>{script}</script>"
    )
