"""Serve plotly.js and the book's figure script from the book itself, so every page's figures work offline.

At build time we write the plotly.js bundled with the installed ``plotly`` package, and
``specdec_lite/figures/figures.js`` and ``figures.css`` (narrow screens, keyboard controls
for sliders, names and data tables, dark mode), into ``_static`` and load them once on
every page. Code cells executed for the book then emit figures as plain ``text/html``
without their own copy of either (see ``specdec_lite.plotting.show``), which MyST-NB
renders; it drops plotly's own mime type. The environment variable tells the kernels
they are running for the book.
"""

import os
import shutil
from pathlib import Path

BOOK_BUILD_ENV = "SPECDEC_BOOK_BUILD"
FIGURES = Path(__file__).resolve().parents[2] / "specdec_lite" / "figures"
#: Names in ``_static`` (prefixed, so that they cannot meet a theme's own files).
FIGURES_JS, FIGURES_CSS = "sd-figures.js", "sd-figures.css"


def _write_static(app, config):
    from plotly.offline import get_plotlyjs

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
    shutil.copyfile(FIGURES / "figures.js", static / FIGURES_JS)
    shutil.copyfile(FIGURES / "figures.css", static / FIGURES_CSS)


def setup(app):
    os.environ[BOOK_BUILD_ENV] = "1"
    app.connect("config-inited", _write_static)
    app.add_js_file("plotly.min.js", priority=200)
    app.add_js_file(FIGURES_JS, priority=210)
    app.add_css_file(FIGURES_CSS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
