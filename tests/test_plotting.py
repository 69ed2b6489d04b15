"""How the book emits plotly figures (``specdec_lite.plotting``); the browser test checks what they do."""

import re
import shutil
import subprocess

import plotly.graph_objects as go
import pytest

from specdec_lite import plotting


def figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[0, 1], y=[1, 0], name="a line"), layout=dict(title="a title"))


def test_book_html_carries_the_narrow_screen_layout_for_its_own_figure():
    html = plotting.book_html(figure())
    div = re.search(r'<div id="([^"]+)" class="plotly-graph-div"', html)[1]
    assert f'document.getElementById("{div}")' in html, "the script must find this figure, not another"
    assert f"NARROW = {plotting.NARROW_PX}" in html and "{plot_id}" not in html
    assert "plotly.min.js" not in html and "cdn.plot.ly" not in html, "plotly.js comes from the book's _static"
    assert '"responsive": true' in html


def test_show_in_the_book_build_emits_that_html(monkeypatch):
    shown = []
    monkeypatch.setenv(plotting.BOOK_BUILD_ENV, "1")
    monkeypatch.setattr("IPython.display.display", shown.append)
    plotting.show(figure())
    assert len(shown) == 1 and "NARROW = " in shown[0].data


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_narrow_layout_script_is_valid_javascript(tmp_path):
    script = tmp_path / "narrow.js"
    script.write_text(plotting._NARROW_JS.replace("{plot_id}", "figure-id"))
    proc = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


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
