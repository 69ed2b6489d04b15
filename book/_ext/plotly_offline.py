"""Serve plotly.js from the book itself, so every page's figures work offline.

At build time we write the plotly.js bundled with the installed ``plotly``
package into ``_static`` and load it on every page. Code cells executed for the
book then emit figures as plain ``text/html`` without their own copy of
plotly.js (see ``specdec_lite.plotting.show``), which MyST-NB renders; it drops
plotly's own mime type. The environment variable tells the kernels they are
running for the book.
"""

import os
from pathlib import Path

BOOK_BUILD_ENV = "SPECDEC_BOOK_BUILD"


def _write_plotly_js(app, config):
    from plotly.offline import get_plotlyjs

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")


def setup(app):
    os.environ[BOOK_BUILD_ENV] = "1"
    app.connect("config-inited", _write_plotly_js)
    app.add_js_file("plotly.min.js", priority=200)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
