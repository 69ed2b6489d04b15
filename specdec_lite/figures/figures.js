// The book's plotly figures in a reader's browser: one script for every figure of a page.
//
// Loaded once per page (the book's Sphinx extension adds it to _static; in Jupyter and
// Colab the first specdec_lite.plotting.show() of a kernel displays it). Each figure's
// HTML then only calls sdFigures.init(id, narrowPx) after plotly drew it. For a figure it
//  - keeps the authored layout and switches between it and a narrow-screen one whenever
//    the figure crosses narrowPx CSS pixels (legend under the plot, wrapped titles, smaller
//    fonts and colour scales, narrower margins);
//  - names the plot by its caption (role="img", aria-labelledby the <figcaption>), points
//    to a short description of it, and hides plotly's SVG from assistive technology;
//  - replaces every plotly slider by a native range input that moves the same steps (the
//    mouse, arrow keys, Home, End): one control per parameter, which shows the step's value,
//    says what the step shows (aria-valuetext: the value and the title it sets) and shows
//    that step's data table; plotly's own slider is hidden (it stays where this script
//    does not run);
//  - writes its own words in the page's language (<html lang>: English, or Chinese);
//  - follows the page's light or dark theme (pydata-sphinx-theme's data-theme on <html>,
//    JupyterLab's data-jp-theme-light, else prefers-color-scheme), restoring the
//    authored layout for light, and keeps every trace colour at 3:1 against the plot's
//    background and text at 4.5:1 in both themes.
(function () {
  "use strict";
  var VERSION = 4;
  if (window.sdFigures && window.sdFigures.version >= VERSION) return; // a second copy, or a re-run cell

  // --- the script's own words, in the page's language ----------------------------------------
  var WORDS = {
    en: {
      dataOf: function (number) { return "Data of " + number; },
      dataOfThis: "Data of this figure",
      plot: "a plot",
      step: "step",
      labelOf: function (what, number) { return what + " (" + number + ")"; }, // what: "" for the number alone
    },
    zh: {
      dataOf: function (number) { return number + " 的数据"; },
      dataOfThis: "本图的数据",
      plot: "图",
      step: "步骤",
      labelOf: function (what, number) { return what + "（" + number + "）"; },
    },
  };
  function words() {
    var lang = (document.documentElement.getAttribute("lang") || "").toLowerCase();
    return lang.indexOf("zh") === 0 ? WORDS.zh : WORDS.en;
  }

  // --- the narrow-screen layout ----------------------------------------------------------
  // A slider step that sets a new title gets it wrapped too.
  function narrowScreen(gd, NARROW) {
    var TITLE_PX = 15, SUBTITLE_PX = 11, saved = null, savedBars = [], savedStyleHeight = ["", ""], busy = false;
    if (!document.getElementById("sd-narrow-style")) {
      // on a narrow screen the tool bar would cover the title (and a phone has no hover)
      var style = document.createElement("style");
      style.id = "sd-narrow-style";
      style.textContent = ".sd-narrow .modebar-container { display: none; }";
      document.head.appendChild(style);
    }
    // a Chinese (wide) character takes about two Latin ones; lines break at spaces and between Chinese
    // characters, never before closing punctuation nor after opening punctuation
    var WIDE = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]/;
    // a tag is "<" with a letter or "/" after it; any other "<" is text ("q < p")
    var TAG = /<\/?[A-Za-z][^<>]*>/g, IS_TAG = /^<\/?[A-Za-z]/;
    var SEGMENT = /<\/?[A-Za-z][^<>]*>|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]|(?:[^<\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]|<(?!\/?[A-Za-z]))+/g;
    var NO_START = /^[，。；：、）」』》！？,.;:)\u00a0]/, NO_END = /[（「『《(\u00a0]$/;  // a no-break space glues
    function visible(s) {
      var t = s.replace(TAG, "").replace(/&[#\w]+;/g, "x"), n = 0;
      for (var i = 0; i < t.length; i++) n += WIDE.test(t.charAt(i)) ? 2 : 1;
      return n;
    }
    // Chinese text breaks after its punctuation or before an opening bracket, not inside a word ("蒙特卡罗"),
    // unless a run without punctuation is wider than the line: that run then breaks between any characters
    var AFTER_PUNCT = /[，。；：、）」』》！？]$/, OPENING = /^[（「『《]/;
    function pieces(line, fine) {
      // the pieces a line may break between; ``space``: joined to the one before by a space
      var out = [];
      line.split(" ").forEach(function (word, wi) {
        var cur = "", ahead = "", space = wi > 0, last = "";
        (word.match(SEGMENT) || [""]).forEach(function (s) {
          if (IS_TAG.test(s)) {  // a closing tag stays with the text before it, an opening one with the text after
            if (s.charAt(1) === "/") cur += s; else ahead += s;
            return;
          }
          if (cur !== "" && (WIDE.test(s.charAt(0)) || WIDE.test(last)) && !NO_START.test(s) && !NO_END.test(last) &&
              (fine || AFTER_PUNCT.test(last) || OPENING.test(s))) {
            out.push({ text: cur, space: space });
            cur = ""; space = false;
          }
          cur += ahead + s; ahead = ""; last = s.charAt(s.length - 1);
        });
        out.push({ text: cur + ahead, space: space });
      });
      return out;
    }
    function wrapLine(line, width) {
      var lines = [], cur = "", len = 0, open = [], all = [];
      // a glued run wider than the line breaks first before a relation of a chain ("a = b = c" as "a = b" and
      // "= c"), and only a part still too wide between any of its characters
      pieces(line, false).forEach(function (p) {
        if (visible(p.text) <= width) { all.push(p); return; }
        p.text.split(/\u00a0(?=[=≤≥≈]\u00a0)/).forEach(function (part, j) {
          var space = j === 0 ? p.space : true;
          if (visible(part) <= width) { all.push({ text: part, space: space }); return; }
          pieces(part, true).forEach(function (q, k) { all.push({ text: q.text, space: k === 0 && space }); });
        });
      });
      all.forEach(function (p) {
        var n = visible(p.text), gap = cur !== "" && p.space ? 1 : 0;
        if (cur !== "" && len + gap + n > width) {
          lines.push(cur + open.slice().reverse().map(function (t) { return "</" + t.name + ">"; }).join(""));
          cur = open.map(function (t) { return t.tag; }).join("") + p.text;
          len = n;
        } else { cur += (gap ? " " : "") + p.text; len += gap + n; }
        p.text.replace(/<(\/?)(\w+)[^>]*>/g, function (tag, close, name) {
          if (name.toLowerCase() === "br") return tag;
          if (!close) open.push({ name: name, tag: tag });
          else for (var i = open.length - 1; i >= 0; i--) if (open[i].name === name) { open.splice(i, 1); break; }
          return tag;
        });
      });
      if (cur !== "") lines.push(cur);
      // no last line of one Chinese character ("精确" over "值"): the characters before it since the last
      // punctuation or space go down with it ("精确值"), or at most the one before it
      var n = lines.length, lone = n > 1 && /^[\u4e00-\u9fff][，。；：、）」』》！？]*$/.test(lines[n - 1]);
      var run = lone && /(^|[^\u4e00-\u9fff])([\u4e00-\u9fff]{1,3})$/.exec(lines[n - 2]);
      var moved = run ? run[2] : lone && /[\u4e00-\u9fff]$/.test(lines[n - 2]) ? lines[n - 2].slice(-1) : "";
      if (moved && moved.length < lines[n - 2].length) {
        lines[n - 1] = moved + lines[n - 1];
        lines[n - 2] = lines[n - 2].slice(0, -moved.length);
      }
      return lines.join("<br>");
    }
    function glued(text) {
      // no-break spaces keep on one line: a relation or a difference with its two sides' ends ("T = 50", not
      // "T =" and "50"; "UNO − OPT"),
      // a short formula's arguments ("TV(p, q)", "min(1, q/p)", "TV(P<sup>A</sup>, q)") and a name with the number after it
      // ("torch 2.13.0+cpu", "上下文 64") or a number with the Chinese word after it ("52.7 次", "K = 4 时")
      return String(text)
        .replace(/ ([=≤≥≈−<>]) /g, "\u00a0$1\u00a0")
        .replace(/(\w)\(([^()\s\u2e80-\uffef]{1,16}), ([^()\s\u2e80-\uffef]{1,16})\)/g, "$1($2,\u00a0$3)")
        .replace(/([A-Za-z\u4e00-\u9fff]) (?=\d)/g, "$1\u00a0")
        .replace(/(\d) (?=[\u4e00-\u9fff])/g, "$1\u00a0");
    }
    function wrap(text, px) {
      var width = Math.max(16, Math.floor((gd.clientWidth - 24) / (px * 0.56)));
      return glued(text).split(/<br\s*\/?>/i).map(function (l) { return wrapLine(l, width); }).join("<br>");
    }
    function split(title) {
      // a title "main<br><sup>subtitle</sup>": its two parts (plotly's own subtitle gets the second, drawn in
      // its own size with its own line spacing, a gap below the title); null for a title without one
      var m = /^([\s\S]*?)<br\s*\/?>\s*<sup>([\s\S]*)<\/sup>\s*$/i.exec(String(title));
      return m && m[2].indexOf("<sup>") < 0 ? { main: m[1], sub: m[2] } : null;
    }
    function titleUpdate(title) {
      // the relayout that shows ``title`` wrapped, its subtitle apart
      var parts = split(title), upd = {};
      upd["title.text"] = wrap(parts ? parts.main : title, TITLE_PX);
      upd["title.subtitle.text"] = parts ? wrap(parts.sub, SUBTITLE_PX) : "";
      upd["title.subtitle.font.size"] = SUBTITLE_PX;
      return upd;
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
        "title.subtitle.text": null, "title.subtitle.font.size": null,
        "margin.l": L.margin ? L.margin.l : null, "margin.r": L.margin ? L.margin.r : null,
        "margin.b": L.margin ? L.margin.b : null, "margin.t": L.margin ? L.margin.t : null,
        height: L.height === undefined ? null : L.height,
        legend: L.legend ? JSON.parse(JSON.stringify(L.legend)) : null,
      };
      if (title) {
        // from the figure's top edge down, pushing the plot as far as its lines need
        Object.assign(upd, titleUpdate(title));
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
        upd[ax + ".tickfont.size"] = 11;
        upd[ax + ".title.font.size"] = 12;
      });
      // the figure's own narrow layout (plotting.narrow_layout: panels one under another, a taller figure)
      var own = L.meta && typeof L.meta === "object" && L.meta.narrow ? L.meta.narrow : {};
      Object.keys(own).forEach(function (k) {
        if (!(k in saved)) {
          var v = get(L, k.replace(/\[(\d+)\]/g, ".$1"));
          saved[k] = v === undefined ? null : JSON.parse(JSON.stringify(v));
        }
        upd[k] = own[k];
      });
      var withLegend = full.showlegend && full.legend && full.legend._height > 0;
      if (withLegend) {
        upd.legend = Object.assign({}, saved.legend || {}, {
          orientation: "h", x: 0, xanchor: "left", xref: "container", y: 0, yanchor: "bottom", yref: "container",
        });
      }
      var bars = colorbars();
      savedBars = bars.map(function (i) { return JSON.parse(JSON.stringify(gd.data[i].colorbar || {})); });
      var height0 = typeof own.height === "number" ? own.height : full.height, bottom0 = full.margin.b;
      if (typeof own.height === "number") setHeight(own.height + "px");
      busy = true;
      gd.classList.add("sd-narrow");
      return Plotly.relayout(gd, upd).then(function () {
        if (!bars.length) return null;
        // a colour scale beside the plot takes its width: make it slim (turning it horizontal
        // with restyle leaves plotly's old tick labels behind), its title over it, clear of the ticks
        return Plotly.restyle(gd, {
          "colorbar.thickness": 10, "colorbar.xpad": 4, "colorbar.tickfont.size": 9,
          "colorbar.title.side": "top", "colorbar.title.font.size": 11,
        }, bars);
      }).then(function () {
        // room under the axes for the legend, so the plot keeps its height
        var extra = withLegend ? legendHeight() + 8 : 0;
        if (!extra) return null;
        var height = height0 + extra;
        setHeight(height + "px");
        return Plotly.relayout(gd, { "margin.b": bottom0 + extra, height: height });
      }).then(fitTexts).then(spacePanels).then(placeTitle).then(function () { return trimBottom(gd); }).then(done, done);
    }
    function axes() {
      return Object.keys(gd._fullLayout).filter(function (k) { return /^[xy]axis\d*$/.test(k); });
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
        if (xLines < 2 || !sl.visible || !sl.pad) return;
        saved["sliders[" + i + "].pad.t"] = sl.pad.t;
        upd["sliders[" + i + "].pad.t"] = sl.pad.t + 14 * (xLines - 1);
      });
      return Object.keys(upd).length ? Plotly.relayout(gd, upd) : null;
    }
    function spacePanels() {
      // panels side by side: the narrow plots leave too little gap for the right panel's tick labels and
      // y-axis title, which then sit over the left panel. Widen each gap by what is missing (measured),
      // half from each neighbour.
      var full = gd._fullLayout, upd = {}, width = full._size.w;
      var gaps = [];
      axes().forEach(function (ax) {
        var ya = full[ax];
        if (ax[0] !== "y" || !ya || ya.overlaying || !ya._anchorAxis) return;
        var xa = ya._anchorAxis, el = gd.querySelector(".g-" + ya._id + "title");
        if (!xa.domain || xa.domain[0] < 0.02 || ya.side === "right") return;
        var left = null;  // the panel beside it on the left: an x axis whose plot shares these heights
        axes().forEach(function (k) {
          var other = full[k];
          if (k[0] !== "x" || !other || other === xa || !other._anchorAxis || other.overlaying) return;
          var oy = other._anchorAxis.domain;
          if (other.domain[1] > xa.domain[0] + 1e-6 || oy[1] <= ya.domain[0] || oy[0] >= ya.domain[1]) return;
          if (!left || other.domain[1] > left.domain[1]) left = other;
        });
        if (!left) return;
        var box = gd.getBoundingClientRect(), reach = Infinity;
        var texts = [].slice.call(gd.querySelectorAll(".yaxislayer-above text")).filter(function (t) {
          var layer = t.closest(".subplot");
          return layer && layer.classList.contains(xa._id + ya._id);
        });
        if (el) texts.push(el);
        texts.forEach(function (t) {
          var r = t.getBoundingClientRect();
          if (r.width > 0 && r.height > 0 && (t.textContent || "").trim()) reach = Math.min(reach, r.left);
        });
        if (reach === Infinity) return;
        var leftEdge = box.left + full._size.l + left.domain[1] * width;
        var missing = leftEdge + 6 - reach;
        // at most a fifth of the width: the panels keep most of theirs
        if (missing > 0) gaps.push({ left: left, right: xa, d: Math.min(missing, width / 5) / width });
      });
      gaps.forEach(function (g) {
        [[g.left, 1, -g.d / 2], [g.right, 0, g.d / 2]].forEach(function (m) {
          var name = m[0]._name, key = name + ".domain";
          if (!(key in saved)) saved[key] = (gd.layout[name] && gd.layout[name].domain || m[0].domain).slice();
          var dom = (upd[key] || m[0].domain).slice();
          dom[m[1]] += m[2];
          upd[key] = dom;
        });
      });
      return Object.keys(upd).length ? Plotly.relayout(gd, upd) : null;
    }
    function wrapTo(text, size, room) {
      // rewrap to fit ``room`` pixels, from the measured ``size`` of its widest line
      var lines = glued(text).split(/<br\s*\/?>/i);
      var longest = Math.max.apply(null, lines.map(visible));
      var width = Math.max(8, Math.floor(longest * room / size * 0.9));  // lines of Chinese and Latin differ in pixels per column
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
    gd.on("plotly_update", function (ev) {
      // a slider step can set a new title: wrap it as well (wrapping is idempotent)
      if (!saved || busy) return;
      var set = ev && ev.layout ? ev.layout : {};
      var stepSetsTitle = "title.text" in set || (set.title && typeof set.title === "object");
      var t = titleOf(gd.layout);
      if (!t) return;
      if (stepSetsTitle) saved["title.text"] = t; // the wide layout gets this step's title back, not the first one's
      var upd = stepSetsTitle ? titleUpdate(t) : { "title.text": wrap(t, TITLE_PX) };
      if (upd["title.text"] === t && !stepSetsTitle) return;
      busy = true;
      Plotly.relayout(gd, upd).then(placeTitle).then(done, done);
    });
    var timer = null;
    window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(fit, 150); });
    fit();
  }

  // --- the foot of a figure ------------------------------------------------------------------
  function trimBottom(gd) {
    // the figure ends a little under its lowest text: the room plotly kept for its own slider (hidden: the
    // range input under the figure replaces it) or the default bottom margin is not left as an empty band.
    // A legend at the figure's foot (the narrow layout) moves up with it.
    var full = gd._fullLayout, box = gd.getBoundingClientRect();
    if (!full || !full._size || !box.height) return null;
    var foot = full.showlegend && full.legend && full.legend.yref === "container";
    var lowest = box.top + full._size.t + full._size.h, floor = box.bottom;
    gd.querySelectorAll(".main-svg text, .legend .bg").forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) return;
      if (foot && el.closest(".legend")) floor = Math.min(floor, r.top);
      else lowest = Math.max(lowest, r.bottom);
    });
    var slack = Math.floor(floor - lowest - 12);
    if (slack < 8 || slack > full._size.b) return null;
    var height = full.height - slack;
    gd.style.height = height + "px";
    if (gd.parentElement && gd.parentElement.style.height) gd.parentElement.style.height = height + "px";
    return Plotly.relayout(gd, { height: height, "margin.b": Math.max(0, full._size.b - slack) });
  }

  // --- colours ---------------------------------------------------------------------------
  var canvas = null;
  function parse(c) {
    // any CSS colour as [r, g, b, alpha] (0-255, alpha 0-1); null when it is not one
    if (typeof c !== "string" || !c) return null;
    canvas = canvas || document.createElement("canvas").getContext("2d");
    canvas.fillStyle = "#010203";
    canvas.fillStyle = c;
    var s = canvas.fillStyle;
    if (s === "#010203" && c.replace(/\s/g, "").toLowerCase() !== "#010203") return null;
    if (s[0] === "#") return [parseInt(s.slice(1, 3), 16), parseInt(s.slice(3, 5), 16), parseInt(s.slice(5, 7), 16), 1];
    var m = s.match(/[\d.]+/g).map(Number);
    return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1];
  }
  function luminance(rgb) {
    var v = rgb.slice(0, 3).map(function (x) {
      x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }
  function contrast(a, b) {
    var la = luminance(a), lb = luminance(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }
  function hex(rgb) {
    return "#" + rgb.slice(0, 3).map(function (x) { return ("0" + Math.round(x).toString(16)).slice(-2); }).join("");
  }
  function readable(c, bg, min) {
    // ``c`` itself when it reaches ``min`` against ``bg``, else the same hue mixed towards
    // black (on a light background) or white (on a dark one) until it does
    var rgb = parse(c), back = parse(bg);
    if (!rgb || !back || rgb[3] < 1 || contrast(rgb, back) >= min) return c;
    var to = luminance(back) > 0.18 ? [0, 0, 0] : [255, 255, 255];
    for (var t = 0.05; t <= 1.0001; t += 0.05) {
      var mixed = rgb.map(function (x, i) { return i < 3 ? x + (to[i] - x) * t : 1; });
      mixed = mixed.map(function (x, i) { return i < 3 ? Math.round(x) : 1; });
      if (contrast(mixed, back) >= min) return hex(mixed);
    }
    return hex(to);
  }
  function visibleFill(c, bg) {
    // a translucent fill (a band, a shaded region) seen on ``bg``: its colour as it is where it shows
    // (2.2:1 against ``bg``, over it: a band under a curve stays plain on a dark plot), else the same hue mixed
    // towards white or black, at least 0.3 opaque
    var rgb = parse(c), back = parse(bg), FILL = 2.2;
    if (!rgb || !back || rgb[3] >= 1) return c;
    var alpha = Math.max(rgb[3], 0.3), to = luminance(back) > 0.18 ? [0, 0, 0] : [255, 255, 255];
    function over(col) { return col.map(function (x, i) { return i < 3 ? x * alpha + back[i] * (1 - alpha) : 1; }); }
    if (alpha === rgb[3] && contrast(over(rgb), back) >= FILL) return c;
    for (var t = 0; t <= 1.0001; t += 0.05) {
      var mixed = rgb.map(function (x, i) { return i < 3 ? Math.round(x + (to[i] - x) * t) : 1; });
      if (contrast(over(mixed), back) >= FILL || t > 0.99) {
        return "rgba(" + mixed.slice(0, 3).join(", ") + ", " + alpha + ")";
      }
    }
    return c;
  }
  var GRAPHIC = 3.05, TEXT = 4.55; // WCAG 2.1 AA: 3:1 for graphics, 4.5:1 for text (a hair above, for rounding)

  // --- light and dark ----------------------------------------------------------------------
  var DARK = {
    paper: "#121212", plot: "#1c1c1c", font: "#e3e3e3", grid: "#3a3a3a", zeroline: "#6e6e6e", line: "#8c8c8c",
    sliderBg: "#2b2b2b", sliderActive: "#555555", sliderBorder: "#8c8c8c", sliderTick: "#bdbdbd",
  };
  function pageTheme() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t === "dark" || t === "light") return t;
    var jp = document.body && document.body.getAttribute("data-jp-theme-light");
    if (jp === "false") return "dark";
    if (jp === "true" || t === null) return "light"; // a notebook without a theme of its own
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function get(obj, path) {
    return path.split(".").reduce(function (o, k) { return o && typeof o === "object" ? o[k] : undefined; }, obj);
  }
  function axes(gd) {
    return Object.keys(gd._fullLayout).filter(function (k) { return /^[xy]axis\d*$/.test(k); });
  }
  function heatmapAxes(gd) {
    // traces drawn over a heatmap are read against its colours, not the background
    var out = {};
    (gd.data || []).forEach(function (t) {
      if (t.type === "heatmap" || t.type === "contour") out[(t.xaxis || "x") + (t.yaxis || "y")] = true;
    });
    return out;
  }
  var TRACE_COLOURS = ["line.color", "marker.color", "marker.line.color", "error_y.color", "error_x.color", "textfont.color"];
  function themeState(gd) {
    // what the figure's author set (null: plotly's default), saved once
    if (gd._sdTheme) return gd._sdTheme;
    var L = gd.layout, keys = ["paper_bgcolor", "plot_bgcolor", "font.color", "colorway"];
    axes(gd).forEach(function (ax) {
      ["gridcolor", "linecolor", "zerolinecolor", "tickcolor"].forEach(function (k) { keys.push(ax + "." + k); });
    });
    (L.sliders || []).forEach(function (s, i) {
      ["bgcolor", "activebgcolor", "bordercolor", "tickcolor"].forEach(function (k) { keys.push("sliders[" + i + "]." + k); });
    });
    var layout = {};
    keys.forEach(function (k) {
      var v = get(L, k.replace(/\[(\d+)\]/g, ".$1"));
      layout[k] = v === undefined ? null : v;
    });
    var shapes = (L.shapes || []).map(function (s) { return s.line && s.line.color; });
    var notes = (L.annotations || []).map(function (a) { return a.font && a.font.color; });
    var over = heatmapAxes(gd), traces = {};
    TRACE_COLOURS.forEach(function (attr) {
      var idx = [], vals = [];
      (gd.data || []).forEach(function (t, i) {
        var v = get(t, attr);
        if (typeof v !== "string" || over[(t.xaxis || "x") + (t.yaxis || "y")]) return;
        idx.push(i); vals.push(v);
      });
      if (idx.length) traces[attr] = { idx: idx, vals: vals };
    });
    var fills = { idx: [], vals: [] };
    (gd.data || []).forEach(function (t, i) {
      if (typeof t.fillcolor === "string") { fills.idx.push(i); fills.vals.push(t.fillcolor); }
    });
    var full = gd._fullLayout;
    gd._sdTheme = {
      layout: layout, shapes: shapes, notes: notes, traces: traces, fills: fills, theme: "light",
      light: { plot: full.plot_bgcolor, paper: full.paper_bgcolor, colorway: full.colorway.slice() },
    };
    return gd._sdTheme;
  }
  function applyTheme(gd, theme) {
    var st = themeState(gd), dark = theme === "dark", upd = {};
    var plot = dark ? DARK.plot : st.light.plot, paper = dark ? DARK.paper : st.light.paper;
    Object.keys(st.layout).forEach(function (k) { upd[k] = st.layout[k]; });
    if (dark) {
      upd.paper_bgcolor = DARK.paper; upd.plot_bgcolor = DARK.plot; upd["font.color"] = DARK.font;
      axes(gd).forEach(function (ax) {
        upd[ax + ".gridcolor"] = DARK.grid; upd[ax + ".linecolor"] = DARK.line;
        upd[ax + ".zerolinecolor"] = DARK.zeroline; upd[ax + ".tickcolor"] = DARK.line;
      });
      (gd.layout.sliders || []).forEach(function (s, i) {
        var p = "sliders[" + i + "].";
        upd[p + "bgcolor"] = DARK.sliderBg; upd[p + "activebgcolor"] = DARK.sliderActive;
        upd[p + "bordercolor"] = DARK.sliderBorder; upd[p + "tickcolor"] = DARK.sliderTick;
      });
    }
    var colorway = st.light.colorway.map(function (c) { return readable(c, plot, GRAPHIC); });
    upd.colorway = JSON.stringify(colorway) === JSON.stringify(st.light.colorway) ? st.layout.colorway : colorway;
    st.shapes.forEach(function (c, i) {
      if (typeof c === "string") upd["shapes[" + i + "].line.color"] = readable(c, plot, GRAPHIC);
    });
    st.notes.forEach(function (c, i) {
      if (typeof c === "string") upd["annotations[" + i + "].font.color"] = readable(c, paper, TEXT);
    });
    st.theme = theme;
    gd.setAttribute("data-sd-theme", theme);
    Object.keys(upd).forEach(function (k) {
      // only what changes (on a light page most figures keep their layout as it is)
      var now = get(gd.layout, k.replace(/\[(\d+)\]/g, ".$1"));
      if (JSON.stringify(now === undefined ? null : now) === JSON.stringify(upd[k])) delete upd[k];
    });
    var relayout = Object.keys(upd).length ? Plotly.relayout(gd, upd) : Promise.resolve();
    return relayout.then(function () {
      var attrs = Object.keys(st.traces), chain = Promise.resolve();
      attrs.forEach(function (attr) {
        var t = st.traces[attr], vals = t.vals.map(function (c) { return readable(c, plot, GRAPHIC); });
        var now = t.idx.map(function (i) { return get(gd.data[i], attr); });
        if (JSON.stringify(now) === JSON.stringify(vals)) return;
        var u = {};
        u[attr] = vals;
        chain = chain.then(function () { return Plotly.restyle(gd, u, t.idx); });
      });
      var f = st.fills;
      if (f.idx.length) {
        // the light theme's fills as authored; on a dark plot a faint dark band would vanish
        var fills = f.vals.map(function (c) { return dark ? visibleFill(c, plot) : c; });
        var nowFills = f.idx.map(function (i) { return gd.data[i].fillcolor; });
        if (JSON.stringify(nowFills) !== JSON.stringify(fills)) {
          chain = chain.then(function () { return Plotly.restyle(gd, { fillcolor: fills }, f.idx); });
        }
      }
      return chain;
    });
  }

  // --- names, descriptions, data tables ----------------------------------------------------
  function boxOf(gd) {
    return gd.closest(".sd-figure") || gd.parentElement.parentElement || gd.parentElement;
  }
  function hideDrawing(gd) {
    gd.querySelectorAll("svg, .modebar-container").forEach(function (el) { el.setAttribute("aria-hidden", "true"); });
    // the drawing is one picture: nothing inside it is a tab stop (the controls sit outside it)
    gd.querySelectorAll("a[href], button, input, select, textarea, [tabindex]").forEach(function (el) {
      el.setAttribute("tabindex", "-1");
    });
  }
  function name(gd, box) {
    var fig = gd.closest("figure"), cap = fig && fig.querySelector("figcaption"), number = "";
    gd.setAttribute("role", "img");
    if (cap) {
      if (!cap.id) cap.id = gd.id + "-caption";
      gd.setAttribute("aria-labelledby", cap.id);
      var n = cap.querySelector(".caption-number");
      number = n ? n.textContent.trim() : "";
    } else {
      var t = box.querySelector(".sd-figure-title");
      gd.setAttribute("aria-label", t && t.textContent ? t.textContent : words().plot);
    }
    var desc = box.querySelector(".sd-figure-desc");
    if (desc) gd.setAttribute("aria-describedby", desc.id);
    var summary = box.querySelector(".sd-figure-data > summary");
    if (summary) summary.textContent = number ? words().dataOf(number) : words().dataOfThis;
    hideDrawing(gd);
    gd.on("plotly_afterplot", function () { hideDrawing(gd); });
    return number;
  }

  // --- sliders by keyboard -----------------------------------------------------------------
  function plain(html) {
    // as specdec_lite.figure_data.plain: E[N<sub>rej</sub>] reads E[N_rej]
    var d = document.createElement("div");
    d.innerHTML = String(html === undefined || html === null ? "" : html).replace(/<sub>/gi, "_");
    return d.textContent;
  }
  function plainTitle(text) {
    return plain(String(text).replace(/<br\s*\/?>/gi, " ")).replace(/\s+/g, " ").trim();
  }
  function stepTitle(step) {
    // the title a step (or button) sets, as plotly.js 4 reads it: "title.text", or a title object
    var L = (step.method === "relayout" ? (step.args || [])[0] : (step.args || [])[1]) || {};
    if (typeof L["title.text"] === "string") return L["title.text"];
    if (L.title && typeof L.title === "object" && typeof L.title.text === "string") return L.title.text;
    return null;
  }
  function sliderControls(gd, box, number) {
    var sliders = gd.layout.sliders || [];
    if (!sliders.length) return null;
    var holder = document.createElement("div");
    holder.className = "sd-slider-controls";
    var after = gd.parentElement && gd.parentElement !== box ? gd.parentElement : gd;
    after.insertAdjacentElement("afterend", holder);
    var hide = {};
    sliders.forEach(function (sl, k) {
      var steps = sl.steps || [];
      if (!steps.length) return;
      var prefix = (sl.currentvalue && sl.currentvalue.prefix) || "";
      var what = plain(prefix).replace(/\s*[=:：]\s*$/, "") || words().step;
      var id = gd.id + "-slider-" + k;
      var row = document.createElement("div");
      row.className = "sd-slider";
      var label = document.createElement("label");
      label.htmlFor = id;
      // what it sets, as the plotly slider's readout said it; the figure's number is for a screen
      // reader, which meets the control apart from its figure
      label.textContent = what;
      if (number) {
        var which = document.createElement("span");
        which.className = "sd-visually-hidden";
        which.textContent = words().labelOf("", number);
        label.appendChild(which);
      }
      var input = document.createElement("input");
      input.type = "range"; input.id = id; input.min = 0; input.max = steps.length - 1; input.step = 1;
      var out = document.createElement("output");
      out.htmlFor = id;
      out.setAttribute("aria-hidden", "true"); // the input says it (aria-valuetext)
      row.appendChild(label); row.appendChild(input); row.appendChild(out);
      holder.appendChild(row);
      function stepLabel(i) { return plain(steps[i].label !== undefined ? steps[i].label : i); }
      function value(i) { return plain(prefix) + stepLabel(i); }
      function spoken(i) {
        // the step's value and, where the step sets the title (the figure's live numbers), that title
        var t = stepTitle(steps[i]);
        return t ? value(i) + "; " + plainTitle(t) : value(i);
      }
      function activeStep() {
        // the step plotly's slider is at (read from the layout: plotly leaves a hidden slider out of
        // its full layout)
        var s = (gd.layout.sliders || [])[k];
        return s && s.active ? +s.active : 0;
      }
      function sync() {
        var i = activeStep();
        if (String(i) !== input.value) input.value = i;
        input.setAttribute("aria-valuetext", spoken(i));
        out.textContent = stepLabel(i);
        box.querySelectorAll('.sd-step-data[data-sd-slider="' + k + '"]').forEach(function (el) {
          el.hidden = el.getAttribute("data-sd-step") !== String(i);
        });
      }
      var pending = null, moving = false;
      function go(i) {
        // the step's own plotly call, and the slider drawn at it (as a click on it does)
        var step = steps[i], args = step.args || [], act = {};
        act["sliders[" + k + "].active"] = i;
        moving = true;
        var p;
        if (step.method === "update") p = Plotly.update(gd, args[0] || {}, Object.assign({}, args[1] || {}, act));
        else if (step.method === "restyle") p = Plotly.restyle(gd, args[0], args[1]).then(function () { return Plotly.relayout(gd, act); });
        else if (step.method === "relayout") p = Plotly.relayout(gd, Object.assign({}, args[0] || {}, act));
        else if (step.method === "animate") p = Plotly.animate(gd, args[0], args[1]).then(function () { return Plotly.relayout(gd, act); });
        else p = Plotly.relayout(gd, act);
        return Promise.resolve(p).then(finish, finish);
      }
      function finish() {
        moving = false;
        sync();
        if (pending !== null) { var i = pending; pending = null; if (i !== activeStep()) go(i); }
      }
      input.addEventListener("input", function () {
        var i = +input.value;
        input.setAttribute("aria-valuetext", spoken(i));
        out.textContent = stepLabel(i);
        if (moving) pending = i; else go(i);
      });
      ["plotly_sliderchange", "plotly_relayout", "plotly_update", "plotly_restyle"].forEach(function (ev) {
        gd.on(ev, function () { if (!moving) sync(); });
      });
      sync();
      // one control per parameter: this input, which a keyboard, a screen reader and a mouse all use
      hide["sliders[" + k + "].visible"] = false;
    });
    return Object.keys(hide).length ? Plotly.relayout(gd, hide) : null;
  }

  // --- the page ------------------------------------------------------------------------------
  var figures = [];
  function follow() {
    var theme = pageTheme();
    figures.forEach(function (gd) {
      if (!document.body.contains(gd)) return;
      if (gd._sdTheme && gd._sdTheme.theme === theme) return;
      gd._sdThemeBusy = (gd._sdThemeBusy || Promise.resolve()).then(function () {
        if (!gd._sdTheme || gd._sdTheme.theme !== pageTheme()) return applyTheme(gd, pageTheme());
        return null;
      }).catch(function () { return null; });
    });
  }
  var watching = false;
  function watchTheme() {
    if (watching) return;
    watching = true;
    if (window.MutationObserver) {
      var obs = new MutationObserver(follow);
      obs.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "data-mode"] });
      if (document.body) obs.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
    }
    if (window.matchMedia) {
      var mq = window.matchMedia("(prefers-color-scheme: dark)");
      if (mq.addEventListener) mq.addEventListener("change", follow);
    }
  }

  function init(id, narrowPx) {
    var gd = typeof id === "string" ? document.getElementById(id) : id;
    if (!gd || !window.Plotly || !gd._fullLayout || gd.getAttribute("data-sd-init")) return;
    if (document.readyState === "loading") {
      // plotly may draw before the parser reached the figure's caption and data tables
      document.addEventListener("DOMContentLoaded", function () { init(gd, narrowPx); });
      return;
    }
    gd.setAttribute("data-sd-init", "1");
    var box = boxOf(gd);
    var number = name(gd, box);
    var controls = sliderControls(gd, box, number);
    figures.push(gd);
    watchTheme();
    var first = Promise.resolve(controls).then(function () { return themeState(gd) && applyTheme(gd, pageTheme()); });
    gd._sdThemeBusy = first.catch(function () { return null; });
    gd._sdThemeBusy.then(function () {
      return gd.clientWidth >= narrowPx ? trimBottom(gd) : null;
    }).catch(function () { return null; }).then(function () {
      narrowScreen(gd, narrowPx);
      follow(); // the theme may have changed meanwhile
    });
  }

  window.sdFigures = { version: VERSION, init: init, readable: readable, contrast: function (a, b) {
    return contrast(parse(a), parse(b));
  } };
})();
