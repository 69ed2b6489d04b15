"""Showing plotly figures the same way in the built book, Jupyter and Colab.

In the book every figure also adapts to a narrow screen (a phone is about 390 CSS
pixels wide): below ``NARROW_PX`` its legend moves under the plot, its title,
subplot titles and axis titles wrap, fonts and colour scales get smaller, and the
side margins narrow, so the plot keeps most of the width. Above it the figure is
drawn exactly as its builder laid it out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

#: Set by the book's Sphinx extension (``book/_ext/plotly_offline.py``) for its kernels.
BOOK_BUILD_ENV = "SPECDEC_BOOK_BUILD"

#: Figures narrower than this many CSS pixels get the narrow-screen layout.
NARROW_PX = 600

# Runs in the reader's browser after plotly drew the figure ("{plot_id}" is plotly's
# placeholder for the figure's element id). It keeps the authored layout and switches
# between it and the narrow one whenever the figure crosses NARROW_PX; a slider step
# that sets a new title gets it wrapped too.
_NARROW_JS = """
(function () {
  var gd = document.getElementById("{plot_id}");
  if (!gd || !window.Plotly) return;
  var NARROW = %(narrow)d, TITLE_PX = 15, saved = null, savedBars = [], savedStyleHeight = ["", ""], busy = false;
  if (!document.getElementById("sd-narrow-style")) {
    // on a narrow screen the tool bar would cover the title (and a phone has no hover)
    var style = document.createElement("style");
    style.id = "sd-narrow-style";
    style.textContent = ".sd-narrow .modebar-container { display: none; }";
    document.head.appendChild(style);
  }
  function visible(s) { return s.replace(/<[^>]*>/g, "").replace(/&[#\\w]+;/g, "x").length; }
  function wrapLine(line, width) {
    var words = line.split(" "), lines = [], cur = [], len = 0, open = [];
    words.forEach(function (w) {
      var n = visible(w);
      if (cur.length && len + 1 + n > width) {
        lines.push(cur.join(" ") + open.slice().reverse().map(function (t) { return "</" + t.name + ">"; }).join(""));
        cur = open.map(function (t) { return t.tag; });
        cur = cur.length ? [cur.join("") + w] : [w];
        len = n;
      } else { cur.push(w); len += (cur.length > 1 ? 1 : 0) + n; }
      w.replace(/<(\\/?)(\\w+)[^>]*>/g, function (tag, close, name) {
        if (name.toLowerCase() === "br") return tag;
        if (!close) open.push({ name: name, tag: tag });
        else for (var i = open.length - 1; i >= 0; i--) if (open[i].name === name) { open.splice(i, 1); break; }
        return tag;
      });
    });
    if (cur.length) lines.push(cur.join(" "));
    return lines.join("<br>");
  }
  function wrap(text, px) {
    var width = Math.max(16, Math.floor((gd.clientWidth - 24) / (px * 0.56)));
    return String(text).split(/<br\\s*\\/?>/i).map(function (l) { return wrapLine(l, width); }).join("<br>");
  }
  function setHeight(px) {
    // plotly's HTML fixes the height of the figure's element and of its wrapper too
    gd.style.height = px || savedStyleHeight[0];
    if (gd.parentElement && savedStyleHeight[1]) gd.parentElement.style.height = px || savedStyleHeight[1];
  }
  function done() { busy = false; }
  function titleOf(layout) { var t = layout.title; return t && typeof t === "object" ? t.text : t; }
  function legendHeight() { var l = gd._fullLayout.legend; return l && l._height ? l._height : 0; }
  function narrow() {
    var L = gd.layout, full = gd._fullLayout, upd = {}, title = titleOf(L);
    savedStyleHeight = [gd.style.height, gd.parentElement ? gd.parentElement.style.height : ""];
    saved = {
      "title.text": title === undefined ? null : title,
      "title.font.size": L.title && L.title.font ? L.title.font.size : null,
      "title.y": null, "title.yref": null, "title.yanchor": null,
      "margin.l": L.margin ? L.margin.l : null, "margin.r": L.margin ? L.margin.r : null,
      "margin.b": L.margin ? L.margin.b : null, "margin.t": L.margin ? L.margin.t : null,
      height: L.height === undefined ? null : L.height,
      legend: L.legend ? JSON.parse(JSON.stringify(L.legend)) : null,
    };
    if (title) {
      // from the figure's top edge down, pushing the plot as far as its lines need
      upd["title.text"] = wrap(title, TITLE_PX);
      upd["title.font.size"] = TITLE_PX;
      upd["title.y"] = 1; upd["title.yref"] = "container"; upd["title.yanchor"] = "top";
    }
    upd["margin.t"] = Math.min(full.margin.t, 40);  // the title pushes the margin as far as it needs
    upd["margin.l"] = Math.min(full.margin.l, 50);
    upd["margin.r"] = Math.min(full.margin.r, 12);
    axes().forEach(function (ax) {
      var a = L[ax] || {};
      saved[ax + ".tickfont.size"] = a.tickfont && a.tickfont.size !== undefined ? a.tickfont.size : null;
      var titleFont = a.title && a.title.font ? a.title.font.size : undefined;
      saved[ax + ".title.font.size"] = titleFont === undefined ? null : titleFont;
      upd[ax + ".tickfont.size"] = 10;
      upd[ax + ".title.font.size"] = 12;
    });
    var withLegend = full.showlegend && full.legend && full.legend._height > 0;
    if (withLegend) {
      upd.legend = Object.assign({}, saved.legend || {}, {
        orientation: "h", x: 0, xanchor: "left", xref: "container", y: 0, yanchor: "bottom", yref: "container",
      });
    }
    var bars = colorbars();
    savedBars = bars.map(function (i) { return JSON.parse(JSON.stringify(gd.data[i].colorbar || {})); });
    var height0 = full.height, bottom0 = full.margin.b;
    busy = true;
    gd.classList.add("sd-narrow");
    return Plotly.relayout(gd, upd).then(function () {
      if (!bars.length) return null;
      // a colour scale beside the plot takes its width: make it slim (turning it horizontal
      // with restyle leaves plotly's old tick labels behind)
      return Plotly.restyle(gd, {
        "colorbar.thickness": 10, "colorbar.xpad": 4, "colorbar.tickfont.size": 9,
        "colorbar.title.side": "right", "colorbar.title.font.size": 11,
      }, bars);
    }).then(function () {
      // room under the axes for the legend, so the plot keeps its height
      var extra = withLegend ? legendHeight() + 8 : 0;
      if (!extra) return null;
      var height = height0 + extra;
      setHeight(height + "px");
      return Plotly.relayout(gd, { "margin.b": bottom0 + extra, height: height });
    }).then(fitTexts).then(placeTitle).then(done, done);
  }
  function axes() {
    return Object.keys(gd._fullLayout).filter(function (k) { return /^[xy]axis\\d*$/.test(k); });
  }
  function colorbars() {
    var out = [];
    (gd._fullData || []).forEach(function (t, i) { if (t.showscale && t.colorbar && t.visible === true) out.push(i); });
    return out;
  }
  function fitTexts() {
    // subplot titles (annotations) and axis titles wider than their room get wrapped
    var full = gd._fullLayout, box = gd.getBoundingClientRect(), upd = {}, xLines = 1;
    var notes = [].slice.call(gd.querySelectorAll(".annotation")).map(function (el) {
      var i = +el.getAttribute("data-index"), r = el.getBoundingClientRect();
      return { i: i, r: r, cx: (r.left + r.right) / 2, cy: (r.top + r.bottom) / 2 };
    });
    notes.forEach(function (n) {
      var text = (full.annotations[n.i] || {}).text;
      if (!text || n.r.width === 0) return;
      var room = 2 * Math.min(n.cx - box.left, box.right - n.cx) - 8;
      notes.forEach(function (m) {
        if (m !== n && Math.abs(m.cy - n.cy) < 10) room = Math.min(room, Math.abs(m.cx - n.cx) - 8);
      });
      if (n.r.width > room + 1) {
        if (!("annotations[" + n.i + "].text" in saved)) saved["annotations[" + n.i + "].text"] = text;
        upd["annotations[" + n.i + "].text"] = wrapTo(text, n.r.width, room);
      }
    });
    axes().forEach(function (ax) {
      var a = full[ax], text = a && a.title && a.title.text;
      var el = gd.querySelector(".g-" + a._id + "title");
      if (!text || !el) return;
      var r = el.getBoundingClientRect(), size = ax[0] === "x" ? r.width : r.height;
      var room = ax[0] === "x" ? Math.min(a._length, box.width - 8) : a._length;
      if (size > room + 1) {
        saved[ax + ".title.text"] = text;
        upd[ax + ".title.text"] = wrapTo(text, size, room);
        if (ax[0] === "x") xLines = Math.max(xLines, upd[ax + ".title.text"].split("<br>").length);
      }
    });
    (full.sliders || []).forEach(function (sl, i) {
      // a slider sits under the x-axis title: move it down by the title's extra lines
      if (xLines < 2) return;
      saved["sliders[" + i + "].pad.t"] = sl.pad.t;
      upd["sliders[" + i + "].pad.t"] = sl.pad.t + 14 * (xLines - 1);
    });
    return Object.keys(upd).length ? Plotly.relayout(gd, upd) : null;
  }
  function wrapTo(text, size, room) {
    // rewrap to fit ``room`` pixels, from the measured ``size`` of its widest line
    var lines = String(text).split(/<br\\s*\\/?>/i);
    var longest = Math.max.apply(null, lines.map(visible));
    var width = Math.max(8, Math.floor(longest * room / size * 0.95));
    return lines.map(function (l) { return wrapLine(l, width); }).join("<br>");
  }
  function placeTitle() {
    // plotly misplaces a wrapped title anchored at its top: measure it and move it to the
    // figure's top edge; below it, the plot needs room for the subplot titles above it too
    var full = gd._fullLayout, box = gd.getBoundingClientRect(), el = gd.querySelector(".g-gtitle");
    var upd = {}, titleHeight = 0, plotTop = box.top + full._size.t, above = 0;
    if (el && titleOf(full)) {
      var t = el.getBoundingClientRect();
      upd["title.y"] = full.title.y - (6 - (t.top - box.top)) / full.height;
      titleHeight = t.height + 6;
    }
    gd.querySelectorAll(".annotation").forEach(function (a) {
      var r = a.getBoundingClientRect();
      if (r.height && r.top < plotTop && r.bottom <= plotTop + 4) above = Math.max(above, plotTop - r.top);
    });
    upd["margin.t"] = Math.max(20, Math.ceil(titleHeight + 10 + above));
    return Plotly.relayout(gd, upd);
  }
  function wide() {
    var upd = saved, bars = colorbars(), old = savedBars;
    saved = null; busy = true;
    setHeight(null);
    gd.classList.remove("sd-narrow");
    return Plotly.relayout(gd, upd).then(function () {
      if (!bars.length) return null;
      return Plotly.restyle(gd, { colorbar: old.map(function (c) { return c; }) }, bars);
    }).then(done, done);
  }
  function fit() {
    if (busy || !gd.clientWidth) return;
    if (gd.clientWidth < NARROW && !saved) narrow();
    else if (gd.clientWidth >= NARROW && saved) wide();
  }
  gd.on("plotly_update", function () {
    // a slider step can set a new title: wrap it as well (wrapping is idempotent)
    if (!saved || busy) return;
    var t = titleOf(gd.layout);
    if (!t) return;
    var w = wrap(t, TITLE_PX);
    if (w === t) return;
    busy = true;
    Plotly.relayout(gd, { "title.text": w }).then(placeTitle).then(done, done);
  });
  var timer = null;
  window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(fit, 150); });
  fit();
})();
""".replace("%(narrow)d", str(NARROW_PX))


def in_book_build() -> bool:
    """True while the code runs to build the static book."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"


def show(fig: Any) -> None:
    """Display a plotly figure.

    In the book build we emit ``text/html`` that relies on the plotly.js the book
    serves from ``_static`` (MyST-NB does not render plotly's own mime type); in
    Jupyter and Colab plotly's default renderer does the right thing.
    """
    if in_book_build():
        from IPython.display import HTML, display

        display(HTML(book_html(fig)))
    else:
        fig.show()


def book_html(fig: Any) -> str:
    """The figure as the book's HTML: plotly.js comes from the page, the figure follows its
    container's width and switches to the narrow-screen layout below ``NARROW_PX``."""
    return fig.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True}, post_script=_NARROW_JS)


def slider_figure(
    steps: Sequence[tuple[str, Sequence[Any], dict[str, Any] | None]],
    *,
    label: str,
    layout: dict[str, Any] | None = None,
    active: int = 0,
) -> Any:
    """A plotly figure whose slider switches between precomputed steps.

    Works in static HTML (no Python behind the page): each step is
    ``(step_label, traces, layout_update)`` with the same number of traces; all
    traces are stored and the slider toggles which step's traces are visible (and
    applies its optional layout update, e.g. a title carrying a computed number).
    """
    import plotly.graph_objects as go

    if not steps:
        raise ValueError("steps: need at least one step")
    n = len(steps[0][1])
    if any(len(traces) != n for _, traces, _ in steps):
        raise ValueError("steps: every step must have the same number of traces")
    if not 0 <= active < len(steps):
        raise ValueError(f"active: must index a step, got {active}")
    fig = go.Figure()
    for i, (_, traces, _) in enumerate(steps):
        for tr in traces:
            tr.visible = i == active
            fig.add_trace(tr)
    slider_steps = []
    for i, (step_label, _, layout_update) in enumerate(steps):
        visible = [j // n == i for j in range(n * len(steps))]
        slider_steps.append(
            dict(method="update", label=step_label, args=[{"visible": visible}, dict(layout_update or {})])
        )
    fig.update_layout(
        sliders=[dict(active=active, currentvalue={"prefix": f"{label} = "}, pad={"t": 40}, steps=slider_steps)],
        **(layout or {}),
    )
    if steps[active][2]:
        fig.update_layout(**steps[active][2])
    return fig


def stack(figures: Sequence[Any], *, titles: Sequence[str] | None = None, title: str = "") -> Any:
    """One figure holding ``figures`` one under another, each keeping its axes, lines and bands.

    For a figure that shows the same plot for several inputs (e.g. one per results
    file) under one number and caption. Each panel is headed by ``titles`` (default:
    its figure's title), the whole by ``title``; legend entries with the same name are
    shown once.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if not figures:
        raise ValueError("figures: need at least one figure")
    if titles is None:
        titles = [fig.layout.title.text or "" for fig in figures]
    if len(titles) != len(figures):
        raise ValueError(f"titles: need one per figure ({len(figures)}), got {len(titles)}")
    out = make_subplots(rows=len(figures), cols=1, subplot_titles=titles, vertical_spacing=0.3 / len(figures))
    seen: set[str] = set()
    for i, fig in enumerate(figures, start=1):
        for trace in fig.data:
            trace = go.Figure(trace).data[0]  # a copy, so the source figure is left as it was
            if trace.name in seen:
                trace.showlegend = False
            seen.add(trace.name)
            trace.legendgroup = trace.name
            out.add_trace(trace, row=i, col=1)
        out.update_xaxes(title_text=fig.layout.xaxis.title.text, type=fig.layout.xaxis.type, row=i, col=1)
        out.update_yaxes(title_text=fig.layout.yaxis.title.text, type=fig.layout.yaxis.type, row=i, col=1)
        suffix = "" if i == 1 else str(i)

        def moved(ref: str | None, suffix: str = suffix) -> str | None:
            if ref is None or ref == "paper":
                return ref
            return ref[0] + suffix + ref[1:].removeprefix("1")  # "x" -> "x2", "y domain" -> "y2 domain"

        for shape in fig.layout.shapes:
            out.add_shape(go.layout.Shape(shape).update(xref=moved(shape.xref), yref=moved(shape.yref)))
        for note in fig.layout.annotations:
            out.add_annotation(go.layout.Annotation(note).update(xref=moved(note.xref), yref=moved(note.yref)))
    height = sum(fig.layout.height or 420 for fig in figures)
    out.update_layout(height=height, title=dict(text=title, x=0.02) if title else None)
    return out
