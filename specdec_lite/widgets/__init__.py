"""Interactive explorers for the labs.

Each explorer is a pure ``update(**values) -> plotly Figure`` function (unit tested,
timed in the benchmark) wired to ipywidgets controls by ``explorer``. Figures are
re-rendered into an ``Output`` rather than using ``FigureWidget``, which Colab does
not support; this works with ipywidgets 7 (Colab) and 8.
"""

from .core import explorer

__all__ = ["explorer"]
