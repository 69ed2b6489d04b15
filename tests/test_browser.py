"""Every page of the built book, as a reader's browser shows it (headless Chromium).

For each page of ``_toc.yml``: no JavaScript error, no failed request for the book's own
files, no request to anything outside the book except the CDN assets named in
``browser_support.CDN_ASSETS`` (served from local copies), every formula typeset by
MathJax, every plotly figure drawn, every slider that moves change the plotted data,
and every embedded widget rendered, and at a desktop's width (1280 px) every table cell shows
whole and every display formula fits its column. Each page is opened again at a phone's width (390 px):
it must not scroll sideways, every figure's plot area must keep most of the figure's width,
no title or legend may be cut, and a table cell may hide only inside a box that scrolls.
With ``SPECDEC_SCREENSHOTS=folder`` a screenshot of every page (``phone__*`` at the phone's width) is kept there
for review. Runs wherever ``/usr/bin/chromium`` exists; CI installs it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from tests import browser_support as bs
from tests.test_book import site_pages

ROOT = Path(__file__).resolve().parents[1]
PAGES = [f"{page}.html" for page in site_pages()]


@pytest.fixture(scope="module")
def book_reports(built_book: Path, tmp_path_factory) -> dict[str, dict]:
    """The one browser pass over the book (``browser_support.book_pass``), shared with test_browser_figures.py."""
    return bs.book_pass(built_book, tmp_path_factory, PAGES)


@pytest.fixture(scope="module")
def defect_reports(built_book: Path, tmp_path_factory) -> dict[str, dict]:
    """The same pass over ``browser_support.defect_site``'s pages with defects, shared likewise."""
    return bs.defect_pass(built_book, tmp_path_factory)


@pytest.fixture(scope="module")
def browser_reports(book_reports, request) -> dict[str, dict]:
    shots = os.environ.get(bs.SCREENSHOTS_ENV)
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\nscreenshots of every page: {shots}" if shots else f"\n(screenshots: set {bs.SCREENSHOTS_ENV})")
    return {page: r["read"] for page, r in book_reports.items()}


def problems(report: dict) -> list[str]:
    """What a reader would notice on one page; empty when the page is fine."""
    if report["fatal"]:
        return [f"the page could not be checked: {report['fatal']}"]
    out = [f"JavaScript error: {e}" for e in report["jsErrors"]]
    out += [f"console error: {e}" for e in report["consoleErrors"]]
    out += [f"request outside the book (name it in CDN_ASSETS or drop it): {u}" for u in report["external"]]
    out += [f"failed request: {u}" for u in report["localFailures"]]
    math = report["math"]
    if math["typeset"] != math["expected"]:
        out.append(f"only {math['typeset']} of {math['expected']} formulas typeset; raw: {math['raw']}")
    out += [f"MathJax error: {e}" for e in math["errors"]]
    if report.get("wideMath") is None:
        out.append("the display formulas were not measured")
    out += [f"at 1280 px a display formula is wider than its column: {t!r}" for t in report.get("wideMath") or []]
    for fig in report["figures"]:
        name = f"figure {fig['index'] + 1}"
        if not fig["drawn"]:
            out.append(f"{name} is not drawn")
        if fig["sliders"] and not fig["moves"]:
            out.append(f"{name}: its slider was not moved")
        for move in fig["moves"]:
            if not (move["dataChanged"] and move["drawingChanged"] and move["drawn"] and move["active"] == move["to"]):
                out.append(f"{name}: moving its slider to step {move['to']} ({move['how']}) gave {move}")
    widgets = report["widgets"]
    if widgets["rendered"] != widgets["views"]:
        out.append(f"only {widgets['rendered']} of {widgets['views']} embedded widgets rendered")
    asked = report.get("screenshotAsked", True)
    if asked and (not report["screenshot"] or not Path(report["screenshot"]).is_file()):
        out.append("no screenshot")
    out += table_problems(report.get("tables"), desktop=True)
    return out + phone_problems(report.get("phone"))


def table_problems(tables: dict | None, *, desktop: bool) -> list[str]:
    """Table cells a reader cannot see whole (``clippedCells`` of check_book.mjs on one load).

    A cell whose content is wider than the cell is cut at any width. A cell past the edge of the box
    that clips it is cut at a desktop's width, unless that box is a figure's data table (a keyboard-
    focusable scroll box by design); at a phone's width it is fine only when that box scrolls.
    """
    if tables is None:
        return ["the tables were not measured"]
    width = tables["viewport"]
    out = []
    for c in tables["cells"]:
        if c["overflows"]:
            out.append(f"at {width} px a table cell's content is wider than the cell: {c['text']!r}")
        elif c["past"] and not (c["scrolls"] and (c["dataTable"] or not desktop)):
            hidden = "inside a box that scrolls" if c["scrolls"] else "and cannot be scrolled to"
            out.append(f"at {width} px a table cell runs past the edge of its table's box {hidden}: {c['text']!r}")
    if tables["count"] > len(tables["cells"]) and out:
        shown = len(tables["cells"])
        out.append(f"({tables['count']} cells in all were measured as cut or hidden; the first {shown} shown)")
    return out


#: At a phone's width a figure's plot area (inside axes and margins) keeps at least this share
#: of the figure's width: a legend or margin on the side leaves a sliver (about 20% before).
MIN_PLOT_SHARE = 0.6


def phone_problems(phone: dict | None) -> list[str]:
    """What a reader on a phone would notice: sideways scrolling, squeezed plots, cut text."""
    if phone is None:
        return ["the page was not opened at a phone's width"]
    if phone.get("fatal"):
        return [f"at a phone's width the page could not be checked: {phone['fatal']}"]
    width = phone["viewport"]
    out = []
    if phone["scrollWidth"] > width:
        out.append(f"at {width} px the page scrolls sideways ({phone['scrollWidth']} px wide)")
    for fig in phone["figures"]:
        if fig["hidden"]:
            continue
        name = f"figure {fig['index'] + 1} at {width} px"
        if fig["plotWidth"] < MIN_PLOT_SHARE * fig["width"]:
            out.append(f"{name}: the plot area is {fig['plotWidth']} px of the figure's {fig['width']} px")
        out += [f"{name}: text cut at the figure's edge: {t!r}" for t in fig["cut"]]
        if fig["spills"]:
            out.append(f"{name}: the figure is taller than its block and covers what follows")
    return out + table_problems(phone.get("tables"), desktop=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_page_reads_well_in_a_browser(browser_reports, page):
    report = browser_reports[page]
    assert not problems(report), f"{page}:\n" + "\n".join(problems(report))


def test_checker_notices_broken_pages():
    """The checks above can fail: a page with each kind of defect yields each complaint."""
    broken = {
        "fatal": None,
        "jsErrors": ["ReferenceError: x"],
        "consoleErrors": [],
        "external": ["https://example.org/a.js"],
        "localFailures": ["404 http://127.0.0.1/x.js"],
        "math": {"expected": 2, "typeset": 1, "errors": ["Undefined control sequence"], "raw": ["\\(x\\)"]},
        "figures": [
            {"index": 0, "drawn": False, "sliders": [], "moves": []},
            {"index": 1, "drawn": True, "sliders": [{"steps": 3, "active": 0}], "moves": []},
            {
                "index": 2,
                "drawn": True,
                "sliders": [{"steps": 3, "active": 0}],
                "moves": [
                    {"to": 1, "how": "click", "active": 1, "dataChanged": False, "drawingChanged": True, "drawn": True}
                ],
            },
        ],
        "widgets": {"views": 2, "rendered": 1},
        "screenshot": None,
        "wideMath": ["b t ( x ) = min ( 1 , q t ( x ) p t ( x ) )"],
        "tables": {
            "viewport": 1280,
            "tables": 3,
            "count": 3,
            "cells": [
                {
                    "table": 0,
                    "text": "specdec_lite.theory.expected_oracl",
                    "overflows": False,
                    "past": True,
                    "scrolls": True,
                    "dataTable": False,
                },
                {
                    "table": 1,
                    "text": "fixed width",
                    "overflows": True,
                    "past": False,
                    "scrolls": False,
                    "dataTable": False,
                },
                {"table": 2, "text": "0.3367", "overflows": False, "past": True, "scrolls": True, "dataTable": True},
            ],
        },
        "phone": {
            "viewport": 390,
            "scrollWidth": 520,
            "tables": {
                "viewport": 390,
                "tables": 2,
                "count": 2,
                "cells": [
                    {
                        "table": 0,
                        "text": "scrolls on a phone",
                        "overflows": False,
                        "past": True,
                        "scrolls": True,
                        "dataTable": False,
                    },
                    {
                        "table": 1,
                        "text": "hidden on a phone",
                        "overflows": False,
                        "past": True,
                        "scrolls": False,
                        "dataTable": False,
                    },
                ],
            },
            "figures": [
                {
                    "index": 0,
                    "width": 358,
                    "plotWidth": 71,
                    "hidden": False,
                    "cut": ["Every algorithm lies"],
                    "spills": True,
                },
                {"index": 1, "width": 0, "plotWidth": 0, "hidden": True, "cut": [], "spills": False},
            ],
        },
    }
    found = "\n".join(problems(broken))
    for words in [
        "JavaScript error",
        "outside the book",
        "failed request",
        "1 of 2 formulas",
        "MathJax error",
        "figure 1 is not drawn",
        "figure 2: its slider was not moved",
        "figure 3: moving its slider",
        "1 of 2 embedded widgets",
        "at 1280 px a display formula is wider than its column: 'b t ( x ) = min",
        "no screenshot",
        "at 390 px the page scrolls sideways (520 px wide)",
        "figure 1 at 390 px: the plot area is 71 px",
        "text cut at the figure's edge: 'Every algorithm lies'",
        "covers what follows",
        "at 1280 px a table cell runs past the edge of its table's box inside a box that scrolls: "
        "'specdec_lite.theory.expected_oracl'",
        "at 1280 px a table cell's content is wider than the cell: 'fixed width'",
        "at 390 px a table cell runs past the edge of its table's box and cannot be scrolled to: 'hidden on a phone'",
    ]:
        assert words in found
    assert "0.3367" not in found, "a figure's data table scrolls in its own focusable box"
    assert "scrolls on a phone" not in found, "on a phone a wide table may scroll in its box"
    assert "figure 2 at 390 px" not in found, "a folded (hidden) figure has no layout to check"
    assert phone_problems(None) == ["the page was not opened at a phone's width"]


def test_cdn_assets_are_pinned_npm_packages():
    for asset in bs.CDN_ASSETS:
        if "npm" in asset:
            assert re.fullmatch(r"(@[\w.-]+/)?[\w.-]+@\d+\.\d+\.\d+", asset["npm"]), asset
        else:
            assert (bs.TOOLS / asset["file"]).is_file(), asset


@pytest.mark.slow
def test_external_scripts_of_the_book_are_named(built_book):
    """Every ``src``/``href`` a page loads from outside is covered by CDN_ASSETS."""
    prefixes = [a.get("prefix") or a["url"] for a in bs.CDN_ASSETS]
    loaded = re.compile(r'<(?:script|img|link)\b[^>]*?\b(?:src|href)="(https?://[^"]+)"')
    for page in PAGES:
        html = (built_book / page).read_text(encoding="utf-8")
        for tag in re.finditer(r"<(?:script|img|link)\b[^>]*>", html):
            if 'rel="canonical"' in tag[0] or 'rel="alternate"' in tag[0]:
                continue
            for url in loaded.findall(tag[0]):
                assert any(url.startswith(p) for p in prefixes), f"{page} loads {url}, which CDN_ASSETS does not name"


@pytest.mark.slow
def test_widget_scripts_in_config_match_the_served_files():
    """The integrity hashes in _config.yml are those of the npm files the test serves."""
    if not bs.shutil.which("npm"):
        pytest.skip("npm is missing")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["nb_ipywidgets_js"]
    assets = bs.local_assets()
    for url, attrs in config.items():
        match = [a for a in assets if "prefix" in a and url.startswith(a["prefix"])]
        assert match, f"{url} is not among CDN_ASSETS"
        local = Path(match[0]["dir"]) / url[len(match[0]["prefix"]) :]
        digest = base64.b64encode(hashlib.sha256(local.read_bytes()).digest()).decode()
        assert attrs["integrity"] == f"sha256-{digest}", url


@pytest.mark.slow
def test_browser_check_catches_a_broken_page(defect_reports):
    """The real checker, on a page with each defect: a JavaScript error, an unnamed external
    script, a formula with a TeX error, a figure that is never drawn, and a slider whose
    steps plot the same data (``broken.html`` of ``browser_support.defect_site``)."""
    report = defect_reports["broken.html"]["read"]
    found = "\n".join(problems(report))
    assert "boom" in found and "example.org/tracker.js" in found
    assert "only 3 of 4 formulas typeset" in found, "MathJax cannot even find an unbalanced formula"
    assert "MathJax error: Extra close brace" in found
    assert "figure 1 is not drawn" in found
    assert "at 1280 px a display formula is wider than its column: 'x" in found, found
    assert re.search(r"at \d+ px the page scrolls sideways", found), "the same formula widens the page on a phone"
    assert "figure 2: moving its slider" in found, "a slider that changes nothing must fail"
    assert "figure 3" not in found, "a slider that changes the data passes"
    # the tables, at a desktop's width and at a phone's (the same cells: the page has no viewport tag)
    clipped = "runs past the edge of its table's box and cannot be scrolled to: 'specdec_lite.hidden_in_a_box"
    assert found.count(clipped) == 2, found
    assert found.count("content is wider than the cell: 'specdec_lite.cut_by_its_own_cell") == 2, found
    scrolled = "past the edge of its table's box inside a box that scrolls: 'specdec_lite.in_a_box_that_scrolls"
    assert f"at 1280 px a table cell runs {scrolled}" in found and found.count(scrolled) == 1, found


# --- accessibility: WCAG 2.1 A/AA with axe-core, light and dark, a keyboard walk, a phone ---

#: axe-core's findings on the theme's own chrome (sphinx-book-theme / pydata-sphinx-theme), which
#: the book's stylesheet and templates cannot change: rule id -> what it flags. The audit prints
#: every such node and fails when one of another rule appears; the book's own content has none.
THEME_KNOWN: dict[str, str] = {}


@pytest.fixture(scope="module")
def a11y_reports(book_reports, request) -> dict[tuple[str, str], dict]:
    reports = [a for r in book_reports.values() for a in r["axe"].values()]
    theme = sorted(
        {
            (n["rule"], n["target"])
            for r in reports
            for n in (r.get("axe") or {}).get("nodes", [])
            if n["where"] == "theme"
        }
    )
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\naxe-core {bs.axe_version()}: {len(theme)} nodes of the theme's chrome (THEME_KNOWN):")
        for rule, target in theme:
            print(f"  {rule}: {target}")
    return {(r["page"], r["mode"]): r for r in reports}


def axe_problems(report: dict) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on one page in one mode that the book answers for."""
    if report.get("fatal"):
        return [f"the page could not be audited: {report['fatal']}"]
    mode = report["mode"]
    out = [f"request outside the book: {u}" for u in report["external"]]
    if report["theme"] != ("light" if mode == "light" else "dark"):  # the phone prefers dark
        out.append(f"the page showed the theme's {report['theme']!r} mode, not {mode}")
    for n in report["axe"]["nodes"]:
        if n["where"] == "theme" and n["rule"] in THEME_KNOWN:
            continue
        where = {"theme": "the theme's chrome (a new rule)", "content": "the book", "plot": "a figure"}[n["where"]]
        out.append(
            f"{mode}: {n['rule']} ({n['impact']}) in {where} at {n['target']}: {n['html'][:120]} ({n['summary']})"[:600]
        )
    return out


def keyboard_problems(report: dict) -> list[str]:
    """What a keyboard reader would meet: formulas as tab stops, and stops whose focus cannot be seen."""
    stops = report.get("keyboard") or []
    out = []
    if not stops:
        out.append("the keyboard walk found no tab stop")
    math = [s for s in stops if s["math"]]
    if math:
        out.append(f"{len(math)} formulas are tab stops (MathJax's inTabOrder)")
    out += [
        f"focus is not visible on tab stop {i + 1}: {s['desc']}"
        for i, s in enumerate(stops)
        if s["inContent"] and not s["plot"] and not s["visible"]
    ]
    return out


def math_problems(report: dict) -> list[str]:
    """At a phone's width: a display formula wider than its column must scroll in its own box,
    take keyboard focus and say so (its label)."""
    out = []
    for i, m in enumerate(report.get("displayMath") or []):
        if m["spills"]:
            out.append(f"display formula {i + 1} runs past the page's edge")
        elif m["overflows"] and not (m["scrolls"] and m["focusable"] and m["labelled"]):
            out.append(
                f"display formula {i + 1} is cut: scrolls {m['scrolls']}, focusable {m['focusable']}, "
                f"labelled {m['labelled']}"
            )
    return out


#: On a phone the "Back to top" button keeps to a corner this small (CSS pixels), off the text and captions.
CORNER_BUTTON = 48


def back_to_top_problems(report: dict) -> list[str]:
    box = report.get("backToTop")
    if box is None:  # a page too short to scroll never shows it
        return []
    width, height = box["viewport"]
    out = []
    if box["width"] > CORNER_BUTTON or box["height"] > CORNER_BUTTON:
        out.append(f"the 'Back to top' button is {box['width']:.0f} x {box['height']:.0f} px on a phone")
    if width - box["right"] > 24 or height - box["bottom"] > 24:
        out.append(f"the 'Back to top' button is not in the bottom corner: {box}")
    return out


#: Each page's audits: light at a desktop's width, dark on a phone; the chrome's pages dark at a desktop's width too.
AUDITS = [(page, mode) for page in PAGES for mode in ("light", "phone")] + [
    (page, "dark") for page in bs.DARK_DESKTOP_PAGES
]


@pytest.mark.slow
@pytest.mark.parametrize(("page", "mode"), AUDITS)
def test_page_meets_wcag_21_aa(a11y_reports, page, mode):
    """axe-core finds no WCAG 2.1 A/AA violation in the book's content, light at a desktop's width and dark on a
    phone (and the theme's chrome dark at a desktop's width)."""
    report = a11y_reports[(page, mode)]
    found = axe_problems(report)
    if mode == "light":
        found += keyboard_problems(report)
    if mode == "phone":
        found += math_problems(report) + back_to_top_problems(report)
    assert not found, f"{page} ({mode}):\n" + "\n".join(found)


@pytest.mark.slow
def test_figure_2_2_slider_is_a_few_tab_presses_away(a11y_reports):
    """Chapter 2's step-by-step round is reached by Tab without passing every formula of the page."""
    stops = a11y_reports[("book/ch02_unbiased.html", "light")]["keyboard"]
    ranges = [i for i, s in enumerate(stops) if s["range"]]
    assert ranges, "the keyboard walk never reached Figure 2.2's range input"
    before = stops[: ranges[0]]
    assert not [s for s in before if s["math"]], "formulas are tab stops before the slider"
    print(f"Figure 2.2's slider is tab stop {ranges[0] + 1} of Chapter 2")


@pytest.mark.slow
def test_accessibility_statement_names_what_the_audit_runs(built_book):
    """book/accessibility.md states the axe-core version, tags and phone width the test uses, and the tracker."""
    page = (built_book / "book" / "accessibility.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert f"axe-core version {bs.axe_version()}" in text
    assert all(tag in text for tag in bs.AXE_TAGS) and f"{bs.PHONE_WIDTH} CSS pixels" in text
    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert f'href="{repository}/issues"' in page


def test_axe_core_is_a_pinned_npm_package():
    package = json.loads((bs.TOOLS / "package.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", package["dependencies"]["axe-core"]), "an exact version, not a range"
    assert bs.axe_version() == package["dependencies"]["axe-core"]


def test_page_fixes_rename_toggles_and_citations():
    """The HTML fixes of book/_ext/a11y.py, on the markup MyST-NB, docutils and the theme write."""
    from book._ext import a11y

    body = (
        '<details class="admonition hide above-input"><summary aria-label="Toggle hidden content">'
        '<p class="collapsed admonition-title">Show code cell source</p></summary></details>'
        '<div role="list" class="citation-list"><div class="citation" id="id6" role="doc-biblioentry">x</div></div>'
    )
    fixed = a11y.fix_body(body)
    assert "aria-label" not in fixed and "<summary>" in fixed
    assert 'role="doc-biblioentry"' not in fixed and '<div class="citation" id="id6" role="listitem">' in fixed
    header = (
        '<button class="btn search-button-field search-button__button pst-js-only" title="Search" aria-label="Search"'
        ' data-bs-placement="bottom">'
        '<button class="btn theme-switch-button" aria-label="Color mode">'
        '<i class="theme-switch fa-solid fa-sun fa-lg" data-mode="light" title="Light"></i>'
    )
    chrome = a11y.fix_chrome(header)
    assert 'aria-label="Search"' not in chrome and 'aria-label="Color mode"' in chrome
    chinese = a11y.fix_chrome(header.replace('"Search"', '"搜索"'))  # the theme's label in the Chinese edition
    assert 'aria-label="搜索"' not in chinese and 'title="搜索"' in chinese
    assert 'data-mode="light" aria-hidden="true"></i>' in chrome


@pytest.mark.slow
def test_audit_catches_a_broken_page(defect_reports):
    """The real audit (axe-core in Chromium), on a page with each defect the book had: a link
    without contrast, a toggle whose hidden label differs from its words, a text that fades
    only in dark mode, a formula in the tab order, a focusable control with no visible focus,
    a wide formula that cannot be reached by keyboard on a phone, and a defect in the chrome
    (``a11y.html`` of ``browser_support.defect_site``)."""
    reports = defect_reports["a11y.html"]["axe"]
    light = "\n".join(axe_problems(reports["light"]) + keyboard_problems(reports["light"]))
    dark = "\n".join(axe_problems(reports["dark"]))
    phone = "\n".join(axe_problems(reports["phone"]) + math_problems(reports["phone"]))
    assert "color-contrast" in light and "in the book at" in light and "pale link" in light
    assert "the theme's chrome (a new rule)" in light and "chrome link" in light
    assert "label-content-name-mismatch" in light
    assert "1 formulas are tab stops" in light
    assert "focus is not visible on tab stop" in light and "button" in light
    assert "fades in the dark" in dark and "fades in the dark" not in light
    assert "display formula 1 is cut: scrolls True, focusable False, labelled False" in phone
