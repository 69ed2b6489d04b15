"""How the book emits plotly figures (``specdec_lite.plotting``); the browser test checks what they do."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest

from specdec_lite import plotting

ROOT = Path(__file__).resolve().parents[1]


def figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[0, 1], y=[1, 0], name="a line"), layout=dict(title="a title"))


def test_book_html_carries_only_an_init_call_for_its_own_figure():
    html = plotting.book_html(figure())
    div = re.search(r'<div id="([^"]+)" class="plotly-graph-div"', html)[1]
    assert f'window.sdFigures.init("{div}", {plotting.NARROW_PX})' in html, "the script must set up this figure"
    assert "{plot_id}" not in html and "function wrapLine" not in html, "the figure script is loaded once per page"
    assert "plotly.min.js" not in html and "cdn.plot.ly" not in html, "plotly.js comes from the book's _static"
    assert '"responsive": true' in html and '"displayModeBar": false' in html
    desc = re.search(r'<p class="sd-figure-desc sd-visually-hidden" id="([^"]+)">([^<]*)</p>', html)
    assert desc[1] == f"{div}-desc" and desc[2] == "a title. Shows a line."
    summary = '<summary data-sd-numbered="Data of {number}">Data of this figure</summary>'
    assert f'<details class="sd-figure-data">{summary}' in html


def test_show_in_the_book_build_emits_that_html(monkeypatch):
    shown = []
    monkeypatch.setenv(plotting.BOOK_BUILD_ENV, "1")
    monkeypatch.setattr("IPython.display.display", shown.append)
    plotting.show(figure())
    assert len(shown) == 1 and "window.sdFigures.init(" in shown[0].data and "sd-figure-data" in shown[0].data
    assert "function wrapLine" not in shown[0].data


def displayed_html(shown: list) -> list[str]:
    """The HTML of everything ``display`` got (IPython objects, or plotly's raw mime bundles)."""
    out = []
    for item in shown:
        data = getattr(item, "data", item)
        out.append(data.get("text/html", "") if isinstance(data, dict) else str(data))
    return out


@pytest.fixture
def notebook(monkeypatch):
    """A real IPython shell, outside the book build, with a plotly renderer that writes HTML."""
    import plotly.io as pio
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.delenv(plotting.BOOK_BUILD_ENV, raising=False)
    monkeypatch.setattr(plotting, "_assets_shown_at", None)
    monkeypatch.setattr(pio.renderers, "default", "notebook_connected")
    shown: list = []
    monkeypatch.setattr("IPython.display.display", lambda *objs, **kw: shown.extend(objs))
    shell = InteractiveShell.instance()
    yield shell, shown
    InteractiveShell.clear_instance()


def test_the_figure_script_is_shown_once_per_kernel(notebook):
    shell, shown = notebook
    shell.execution_count = 3
    plotting.show(figure())
    first = displayed_html(shown)
    scripts = [h for h in first if "window.sdFigures = {" in h]
    assert len(scripts) == 1 and 'id="sd-figures-css"' in scripts[0], "the first figure brings the script"
    assert first.index(scripts[0]) < next(i for i, h in enumerate(first) if 'window.sdFigures.init("' in h)
    assert any("sd-figure-data" in h for h in first), "the data tables follow the figure"
    shown.clear()
    shell.execution_count = 4
    plotting.show(figure())
    again = displayed_html(shown)
    assert not any("window.sdFigures = {" in h for h in again) and any('window.sdFigures.init("' in h for h in again)


def test_in_colab_the_script_is_shown_once_per_cell(notebook, monkeypatch):
    import types

    shell, shown = notebook
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    counts = []
    for cell in (1, 1, 2):  # two figures in one cell (one output frame), then one in the next
        shell.execution_count = cell
        shown.clear()
        plotting.show(figure())
        counts.append(sum("window.sdFigures = {" in h for h in displayed_html(shown)))
    assert counts == [1, 0, 1]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_figure_script_runs_twice_without_defining_itself_again(tmp_path):
    """Valid JavaScript, and a second copy (a re-run cell) keeps the first one's state."""
    script = tmp_path / "twice.js"
    js = plotting.FIGURES_JS.read_text()
    script.write_text(
        "var window = {}; var document = {};\n"
        + js
        + "\nvar first = window.sdFigures;\n"
        + js
        + '\nif (window.sdFigures !== first || typeof first.init !== "function") throw new Error("defined again");\n'
    )
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "function narrowScreen(gd, NARROW)" in js, "the narrow-screen layout lives in the figure script"


def test_the_figure_script_and_styles_are_package_data():
    import fnmatch

    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = declared["specdec_lite.figures"]
    for path in (plotting.FIGURES_JS, plotting.FIGURES_CSS):
        assert path.is_file() and any(fnmatch.fnmatch(path.name, p) for p in patterns), path


def test_the_book_serves_the_figure_script_once_per_page(tmp_path):
    """A real Sphinx build with the book's extension: the files land in _static, each page loads them once."""
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\nextensions = ['plotly_offline']\n"
    )
    (src / "index.rst").write_text("A page\n======\n\nText.\n")
    out = tmp_path / "out"
    Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None, warning=None).build()
    page = (out / "index.html").read_text()
    assert page.count('src="_static/sd-figures.js') == 1 and page.count('href="_static/sd-figures.css') == 1
    assert page.index("plotly.min.js") < page.index("sd-figures.js"), "the figure script needs plotly first"
    assert (out / "_static" / "sd-figures.js").read_text() == plotting.FIGURES_JS.read_text()
    assert (out / "_static" / "sd-figures.css").read_text() == plotting.FIGURES_CSS.read_text()


def test_stack_puts_each_figure_in_its_own_panel_with_its_lines():
    import plotly.graph_objects as go

    from specdec_lite.plotting import stack

    def one(name: str, level: float) -> go.Figure:
        fig = go.Figure(go.Scatter(x=[1, 2], y=[level, level + 1], name=name))
        fig.add_hline(y=level, annotation_text="floor")
        fig.update_layout(title=f"panel {name}", xaxis_title="K", yaxis_type="log", height=300)
        return fig

    parts = [one("a", 1.0), one("a", 2.0)]
    out = stack(parts)
    assert [t.yaxis for t in out.data] == ["y", "y2"] and [t.showlegend for t in out.data] == [None, False]
    assert [(s.xref, s.yref, s.y0) for s in out.layout.shapes] == [("x domain", "y", 1.0), ("x2 domain", "y2", 2.0)]
    assert out.layout.yaxis2.type == "log" and out.layout.xaxis2.title.text == "K" and out.layout.height == 600
    assert [a.text for a in out.layout.annotations if a.xref == "paper"] == ["panel a", "panel a"]
    named = stack(parts, titles=["first", "second"], title="both")
    assert [a.text for a in named.layout.annotations if a.xref == "paper"] == ["first", "second"]
    assert named.layout.title.text == "both"
    with pytest.raises(ValueError, match="titles"):
        stack(parts, titles=["only one"])
    assert parts[1].layout.shapes[0].yref == "y"  # the source figures are left as they were
    with pytest.raises(ValueError, match="figures"):
        stack([])


# --- slider steps as plotly.js 4 reads them ---


def title_problems(figure: dict) -> list[str]:
    """What plotly.js 4 would not read in the layout each step, button and frame of ``figure`` (plotly's
    JSON) sets: a title given as a bare string anywhere (``title``, ``xaxis.title``: plotly.js 4 takes it
    for no title), and a figure title set other than through ``title.text`` (a title object given whole
    replaces the layout's own, dropping its ``x`` and font)."""
    out = []

    def bare(where: str, value: object, path: str = "") -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                name = f"{path}.{key}" if path else key
                if (key == "title" or key.endswith(".title")) and isinstance(inner, str):
                    out.append(f"{where} sets {name} to the bare string {inner!r}")
                bare(where, inner, name)

    layout = figure["layout"]
    moves = [
        (f"slider {k} step {i}", step)
        for k, slider in enumerate(layout.get("sliders", []))
        for i, step in enumerate(slider.get("steps", []))
    ]
    moves += [
        (f"menu {k} button {i}", button)
        for k, menu in enumerate(layout.get("updatemenus", []))
        for i, button in enumerate(menu.get("buttons", []))
    ]
    for where, move in moves:
        args = move.get("args") or []
        sets = (args[1] if move.get("method") == "update" and len(args) > 1 else args[0] if args else {}) or {}
        if move.get("method") in ("update", "relayout") and isinstance(sets, dict):
            bare(where, sets)
            if "title" in sets:
                out.append(f"{where} sets the title as a whole object, not title.text: {sets['title']!r}")
    for i, frame in enumerate(figure.get("frames", [])):
        bare(f"frame {i}", frame.get("layout", {}))
    return out


def steps_set_titles(figure: dict) -> bool:
    """Every step of every slider of ``figure`` sets ``title.text``."""
    steps = [step for slider in figure["layout"].get("sliders", []) for step in slider["steps"]]
    return bool(steps) and all("title.text" in step["args"][1] for step in steps)


def test_a_steps_title_is_set_as_plotlyjs_4_reads_it_and_keeps_the_layouts_x_and_font():
    import plotly.graph_objects as go

    steps = [
        ("a", [go.Bar(y=[1, 2])], {"title": "T = 1"}),
        ("b", [go.Bar(y=[2, 1])], {"title": {"text": "T = <b>2</b>", "font": {"size": 18}}, "xaxis_title": "x"}),
        ("c", [go.Bar(y=[1, 1])], {"title_text": "T = 3", "yaxis": {"title": "y", "range": [0, 2]}}),
        ("d", [go.Bar(y=[0, 1])], None),
    ]
    fig = plotting.slider_figure(steps, label="s", layout={"title": {"x": 0.3, "font": {"size": 20}}}, active=1)
    args = [step.args[1] for step in fig.layout.sliders[0].steps]
    assert args == [
        {"title.text": "T = 1"},
        {"title.text": "T = <b>2</b>", "title.font.size": 18, "xaxis.title.text": "x"},
        {"title.text": "T = 3", "yaxis.title.text": "y", "yaxis.range": [0, 2]},
        {},
    ]
    # the active step's title, merged into the layout's: its x stays, its size is the step's
    assert (fig.layout.title.text, fig.layout.title.x, fig.layout.title.font.size) == ("T = <b>2</b>", 0.3, 18)
    assert not title_problems(fig.to_plotly_json())
    assert plotting.relayout_args({"annotations": [{"text": "n", "x": 1}]}) == {
        "annotations": [{"text": "n", "x": 1}]
    }, "a list is set whole"
    with pytest.raises(ValueError, match="height"):
        plotting.relayout_args({"height": 3})  # validated by plotly, as the layout itself is


def test_the_title_check_finds_what_plotlyjs_4_does_not_read():
    """``title_problems`` fails the forms that lost the book's titles (a step's ``{"title": "..."}``)."""
    figure = {
        "layout": {
            "sliders": [{"steps": [{"method": "update", "args": [{}, {"title": "T = 1"}]}]}],
            "updatemenus": [
                {"buttons": [{"method": "relayout", "args": [{"title": {"text": "T = 2"}, "xaxis": {"title": "x"}}]}]}
            ],
        },
        "frames": [{"layout": {"yaxis.title": "y"}}],
    }
    found = "\n".join(title_problems(figure))
    assert "slider 0 step 0 sets title to the bare string 'T = 1'" in found
    assert "menu 0 button 0 sets xaxis.title to the bare string 'x'" in found
    assert "menu 0 button 0 sets the title as a whole object" in found
    assert "frame 0 sets yaxis.title to the bare string 'y'" in found
    assert not steps_set_titles(figure)


def _slider_figures() -> dict[str, object]:
    """One small figure from each function of ``specdec_lite.figures`` that builds a slider figure."""
    import numpy as np

    from specdec_lite.figures import batch, lookahead, part1, part2

    q, other = np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.2, 0.7])
    p4, q4 = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    return {
        "tv_slider_figure": part1.tv_slider_figure(q, other, qualities=[0.0, 1.0]),
        "split_slider_figure": part1.split_slider_figure(q, other, qualities=[0.0, 0.5]),
        "figure2_slider": part1.figure2_slider(V=3, T=4, runs=50, qualities=(0.0, 0.5), seed=1),
        "quality_sweep_slider": part1.quality_sweep_slider(V=3, Ts=(2, 3), qualities=[0.0, 1.0], seed=1, active=1),
        "sweep_figure": part2.sweep_figure(part2.token_sweep(p4, q4), float(np.abs(p4 - q4).sum() / 2), "one token"),
        "epsilon_slider_figure": part2.epsilon_slider_figure(p4, q4),
        "tree_vs_batch_slider": batch.tree_vs_batch_slider((0.0, 0.5), V=3, T=4, M_max=4),
        "best_k_slider_figure": lookahead.best_k_slider_figure([0.5], [0.0, 0.2], K_max=4, V=3, T=4),
    }


def test_every_slider_figure_of_the_book_sets_each_steps_title_as_plotlyjs_4_reads_it():
    """Each figure builder that makes a slider (found in the source, so a new one is not missed): every step
    sets ``title.text`` (the figure's live number), and nothing in it is a bare-string title."""
    import ast

    builders = set()
    for path in (ROOT / "specdec_lite").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name != "slider_figure":
                called = {
                    getattr(c.func, "id", getattr(c.func, "attr", None))
                    for c in ast.walk(node)
                    if isinstance(c, ast.Call)
                }
                if "slider_figure" in called:
                    builders.add(node.name)
    figures = _slider_figures()
    assert builders == set(figures), f"add a small call of each slider builder here: {builders ^ set(figures)}"
    for name, fig in figures.items():
        figure = fig.to_plotly_json()
        assert not title_problems(figure), f"{name}: {title_problems(figure)}"
        assert steps_set_titles(figure), f"{name}: a step does not set title.text"


def test_a_figures_own_narrow_layout_rides_in_its_meta_as_relayout_paths():
    """``narrow_layout`` stores what ``figures.js`` applies below ``NARROW_PX``: dotted paths, merged, the
    authored layout left as it was; the script reads it there."""
    fig = plotting.narrow_layout(figure(), height=800, xaxis=dict(domain=[0, 1]))
    plotting.narrow_layout(fig, yaxis=dict(domain=[0.5, 1]))
    assert fig.layout.meta == {"narrow": {"height": 800, "xaxis.domain": [0, 1], "yaxis.domain": [0.5, 1]}}
    assert fig.layout.height is None and fig.layout.xaxis.domain is None
    assert "L.meta.narrow" in plotting.FIGURES_JS.read_text(encoding="utf-8")


def test_a_tall_legend_below_the_plot_keeps_its_gap_once_plotly_widens_the_margin():
    """Six rows of legend push the bottom margin past its 80 pixels and shrink the plot: the legend's place,
    a fraction of the plot's height, is taken of the shrunk plot, so the gap in pixels stays 74."""
    assert plotting.legend_below(500)["y"] == pytest.approx(-74 / 320)
    six = plotting.legend_below(500, rows=6)["y"]
    plot = 500 - 100 - 74 - 6 * plotting.LEGEND_ROW_PX
    assert six == pytest.approx(-74 / plot)


def test_a_wrapped_title_keeps_formulas_and_a_name_with_its_number_on_one_line():
    wrapped = plotting.wrap_text("CPU (AMD EPYC); float32; torch 2.13.0+cpu; TV(p, q) = 0.3; 上下文 64", 20)
    assert "torch\u00a02.13.0+cpu" in wrapped and "TV(p,\u00a0q)\u00a0=\u00a00.3" in wrapped
    assert "上下文\u00a064" in wrapped and wrapped.count("<br>") >= 2
    assert "52.7\u00a0次" in plotting.wrap_text("调用次数；平均 52.7 次；" * 3, 20)


def test_the_figure_scripts_wrapped_titles_keep_formulas_whole_and_leave_no_lone_chinese_character(tmp_path):
    """figures.js's wrapping on a phone, run in node: the same no-break spaces as ``wrap_text``, and a last line of
    one Chinese character takes the one before it along."""
    js = plotting.FIGURES_JS.read_text()
    helpers = js[js.index("    var WIDE = ") : js.index("    function wrap(text, px)")]
    script = tmp_path / "wrap.js"
    script.write_text(
        helpers
        + "\nvar out = [glued('TV(p, q) = 0.300 and torch 2.13.0+cpu'),"
        + " wrapLine('长度 T = 50 的整条序列，精确值', 28), wrapLine(glued('形状 a → b，上下文 64'), 16),"
        + " wrapLine(glued('TV(p, q) = 0.316 = 橙色概率质量 = 蓝色概率质量 = 1 − 灰色概率质量'), 40),"
        + " glued('平均 52.7 次调用，K = 4 时（UNO − OPT = 0.067）'),"
        + " wrapLine(glued('ε = 0.1：有偏（ε 在 q < p 处抬高了 b）'), 12),"
        + " wrapLine(glued('biased where q < p and <b>x > y</b> E[N<sub>rej</sub>] = 2'), 14)];"
        + "\nconsole.log(JSON.stringify(out));\n"
    )
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json

    formula, chinese, context, chain, measure, less_zh, less_en = json.loads(proc.stdout)
    # a "<" that opens no tag is text: it stays, glued to its two sides; the tags stay tags, each line closing its own
    assert "q\u00a0<\u00a0p" in less_zh.replace("<br>", ""), less_zh
    assert "q\u00a0<\u00a0p" in less_en and "<b>x\u00a0>\u00a0y</b>" in less_en.replace("<br>", ""), less_en
    assert "N<sub>rej</sub>" in less_en, less_en
    assert "52.7\u00a0次" in measure and "4\u00a0时" in measure, measure  # a number keeps its measure word
    assert "UNO\u00a0−\u00a0OPT\u00a0=\u00a00.067" in measure, measure  # a difference keeps its two sides
    # a chain of equalities wider than the line breaks before an "=", never inside a Chinese word
    assert chain.count("<br>") >= 1 and all(line.startswith("=\u00a0") for line in chain.split("<br>")[1:]), chain
    assert "橙色概率质量" in chain and "蓝色概率质量" in chain and "灰色概率质量" in chain
    assert context.split("<br>")[-1] != "\u00a064", context
    assert formula == "TV(p,\u00a0q)\u00a0=\u00a00.300 and torch\u00a02.13.0+cpu"
    assert chinese.split("<br>")[-1] == "精确值", chinese


def test_grid_on_a_phone_lays_panels_row_by_row_with_their_titles_over_them():
    """Three panels in two columns: two on the first row, one under the first; one column stacks them."""
    from plotly.subplots import make_subplots

    from specdec_lite.plotting import grid_on_a_phone

    fig = grid_on_a_phone(make_subplots(rows=1, cols=3, subplot_titles=("a", "b", "c")), 3, 820, columns=2, gap_y=0.12)
    narrow = fig.layout.meta["narrow"]
    assert narrow["height"] == 820
    assert narrow["xaxis.domain"] == [0.0, 0.43] and narrow["xaxis2.domain"] == [0.57, 1.0]
    assert narrow["xaxis3.domain"] == [0.0, 0.43]
    assert narrow["yaxis.domain"] == narrow["yaxis2.domain"] == [0.56, 1.0]
    assert narrow["yaxis3.domain"] == [0.0, 0.44]
    assert [(a["text"], a["x"], a["y"]) for a in narrow["annotations"]] == [
        ("a", 0.215, 1.0),
        ("b", 0.785, 1.0),
        ("c", 0.215, 0.44),
    ]
    stacked = grid_on_a_phone(make_subplots(rows=1, cols=2, subplot_titles=("a", "b")), 2, 700, gap_y=0.2)
    assert stacked.layout.meta["narrow"]["xaxis2.domain"] == [0.0, 1.0]
    assert stacked.layout.meta["narrow"]["yaxis2.domain"] == [0.0, 0.4]


def test_the_figure_script_and_the_package_keep_the_same_words_together(tmp_path):
    """figures.js's ``glued`` (a title wrapped on a phone) and ``plotting.keep_together`` (a title wrapped in Python)
    put no-break spaces in the same places, over every message of the catalogue, English and Chinese."""
    import json

    from babel.messages.pofile import read_po

    with plotting.FIGURES_JS.parent.parent.joinpath("locale/zh_CN/LC_MESSAGES/specdec_lite.po").open("rb") as f:
        catalogue = read_po(f)
    texts = sorted({t for m in catalogue if m.id for t in (m.id, m.string) if isinstance(t, str) and t})
    js = plotting.FIGURES_JS.read_text()
    helpers = js[js.index("    var WIDE = ") : js.index("    function wrap(text, px)")]
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    script = tmp_path / "glue.js"
    script.write_text(
        helpers
        + "\nvar texts = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));"
        + "\nconsole.log(JSON.stringify(texts.map(glued)));\n"
    )
    proc = subprocess.run(["node", str(script), str(tmp_path / "texts.json")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    differ = [(t, j) for t, j in zip(texts, json.loads(proc.stdout), strict=True) if plotting.keep_together(t) != j]
    assert len(texts) > 1000 and not differ, differ[:5]
