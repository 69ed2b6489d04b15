"""The book's plotly figures for a keyboard user, a screen reader and a dark-mode reader (headless Chromium).

For each page of ``_toc.yml`` (the figure stages of ``tools/browser/check_book.mjs``): the figure script
(``specdec_lite/figures/figures.js``) is loaded once, from ``_static``, and no figure
carries a copy of it; every figure is an image named by its caption (by its title where it
has none), has a description, hides plotly's SVG from assistive technology, and has a
data table whose numbers are the figure's own traces; Tab alone reaches every slider's
control, and the arrow keys, End and Home move the figure to another step, say which
(``aria-valuetext``) and show that step's table; switched to dark, every figure takes the
dark layout with trace colours at 3:1 and text at 4.5:1, and switched back, the authored
light layout with the same contrasts. Every step of every slider, button and frame, applied in
turn, leaves the figure the title that step sets, drawn where the reader reads it; each slider is
one control (its range input; plotly's own slider is hidden), and the script's words on a Chinese
page are Chinese.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

from specdec_lite import figure_data
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


def magnitude(values: list) -> float:
    """The largest magnitude among the numbers of ``values`` (0 if none)."""
    return max(
        (abs(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)),
        default=0.0,
    )


def close(cell: str, value: object, scale: float = 0.0) -> bool:
    """A table's cell shows ``value`` (4 significant digits; text as it is), or 0 for a value below
    ``figure_data.NOISE`` of ``scale`` (rounding error, which the table prints as 0: below that share of the largest
    value on its axis, here at least its trace's largest)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == "–"
    if isinstance(value, bool | str):
        return cell == re.sub(r"<[^>]*>", "", str(value)).strip()
    try:
        shown = float(cell)
    except ValueError:
        return False
    return abs(shown - float(value)) <= 5e-4 * abs(float(value)) + 1e-12 + (
        figure_data.NOISE * scale if shown == 0 else 0
    )


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
                x = first.get("tableX") or (first["x"] if first["x"] is not None else list(range(len(first["y"]))))
                if not close(cells[0], x[i]):
                    out.append(f"{where}, row {i}: x is {cells[0]!r}, the trace's {x[i]!r}")
                for col, tr in enumerate(table["traces"], start=1):
                    y = data[tr]["y"]
                    if not close(cells[col], y[i], magnitude(y)):
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


def data_summary(page: str, number: str) -> str:
    """The summary of a figure's data table, in the page's language (figures.js)."""
    return f"{number} 的数据" if page.startswith("zh/") else f"Data of {number}"


def title_problems(report: dict) -> list[str]:
    """Each step of each slider, button and frame (``stepTitles`` of check_book.mjs): after it, the title
    drawn in the page is there and is the title that step sets (the one before it where it sets none)."""
    if report.get("titlesError"):
        return [f"the figures' steps could not be applied: {report['titlesError']}"]
    out = []
    for fig in report.get("titles") or []:
        for st in fig["steps"]:
            name = f"figure {fig['index'] + 1}, {st['kind']} {st['k'] + 1} step {st['i'] + 1} ({st['label']})"
            if st.get("error"):
                out.append(f"{name}: applying it failed: {st['error']}")
            elif not st["present"]:
                bare = " (it sets the title as a bare string, which plotly.js 4 does not read)" if st["bare"] else ""
                out.append(f"{name} leaves the figure without its title{bare}; it sets {st['expected']!r}")
            elif not st["same"]:
                out.append(f"{name}: the title shown is {st['shown']!r}, the step's is {st['expected']!r}")
    return out


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
        if fig["number"] and fig["summary"] != data_summary(report["page"], fig["number"]):
            out.append(f"{name}: its data table is summarised {fig['summary']!r}")
        if not any(t["shown"] for t in fig["tables"]):
            out.append(f"{name} has no data table")
        out += [f"{name}: {p}" for p in table_problems(fig)]
        if len(fig["controls"]) != len(fig["sliders"]):
            out.append(f"{name}: {len(fig['sliders'])} sliders, {len(fig['controls'])} keyboard controls")
        if fig["controls"] and fig.get("drawnSliders"):
            out.append(f"{name}: plotly draws its slider beside the range input: two controls for one parameter")
        for c, sl in zip(fig["controls"], fig["sliders"], strict=False):
            label = re.sub(r"<[^>]*>", "", str(sl["labels"][c["value"]]))
            if not c["readoutShown"] or c["readout"] != label:
                out.append(
                    f"{name}: the control's readout shows {c['readout']!r} (shown: {c['readoutShown']}), not {label!r}"
                )
    out += walk_problems(report)
    out += title_problems(report)
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
def test_every_step_of_every_figure_shows_its_own_title(figure_reports):
    """Every step of every slider (and button and frame) of both editions was applied and checked
    (its title problems fail the page's test above): none is left out."""
    checked = {
        (page, f["index"]): len(f["steps"]) for page, r in figure_reports.items() for f in (r.get("titles") or [])
    }
    want = {
        (page, f["index"]): sum(len(s["labels"]) for s in f["sliders"])
        for page, r in figure_reports.items()
        for f in r["figures"]
        if f["sliders"]
    }
    missing = {k: v for k, v in want.items() if checked.get(k, 0) < v}
    assert not missing, f"figures whose steps were not all checked: {missing}"
    editions = {"en": 0, "zh": 0}
    for (page, _), n in checked.items():
        editions["zh" if page.startswith("zh/") else "en"] += n
    figures = len(checked)
    print(
        f"titles checked: {sum(checked.values())} steps of {figures} figures on "
        f"{len({p for p, _ in checked})} pages (English {editions['en']}, Chinese {editions['zh']})"
    )
    assert editions["en"] >= 9 and editions["zh"] >= 9, editions


@pytest.mark.slow
def test_checker_notices_figures_the_script_never_set_up(built_book, tmp_path_factory):
    """The real checker on a page whose captioned slider figure is plain plotly HTML (no init
    call, no description, no table), with the figure script loaded twice and no styles, and whose
    second figure's buttons set the title as a bare string (``plain.html`` of
    ``browser_support.defect_site``, in the same pass as test_browser.py's pages)."""
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
        "figure 2, button 1 step 1 (T = 1) leaves the figure without its title (it sets the title as a bare string",
        "figure 2, button 1 step 2 (T = 2) leaves the figure without its title",
    ]:
        assert words in found, f"{words!r} not in:\n{found}"
    assert "figure 1, slider" not in found, "the slider's steps set their titles as plotly.js 4 reads them"
