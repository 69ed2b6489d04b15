"""What makes the book's pages usable with a keyboard, a screen reader, dark mode and a phone.

Found by the accessibility audit of ``tests/test_browser.py`` (axe-core, WCAG 2.1 A/AA):

* ``a11y_static/a11y.css`` (every page): links and boxes of theorems, definitions and
  exercises with enough contrast in both colour modes, visible keyboard focus, display
  formulas that scroll sideways inside their own box, and a "Back to top" button that
  keeps to a corner on a phone.
* ``a11y_static/a11y.js`` (every page): a display formula wider than its column becomes a
  labelled, focusable group, so it can be scrolled with the keyboard, and shows a shadow
  at the edge where more of it is hidden.
* In each page's HTML: MyST-NB's show/hide toggles of code cells are named by the words
  they show ("Show code cell source"), not by a different hidden label; the citation list
  of the references page is a list of list items (docutils marks it up as a ``list``
  holding ``doc-biblioentry`` entries, a role that ARIA 1.2 deprecates).
* In the theme's header, once the pages are written: the search field's button is named by
  its visible words ("Search Ctrl+K", in Chinese "搜索 Ctrl+K") rather than a shorter hidden label, and the icons of
  the colour-mode button are marked decorative (the button keeps its "Color mode" label).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "a11y_static"

_TOGGLE_LABEL = re.compile(r'<summary aria-label="Toggle hidden content">')
_BIBLIOENTRY = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def fix_body(body: str) -> str:
    """The page body with the toggles' hidden labels dropped and citations as list items."""
    body = _TOGGLE_LABEL.sub("<summary>", body)
    return _BIBLIOENTRY.sub(r'\1 role="listitem"', body)


_SEARCH_FIELD = re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"')
_MODE_ICON = re.compile(r'(<i class="theme-switch [^"]*"[^>]*?)( title="[^"]*")?></i>')


def fix_chrome(html: str) -> str:
    """A written page with the theme's header fixes above (the rest is left as it is)."""
    html = _SEARCH_FIELD.sub(r"\1", html)
    return _MODE_ICON.sub(r'\1 aria-hidden="true"></i>', html)


def _fix_written_pages(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = fix_chrome(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def _fix_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if "body" in context:
        context["body"] = fix_body(context["body"])


def _add_static(app: Any) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _add_static)
    app.add_css_file("a11y.css", priority=900)  # after the theme's and the extensions' stylesheets
    app.add_js_file("a11y.js", defer="defer")
    app.connect("html-page-context", _fix_page)
    app.connect("build-finished", _fix_written_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
