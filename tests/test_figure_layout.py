"""Every figure of the book lays out its texts without overlaps and without cutting any at its edge, at a
laptop's text column (690 CSS pixels) and at a phone's (358), in English and in Chinese (headless Chromium).

The figures are built as the chapters build them (``tools/figure_gallery.py``, fewer Monte Carlo runs),
shown on a static page of their own exactly as the book shows them (their book HTML, plotly.js from the
plotly package, ``figures.js``, which lays a figure out again below its narrow width), and
``tools/browser/figure_boxes.mjs`` measures the boxes of each figure's title, legend, annotations (subplot
titles, line labels), axis titles, colour-bar title, tick labels and slider labels. A text must lie inside
its figure, two texts must not overlap (a legend's entries with one another excepted), tick labels of
one axis must not run into each other, no axis title may lie over a plot area (a right-hand panel's
y-axis title over its neighbour's data), and no legend may need a scroll bar. The laptop's width is measured
in the dark theme too. Cost: about 60 s on 2 shared cores (two pages, three views each).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from tests import browser_support as bs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import figure_gallery  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bs.chromium_available(), reason="needs Debian's chromium"),
]

VIEWPORTS = [
    {"name": "laptop", "width": 1280, "column": 690},
    {"name": "phone", "width": 390, "column": 358},
    # the dark theme changes only colours, but figures.js lays the figure out again to apply them, and plotly's
    # margins, pushed by a legend under the plot, settle elsewhere after that: a legend came up to an axis title.
    # Only at the laptop's width: on a phone figures.js puts the legend in a bottom margin of its own, measured
    # after the theme is applied, so the theme cannot move it (and a view costs about 8 s per language)
    {"name": "laptop-dark", "width": 1280, "column": 690, "theme": "dark"},
]


def overlap(a: dict, b: dict, tol: float = 1.0) -> bool:
    width = min(a["right"], b["right"]) - max(a["left"], b["left"])
    height = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return width > tol and height > tol


def problems(report: dict) -> list[str]:
    """What is cut at a figure's edge or runs into something else, figure by figure."""
    out = []
    for view, r in report.items():
        out += [f"{view}: script error {e}" for e in r["errors"]]
        for f in r["figures"]:
            box, where = f["figure"], f"{view} {f['name']}"
            for it in f["items"]:
                if (
                    it["left"] < box["left"] - 1
                    or it["right"] > box["right"] + 1
                    or it["top"] < box["top"] - 1
                    or it["bottom"] > box["bottom"] + 1
                ):
                    out.append(f"{where}: {it['kind']} cut at the edge: {it['text']!r}")
            for name in f.get("cutMarkers", []):
                out.append(f"{where}: a marker of {name!r} is cut at the plot's edge (cliponaxis, or pad the range)")
            if f.get("legendScrolls"):
                out.append(f"{where}: the legend scrolls (its entries do not fit the room plotly gives it)")
            for it in f["items"]:
                for plot in f.get("plots", []) if it["kind"] == "axis-title" else []:
                    if overlap(it, plot):
                        out.append(f"{where}: axis title {it['text'][:40]!r} lies over the plot area {plot['id']}")
            for a, b in combinations(f["items"], 2):
                kinds = {a["kind"], b["kind"]}
                if kinds == {"tick"}:
                    if a["axis"] == b["axis"] and overlap(a, b, 0.5):
                        out.append(f"{where}: tick labels {a['text']!r} and {b['text']!r} run together")
                elif kinds == {"slider"}:
                    if overlap(a, b, 0.5):
                        out.append(f"{where}: slider labels {a['text']!r} and {b['text']!r} run together")
                elif kinds != {"legend"} and overlap(a, b):
                    out.append(f"{where}: {a['kind']} {a['text'][:40]!r} overlaps {b['kind']} {b['text'][:40]!r}")
    return out


def measure(tmp: Path, lang: str) -> dict:
    os.environ[figure_gallery.ENV] = lang
    try:
        page = figure_gallery.write_page(tmp / lang, list(figure_gallery.figures(quick=True)))
    finally:
        os.environ.pop(figure_gallery.ENV, None)
    bs.ensure_driver()
    with bs.serve(page.parent) as base:
        config = {
            "chromium": str(bs.CHROMIUM),
            "url": base + "index.html",
            "out": str(tmp / f"{lang}.json"),
            "viewports": VIEWPORTS,
            "screenshots": None,
        }
        (tmp / f"{lang}-config.json").write_text(json.dumps(config))
        proc = subprocess.run(
            ["node", str(ROOT / "tools" / "browser" / "figure_boxes.mjs"), str(tmp / f"{lang}-config.json")],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((tmp / f"{lang}.json").read_text())


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_no_figure_text_overlaps_or_is_cut(lang, tmp_path):
    report = measure(tmp_path, lang)
    assert all(len(r["figures"]) >= 20 for r in report.values()), "every figure was drawn"
    found = problems(report)
    assert not found, "\n".join(found)


def test_the_measure_sees_an_overlap_and_a_cut():
    """The checks are not blind: two boxes that share a corner overlap; a text past the figure's edge is cut."""
    figure = {"left": 0, "top": 0, "right": 100, "bottom": 100}
    a = {"kind": "title", "axis": "", "text": "a", "left": 10, "top": 10, "right": 60, "bottom": 30}
    b = {"kind": "legend", "axis": "", "text": "legend", "left": 50, "top": 20, "right": 90, "bottom": 50}
    c = {"kind": "annotation", "axis": "", "text": "c", "left": 80, "top": 60, "right": 120, "bottom": 70}
    found = problems({"laptop": {"errors": [], "figures": [{"name": "f", "figure": figure, "items": [a, b, c]}]}})
    assert found == ["laptop f: annotation cut at the edge: 'c'", "laptop f: title 'a' overlaps legend 'legend'"]


def test_the_measure_sees_a_cut_marker():
    """A marker that the plot's edge cuts is named, in every figure."""
    figure = {"left": 0, "top": 0, "right": 100, "bottom": 100}
    figures = [{"name": n, "figure": figure, "items": [], "cutMarkers": ["m"]} for n in ("ch04-f", "ch05-f")]
    found = problems({"laptop": {"errors": [], "figures": figures}})
    assert found == [
        f"laptop {n}: a marker of 'm' is cut at the plot's edge (cliponaxis, or pad the range)"
        for n in ("ch04-f", "ch05-f")
    ]
