"""Every figure of the book speaks the reader's language: no English words in the Chinese ones, no Chinese in
the English ones.

The figures are built as the chapters build them (``tools/figure_gallery.py``, with fewer Monte Carlo runs:
the words do not depend on them), once with ``SPECDEC_LITE_LANGUAGE=zh_CN`` and once in English, with the
round pictures of Chapter 2; every piece of text a reader sees is collected (titles, axis titles, legend
names, annotations, hover templates, slider labels and prefixes, the description and the data tables).
Symbols, formulas, algorithm names and the names of things (OPT, UNO, Leviathan et al., HF, token names of
the examples) stay as they are: the allow-list below. Cost: about 15 s for both languages on 2 cores.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from specdec_lite import _i18n
from specdec_lite.figure_data import data_tables, description, plain

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import figure_gallery  # noqa: E402

#: Latin words a Chinese figure keeps: symbols and names of functions, algorithms, people, tools and models (the
#: example's weather words are translated: 晴, 雨, 雪, 风).
ALLOWED = {
    "TV",
    "OPT",
    "UNO",
    "Decoding",
    "min",
    "max",
    "log",
    "Ber",
    "Unif",
    "Leviathan",
    "et",
    "al",
    "HF",
    "reject",
    "rej",
    "extra",
    "sup",
    "br",
    "cpu",
    "cuda",
    "float",
    "bfloat",
    "stdlib",
    "params",
    "context",
    "chosen",
    "because",
    "hub",
    "False",
    "True",
    "gpt",
    "pythia",
    "float32",
    "bfloat16",
}
_LATIN_WORD = re.compile(r"(?<![A-Za-z_])[A-Za-z]{3,}(?![A-Za-z_])")
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def texts(fig) -> list[str]:
    """Every piece of text a reader of ``fig`` sees or hears."""
    layout = fig.layout
    out = [layout.title.text or ""]
    for key in layout:
        if re.fullmatch(r"[xy]axis\d*", key) and layout[key].title.text:
            out.append(layout[key].title.text)
    out += [a.text or "" for a in layout.annotations or ()]
    for slider in layout.sliders or ():
        out.append(slider.currentvalue.prefix or "")
        for step in slider.steps:
            out.append(step.label or "")
            if len(step.args) > 1 and isinstance(step.args[1], dict):
                title = step.args[1].get("title")
                out.append(title.get("text", "") if isinstance(title, dict) else str(title or ""))
    for trace in fig.data:
        out += [trace.name or "", getattr(trace, "hovertemplate", None) or ""]
        if getattr(trace, "legendgrouptitle", None) is not None and trace.legendgrouptitle.text:
            out.append(trace.legendgrouptitle.text)
        if trace.type == "heatmap" and trace.colorbar.title.text:
            out.append(trace.colorbar.title.text)
        if trace.type == "scatter" and trace.mode and "text" in trace.mode:
            out += [str(t) for t in trace.text or ()]
    out += [description(fig), re.sub(r"<[^>]*>", " ", data_tables(fig))]  # cells apart
    return [plain(t) for t in out if t]


def english_words(text: str) -> list[str]:
    text = re.sub(r"%\{[^}]*\}", " ", text)  # plotly's hover placeholders
    text = re.sub(r"<[^>]*>", " ", text)
    text = re.sub(r"\b(data|sd|kind|traces|xy|histogram|heatmap|scope|row|col|class|hidden|step|slider)-?", " ", text)
    return [w for w in _LATIN_WORD.findall(text) if w not in ALLOWED]


def machine_labels() -> list[str]:
    """The lines naming the machine and the model pair of each committed results file, and the machine of each
    shapes file (data, not words)."""
    from specdec_lite.llm import measure_pair, shape_costs

    results = measure_pair.load_results()
    return (
        [plain(measure_pair.results_label(r)) for r in results]
        + [plain(measure_pair.results_panel_title(r)) for r in results]
        + [plain(shape_costs.panel_label(r)) for r in shape_costs.load_shape_results()]
    )


@pytest.fixture(scope="module", params=["zh_CN", "en"])
def built(request):
    """``(language, [(figure name, its texts)], the round picture)``, all made in that language."""
    mp = pytest.MonkeyPatch()
    mp.setenv(_i18n.ENV, request.param)
    labels = machine_labels()
    figs = []
    for name, fig in figure_gallery.figures(quick=True):
        found = texts(fig)
        for label in labels:
            found = [t.replace(label, "") for t in found]
        figs.append((name, found))
    svg = figure_gallery.round_pictures()
    mp.undo()
    return request.param, figs, svg


def test_every_figure_speaks_the_language_it_was_made_in(built):
    lang, figs, svg = built
    assert len(figs) >= 20
    problems = []
    for name, found in figs:
        for text in found:
            if lang == "zh_CN":
                words = english_words(text)
                if words:
                    problems.append(f"{name}: English {words[:5]} in {text[:90]!r}")
            elif _CJK.search(text):
                problems.append(f"{name}: Chinese in {text[:90]!r}")
    svg_text = " ".join(re.findall(r">([^<]+)<", svg)) + " " + re.search(r'aria-label="([^"]*)"', svg)[1]
    if lang == "zh_CN":
        words = english_words(svg_text)
        if words:
            problems.append(f"round picture: English {sorted(set(words))}")
    elif _CJK.search(svg_text):
        problems.append("round picture: Chinese in the English picture")
    assert not problems, "\n".join(problems[:40])


def test_the_scan_sees_english_and_chinese():
    """The checks above are not blind: an English title is caught in Chinese, a Chinese one in English."""
    assert english_words("草稿质量 = 0.50; observed frequency") == ["observed", "frequency"]
    assert english_words("TV(p, q) = 0.3；晴、雨 和 Decoding-OPT") == []
    assert english_words("晴、rain 和 风") == ["rain"]
    assert _CJK.search("draft quality 草稿")


#: Latin words of the Performance page (book/performance.md) that its Chinese edition keeps: units, the machine's
#: and the software's names, tools, and the samplers' settings (``eps=0.05, rejection_law=opt``, ``mode full``).
PERFORMANCE_ALLOWED = {
    "CPU",
    "AMD",
    "EPYC",
    "GiB",
    "MiB",
    "BLAS",
    "UTC",
    "numpy",
    "scipy",
    "torch",
    "transformers",
    "Python",
    "tracemalloc",
    "CDF",
    "eps",
    "opt",
    "full",
}


def performance_texts() -> list[tuple[str, str]]:
    """``(where, text)`` for every text of the Performance page's figures, tables and sentences, made now."""
    from specdec_lite.bench import report

    results = report.load()
    found = [(name, text) for name, fig in report.figures(results).items() for text in texts(fig)]
    for name in (
        "machine_table",
        "samplers_table",
        "scaling_table",
        "memory_table",
        "memory_per_engine_table",
        "widgets_table",
        "llm_table",
        "llm_rows_table",
    ):
        found.append((name, str(getattr(report, name)(results))))
    sentences = [
        *report.headlines(results),
        *report.growth_sentences(results),
        report.floor_explanation(results),
        report.no_speedup(results),
    ]
    return found + [("sentences", s) for s in sentences]


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_the_performance_page_speaks_the_language_it_was_made_in(monkeypatch, language):
    """The figures and tables of the committed benchmark results: the names results.json keys (samplers, cases,
    methods, the real-model summary) shown in Chinese in the Chinese edition, the English left as the JSON has it."""
    monkeypatch.setenv(_i18n.ENV, language)
    found = performance_texts()
    assert len(found) >= 12
    if language == "zh_CN":
        problems = [
            (where, w, text[:90])
            for where, text in found
            if (w := [x for x in english_words(text) if x not in PERFORMANCE_ALLOWED])
        ]
    else:
        problems = [(where, text[:90]) for where, text in found if _CJK.search(text)]
    assert not problems, "\n".join(map(str, problems[:40]))
