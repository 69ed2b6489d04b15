"""The book's plotly figures for a keyboard user, a screen reader and a dark-mode reader (headless Chromium).

For each page of ``_toc.yml`` (the figure stages of ``tools/browser/check_book.mjs``): the figure script
(``specdec_lite/figures/figures.js``) is loaded once, from ``_static``, and no figure
carries a copy of it; every figure is an image named by its caption (by its title where it
has none), has a description, hides plotly's SVG from assistive technology, and has a
data table whose numbers are the figure's own traces; Tab alone reaches every slider's
control, and the arrow keys, End and Home move the figure to another step, say which
(``aria-valuetext``) and show that step's table; switched to dark, every figure takes the
dark layout with trace colours at 3:1 and text at 4.5:1, and switched back, the authored
light layout with the same contrasts.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

from tests import browser_support as bs
from tests.test_book import site_pages

PAGES = [f"{page}.html" for page in site_pages()]
DARK_PAPER = "#121212"
GRAPHIC, TEXT = 3.0, 4.5  # WCAG 2.1 AA: graphical objects 3:1, text 4.5:1


@pytest.fixture(scope="module")
def figure_reports(built_book: Path, tmp_path_factory) -> dict[str, dict]:
    """The figure reports of the one browser pass over the book (``browser_support.book_pass``)."""
    return {page: r["figures"] for page, r in bs.book_pass(built_book, tmp_path_factory, PAGES).items()}


def snapshot_name(snapshot: str | None) -> str:
    """The name in the first entry of Playwright's ARIA snapshot (YAML: ``- img "name"``, ``- figure "name":``)."""
    if not snapshot:
        return ""
    entries = yaml.safe_load(snapshot)
    first = entries[0] if isinstance(entries, list) and entries else ""
    head = next(iter(first)) if isinstance(first, dict) else str(first)
    m = re.match(r'\w+\s+"(.*)"$', head.strip(), flags=re.S)
    return re.sub(r"\s+", " ", m[1].replace('\\"', '"')).strip() if m else ""


def close(cell: str, value: object) -> bool:
    """A table's cell shows ``value`` (4 significant digits; text as it is)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == "–"
    if isinstance(value, bool | str):
        return cell == re.sub(r"<[^>]*>", "", str(value)).strip()
    try:
        shown = float(cell)
    except ValueError:
        return False
    return abs(shown - float(value)) <= 5e-4 * abs(float(value)) + 1e-12


def table_problems(fig: dict) -> list[str]:
    """Cells of the figure's data tables that are not its traces' numbers."""
    out = []
    data = fig["data"]
    for t, table in enumerate(fig["tables"]):
        where = f"table {t + 1}"
        if not table["rows"]:
            out.append(f"{where} is empty")
        if table["kind"] == "xy":
            for row in table["rows"]:
                i, cells = row["i"], row["cells"]
                first = data[table["traces"][0]]
                x = first["x"] if first["x"] is not None else list(range(len(first["y"])))
                if not close(cells[0], x[i]):
                    out.append(f"{where}, row {i}: x is {cells[0]!r}, the trace's {x[i]!r}")
                for col, tr in enumerate(table["traces"], start=1):
                    y = data[tr]["y"]
                    if not close(cells[col], y[i]):
                        out.append(f"{where}, row {i}: trace {tr} shows {cells[col]!r}, the trace's {y[i]!r}")
        elif table["kind"] == "heatmap":
            z = data[table["traces"][0]]["z"]
            for row in table["rows"]:
                for cell, j in zip(row["cells"][1:], table["columns"], strict=True):
                    if not close(cell, z[row["i"]][j]):
                        out.append(f"{where}: cell ({row['i']}, {j}) is {cell!r}, z is {z[row['i']][j]!r}")
        elif table["kind"] == "histogram":
            x = data[table["traces"][0]]["x"]
            if sum(int(r["cells"][1]) for r in table["rows"]) != len(x):
                out.append(f"{where}: the bins do not count the histogram's {len(x)} values")
    return out[:10]


def figure_problems(report: dict) -> list[str]:
    """What a keyboard user, a screen reader or a dark-mode reader would meet on one page; empty when fine."""
    if report["fatal"]:
        return [f"the page could not be checked: {report['fatal']}"]
    out = [f"JavaScript error: {e}" for e in report["jsErrors"]]
    if not report["figures"]:
        return out
    s = report["scripts"]
    if s["files"] != 1 or s["styles"] != 1 or not s["defined"]:
        out.append(f"the figure script and styles must be loaded once per page: {s}")
    if s["inlineCopies"]:
        out.append(f"{s['inlineCopies']} figures carry their own copy of the figure script")
    for fig in report["figures"]:
        name = f"figure {fig['index'] + 1} ({fig['number'] or 'no caption'})"
        accessible = snapshot_name(fig["name"])
        if fig["role"] != "img" or not re.match(r"""-\s+'?img\b""", fig["name"]):
            out.append(f"{name} is not an image to assistive technology: {fig['name'][:80]!r}")
        if fig["caption"] is not None:
            caption = snapshot_name(fig["caption"])
            if not caption or accessible != caption:
                out.append(f"{name} is named {accessible[:80]!r}, not by its caption {caption[:80]!r}")
        elif not accessible:
            out.append(f"{name} has no caption and no name")
        if not fig["description"]:
            out.append(f"{name} has no description")
        if fig["hiddenSvgs"] != fig["svgs"]:
            out.append(f"{name}: {fig['svgs'] - fig['hiddenSvgs']} of its SVGs are read by assistive technology")
        if fig["number"] and fig["summary"] != f"Data of {fig['number']}":
            out.append(f"{name}: its data table is summarised {fig['summary']!r}")
        if not any(t["shown"] for t in fig["tables"]):
            out.append(f"{name} has no data table")
        out += [f"{name}: {p}" for p in table_problems(fig)]
        if len(fig["controls"]) != len(fig["sliders"]):
            out.append(f"{name}: {len(fig['sliders'])} sliders, {len(fig['controls'])} keyboard controls")
    out += walk_problems(report)
    out += theme_problems(report)
    auto = report.get("autoDark") or {"fatal": "not checked"}
    if auto.get("fatal"):
        out.append(f"in a browser that prefers dark the page could not be checked: {auto['fatal']}")
    elif auto["mode"] == "auto" and auto["theme"] == "dark":
        out += [
            f"figure {i + 1} stays {f['attr']} in a browser that prefers dark"
            for i, f in enumerate(auto["figures"])
            if f["attr"] != "dark" or f["paper"] != DARK_PAPER
        ]
    else:
        out.append(f"in a browser that prefers dark the theme's mode is {auto['mode']}, its theme {auto['theme']}")
    return out


def walk_problems(report: dict) -> list[str]:
    """Tab alone must reach every slider control, and its keys must move the figure."""
    controls = {c["id"]: fig["index"] for fig in report["figures"] for c in fig["controls"]}
    walk = report["walk"]
    reached = {r["id"] for r in walk["reached"]}
    out = [f"Tab never reaches the slider of figure {i + 1}" for c, i in controls.items() if c not in reached]
    out += [
        f"the focused slider {o['id']} shows no outline ({o['outline']})"
        for o in walk["outlines"]
        if o["outline"].startswith("none") or o["outline"].endswith(" 0px")
    ]
    for m in walk["moves"]:
        name = f"figure {m['figure'] + 1}, key {m['key']}"
        if m["from"] == m["to"] and m["key"] in ("ArrowRight", "End") and m["from"] < m["max"]:
            out.append(f"{name}: the control did not move")
        if m["from"] != m["to"] and not m["dataChanged"]:
            out.append(f"{name}: the plotted data did not change")
        if m["active"] != m["to"]:
            out.append(f"{name}: plotly's slider shows step {m['active']}, the control {m['to']}")
        if m["valuetext"] != m["expected"]:
            out.append(f"{name}: aria-valuetext {m['valuetext']!r}, the step is {m['expected']!r}")
        if not m["stillFocused"]:
            out.append(f"{name}: the control lost the focus")
        if m["shownSteps"] != [m["active"]]:
            out.append(f"{name}: the data tables shown are those of steps {m['shownSteps']}, not {m['active']}")
    return out


def theme_problems(report: dict) -> list[str]:
    out = []
    light0 = {f["index"]: f["theme"] for f in report["figures"]}
    for mode in report["themes"]:
        for f in mode["figures"]:
            name = f"figure {f['index'] + 1} in {mode['theme']} mode"
            theme = f["theme"]
            if theme["attr"] != mode["theme"]:
                out.append(f"{name} did not follow the page (it is {theme['attr']})")
            if mode["theme"] == "dark" and (
                theme["paper"] != DARK_PAPER or theme["plot"] == light0[f["index"]]["plot"]
            ):
                out.append(f"{name}: paper {theme['paper']}, plot {theme['plot']}")
            if mode["theme"] == "light" and (theme["paper"], theme["plot"], theme["font"]) != (
                light0[f["index"]]["paper"],
                light0[f["index"]]["plot"],
                light0[f["index"]]["font"],
            ):
                out.append(f"{name}: the authored layout is not restored: {theme}")
            out += [
                f"{name}: trace {n!r} colour {c} has contrast {r:.2f}"
                for n, c, r in f["contrast"]["traces"]
                if r < GRAPHIC
            ]
            out += [f"{name}: text colour {c} has contrast {r:.2f}" for c, r in f["contrast"]["text"] if r < TEXT]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_figures_work_by_keyboard_and_read_aloud_in_both_themes(figure_reports, page):
    report = figure_reports[page]
    assert not figure_problems(report), f"{page}:\n" + "\n".join(figure_problems(report))


@pytest.mark.slow
def test_every_slider_of_the_book_is_walked_by_keyboard(figure_reports):
    sliders = sum(len(f["sliders"]) for r in figure_reports.values() for f in r["figures"])
    walked = {(r["page"], m["figure"]) for r in figure_reports.values() for m in (r["walk"] or {}).get("moves", [])}
    assert sliders >= 9 and len(walked) == sliders, f"{sliders} sliders, {len(walked)} walked by keyboard"


@pytest.mark.slow
def test_checker_notices_figures_the_script_never_set_up(built_book, tmp_path_factory):
    """The real checker on a page whose captioned slider figure is plain plotly HTML (no init
    call, no description, no table), with the figure script loaded twice and no styles
    (``plain.html`` of ``browser_support.defect_site``, in the same pass as test_browser.py's pages)."""
    report = bs.defect_pass(built_book, tmp_path_factory)["plain.html"]["figures"]
    found = "\n".join(figure_problems(report))
    for words in [
        "loaded once per page",
        "figure 1 (Figure 1) is not an image",
        "not by its caption",
        "has no description",
        "SVGs are read by assistive technology",
        "has no data table",
        "1 sliders, 0 keyboard controls",
        "did not follow the page",
    ]:
        assert words in found, f"{words!r} not in:\n{found}"
