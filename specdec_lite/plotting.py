"""Showing plotly figures the same way in the built book, Jupyter and Colab."""

from __future__ import annotations

import os
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
