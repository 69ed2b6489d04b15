"""Every plotly figure of the book and the round pictures of Chapter 2, built as the chapters build them.

``figures(quick=False)`` yields ``(name, figure)`` pairs in the order of the book, named after the
chapter and the builder (``ch05-sweep-token``); the figures are made in the language set now
(``SPECDEC_LITE_LANGUAGE``), as in the book. ``quick=True`` runs fewer Monte Carlo runs (for tests:
the words and the layout do not depend on them). ``round_pictures()`` gives the SVG of Figure 2.1.

Run as a script it exports each figure as a PNG at the laptop's text column (690 CSS pixels) and at a
phone's (370), in English and in Chinese, for a person to look at (not a test)::

    python tools/figure_gallery.py /tmp/figures [--quick] [--only ch05]

plotly's Kaleido drives Debian's Chromium (``BROWSER_PATH=/usr/bin/chromium``, as the book's paper
build does); the SVG pictures are converted with ``rsvg-convert``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The variable that sets the language of the figures (``specdec_lite._i18n.ENV``).
ENV = "SPECDEC_LITE_LANGUAGE"

#: Widths the figures are exported at: the laptop's text column and a phone's.
WIDTHS = {"laptop": 690, "phone": 370}


def figures(quick: bool = False) -> Iterator[tuple[str, Any]]:
    """The book's plotly figures, chapter by chapter, with the arguments the chapters pass."""
    import specdec_lite as sd
    from specdec_lite import lookahead as la
    from specdec_lite._i18n import _
    from specdec_lite.figures import batch, lookahead, part1, part2, real_models
    from specdec_lite.llm import measure_pair, shape_costs
    from specdec_lite.llm.fallback import SHIPPED_DIR
    from specdec_lite.widgets.token_explorer import token_laws

    runs = 200 if quick else 5000
    p0, q = token_laws(V=6, preset="shifted", quality=0.0)
    yield "ch01-tv", part1.tv_slider_figure(q, p0)
    yield "ch02-split", part1.split_slider_figure(q, p0)
    target = sd.MarkovChain.random(V=3, T=4, rng=1)
    draft = sd.draft_for(target, quality=0.3, rng=2)
    res = sd.reference.speculative(draft, target, runs=400 if quick else 4000, rng=3)
    yield "ch02-sequence-check", part1.sequence_check_figure(res.tokens, sd.theory.sequence_law(target), V=3)
    yield "ch03-running-mean", part1.figure2_slider(V=7, T=50, runs=runs, qualities=(0.0, 0.25, 0.5, 0.75), seed=10)
    yield "ch03-quality-sweep", part1.quality_sweep_slider(V=7, Ts=(10, 25, 50, 100, 200), seed=10, active=2)
    p4, q4 = np.array([0.55, 0.25, 0.15, 0.05]), np.array([0.25, 0.25, 0.25, 0.25])
    yield "ch04-epsilon", part2.epsilon_slider_figure(p4, q4)
    target = sd.MarkovChain.random(7, 50, rng=10, concentration=0.5)
    draft = sd.draft_for(target, 0.5, rng=11, concentration=0.5)
    yield "ch04-chain-members", part2.unbiased_chain_members_figure(draft, target, n=40 if quick else 200, seed=0)
    p5, q5 = np.array([0.45, 0.30, 0.15, 0.10]), np.array([0.20, 0.25, 0.25, 0.30])
    yield "ch05-pareto", part2.pareto_figure(p5, q5, n=400, seed=0)
    yield "ch05-sweep-token", part2.sweep_figure(part2.token_sweep(p5, q5), float(sd.tv(p5, q5)), _("one token"))
    yield (
        "ch05-sweep-chain",
        part2.sweep_figure(
            part2.chain_sweep(draft, target),
            sd.theory.expected_rejections(draft, target),
            _("chain, V = {V}, T = {T}").format(V=7, T=50),
        ),
    )
    small_target = sd.MarkovChain.random(4, 6, rng=0, concentration=0.5, uniform_init=False)
    small_draft = sd.draft_for(small_target, 0.5, rng=100, concentration=0.5, uniform_init=False)
    yield "ch05-sequences", part2.sequence_figure(small_draft, small_target)
    yield "ch06-figure3", batch.figure3(V=12, M_max=16, runs=300 if quick else 4000, seed=0)
    draft, target, _seed = part1.pair(7, 50, 0.0, 10)
    yield "ch06-running-means", batch.running_means_figure(draft, target, Ms=(4, 5), runs=runs, seed=1)
    yield "ch06-vs-M", batch.rejections_vs_M_figure(draft, target, M_max=64)
    yield (
        "ch06-tree",
        batch.tree_vs_batch_slider(
            qualities=(0.0, 0.25, 0.5, 0.75), V=7, T=50, M_max=64, mc_Ms=(4, 16, 64), runs=50 if quick else 500
        ),
    )
    draft, target = lookahead.quality_pair(0.6)
    Ks = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 50]
    yield "ch07-finite-k", lookahead.finite_k_figure(draft, target, Ks, runs=200 if quick else 2000, seed=0)
    T, V, tv = 200, 7, 0.3
    const = la.tv_schedule_pair(V, T, tv, rng=1)
    stretches = la.tv_schedule_pair(V, T, np.where((np.arange(T) // 50) % 2 == 0, 0.02, 0.58), rng=2)
    target = sd.MarkovChain.random(V, T, rng=3)
    other = sd.MarkovChain.random(V, T, rng=4)
    weight = tv / sd.theory.rejection_profile(other, target).mean()
    pairs = [
        (_("constant TV (i.i.d.)"), *const),
        (_("TV varies by state"), target.mix(other, weight), target),
        (_("TV in stretches"), *stretches),
    ]
    yield "ch07-leviathan", lookahead.leviathan_figure(pairs, 1 - tv, [0, 1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24])
    yield "ch07-best-k-map", lookahead.best_k_map_figure(np.linspace(0.02, 0.99, 50), np.geomspace(0.003, 1, 60))
    costs = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8]
    yield "ch07-best-k", lookahead.best_k_slider_figure([0.3, 0.6, 0.8, 0.95], costs, K_max=30, active=4)
    meta = json.loads((SHIPPED_DIR / "meta.json").read_text(encoding="utf-8"))
    # the subtitle the chapter gives the shipped pair's figures (ModelPair.describe(short=True))
    pair_label = "stdlib-1x64 → stdlib-12x128 (cpu, float32)"
    yield "ch08-training", real_models.training_figure({r: meta[r]["losses"] for r in ("draft", "target")}, pair_label)
    committed = measure_pair.load_results()
    if committed:
        labels = [measure_pair.results_label(r) for r in committed]
        titles = [measure_pair.results_panel_title(r) for r in committed]
        rows = [measure_pair.result_rows(r) for r in committed]
        theorem1_rows, speed_rows, sweep_rows = rows[0]
        yield "ch08-theorem1", real_models.theorem1_figure(theorem1_rows, labels[0])
        yield "ch08-tradeoff", real_models.tradeoff_figure(sweep_rows, labels[0])
        yield "ch08-loglik", real_models.loglik_figure(sweep_rows, labels[0])
        yield "ch08-speed", real_models.speed_figure(speed_rows, labels[0])
        results = real_models.results_figures(rows, titles)
        for key in ("speed", "theorem1", "tradeoff"):
            yield f"ch08-results-{key}", results[key]
    alphas = np.round(np.linspace(0.0, 1.0, 51), 2)
    panels = []
    for res in shape_costs.load_shape_results():
        pair_names = shape_costs.predicted_pair(res)
        if pair_names is not None:
            context = shape_costs.reference_context(res)
            curves = shape_costs.speedup_curves(shape_costs.call_costs(res, *pair_names, context), alphas)
            panels.append(
                (shape_costs.panel_label(res), *pair_names, context, curves, shape_costs.best_lookaheads(curves))
            )
    if panels:
        yield "ch08-shapes-speedup", real_models.predicted_speedup_panels(alphas, panels)


def round_pictures() -> str:
    """The SVG of Figure 2.1 (two rounds), as Chapter 2 draws it."""
    from specdec_lite._i18n import _
    from specdec_lite.figures.round import round_svg, weather, worked_round

    sun, rain, snow, wind = vocab = weather()
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    with_rejection = worked_round(vocab, p, q, drafts=(rain, sun, wind), u=(0.52, 0.81), u_last=0.40)
    keeps_all = worked_round(vocab, p, q, drafts=(rain, snow, wind), u=(0.52, 0.93, 0.35), u_last=0.66)
    titles = [_("(a) A round with a rejection"), _("(b) A round that keeps every draft")]
    return round_svg([with_rejection, keeps_all], titles)


def export(out: Path, quick: bool, only: str) -> list[Path]:
    """Write every figure (and the round picture) as PNGs under ``out``, both languages, both widths."""
    import kaleido
    import plotly.io as pio

    from specdec_lite import plotting

    if "BROWSER_PATH" not in os.environ and Path("/usr/bin/chromium").is_file():
        os.environ["BROWSER_PATH"] = "/usr/bin/chromium"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lang in ("en", "zh_CN"):
        os.environ["SPECDEC_LITE_LANGUAGE"] = lang
        specs = []
        for name, fig in figures(quick):
            if only and not name.startswith(only):
                continue
            fig = plotting.styled(fig)
            for where, width in WIDTHS.items():
                path = out / f"{name}-{lang}-{where}.png"
                specs.append({"fig": fig.to_dict(), "path": str(path), "opts": {"width": width, "scale": 1.5}})
                written.append(path)
        if specs:
            kaleido.write_fig_from_object_sync(specs, kopts={"mathjax": False})
        if not only or "ch02-round".startswith(only):
            svg = out / f"ch02-round-{lang}.svg"
            svg.write_text(round_pictures(), encoding="utf-8")
            for where, width in {"laptop": 500, "phone": 270}.items():
                png = out / f"ch02-round-{lang}-{where}.png"
                subprocess.run(["rsvg-convert", "-w", str(int(width * 1.5)), "-o", str(png), str(svg)], check=True)
                written.append(png)
    del pio
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--quick", action="store_true", help="fewer Monte Carlo runs")
    parser.add_argument("--only", default="", help="only the figures whose name starts with this")
    args = parser.parse_args()
    for path in export(args.out, args.quick, args.only):
        print(path)


if __name__ == "__main__":
    main()


def write_page(out: Path, named: list[tuple[str, Any]]) -> Path:
    """A static page of ``named`` figures as the book shows them (its HTML, plotly.js, ``figures.js``) in a
    column whose width the page's address sets (``index.html?w=690``), in the book's dark theme with
    ``&theme=dark`` (the attribute the book's theme sets, read by ``figures.js``); returns the page's path."""
    import html

    import plotly

    from specdec_lite import plotting

    out.mkdir(parents=True, exist_ok=True)
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    (out / "plotly.min.js").write_bytes(plotly_js.read_bytes())
    body = []
    for name, fig in named:
        figure = plotting.book_html(fig).replace(
            '<div class="sd-figure">', f'<div class="sd-figure" data-name="{html.escape(name)}">', 1
        )
        body.append(f"<h2>{html.escape(name)}</h2>{figure}")
    page = out / "index.html"
    page.write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<script src="plotly.min.js"></script>'
        f"<style>body {{ margin: 16px; font-family: sans-serif; }}</style>{plotting.figure_assets()}</head><body>"
        '<main id="column"><script>var q = new URLSearchParams(location.search), w = +q.get("w");'
        'if (w) document.getElementById("column").style.width = w + "px";'
        'if (q.get("theme")) document.documentElement.setAttribute("data-theme", q.get("theme"));</script>'
        + "".join(body)
        + "</main></body></html>",
        encoding="utf-8",
    )
    return page
