"""A figure's description and data tables (``specdec_lite.figure_data``), read back with an HTML parser."""

import re
from html.parser import HTMLParser

import numpy as np
import plotly.graph_objects as go

from specdec_lite import figure_data as fd
from specdec_lite.plotting import slider_figure


class Tables(HTMLParser):
    """Every <table> as {attrs, caption, head, rows (data-i, cells)}, and every step block's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.steps: list[dict] = []
        self.cell: list[str] | None = None
        self.where = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "sd-step-data":
            self.steps.append(a)
        elif tag == "table":
            self.tables.append({"attrs": a, "caption": "", "head": [], "rows": [], "step": len(self.steps) - 1})
        elif tag == "caption":
            self.where = "caption"
        elif tag == "thead":
            self.where = "head"
        elif tag == "tbody":
            self.where = "body"
        elif tag == "tr" and self.where == "body":
            self.tables[-1]["rows"].append((int(a["data-i"]), []))
        elif tag in ("th", "td"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self.cell is not None:
            text = "".join(self.cell)
            if self.where == "head":
                self.tables[-1]["head"].append(text)
            else:
                self.tables[-1]["rows"][-1][1].append(text)
            self.cell = None
        elif tag == "caption":
            self.where = ""

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        elif self.where == "caption":
            self.tables[-1]["caption"] += data


def parse(html: str) -> Tables:
    p = Tables()
    p.feed(html)
    return p


def test_traces_that_share_x_share_a_table_rounded_to_four_digits():
    x = [0.5, 1.5, 2.5]
    fig = go.Figure(
        [
            go.Scatter(x=x, y=[1 / 3, 2 / 3, 1.0], name="a <b>bold</b> name"),
            go.Scatter(x=x, y=[10, 20, 30], name="b"),
            go.Bar(x=["u", "v"], y=[0.123456, 7], name="bars"),
        ],
        layout=dict(xaxis_title="tokens", title="t"),
    )
    t = parse(fd.data_tables(fig)).tables
    assert [tab["attrs"]["data-sd-traces"] for tab in t] == ["0,1", "2"]
    assert t[0]["head"] == ["tokens", "a bold name", "b"]
    assert t[0]["rows"] == [(0, ["0.5", "0.3333", "10"]), (1, ["1.5", "0.6667", "20"]), (2, ["2.5", "1", "30"])]
    assert t[1]["rows"] == [(0, ["u", "0.1235"]), (1, ["v", "7"])]
    assert "<b>" not in fd.data_tables(fig), "names are plain text, not plotly's markup"


def test_rounding_error_on_a_linear_axis_reads_as_zero_and_a_log_axis_keeps_every_magnitude():
    # a loss that is 0 up to rounding (float32: 6e-10; float64: 5.6e-17), beside losses of order 0.1 on its
    # axis; a one-point trace takes the scale of its axis, not its own
    fig = go.Figure(
        [
            go.Scatter(x=[0.0, 0.5, 1.0], y=[6.2e-10, 0.05, 0.14], name="opt"),
            go.Scatter(x=[0.25], y=[5.551e-17], name="one point"),
            go.Scatter(x=[1.0, 2.0], y=[1e-12, 1.0], name="tail", yaxis="y2"),
        ],
        layout=dict(yaxis2=dict(type="log", overlaying="y")),
    )
    opt, one, tail = parse(fd.data_tables(fig)).tables
    assert opt["rows"][0] == (0, ["0", "0"]) and opt["rows"][2] == (2, ["1", "0.14"])
    assert one["rows"] == [(0, ["0.25", "0"])]
    assert tail["rows"][0] == (0, ["1", "1e-12"]), "on a log axis a small value is data"
    assert fd.column([3e-8, 1.0]) == ["3e-08", "1"] and fd.column([3e-9, 1.0], scale=0) == ["3e-09", "1"]
    assert fd.column([5e-9, 1.0]) == ["0", "1"]


def test_a_long_trace_is_thinned_evenly_keeping_its_ends():
    n = 1001
    fig = go.Figure(go.Scatter(x=np.arange(n), y=np.arange(n) ** 2.0, name="sq"))
    (t,) = parse(fd.data_tables(fig)).tables
    rows = t["rows"]
    assert len(rows) == fd.MAX_ROWS and rows[0][0] == 0 and rows[-1][0] == n - 1
    steps = np.diff([i for i, _ in rows])
    assert steps.min() >= 16 and steps.max() <= 17, "evenly spaced"
    for i, (x, y) in rows:
        assert int(x) == i and abs(float(y) - i**2) <= 5e-4 * i**2
    # the caption as read: its no-break spaces (a number stays with the word before it) read as spaces
    assert f"{fd.MAX_ROWS} of its {n} plotted points" in t["caption"].replace("\u00a0", " ")


def test_a_lone_trace_is_headed_by_its_quantity_and_named_with_its_panel_in_the_caption():
    from specdec_lite.figures.part2 import panel_layout

    layout = panel_layout(["left", "right"])
    layout["yaxis2"]["title"] = "bias TV(P<sup>A</sup>, q)"
    fig = go.Figure(
        [
            go.Scatter(x=[0, 1], y=[1, 2], name="a"),
            go.Scatter(x=[0, 1], y=[3, 4], name="b", error_y=dict(type="data", array=[0.1, 0.2])),
            go.Scatter(x=[0.5, 1], y=[0.2, 0.1], name="front", xaxis="x2", yaxis="y2"),
        ],
        layout=layout,
    )
    html = fd.data_tables(fig)
    shared, lone = parse(html).tables
    assert shared["head"][1:] == ["a", "b", "b: ± (error bar)"]
    assert shared["rows"][1] == (1, ["1", "2", "4", "0.2"])
    assert lone["head"][1] == "bias TV(PA,\u00a0q)" and lone["caption"] == "right: front"
    assert "TV(P<sup>A</sup>,\u00a0q)" in html, "the superscript is set as the plot sets it, the formula kept whole"


def test_a_header_keeps_its_formulas_whole():
    """No line break inside a relation, an operator or a short bracketed formula; elsewhere a header may wrap."""
    nb = "\u00a0"
    assert fd.glued("after a rejection: TV·[q − p]₊") == f"after a rejection: TV·[q{nb}−{nb}p]₊"
    assert fd.glued("T = 50, min(1, q/p)") == f"T{nb}={nb}50, min(1,{nb}q/p)"
    assert fd.glued("running mean of the number of rejections") == "running mean of the number of rejections"
    # a nested formula stays whole, a phrase in brackets breaks between its words
    assert fd.glued("b = min(1, max(0, (q + ε)/p))") == f"b{nb}={nb}min(1,{nb}max(0,{nb}(q{nb}+{nb}ε)/p))"
    assert fd.glued("TV(P<sup>A</sup>, q)") == f"TV(P<sup>A</sup>,{nb}q)"
    assert fd.glued("sequence (the 40 most likely)") == f"sequence (the{nb}40 most likely)"


def test_a_trace_without_x_is_listed_by_point():
    (t,) = parse(fd.data_tables(go.Figure(go.Scatter(y=[3, 1, np.nan], name="s")))).tables
    assert t["head"] == ["point", "s"] and t["rows"] == [(0, ["0", "3"]), (1, ["1", "1"]), (2, ["2", "–"])]


def test_a_heatmap_lists_its_cells_by_row_and_column():
    z = np.arange(12.0).reshape(3, 4) / 7
    fig = go.Figure(go.Heatmap(x=[1, 2, 3, 4], y=[10, 20, 30], z=z), layout=dict(xaxis_title="α", yaxis_title="c"))
    (t,) = parse(fd.data_tables(fig)).tables
    assert t["attrs"]["data-sd-kind"] == "heatmap" and t["head"] == ["c \\ α", "1", "2", "3", "4"]
    assert [r[1][0] for r in t["rows"]] == ["10", "20", "30"]
    assert [float(c) for c in t["rows"][2][1][1:]] == [float(f"{v:.4g}") for v in z[2]]
    big = go.Figure(go.Heatmap(z=np.ones((100, 80))))
    (tb,) = parse(fd.data_tables(big)).tables
    assert len(tb["rows"]) == fd.MAX_ROWS and len(tb["head"]) == fd.MAX_COLUMNS + 1


def test_a_histogram_counts_every_value():
    x = np.random.default_rng(0).normal(size=500)
    (t,) = parse(fd.data_tables(go.Figure(go.Histogram(x=x, nbinsx=12)))).tables
    assert len(t["rows"]) == 12 and sum(int(r[1][1]) for r in t["rows"]) == 500


def test_a_slider_figure_has_one_set_of_tables_per_step_and_shows_the_active_one():
    steps = [
        (f"{e:g}", [go.Scatter(x=[0, 1], y=[e, 2 * e], name="line"), go.Bar(x=[0, 1], y=[1, e], name="bar")], None)
        for e in (0.1, 0.2, 0.3)
    ]
    fig = slider_figure(steps, label="ε", active=1, layout=dict(title="a slider"))
    p = parse(fd.data_tables(fig))
    assert [s["data-sd-step"] for s in p.steps] == ["0", "1", "2"]
    assert ["hidden" in s for s in p.steps] == [True, False, True]
    tables = p.tables
    assert [(t["step"], t["attrs"]["data-sd-traces"]) for t in tables] == [(0, "0,1"), (1, "2,3"), (2, "4,5")]
    assert tables[2]["rows"] == [(0, ["0", "0.3", "1"]), (1, ["1", "0.6", "0.3"])]
    assert "<p>ε = 0.1</p>" in fd.data_tables(fig)


def test_the_description_names_title_axes_traces_and_slider():
    steps = [(s, [go.Scatter(x=[0], y=[1], name=f"<i>curve</i> {s}")], None) for s in ("a", "b")]
    fig = slider_figure(
        steps, label="K", layout=dict(title="Title<br><sup>sub</sup>", xaxis_title="x", yaxis_title="y")
    )
    assert fd.description(fig) == (
        "Title sub. Horizontal axis: x; vertical axis: y. Shows curve a. "
        "A slider sets K (2 steps, from K = a to K = b)."
    )
    assert fd.description(go.Figure()) == "A plot."


def test_a_column_that_traces_share_stands_once():
    """Two curves over the same x that list the same ε: one column "ε", not one per curve."""
    eps = {"columns": {"ε": [0.0, 0.1, 0.2]}}
    fig = go.Figure(
        [
            go.Scatter(x=[0.3, 0.2, 0.1], y=[0.0, 0.1, 0.2], name="OPT", meta=eps),
            go.Scatter(x=[0.3, 0.2, 0.1], y=[0.1, 0.2, 0.3], name="UNO", meta=eps),
        ]
    )
    (table,) = parse(fd.data_tables(fig)).tables
    assert table["head"][1:] == ["OPT", "UNO", "ε"]
    assert table["rows"][1] == (1, ["0.2", "0.1", "0.2", "0.1"])


def test_a_header_is_as_wide_as_its_longest_word_and_breaks_only_between_words():
    """A Chinese header breaks after a particle, not inside a word ("被接受的草" over "稿："), and its column is at
    least as wide as its longest piece: a Chinese character an em, a Latin one about half."""
    from specdec_lite.figure_data import _header

    cell = _header("被接受的草稿：")
    assert "被接受的\u200b草稿：" in cell
    assert float(re.search(r"min-width:([\d.]+)em", cell).group(1)) >= 4 + 0.8  # four characters and the padding
    assert float(re.search(r"min-width:([\d.]+)em", _header("E[N_rej]")).group(1)) >= 8 * 0.55 + 0.8


def test_words_that_every_trace_name_ends_in_are_said_once_in_the_caption():
    x = [1, 2]
    fig = go.Figure(
        [
            go.Scatter(
                x=x, y=[1.0, 2.0], name="Algorithm 4: Monte Carlo (200 runs, ±2 SE)", error_y=dict(array=[1, 2])
            ),
            go.Scatter(x=x, y=[3.0, 4.0], name="draft tree: Monte Carlo (200 runs, ±2 SE)", error_y=dict(array=[3, 4])),
        ],
        layout=dict(yaxis_title="rejections"),
    )
    (t,) = parse(re.sub("[\u00a0\u200b]", lambda m: " " if m[0] == "\u00a0" else "", fd.data_tables(fig))).tables
    assert t["head"][1:3] == ["Algorithm 4", "draft tree"]
    assert t["head"][3] == "Algorithm 4: ± (error bar)"
    assert t["caption"].count("Monte Carlo (200 runs, ±2 SE)") == 1, t["caption"]
    assert t["caption"].startswith("rejections, Monte Carlo") and "half-width" not in t["caption"]
    # a shared value is not words: "…: 0.00" stays in each name
    fig = go.Figure(
        [go.Scatter(x=x, y=[1.0, 1.0], name="limit: 0.00"), go.Scatter(x=x, y=[2.0, 2.0], name="one: 0.00")]
    )
    (t,) = parse(fd.data_tables(fig)).tables
    assert t["head"][1:] == ["limit: 0.00", "one: 0.00"]


def test_a_note_in_brackets_heads_no_column_and_a_short_header_stands_for_a_long_name():
    x = ["a", "b"]
    fig = go.Figure(
        [
            go.Bar(x=x, y=[0.4, 0.6], name="speculative (Monte Carlo)"),
            go.Scatter(x=x, y=[0.5, 0.5], name="q (bars: 2 SE)", error_y=dict(array=[0.01, 0.02])),
            go.Scatter(x=x, y=[1.0, 0.5], name="b = min(1, max(0, (q + e)/p))", meta={"header": "rule b"}),
        ]
    )
    (t,) = parse(fd.data_tables(fig).replace("\u00a0", " ").replace("\u200b", "")).tables
    # the trace with error bars: "q" over its values, "q: ± (error bar)" over its bars; the caption keeps the note
    assert t["head"][1:] == ["speculative (Monte Carlo)", "q", "rule b", "q: ± (error bar)"]
    assert "q (bars: 2 SE)" in t["caption"] and "rule b" in t["caption"] and "half-width" not in t["caption"]


def test_a_shaded_region_lists_a_band_by_its_edges_and_an_outline_by_its_corners_each_once():
    band = go.Scatter(x=[0, 1, 2, 2, 1, 0], y=[0.1, 0.2, 0.3, 0.5, 0.6, 0.7], fill="toself", name="band")
    (t,) = parse(fd.data_tables(go.Figure(band))).tables
    assert t["head"][1:] == ["lower edge", "upper edge"]
    assert t["rows"] == [(0, ["0", "0.1", "0.7"]), (1, ["1", "0.2", "0.6"]), (2, ["2", "0.3", "0.5"])]
    # a closed triangle (it ends where it starts): three corners, not four
    tri = go.Scatter(x=[0, 0.3, 0, 0], y=[0, 0, 0.3, 0], fill="toself", name="unattainable")
    (t,) = parse(fd.data_tables(go.Figure(tri))).tables
    assert "corners" in t["caption"] and [r[1] for r in t["rows"]] == [["0", "0"], ["0.3", "0"], ["0", "0.3"]]
    # an open outline keeps every point
    (t,) = parse(fd.data_tables(go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 0], fill="toself")))).tables
    assert len(t["rows"]) == 3


def test_stacked_bars_are_listed_in_their_legends_order():
    """plotly lists stacked bars' legend entries last trace first (the top of the stack first): so do the columns."""
    bars = [go.Bar(x=[0, 1], y=[1, 2], name=n) for n in ("shared", "p above q", "q above p")]
    (t,) = parse(fd.data_tables(go.Figure(bars, layout=dict(barmode="stack")))).tables
    assert t["head"][1:] == ["q above p", "p above q", "shared"]
    (t,) = parse(fd.data_tables(go.Figure(bars, layout=dict(barmode="group")))).tables
    assert t["head"][1:] == ["shared", "p above q", "q above p"]
    # markers beside stacked bars (Fig 2.3): plotly reverses the whole legend, so the table reverses them too
    marks = [go.Scatter(x=[0, 1], y=[1, 2], mode="markers", name=n) for n in ("draft p", "target q")]
    (t,) = parse(fd.data_tables(go.Figure(bars[:2] + marks, layout=dict(barmode="stack")))).tables
    assert t["head"][1:] == ["target q", "draft p", "p above q", "shared"]
