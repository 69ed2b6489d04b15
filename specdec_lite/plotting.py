"""Showing plotly figures the same way in the built book, Jupyter and Colab.

In the book every figure also adapts to a narrow screen (a phone is about 390 CSS
pixels wide): below ``NARROW_PX`` its legend moves under the plot, its title,
subplot titles and axis titles wrap, fonts and colour scales get smaller, and the
side margins narrow, so the plot keeps most of the width. Above it the figure is
drawn exactly as its builder laid it out.

Every figure is also an image named by its caption, with a short description and its
numbers as tables under it (``figure_data``); each slider gets a native range input that
moves the same steps from the keyboard; and the figure follows the page's light or dark
theme. All of that runs in the reader's browser from one script, ``figures/figures.js``
(with ``figures/figures.css``), loaded once per page: each figure's HTML only calls it.
"""

from __future__ import annotations

import html
import os
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._i18n import display_width

#: Set by the book's Sphinx extension (``book/_ext/plotly_offline.py``) for its kernels.
BOOK_BUILD_ENV = "SPECDEC_BOOK_BUILD"

#: Figures narrower than this many CSS pixels get the narrow-screen layout.
NARROW_PX = 600

#: The figures' script and styles (narrow screens, keyboard, names and data tables, dark mode),
#: loaded once per page: the book serves them from ``_static``, a notebook gets them from its
#: first ``show()`` (see ``figure_assets``).
FIGURES_JS = Path(__file__).resolve().parent / "figures" / "figures.js"
FIGURES_CSS = FIGURES_JS.with_suffix(".css")

# Runs in the reader's browser after plotly drew the figure ("{plot_id}" is plotly's
# placeholder for the figure's element id); ``figures.js`` defines ``sdFigures``.
_INIT_JS = 'if (window.sdFigures) window.sdFigures.init("{plot_id}", ' + str(NARROW_PX) + ");"

#: The type sizes of every figure (CSS pixels): text, legend, title. A figure's own sizes win.
FONT_PX, LEGEND_PX, TITLE_PX = 14, 13, 17

#: The execution count of the cell that last displayed the figures' script in this kernel
#: (None: not yet); see ``_needs_assets``.
_assets_shown_at: int | None = None


def in_book_build() -> bool:
    """True while the code runs to build the static book."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"


def styled(fig: Any) -> Any:
    """``fig`` with the book's type sizes (:data:`FONT_PX`) where it sets none, and its title at the top
    edge of the figure, where a figure's top margin leaves it room above its legend; returns ``fig``."""
    layout = fig.layout
    if layout.font.size is None:
        fig.update_layout(font_size=FONT_PX)
    if layout.legend.font.size is None:
        fig.update_layout(legend_font_size=LEGEND_PX)
    if layout.title.text and layout.title.font.size is None:
        fig.update_layout(title_font_size=TITLE_PX)
    if layout.title.text and layout.title.y is None:
        # plotly anchors a title's first line, not its box: "top" 24 pixels down keeps that line in view
        height = layout.height or 450
        fig.update_layout(title_yref="container", title_y=1 - 24 / height, title_yanchor="top")
    return fig


def keep_together(text: str) -> str:
    """``text`` with the no-break spaces that ``figures.js``'s ``glued`` puts in a title it wraps on a phone (the
    same rules, checked string by string over the catalogue in tests/test_plotting.py): around a relation or a
    difference ("T = 50", "q < p", "UNO − OPT"), between a short formula's arguments ("TV(p, q)"), after a name
    before its number ("torch 2.13.0", "上下文 64") and after a number before its Chinese word ("52.7 次")."""
    text = re.sub(r" ([=≤≥≈−<>]) ", "\u00a0\\1\u00a0", text)
    text = re.sub(
        r"([A-Za-z0-9_])\(([^()\s\u2e80-\uffef]{1,16}), ([^()\s\u2e80-\uffef]{1,16})\)", "\\1(\\2,\u00a0\\3)", text
    )
    text = re.sub(r"([A-Za-z\u4e00-\u9fff]) (?=[0-9])", "\\1\u00a0", text)
    return re.sub(r"([0-9]) (?=[\u4e00-\u9fff])", "\\1\u00a0", text)


def wrap_text(text: str, width: int = 70, separators: Sequence[str] = ("; ", "；", ", ", "，", " ")) -> str:
    """``text`` broken with ``<br>`` into lines of at most about ``width`` columns (``display_width``), at the
    first of ``separators`` that appears in it (kept at the line's end, less its trailing space). No-break spaces
    keep together a relation's or a difference's two sides' ends (the spaces around "=", "≤", "≥", "≈" and "−"),
    a short formula's arguments ("TV(p, q)"), a name with the number after it ("torch 2.13.0", "上下文 64") and a
    number with the Chinese word after it ("52.7 次"), as ``figures.js`` does when it wraps a title on a phone."""
    sep = next((s for s in separators if s in text), None)
    if sep is None or display_width(text) <= width:
        return text
    text = keep_together(text)
    lines, line = [], ""
    for piece in text.split(sep):
        candidate = piece if not line else line + sep + piece
        if line and display_width(candidate) > width:
            lines.append(line + sep.rstrip())
            line = piece
        else:
            line = candidate
    return "<br>".join([*lines, line])


#: The height of a row of a legend (CSS pixels, at ``LEGEND_PX``).
LEGEND_ROW_PX = 20


def legend_below(height: int, *, top: int = 100, bottom: int = 80, gap_px: int = 74, rows: int = 0) -> dict[str, Any]:
    """A horizontal legend under the plot of a figure ``height`` pixels tall with the margins ``top`` and
    ``bottom``, ``gap_px`` pixels below the plot's bottom edge (clear of its tick labels and axis title);
    plotly widens the bottom margin to hold it.

    The legend's place is a fraction of the plot's height, and a legend of ``rows`` rows taller than the
    bottom margin shrinks the plot as plotly widens the margin: the fraction is taken of the plot's height
    after that, so the gap stays ``gap_px`` (taken of the height before it, a legend of five or six rows came
    up to the axis title)."""
    plot = height - top - bottom
    if rows:
        plot = min(plot, height - top - gap_px - rows * LEGEND_ROW_PX)
    return dict(orientation="h", x=0, xanchor="left", y=-gap_px / max(plot, 100), yanchor="top")


def show(fig: Any) -> None:
    """Display a plotly figure, with its description and its numbers as tables.

    In the book build we emit ``text/html`` that relies on the plotly.js and the
    ``figures.js`` the book serves from ``_static`` (MyST-NB does not render plotly's own
    mime type). In Jupyter and Colab plotly's default renderer draws the figure; the first
    figure of a kernel displays ``figures.js`` before it (in Colab, whose every cell's
    output is a page of its own, the first figure of each cell), and the data tables
    follow it.
    """
    from IPython.display import HTML, display

    styled(fig)
    if in_book_build():
        display(HTML(book_html(fig)))
        return
    if _needs_assets():
        display(HTML(figure_assets()))
    fig.show(post_script=_INIT_JS, config=PLOTLY_CONFIG)
    display(HTML(figure_text(fig, "")))


def _needs_assets() -> bool:
    """True the first time in this kernel (in Colab: in this cell) that a figure is shown."""
    global _assets_shown_at
    from IPython import get_ipython

    shell = get_ipython()
    count = getattr(shell, "execution_count", 0) if shell is not None else 0
    per_cell = "google.colab" in sys.modules
    if _assets_shown_at is not None and (not per_cell or _assets_shown_at == count):
        return False
    _assets_shown_at = count
    return True


def figure_assets() -> str:
    """``figures.css`` and ``figures.js`` as one piece of HTML (running it again does nothing new)."""
    css = FIGURES_CSS.read_text(encoding="utf-8")
    js = FIGURES_JS.read_text(encoding="utf-8")
    return f'<style id="sd-figures-css">{css}</style>\n<script>{js}</script>'


def figure_text(fig: Any, div_id: str) -> str:
    """The figure's description (for ``aria-describedby``) and its data tables."""
    from ._i18n import _
    from .figure_data import data_tables, description, plain

    desc_id = f"{div_id or uuid.uuid4()}-desc"
    title = plain(fig.layout.title.text) if fig.layout.title and fig.layout.title.text else _("a plot")
    return (
        f'<p class="sd-figure-title sd-visually-hidden">{html.escape(title)}</p>'
        f'<p class="sd-figure-desc sd-visually-hidden" id="{desc_id}">{html.escape(description(fig))}</p>'
        + data_tables(fig)
    )


#: plotly's options for every figure: it follows its container's width, and it has no tool bar,
#: whose buttons would be tab stops hidden inside a plot named as one picture (dragging still
#: zooms, a double click resets, and the numbers are in the data table under the figure).
PLOTLY_CONFIG = {"responsive": True, "displayModeBar": False}


def book_html(fig: Any) -> str:
    """The figure as the book's HTML: plotly.js and ``figures.js`` come from the page; the
    figure follows its container's width (the narrow-screen layout below ``NARROW_PX``), has
    keyboard controls for its sliders, a name, a description and its data tables."""
    div_id = str(uuid.uuid4())
    styled(fig)
    plot = fig.to_html(
        full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG, post_script=_INIT_JS, div_id=div_id
    )
    return f'<div class="sd-figure">{plot}{figure_text(fig, div_id)}</div>'


def narrow_layout(fig: Any, **update: Any) -> Any:
    """Give ``fig`` a layout of its own below ``NARROW_PX`` (a phone), on top of the narrow-screen layout
    every figure gets, e.g. two panels one under the other instead of side by side; returns ``fig``.

    ``update`` is a layout update as ``go.Layout`` takes it (``height=800``,
    ``xaxis=dict(domain=[0, 1])``); ``figures.js`` applies it when the figure becomes narrow and restores the
    authored values when it becomes wide again. It rides in ``layout.meta`` (plotly keeps it and draws
    nothing from it); a paper or a PNG export, laid out at a laptop's width, never uses it.
    """
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, Mapping) else {}
    meta["narrow"] = {**meta.get("narrow", {}), **relayout_args(update)}
    fig.update_layout(meta=meta)
    return fig


def grid_on_a_phone(
    fig: Any, panels: int, height: int, *, columns: int = 1, gap_x: float = 0.14, gap_y: float = 0.1
) -> Any:
    """``fig``'s ``panels`` panels (its panels' titles first among its annotations) in a grid of ``columns``
    columns on a phone (``narrow_layout``), row by row: ``gap_x`` of the width and ``gap_y`` of the height between
    them, each title over its panel, the figure ``height`` pixels tall. ``columns=1`` stacks them. Returns ``fig``.
    """
    rows = -(-panels // columns)
    w, h = (1 - gap_x * (columns - 1)) / columns, (1 - gap_y * (rows - 1)) / rows
    update: dict[str, Any] = {}
    notes = [a.to_plotly_json() for a in fig.layout.annotations]
    for k in range(panels):
        r, c = divmod(k, columns)
        left, top = c * (w + gap_x), round(1 - r * (h + gap_y), 6)
        suffix = "" if k == 0 else str(k + 1)
        update[f"xaxis{suffix}"] = dict(domain=[round(left, 6), round(left + w, 6)])
        update[f"yaxis{suffix}"] = dict(domain=[max(round(top - h, 6), 0.0), top])
        if k < len(notes):
            notes[k] = {**notes[k], "x": round(left + w / 2, 6), "y": top}
    update["annotations"] = notes
    return narrow_layout(fig, height=height, **update)


def slider_figure(
    steps: Sequence[tuple[str, Sequence[Any], dict[str, Any] | None]],
    *,
    label: str,
    layout: dict[str, Any] | None = None,
    active: int = 0,
) -> Any:
    """A plotly figure whose slider switches between precomputed steps.

    Works in static HTML (no Python behind the page): each step is
    ``(step_label, traces, layout_update)`` with the same number of traces; all
    traces are stored and the slider toggles which step's traces are visible (and
    applies its optional layout update, e.g. a title carrying a computed number).
    """
    import plotly.graph_objects as go

    if not steps:
        raise ValueError("steps: need at least one step")
    n = len(steps[0][1])
    if any(len(traces) != n for _, traces, _ in steps):
        raise ValueError("steps: every step must have the same number of traces")
    if not 0 <= active < len(steps):
        raise ValueError(f"active: must index a step, got {active}")
    fig = go.Figure()
    for i, (_, traces, _) in enumerate(steps):
        for tr in traces:
            tr.visible = i == active
            fig.add_trace(tr)
    slider_steps = []
    for i, (step_label, _, layout_update) in enumerate(steps):
        visible = [j // n == i for j in range(n * len(steps))]
        slider_steps.append(
            dict(method="update", label=step_label, args=[{"visible": visible}, relayout_args(layout_update)])
        )
    fig.update_layout(
        sliders=[dict(active=active, currentvalue={"prefix": f"{label} = "}, pad={"t": 40}, steps=slider_steps)],
        **(layout or {}),
    )
    if steps[active][2]:
        fig.update_layout(_layout_json(steps[active][2]))  # merged: the title keeps its x and font
    return fig


def _layout_json(update: Mapping[str, Any] | None) -> dict[str, Any]:
    """``update`` as plotly's own layout JSON: validated, ``title="..."`` as ``title: {text: ...}``,
    ``xaxis_title=...`` as nested objects."""
    import plotly.graph_objects as go

    return go.Layout(dict(update or {})).to_plotly_json()


def relayout_args(update: Mapping[str, Any] | None) -> dict[str, Any]:
    """A layout update as the argument of plotly.js's ``relayout`` (a slider step's, a button's, a frame's).

    plotly.js 4 reads a title only as an object (``title: {text: ...}``): a step that sets ``title``
    to a bare string leaves the figure without a title. And an object given whole replaces the one the
    layout had (its ``x``, its font). So every value is written as dotted paths to its leaves
    (``"title.text"``, ``"xaxis.title.text"``, ``"legend.x"``): each sets what it names and keeps the
    rest. Lists (``annotations``, ``shapes``) are set whole.
    """
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):  # an empty one sets nothing
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else key, inner)
        else:
            out[prefix] = value

    walk("", _layout_json(update))
    return out


def stack(figures: Sequence[Any], *, titles: Sequence[str] | None = None, title: str = "") -> Any:
    """One figure holding ``figures`` one under another, each keeping its axes, lines and bands.

    For a figure that shows the same plot for several inputs (e.g. one per results
    file) under one number and caption. Each panel is headed by ``titles`` (default:
    its figure's title), the whole by ``title``; legend entries with the same name are
    shown once.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if not figures:
        raise ValueError("figures: need at least one figure")
    from ._i18n import _

    if titles is None:
        titles = [fig.layout.title.text or "" for fig in figures]
    # given in English: in the current language, each of its lines wrapped on its own
    titles = ["<br>".join(wrap_text(line, 80) for line in _(t).split("<br>")) if t else t for t in titles]
    title = _(title) if title else title
    if len(titles) != len(figures):
        raise ValueError(f"titles: need one per figure ({len(figures)}), got {len(titles)}")
    out = make_subplots(rows=len(figures), cols=1, subplot_titles=titles, vertical_spacing=0.3 / len(figures))
    out.update_annotations(font_size=14)  # the panels' titles (a long one takes fewer lines on a phone)
    seen: set[str] = set()
    for i, fig in enumerate(figures, start=1):
        for trace in fig.data:
            trace = go.Figure(trace).data[0]  # a copy, so the source figure is left as it was
            if trace.name in seen:
                trace.showlegend = False
            seen.add(trace.name)
            trace.legendgroup = trace.name
            out.add_trace(trace, row=i, col=1)
        out.update_xaxes(title_text=fig.layout.xaxis.title.text, type=fig.layout.xaxis.type, row=i, col=1)
        out.update_yaxes(title_text=fig.layout.yaxis.title.text, type=fig.layout.yaxis.type, row=i, col=1)
        suffix = "" if i == 1 else str(i)

        def moved(ref: str | None, suffix: str = suffix) -> str | None:
            if ref is None or ref == "paper":
                return ref
            return ref[0] + suffix + ref[1:].removeprefix("1")  # "x" -> "x2", "y domain" -> "y2 domain"

        for shape in fig.layout.shapes:
            out.add_shape(go.layout.Shape(shape).update(xref=moved(shape.xref), yref=moved(shape.yref)))
        for note in fig.layout.annotations:
            out.add_annotation(go.layout.Annotation(note).update(xref=moved(note.xref), yref=moved(note.yref)))
    height = sum(fig.layout.height or 420 for fig in figures)
    # room at the top for the title and the first panel's title (each of its lines 20 pixels)
    top = (56 if title else 12) + 20 * (1 + titles[0].count("<br>")) if titles[0] else (80 if title else 40)
    out.update_layout(height=height, title=dict(text=title, x=0.02) if title else None, margin=dict(t=top))
    return out
