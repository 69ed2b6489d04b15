"""A plotly figure in words and numbers, for readers who do not see the plot.

``description`` says in a sentence or two what a figure shows (its title, its axes, the
names of its traces, its slider); ``data_tables`` gives its numbers as HTML tables a
reader can unfold under the figure: x and y of every trace (traces that share their x
values share a table), the cells of a heatmap, the bins of a histogram. Long traces are
thinned to ``MAX_ROWS`` evenly spaced points; numbers keep 4 significant digits. For a
figure with a slider there is one set of tables per step, and only the step on show is
visible (``figures.js`` switches them as the slider moves).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._i18n import _, chinese_breaks, display_width, language

#: At most this many rows (points of a trace, rows of a heatmap) and heatmap columns per table.
MAX_ROWS = 60
MAX_COLUMNS = 25
#: A value of a linear axis's column smaller than this share of the column's largest value is printed as 0: it is
#: below the rounding error of single-precision arithmetic (about 6e-8 of that value), e.g. a loss that is exactly
#: 0 computed as 6e-10 or 1.7e-15; on a log axis every magnitude is data and is printed as it is.
NOISE = 1e-8


def plain(text: Any) -> str:
    """Text without plotly's HTML tags (``<br>`` becomes a space, or nothing after full-width punctuation; ``<sub>``
    becomes ``_``) and entities."""
    if text is None:
        return ""
    s = re.sub(r"(?<=[\u3000-\u303f\uff00-\uffef])\s*<br\s*/?>\s*", "", str(text), flags=re.I)
    s = re.sub(r"<br\s*/?>", " ", s, flags=re.I)
    s = re.sub(r"<sub>", "_", s, flags=re.I)  # E[N<sub>rej</sub>] as E[N_rej]: not one word "Nrej"
    s = html.unescape(re.sub(r"<[^>]*>", "", s))
    return re.sub(r"\s+", " ", s).strip()


#: Stand-ins for plotly's sub- and superscript tags in a table's text, which ``_table`` writes back as HTML tags
#: after escaping the rest (private-use characters: no text has them).
_MARKS = {"<sub>": "\ue000", "</sub>": "\ue001", "<sup>": "\ue002", "</sup>": "\ue003"}


def marked(text: Any) -> str:
    """``plain`` text that keeps its sub- and superscripts (``P<sup>A</sup>``, ``x<sub>1:T</sub>``), for a table's
    header and caption: there the page sets them as the plot does, not as ``PA`` or ``x_1:T``."""
    s = "" if text is None else str(text)
    for tag, mark in _MARKS.items():
        s = re.sub(re.escape(tag), mark, s, flags=re.I)
    return plain(s)


def _html(text: str) -> str:
    """``text`` escaped for HTML, its sub- and superscript stand-ins written back as tags."""
    s = html.escape(text)
    for tag, mark in _MARKS.items():
        s = s.replace(mark, tag)
    return s


def number(v: Any) -> str:
    """A value as the table shows it: 4 significant digits, integers whole, text as it is."""
    if v is None:
        return "–"
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        f = float(v)
        if math.isnan(f):
            return "–"
        if f.is_integer() and abs(f) < 1e15:
            return str(int(f))
        return f"{f:.4g}"
    return plain(v)


def _magnitude(values: Sequence[Any]) -> float:
    """The largest magnitude among the finite floats of ``values`` (0 if none)."""
    return max((abs(float(v)) for v in values if isinstance(v, float | np.floating) and math.isfinite(v)), default=0.0)


def column(values: Sequence[Any], scale: float | None = None) -> list[str]:
    """``values`` as a table's column shows them (``number``), rounding error printed as 0: a float smaller than
    ``NOISE`` times ``scale``, the largest magnitude drawn on the column's axis (default: the column's own largest;
    0 prints every value as it is, as a log axis needs)."""
    tiny = NOISE * (_magnitude(values) if scale is None else scale)
    return [number(0.0 if isinstance(v, float | np.floating) and abs(v) < tiny else v) for v in values]


def _axis_scale(fig: Any, ref: str | None, letter: str) -> float:
    """The largest magnitude drawn on axis ``ref`` (``"x"``, ``"y2"``) of ``fig``: 0 for a log axis."""
    key = f"{letter}axis" + (ref[1:] if ref and len(ref) > 1 else "")
    if key in fig.layout and fig.layout[key].type == "log":
        return 0.0
    ref = ref or letter
    on_axis = [t for t in fig.data if (getattr(t, f"{letter}axis", None) or letter) == ref]
    values = [_table_x(t) if letter == "x" else _values(getattr(t, "y", None)) for t in on_axis]
    return max((_magnitude(v) for v in values if v), default=0.0)


def shown_points(n: int, limit: int = MAX_ROWS) -> list[int]:
    """Indices of the points a table lists: all of them up to ``limit``, else ``limit`` evenly spaced ones."""
    if n <= limit:
        return list(range(n))
    return sorted({int(round(i)) for i in np.linspace(0, n - 1, limit)})


def _values(v: Any) -> list[Any] | None:
    if v is None:
        return None
    return list(np.asarray(v, dtype=object).ravel()) if not isinstance(v, str) else [v]


def _table_x(t: Any) -> list[Any] | None:
    """A trace's x as its table gives it: ``meta["x"]`` where the plot draws a stand-in (``ε = 0`` at the left
    edge of a log axis), else its x."""
    meta = getattr(t, "meta", None)
    if isinstance(meta, dict) and "x" in meta:
        return _values(meta["x"])
    return _values(getattr(t, "x", None))


def _axis_title(fig: Any, ref: str | None, letter: str, text: Any = plain) -> str:
    """The title of axis ``ref`` as ``text`` gives it (``plain``, or ``marked`` for a table)."""
    key = f"{letter}axis" + (ref[1:] if ref and len(ref) > 1 else "")
    axis = fig.layout[key] if key in fig.layout else None
    return text(axis.title.text) if axis is not None and axis.title.text else ""


def _panel(fig: Any, t: Any) -> str:
    """The title of the panel that trace ``t`` is drawn in, for a figure of several panels (a title annotation
    over the middle of its axes); "" for a figure of one panel or a panel without a title."""
    xref, yref = getattr(t, "xaxis", None) or "x", getattr(t, "yaxis", None) or "y"
    xkey, ykey = "xaxis" + xref[1:], "yaxis" + yref[1:]
    if xkey not in fig.layout or ykey not in fig.layout:
        return ""
    if not any(k.startswith("xaxis") and k != "xaxis" and fig.layout[k].domain for k in fig.layout):
        return ""
    x0, x1 = fig.layout[xkey].domain or (0, 1)
    top = (fig.layout[ykey].domain or (0, 1))[1]
    for a in fig.layout.annotations or ():
        if a.xref == "paper" and a.yref == "paper" and a.x is not None and a.y is not None and a.text:
            if x0 <= a.x <= x1 and abs(a.x - (x0 + x1) / 2) < 0.02 and abs(a.y - top) < 0.03:
                return marked(a.text)
    return ""


def _title(fig: Any) -> str:
    return plain(fig.layout.title.text) if fig.layout.title and fig.layout.title.text else ""


def step_traces(fig: Any) -> list[tuple[str, list[int]]]:
    """(label, indices of its traces) per slider step; one unlabelled entry for a figure without one."""
    sliders = fig.layout.sliders or ()
    every = [i for i, t in enumerate(fig.data) if t.visible is not False]
    if not sliders:
        return [("", every)]
    slider = sliders[0]
    prefix = (slider.currentvalue.prefix or "") if slider.currentvalue else ""
    out = []
    for step in slider.steps:
        visible = step.args[0].get("visible") if step.args and isinstance(step.args[0], dict) else None
        idx = every if visible is None else [i for i, v in enumerate(visible) if v is True or v == "legendonly"]
        out.append((plain(f"{prefix}{step.label}"), idx))
    return out


def description(fig: Any) -> str:
    """What the figure shows, in words: title, axes, trace names, slider."""
    parts = []
    title = _title(fig)
    if title:
        parts.append(_("{title}.").format(title=title))
    x, y = _axis_title(fig, "x", "x"), _axis_title(fig, "y", "y")
    if x or y:
        parts.append(
            _("Horizontal axis: {x}; vertical axis: {y}.").format(x=x or _("unlabelled"), y=y or _("unlabelled"))
        )
    steps = step_traces(fig)
    active = (fig.layout.sliders[0].active or 0) if fig.layout.sliders else 0
    names: list[str] = []
    for i in steps[active][1]:
        t = fig.data[i]
        name = plain(t.name)
        if not name and t.type in ("heatmap", "contour"):
            bar = plain(t.colorbar.title.text) if t.colorbar and t.colorbar.title else ""
            name = _("a heatmap of {what}").format(what=bar) if bar else _("a heatmap")
        if name and name not in names:
            names.append(name)
    if names:
        shown = _("; ").join(names[:8])
        if len(names) > 8:
            parts.append(_("Shows {names} and {more} more.").format(names=shown, more=len(names) - 8))
        else:
            parts.append(_("Shows {names}.").format(names=shown))
    if fig.layout.sliders:
        slider = fig.layout.sliders[0]
        what = plain(slider.currentvalue.prefix or "").rstrip(" =:") or _("step")
        parts.append(
            _("A slider sets {what} ({n} steps, from {first} to {last}).").format(
                what=what, n=len(slider.steps), first=steps[0][0], last=steps[-1][0]
            )
        )
    return ("" if language() == "zh_CN" else " ").join(parts) or _("A plot.")


_RELATION = re.compile(r" ([=≤≥≈<>−+·×]) ")


#: A word (three letters or more, not a function such as min nor a tag such as sup): brackets holding one
#: hold a phrase, not a formula.
_WORD = re.compile(r"\b(?!(?:min|max|exp|log|sum|sub|sup)\b)[A-Za-z]{3,}|[\u4e00-\u9fff]")
#: A name or sign and the number after it ("定理 1", "± 2", "ε 0.05"); a number and the Chinese word after it.
_BEFORE_NUMBER = re.compile("([±A-Za-z\u4e00-\u9fff]) (?=\\d)")
_AFTER_NUMBER = re.compile("(\\d) (?=[\u4e00-\u9fff])")


def glued(text: str) -> str:
    """``text`` with no-break spaces where a line must not break: around a relation or an operator
    (``q − p``, ``T = 50``), between a name or sign and its number (``定理 1``, ``± 2``), a number and its
    Chinese word (``50 次``) and inside a short bracketed formula (``(1, q/p)``, ``[q − p]``)."""
    text = _RELATION.sub("\u00a0\\1\u00a0", text)
    text = _BEFORE_NUMBER.sub("\\1\u00a0", _AFTER_NUMBER.sub("\\1\u00a0", text))
    # a formula's brackets, nested ones too, not a phrase's ("(1, q/p)", "min(1, max(0, (q + ε)/p))" whole;
    # "(the 40 most likely)" breaks)
    out, opened = list(text), []
    for i, ch in enumerate(text):
        if ch in "([":
            opened.append(i)
        elif ch in ")]" and opened:
            start = opened.pop()
            if not opened and i - start <= 40 and not _WORD.search(text[start : i + 1]):
                out[start : i + 1] = ["\u00a0" if c == " " else c for c in out[start : i + 1]]
    return "".join(out)


#: The hyphen of a name such as "Decoding-OPT": a header never breaks at it (a no-break hyphen takes its place).
_NAME_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Z]{2,}\b)")
#: Where a header's line may break: a space, a zero-width space (``chinese_breaks``) or Chinese punctuation.
_HEADER_BREAK = re.compile("[ \u200b]|(?<=[，。；：、）」』》！？])|(?=[（「『《])")


def _header(text: str) -> str:
    """A column's header cell, at least as wide as two or three lines of its words take and as its longest
    unbreakable piece (at most 8 em): in a table squeezed into a phone's width a long name would otherwise stand
    one word a line, five or six lines tall, or break inside a word ("被接受的草" over "稿："). Its formulas stay
    whole (``glued``); its Chinese words too (``chinese_breaks``, with figures.css's keep-all)."""
    text = chinese_breaks(_NAME_HYPHEN.sub("\u2011", glued(text)))
    longest = max(display_width(piece) for piece in _HEADER_BREAK.split(text))
    # about 2 columns of text an em (a Chinese character: 1), and room for the cell's padding
    em = min(8.0, max(3.0, display_width(text) / 5, longest / 1.8 + 0.9))
    return f'<th scope="col" style="min-width:{em:.1f}em">{_html(text)}</th>'


def _table(caption: str, head: Sequence[str], rows: Sequence[tuple[int, str, Sequence[str]]], attrs: str) -> str:
    """A table; ``caption`` and ``head`` are ``marked`` text (their sub- and superscripts set as such)."""
    th = "".join(_header(h) for h in head)
    body = "".join(
        f'<tr data-i="{i}"><th scope="row">{html.escape(first)}</th>'
        + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        + "</tr>"
        for i, first, cells in rows
    )
    # "Decoding-OPT", a formula ("TV·[q − p]₊") and a Chinese word ("草稿树") stay whole (figures.css: keep-all)
    caption = _html(chinese_breaks(glued(_NAME_HYPHEN.sub("\u2011", caption))))
    return (
        f'<div class="sd-table-scroll" tabindex="0"><table class="sd-data-table" {attrs}>'
        f"<caption>{caption}</caption><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _note(n: int, shown: int, what: str = "points") -> str:
    if shown == n:
        return ""
    if what == "rows":
        return _(" ({shown} of {n} rows, evenly spaced)").format(shown=shown, n=n)
    if what == "columns":
        return _(" ({shown} of {n} columns, evenly spaced)").format(shown=shown, n=n)
    return _(" ({shown} of its {n} plotted points)").format(shown=shown, n=n)


def _heatmap(fig: Any, i: int) -> str:
    t = fig.data[i]
    z = np.asarray(t.z, dtype=object)
    xs = _values(t.x) or list(range(z.shape[1]))
    ys = _values(t.y) or list(range(z.shape[0]))
    rows_i, cols_j = shown_points(z.shape[0]), shown_points(z.shape[1], MAX_COLUMNS)
    xt, yt = _axis_title(fig, t.xaxis, "x", marked) or "x", _axis_title(fig, t.yaxis, "y", marked) or "y"
    head = [f"{yt} \\ {xt}"] + [number(xs[j]) for j in cols_j]
    cells = np.asarray(column(list(z.ravel())), dtype=object).reshape(z.shape)
    rows = [(r, number(ys[r]), [cells[r, j] for j in cols_j]) for r in rows_i]
    caption = marked(t.name) or _("heatmap")
    caption += _note(z.shape[0], len(rows_i), "rows") + _note(z.shape[1], len(cols_j), "columns")
    cols = ",".join(str(j) for j in cols_j)
    return _table(caption, head, rows, f'data-sd-traces="{i}" data-sd-kind="heatmap" data-sd-columns="{cols}"')


def _histogram(fig: Any, i: int) -> str:
    t = fig.data[i]
    x = np.asarray([v for v in _values(t.x) or [] if v is not None], dtype=float)
    xbins = t.xbins
    if xbins is not None and xbins.start is not None and xbins.size is not None:  # the plot's own bins
        end = xbins.end if xbins.end is not None else max(float(x.max(initial=xbins.start)), xbins.start) + xbins.size
        edges = xbins.start + xbins.size * np.arange(round((end - xbins.start) / xbins.size) + 1)
        counts, edges = np.histogram(x, bins=edges)
    else:
        counts, edges = np.histogram(x, bins=t.nbinsx or 20)
    xt = _axis_title(fig, t.xaxis, "x", marked) or _("value")
    rows = [
        (k, _("{low} to {high}").format(low=number(edges[k]), high=number(edges[k + 1])), [str(c)])
        for k, c in enumerate(counts)
    ]
    caption = _("{name}: {n} values in {bins} equal bins").format(
        name=marked(t.name) or _("histogram"), n=len(x), bins=len(counts)
    )
    return _table(caption, [xt, _("count")], rows, f'data-sd-traces="{i}" data-sd-kind="histogram"')


def _region(fig: Any, i: int) -> str | None:
    """The table of a shaded region (``fill="toself"``): a band drawn there and back (its x, then the same x
    reversed) as its lower and upper edge at each x; any other shape as its corners. None for other traces."""
    t = fig.data[i]
    if getattr(t, "fill", None) != "toself":
        return None
    x, y = _table_x(t), _values(getattr(t, "y", None))
    if not x or not y or len(x) != len(y):
        return None
    name = marked(t.name) or _("shaded region")
    xt = _axis_title(fig, t.xaxis, "x", marked) or "x"
    n = len(x)
    attrs = f'data-sd-traces="{i}" data-sd-kind="region"'
    if n % 2 == 0 and [number(v) for v in x[: n // 2]] == [number(v) for v in x[n // 2 :][::-1]]:
        shown = shown_points(n // 2)
        ys = column(y, _axis_scale(fig, t.yaxis, "y"))
        rows = [(k, number(x[k]), [ys[j] for j in sorted((k, n - 1 - k), key=lambda j: float(y[j]))]) for k in shown]
        head = [xt, _("lower edge"), _("upper edge")]
        caption = _("{name}: the band's lower and upper edge").format(name=name) + _note(n // 2, len(shown))
        return _table(caption, head, rows, attrs)
    if n > 1 and (number(x[-1]), number(y[-1])) == (number(x[0]), number(y[0])):
        n -= 1  # a closed outline ends where it starts: that corner is listed once
    shown = shown_points(n)
    ys = column(y[:n], _axis_scale(fig, t.yaxis, "y"))
    rows = [(k, number(x[k]), [ys[k]]) for k in shown]
    head = [xt, _axis_title(fig, t.yaxis, "y", marked) or "y"]
    caption = _("{name}: the corners of the shaded region").format(name=name) + _note(n, len(shown))
    return _table(caption, head, rows, attrs)


def _error_bars(t: Any) -> list[Any] | None:
    """The half-widths of trace ``t``'s vertical error bars, one per point (symmetric bars given as data or as one
    constant); None for a trace without them."""
    e = getattr(t, "error_y", None)
    if e is None or e.visible is False or e.type not in ("data", "constant", None):
        return None
    n = len(_values(getattr(t, "y", None)) or [])
    if e.array is not None and (e.type in ("data", None)):
        return _values(e.array)
    if e.type == "constant" and e.value is not None:
        return [e.value] * n
    return None


#: A note in brackets at the end of a trace's name: "q (bars: ± 2 SE)", "…, Monte Carlo (2000 runs, ±2 SE)".
_BRACKET_NOTE = re.compile(r"\s*[(（][^()（）]*[)）]$")


def _column_name(t: Any) -> str:
    """What a trace's column is headed by: its ``meta["header"]`` if it has one (a short name for a trace whose
    legend shows a formula too long for a phone's column, "rule b"), else its name."""
    meta = t.meta if isinstance(t.meta, dict) else {}
    return marked(meta.get("header") or t.name)


def _shared_tail(names: Sequence[str]) -> tuple[list[str], str]:
    """Trace names that all end in the same words after a colon ("Algorithm 4: Monte Carlo (200 runs, ±2 SE)",
    "draft tree: Monte Carlo (200 runs, ±2 SE)"): their heads ("Algorithm 4", "draft tree") and that tail, which
    the caption then says once instead of every column's header. Otherwise the names as they are and ""."""
    if len(names) < 2:
        return list(names), ""
    for sep in (": ", "："):
        parts = [name.split(sep, 1) for name in names]
        if not all(len(part) == 2 and part[0] for part in parts):
            continue
        heads, tails = [part[0] for part in parts], {part[1] for part in parts}
        tail = tails.pop()
        # the tail must hold a word or a name, not only a value that two traces happen to share ("…: 0.00"); one
        # letter is enough, so that both languages factor the same tails ("best K ≥ 30", "最优 K ≥ 30")
        if not tails and len(set(heads)) == len(heads) and any(ch.isalpha() for ch in tail):
            return heads, tail
    return list(names), ""


def _legend_reversed(fig: Any, traces: Sequence[int]) -> bool:
    """Whether plotly lists these traces' legend entries last to first: in a figure with stacked bars
    (``barmode="stack"``) its default order is reversed for every entry, unless the legend's order is set or the
    traces are grouped."""
    return (
        len(traces) > 1
        and fig.layout.barmode == "stack"
        and fig.layout.legend.traceorder is None
        and any(t.type == "bar" for t in fig.data)
        and not any(fig.data[i].legendgroup for i in traces)
    )


def _xy_tables(fig: Any, idx: Sequence[int]) -> list[str]:
    groups: dict[tuple[str, ...], list[int]] = {}
    regions = []
    for i in idx:
        t = fig.data[i]
        region = _region(fig, i)
        if region is not None:
            regions.append(region)
            continue
        y = _values(getattr(t, "y", None))
        x = _table_x(t)
        if y is None and x is None:
            continue
        n = len(y if y is not None else x)
        xs = x if x is not None and len(x) == n else list(range(n))
        groups.setdefault((str(t.xaxis), *(number(v) for v in xs)), []).append(i)
    out = []
    for traces in groups.values():
        if _legend_reversed(fig, traces):
            traces = traces[::-1]  # the columns in the legend's order, top to bottom as the bars stack
        first = fig.data[traces[0]]
        x = _table_x(first)
        ys = [_values(fig.data[i].y) for i in traces]
        n = len(x) if x is not None else len(ys[0] or [])
        xs = x if x is not None and len(x) == n else list(range(n))
        head = [_axis_title(fig, first.xaxis, "x", marked) or ("x" if x is not None else _("point"))]
        names, tail = _shared_tail([_column_name(fig.data[i]) for i in traces])
        # a trace with error bars and a note in brackets ("q (bars: ± 2 SE)") heads its columns without the note;
        # the caption, which names the traces, keeps it
        heads = [
            _BRACKET_NOTE.sub("", name) if _error_bars(fig.data[i]) is not None else name
            for name, i in zip(names, traces, strict=True)
        ]
        quantity = _axis_title(fig, first.yaxis, "y", marked)
        if tail:
            quantity = _("{quantity}, {common}").format(quantity=quantity, common=tail) if quantity else tail
        # one trace: its column is headed by the quantity it holds (the y axis's title), the caption names the
        # trace; several: a column each, headed by its trace, the caption naming the quantity they all hold
        alone = len(traces) == 1 and bool(names[0]) and bool(quantity)
        if alone:
            head.append(quantity)
        else:
            for name, i in zip(heads, traces, strict=True):
                head.append(name or _axis_title(fig, fig.data[i].yaxis, "y", marked) or "y")
        # a trace's own columns (meta "columns": {name: values}), e.g. the ε of each point of a trade-off curve,
        # and the half-widths of its error bars; a column that several traces share (the same name, the same
        # values) stands once, headed by its name alone
        added: dict[tuple[str, tuple[str, ...]], int] = {}
        for name_of_trace, i in zip(heads, traces, strict=True):
            meta = fig.data[i].meta
            columns = dict(meta.get("columns", {})) if isinstance(meta, dict) else {}
            bars = _error_bars(fig.data[i])
            if bars is not None:
                columns[_("± (error bar)")] = bars  # its half-width
            for name, values in columns.items():
                key = (marked(name), tuple(number(v) for v in _values(values)))
                if key in added:
                    head[added[key]] = marked(name)
                    continue
                whose = name_of_trace
                shared = len(traces) > 1 and whose  # several traces' columns side by side: say whose
                added[key] = len(head)
                head.append(_("{trace}: {column}").format(trace=whose, column=marked(name)) if shared else marked(name))
                ys.append(_values(values))
        scales: list[float | None] = [_axis_scale(fig, fig.data[i].yaxis, "y") for i in traces]
        scales += [None] * (len(ys) - len(scales))  # a trace's own columns, on no axis: their own scale
        xcol = column(xs, _axis_scale(fig, first.xaxis, "x") if x is not None else None)
        cols = [column(y, scale) if y is not None else [] for y, scale in zip(ys, scales, strict=True)]
        shown = shown_points(n)
        rows = [(k, xcol[k], [c[k] if k < len(c) else "–" for c in cols]) for k in shown]
        if alone:
            what = names[0]
        elif quantity and len({fig.data[i].yaxis for i in traces}) == 1:
            what = _("{quantity}: {names}").format(quantity=quantity, names=_("; ").join(filter(None, names)))
        else:
            what = _("; ").join(name or h for name, h in zip(names, head[1:], strict=False))  # not their own columns
            if tail:
                what = _("{quantity}: {names}").format(quantity=tail, names=what)
        panel = _panel(fig, first)
        caption = (_("{panel}: {what}").format(panel=panel, what=what) if panel else what) + _note(n, len(shown))
        out.append(_table(caption, head, rows, f'data-sd-traces="{",".join(map(str, traces))}" data-sd-kind="xy"'))
    return out + regions


def tables(fig: Any, idx: Sequence[int]) -> str:
    """The tables of the traces ``idx`` of ``fig``."""
    out = []
    xy = []
    for i in idx:
        kind = fig.data[i].type
        if kind in ("heatmap", "contour"):
            out.append(_heatmap(fig, i))
        elif kind == "histogram":
            out.append(_histogram(fig, i))
        else:
            xy.append(i)
    return "".join(_xy_tables(fig, xy) + out)


def data_tables(fig: Any, summary: str | None = None) -> str:
    """A ``<details>`` with the figure's numbers (for a slider figure one set of tables per step).

    Its summary is ``summary`` (default: "Data of this figure" in the current language); its
    ``data-sd-numbered`` attribute is the summary for a numbered figure, ``{number}`` standing
    for the figure's number (e.g. "Figure 1.1"), which the page's script fills in."""
    if summary is None:
        summary = _("Data of this figure")
    numbered = html.escape(_("Data of {number}"), quote=True)
    steps = step_traces(fig)
    if not fig.layout.sliders:
        body = tables(fig, steps[0][1])
    else:
        active = fig.layout.sliders[0].active or 0
        body = "".join(
            f'<div class="sd-step-data" data-sd-slider="0" data-sd-step="{k}"{"" if k == active else " hidden"}>'
            f"<p>{html.escape(label)}</p>{tables(fig, idx)}</div>"
            for k, (label, idx) in enumerate(steps)
        )
    return (
        f'<details class="sd-figure-data"><summary data-sd-numbered="{numbered}">{html.escape(summary)}</summary>'
        f"{body}</details>"
    )
