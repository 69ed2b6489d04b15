"""What a reader's browser runs: fixes found by the browser test (tests/test_browser.py).

* Some extensions register their inline scripts twice (sphinx-thebe's ``const
  THEBE_JS_URL = ...`` then throws "already been declared" on every page): keep the
  first copy of each identical script.
* The theme logs "Got invalid theme mode" on a first visit unless a default mode is set.
* The widget manager (``embed-amd.js``) and the controls it bundles find their fonts
  relative to their RequireJS module addresses, which are relative to the page unless
  RequireJS maps them to the CDN folder the script came from: without this, widget
  icon fonts 404.
* The widget controls typeset their labels with MathJax 2's ``MathJax.Hub.Queue``; the
  book loads MathJax 3, so each widget threw a TypeError. A two-line bridge maps the
  call onto MathJax 3's ``typesetPromise``.
* The theme's "Launch on Colab" button of a chapter opened the chapter's ``.md`` file,
  which Colab cannot open: on ``book/chNN_*`` pages it opens the companion lab
  ``notebooks/labNN_*.ipynb`` instead (and disappears where there is no lab).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
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


def _companion_lab(srcdir: Path, pagename: str) -> str | None:
    match = re.fullmatch(r"book/ch(\d\d)_\w+", pagename)
    if not match:
        return None
    labs = sorted((srcdir / "notebooks").glob(f"lab{match[1]}_*.ipynb"))
    return f"notebooks/{labs[0].name}" if labs else None


def _colab_opens_notebooks(app: Any, pagename: str, context: dict[str, Any]) -> None:
    source = str(context.get("sourcename") or "")
    if not source.endswith((".md", ".md.txt")):
        return
    for group in context.get("header_buttons") or []:
        if group.get("label") != "launch-buttons":
            continue
        for button in list(group["buttons"]):
            url = str(button.get("url", ""))
            if not url.startswith("https://colab.research.google.com/"):
                continue
            lab = _companion_lab(Path(app.srcdir), pagename)
            tail = pagename + Path(source.removesuffix(".txt")).suffix
            if lab is None or not url.endswith(tail):
                group["buttons"].remove(button)
                continue
            button["url"] = url[: -len(tail)] + lab
            button["text"] = "Colab (the lab)"
            button["tooltip"] = "Open the chapter's lab in Colab"
        if not group["buttons"]:
            context["header_buttons"].remove(group)


def _fix_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    context.setdefault("default_mode", "auto")  # the theme reads it from the page context
    _colab_opens_notebooks(app, pagename, context)
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

            # the manager and the controls it bundles (named "@jupyter-widgets/...") both find fonts this way
            paths = json.dumps({"@jupyter-widgets/html-manager/dist": match["dist"], "@jupyter-widgets": match["dist"]})
            body = f"window.require && window.require.config({{paths: {paths}}});"
            unique[i:i] = [
                _JavaScript(None, body=body, priority=js.priority),
                _JavaScript(None, body=_MATHJAX2_BRIDGE, priority=js.priority),
            ]
            break
    scripts[:] = unique  # in place: later handlers may still add to the builder's list


#: Phrases inside the .bib's fields that the Chinese edition writes in Chinese (names, titles and venues
#: stay as published; the connectives of the templates are in ``specdec_zh`` itself).
_ZH_BIB_PHRASES = [
    ("arXiv preprint", "arXiv 预印本"),
    ("GitHub pull request", "GitHub 拉取请求"),
    ("GitHub issue", "GitHub 议题"),
    (", fixing issue", "，修复议题"),
]
_WORD_JOINER = "\u2060"


def _whole(phrase: str) -> str:
    """``phrase`` with a word joiner between each two Chinese characters: a line never breaks inside a
    Chinese word of a reference ("预印本", not "预" over "印本")."""
    import re

    return re.sub("(?<=[\u4e00-\u9fff])(?=[\u4e00-\u9fff])", _WORD_JOINER, phrase)


_GITHUB_THREAD = r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)"


def _bibliography_style() -> None:
    """The references' styles ``specdec`` and ``specdec_zh``: pybtex's ``alpha`` ([LKM23]), except that a
    GitHub issue or pull request is labelled by its repository and number ([vllm#9834]), not by letters
    glued to the number and year, and threads of one repository are listed in the order of their numbers
    (#2336 before #9834). An entry's last link (its URL or DOI) ends it, with no full stop that a phone could
    carry alone onto the next line. ``specdec_zh`` writes the connectives ("In", "volume", "URL:" …) in
    Chinese, each word whole."""
    import re

    from pybtex.database import Entry
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting import toplevel
    from pybtex.style.formatting.alpha import Style as Alpha
    from pybtex.style.formatting.unsrt import dashify
    from pybtex.style.labels.alpha import LabelStyle as AlphaLabels
    from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle
    from pybtex.style.template import field, first_of, href, join, names, optional, optional_field, sentence, words

    class Labels(AlphaLabels):
        def format_labels(self, sorted_entries: Any) -> Any:
            entries = list(sorted_entries)
            for entry, label in zip(entries, super().format_labels(entries), strict=True):
                m = re.match(_GITHUB_THREAD, entry.fields.get("url", ""))
                yield f"{m.group(1).split('/')[1]}#{m.group(2)}" if m else label

    class Sorting(AuthorYearTitle):
        def sorting_key(self, entry: Any) -> Any:
            m = re.match(_GITHUB_THREAD, entry.fields.get("url", ""))
            if m:
                return (f"{m.group(1).lower()} {int(m.group(2)):012d}", entry.fields.get("year", ""), "")
            return super().sorting_key(entry)

    class Style(Alpha):
        default_label_style = "specdec"
        default_sorting_style = "specdec"

        def format_web_refs(self, e: Any) -> Any:
            return sentence(add_period=False)[
                optional[self.format_url(e), optional[" (visited on ", field("urldate"), ")"]],
                optional[self.format_eprint(e)],
                optional[self.format_pubmed(e)],
                optional[self.format_doi(e)],
            ]

    class StyleZh(Style):
        def format_entry(self, label: Any, entry: Any, bib_data: Any = None) -> Any:
            fields = dict(entry.fields)
            for name in ("journal", "howpublished"):
                for en, zh in _ZH_BIB_PHRASES:
                    if name in fields:
                        fields[name] = fields[name].replace(en, _whole(zh))
            clone = Entry(entry.type, fields=fields, persons=entry.persons)
            clone.key = entry.key
            return super().format_entry(label, clone, bib_data=bib_data)

        def format_names(self, role: str, as_sentence: bool = True) -> Any:
            formatted = names(role, sep=", ", sep2=" 和 ", last_sep=" 和 ")
            return sentence[formatted] if as_sentence else formatted

        def format_volume_and_series(self, e: Any, as_sentence: bool = True) -> Any:
            result = first_of[optional[join["第 ", field("volume"), " 卷"]], optional_field("series")]
            return sentence[result] if as_sentence else result

        def format_url(self, e: Any) -> Any:
            url = field("url", raw=True)
            return join[_whole("网址："), href(url)[url]]  # "网址" never splits before a long link

        def get_inproceedings_template(self, e: Any) -> Any:
            return toplevel[
                sentence[self.format_names("author")],
                self.format_title(e, "title"),
                words[
                    _whole("载于"),  # never split before a long title
                    sentence[
                        optional[self.format_editor(e, as_sentence=False)],
                        self.format_btitle(e, "booktitle", as_sentence=False),
                        self.format_volume_and_series(e, as_sentence=False),
                        optional[field("pages", apply_func=dashify)],
                    ],
                    self.format_address_organization_publisher_date(e),
                ],
                sentence[optional_field("note")],
                self.format_web_refs(e),
            ]

    register_plugin("pybtex.style.labels", "specdec", Labels, force=True)
    register_plugin("pybtex.style.sorting", "specdec", Sorting, force=True)
    register_plugin("pybtex.style.formatting", "specdec", Style, force=True)
    register_plugin("pybtex.style.formatting", "specdec_zh", StyleZh, force=True)


def setup(app: Any) -> dict[str, Any]:
    _bibliography_style()
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
