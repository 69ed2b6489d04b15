"""What a reader's browser runs: fixes found by the browser test (tests/test_browser.py).

* Some extensions register their inline scripts twice (sphinx-thebe's ``const
  THEBE_JS_URL = ...`` then throws "already been declared" on every page): keep the
  first copy of each identical script.
* The theme logs "Got invalid theme mode" on a first visit unless a default mode is set.
* The widget manager (``embed-amd.js``) finds its own fonts relative to its RequireJS
  module address, which is relative to the page unless RequireJS maps it to the CDN
  folder the script came from: without this, widget icon fonts 404.
* The widget controls typeset their labels with MathJax 2's ``MathJax.Hub.Queue``; the
  book loads MathJax 3, so each widget threw a TypeError. A two-line bridge maps the
  call onto MathJax 3's ``typesetPromise``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Runs before the widget manager renders (both wait for DOMContentLoaded; this one is registered first).
_MATHJAX2_BRIDGE = """document.addEventListener("DOMContentLoaded", function () {
  var mj = window.MathJax;
  if (!mj || mj.Hub) return;
  mj.Hub = {Queue: function () {
    var els = Array.prototype.slice.call(arguments).filter(function (c) { return c && c[0] === "Typeset"; })
      .map(function (c) { return c[2]; });
    (mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve())
      .then(function () { return mj.typesetPromise ? mj.typesetPromise(els) : null; });
  }};
});"""
_EMBED_AMD = re.compile(r"^(?P<dist>.*/@jupyter-widgets/html-manager@[^/]+/dist)/embed-amd\.js$")


def _script_key(js: Any) -> tuple[str, str]:
    attributes = getattr(js, "attributes", {}) or {}
    # Inline scripts have no file: Sphinx stores that as None or as "" depending on who added them.
    return str(getattr(js, "filename", js) or ""), repr(sorted(attributes.items()))


def _fix_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    context.setdefault("default_mode", "auto")  # the theme reads it from the page context
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, str]] = set()
    unique = []
    for js in scripts:
        key = _script_key(js)
        if key not in seen:
            seen.add(key)
            unique.append(js)
    for i, js in enumerate(unique):
        match = _EMBED_AMD.match(str(getattr(js, "filename", "") or ""))
        if match:
            from sphinx.builders.html._assets import _JavaScript

            paths = json.dumps({"@jupyter-widgets/html-manager/dist": match["dist"]})
            body = f"window.require && window.require.config({{paths: {paths}}});"
            unique[i:i] = [
                _JavaScript(None, body=body, priority=js.priority),
                _JavaScript(None, body=_MATHJAX2_BRIDGE, priority=js.priority),
            ]
            break
    scripts[:] = unique  # in place: later handlers may still add to the builder's list


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
