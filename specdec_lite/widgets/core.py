"""``explorer``: wire ipywidgets controls to a figure-returning update function."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._i18n import _
from ..plotting import show


def choices(names: Iterable[str]) -> list[tuple[str, str]]:
    """Dropdown options ``(label, value)``: each name shown in the lab's language, passed on as written."""
    return [(_(name), name) for name in names]


def explorer(update: Callable[..., Any], controls: Mapping[str, Any], *, columns: int = 3) -> Any:
    """Return a box of ``controls`` above a figure that ``update(**values)`` redraws.

    ``controls`` maps each keyword of ``update`` to an ipywidgets control. Every
    change of any control recomputes the figure and re-renders it into an
    ``Output``; the box is returned so a lab cell ends with one call.
    """
    import ipywidgets as w
    from IPython.display import clear_output

    out = w.Output()

    def redraw(*_: Any) -> None:
        fig = update(**{name: c.value for name, c in controls.items()})
        with out:
            clear_output(wait=True)
            show(fig)

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    items = list(controls.values())
    rows = [w.HBox(items[i : i + columns]) for i in range(0, len(items), columns)]
    return w.VBox([*rows, out])
