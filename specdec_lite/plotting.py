"""Showing plotly figures the same way in the built book, Jupyter and Colab."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

#: Set by the book's Sphinx extension (``book/_ext/plotly_offline.py``) for its kernels.
BOOK_BUILD_ENV = "SPECDEC_BOOK_BUILD"


def in_book_build() -> bool:
    """True while the code runs to build the static book."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"


def show(fig: Any) -> None:
    """Display a plotly figure.

    In the book build we emit ``text/html`` that relies on the plotly.js the book
    serves from ``_static`` (MyST-NB does not render plotly's own mime type); in
    Jupyter and Colab plotly's default renderer does the right thing.
    """
    if in_book_build():
        from IPython.display import HTML, display

        display(HTML(fig.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True})))
    else:
        fig.show()


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
            dict(method="update", label=step_label, args=[{"visible": visible}, dict(layout_update or {})])
        )
    fig.update_layout(
        sliders=[dict(active=active, currentvalue={"prefix": f"{label} = "}, pad={"t": 40}, steps=slider_steps)],
        **(layout or {}),
    )
    if steps[active][2]:
        fig.update_layout(**steps[active][2])
    return fig
