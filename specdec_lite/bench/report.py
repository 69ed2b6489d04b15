"""Render committed benchmark results (``benchmarks/results.json``) as Markdown tables and plotly figures.

The book's Performance page calls these at build time; nothing here runs a benchmark.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .timing import ROOT

RESULTS = ROOT / "benchmarks" / "results.json"
GIB, MIB = 2**30, 2**20
MARK = {True: "met", False: "MISSED", None: "not measured"}


def load(path: str | Path | None = None) -> dict[str, Any]:
    """The results JSON (default: the committed ``benchmarks/results.json``)."""
    return json.loads(Path(path or RESULTS).read_text())


@dataclass(frozen=True)
class Table:
    """A table that prints as Markdown and renders as HTML in notebooks and the book."""

    header: list[str]
    rows: list[list[Any]]

    def __str__(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "|".join("---" for _ in self.header) + "|"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in self.rows)
        return f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def table(header: list[str], rows: list[list[Any]]) -> Table:
    """A :class:`Table`."""
    return Table(list(header), [list(r) for r in rows])


def machine_table(results: dict[str, Any]) -> Table:
    m = results["machine"]
    load_avg = ", ".join(f"{x:.1f}" for x in m.get("load_average") or [])
    rows = [
        ["CPU", f"{m['cpu']} ({m['machine']}), {m['cores']} cores ({m.get('usable_cores')} usable)"],
        ["memory", f"{m['memory_bytes'] / GIB:.1f} GiB" if m.get("memory_bytes") else "?"],
        ["load average at start (1, 5, 15 min)", load_avg or "?"],
        ["numpy BLAS threads", m.get("openblas_threads") or "library default"],
        ["software", f"Python {m['python']}, numpy {m['numpy']}, scipy {m.get('scipy')}, torch {m.get('torch')}, "
                     f"transformers {m.get('transformers')}"],
        ["measured", f"{m['date_utc']}, commit {m.get('git_commit')}, mode {results['mode']}, "
                     f"{results['elapsed_s'] / 60:.1f} min in all"],
    ]
    return table(["", ""], rows)


def goals_table(results: dict[str, Any]) -> Table:
    rows = [[g["what"], g["goal"], g["measured"], MARK[g["met"]]] for g in results["goals"]]
    return table(["what", "goal", "measured", "verdict"], rows)


def samplers_table(results: dict[str, Any]) -> Table:
    rows = []
    for name, r in results["sections"].get("samplers", {}).get("engines", {}).items():
        ref = (f"{r['reference_s_per_run'] * 1e3:.2f} ms ({r['reference_runs_timed']} runs)"
               if r["reference"] else "none")
        speed = f"{r['speedup_vs_reference']:,.0f}×" if r["reference"] else "—"
        settings = ", ".join(f"{k}={v}" for k, v in r["settings"].items())
        rows.append([name + (f" ({settings})" if settings else ""), f"{r['vectorised_s'] * 1e3:.1f} ms",
                     f"{r['token_steps_per_s']:.3g}", ref, speed,
                     f"{r['floor_multiple']:.1f}× ({r['uniforms_per_token_step']:.2f} per token step)"])
    return table(["engine", "vectorised, all runs", "token-steps/s", "reference, per run", "speed-up per run",
                  "time / RNG floor (uniforms)"], rows)


def scaling_table(results: dict[str, Any]) -> Table:
    """One row per engine and axis: exponents fitted on the largest half of the sizes and on all, and the expected."""
    rows = []
    for name, e in results["sections"].get("sampler_scaling", {}).get("engines", {}).items():
        for axis, f in e.get("axes", {}).items():
            rows.append([f"{name} (sampler)", axis, f"{f['fit_tail']['exponent']:.2f}",
                         f"{f['fit_all']['exponent']:.2f}", "1" if axis in ("runs", "T") else "slow growth"])
    for c in results["sections"].get("theory_scaling", {}).get("cases", {}).values():
        for axis, f in c.get("axes", {}).items():
            rows.append([c["title"], axis, f"{f['fit_tail']['exponent']:.2f}", f"{f['fit_all']['exponent']:.2f}",
                         f"{f['expected_exponent']:g}"])
    return table(["engine", "axis", "exponent (largest half)", "exponent (all points)", "expected"], rows)


def memory_table(results: dict[str, Any]) -> Table:
    mem = results["sections"].get("memory", {})
    if "runs" not in mem:
        return table(["memory"], [["not measured"]])
    rows = [[f"{r:,}", f"{u / MIB:.1f} MiB", f"{s / MIB:.1f} MiB"]
            for r, u, s in zip(mem["runs"], mem["tracemalloc_unchunked_bytes"], mem["tracemalloc_chunked_sum_bytes"],
                               strict=True)]
    return table(["runs", "one call (tracemalloc peak)", f"chunked_sum, chunk {mem['chunk_size']:,}"], rows)


def memory_per_engine_table(results: dict[str, Any]) -> Table:
    mem = results["sections"].get("memory", {})
    rows = [[k, f"{v['bytes_per_run']:.0f}", f"{v['projected_1e6_runs_bytes'] / MIB:.0f} MiB"]
            for k, v in mem.get("per_engine", {}).items() if "bytes_per_run" in v]
    return table(["engine", f"bytes per run (V={mem.get('V')}, T={mem.get('T')})", "a million runs, projected"], rows)


def widget_timings(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every timed widget update: the widgets section's, and the real-models one (timed with its model pair)."""
    out = dict(results["sections"].get("widgets", {}).get("updates", {}))
    llm_widget = results["sections"].get("llm", {}).get("widget", {})
    if "median_s" in llm_widget:
        out[f"specdec_lite.widgets.{llm_widget['function']}"] = llm_widget
    return out


def widgets_table(results: dict[str, Any]) -> Table:
    w = results["sections"].get("widgets", {})
    timed = widget_timings(results)
    rows = [[k.split(".")[-1], f"{v['median_s'] * 1e3:.1f} ms", f"{v['first_call_s'] * 1e3:.0f} ms", v["calls"]]
            for k, v in timed.items()]
    rows += [[k.split(".")[-1], "not timed here", "", note] for k, note in w.get("notes", {}).items()
             if k.split(".")[-1] not in {t.split(".")[-1] for t in timed}]
    return table(["update function", "median", "first call", "calls"], rows)


def llm_table(results: dict[str, Any]) -> Table:
    llm = results["sections"].get("llm", {})
    if "skipped" in llm or not llm:
        return table(["real models"], [[f"not measured: {llm.get('skipped', 'no results')}"]])
    rows = [[k, v] for k, v in llm.get("summary", {}).items()]
    return table(["", ""], rows)


def notes(results: dict[str, Any]) -> list[str]:
    """Plain-language notes (Markdown) on every goal that is missed or not measured, from the numbers."""
    out: list[str] = []
    sec = results["sections"]
    goals = [g for g in results["goals"] if g["met"] is not True]
    floors = [g for g in goals if g["met"] is False and "uniforms" in g["what"]]
    if floors:
        listed = ", ".join(f"{g['what'].split(':')[0]} {g['measured']}" for g in floors)
        out.append(
            f"**Time over the random-number floor** (goal ≤ 5×): {listed}. Besides drawing its uniforms a "
            "sampler makes several passes over all runs at every position (the inverse-CDF search, the look-up of "
            "the acceptance probability, the rejection mask and the residual draw for rejected runs, writing the "
            "token column), and each pass costs about as much as drawing the uniforms or more. Closing the gap "
            "would mean fusing these passes in compiled code, which the package avoids to stay plain numpy."
            + _inverse_cdf_sentence(sec.get("samplers", {}).get("inverse_cdf"))
        )
    for g in goals:
        what = g["what"]
        if g in floors:
            continue
        if g["met"] is None:
            out.append(f"**{what}**: not measured" + (f": {g['note']}." if g.get("note") else "."))
        elif what.startswith("Theorem 1"):
            out.append(_theorem1_note(g, sec["theory_scaling"]["cases"]["theorem1"]["axes"]))
        elif g["section"] == "widgets":
            out.append(f"**{what}**: {g['measured']} (goal {g['goal']}) at its default setting: a reader waits "
                       "that long after moving a slider, before the browser draws the figure.")
        elif g["section"] == "llm":
            llm = sec["llm"]
            out.append(
                f"**{what}**: {g['measured']} (goal {g['goal']}). The prediction counts only forward passes "
                f"(a draft call costs c = {llm['costs']['c']:.3f} target calls, acceptance rate "
                f"{llm['acceptance_rate']:.2f}); each round of the engine also pays Python-side work that the model "
                "leaves out (sampling, acceptance tests, cropping both caches), which weighs more the smaller the "
                "models are.")
        else:
            out.append(f"**{what}**: {g['measured']} (goal {g['goal']}).")
    return out


def _theorem1_note(goal: dict[str, Any], axes: dict[str, Any]) -> str:
    parts = []
    for axis, want in (("T", 1.0), ("V", 2.0)):
        f = axes[axis]
        e = f["fit_tail"]["exponent"]
        if abs(e - want) <= 0.3:
            continue
        fixed = "V" if axis == "T" else "T"
        big = max(f["x"])
        size = (big * f["base"][fixed] ** 2 if axis == "T" else f["base"][fixed] * big**2) * 8 / MIB
        where = f"over {axis} (at {fixed} = {f['base'][fixed]}) the exponent is {e:.2f}"
        if e > want and size < 16:
            parts.append(f"{where} > {want:g}, although the largest table takes only {size:.1f} MiB: at these small "
                         "sizes the times are fractions of a millisecond and the fit follows timing noise")
        elif e > want:
            parts.append(f"{where} > {want:g}: at the largest size each (T, V, V) table takes {size:.0f} MiB, beyond "
                         "the CPU caches, and the pass allocates several of them (the laws of both chains, |p - q|), "
                         "so memory traffic grows faster than the arithmetic")
        else:
            parts.append(f"{where} < {want:g}: at these sizes a fixed cost per call or per position (numpy calls in "
                         "the loop over positions) still hides part of the arithmetic")
    return (f"**{goal['what']}**: {goal['measured']} instead of T·V²; " + "; ".join(parts)
            + ". The algorithm itself is one pass with O(T V²) arithmetic (see the curves in the section on how "
            "cost grows).")


def _inverse_cdf_sentence(icdf: dict[str, Any] | None) -> str:
    if not icdf:
        return ""
    return (f" The largest of these passes is the inverse-CDF draw: one `sample_rows` call for {icdf['runs']:,} runs "
            f"(a binary search per run, V = {icdf['V']}) took {icdf['sample_rows_s'] * 1e6:.0f} µs, "
            f"{icdf['ratio']:.0f}× the {icdf['uniforms_s'] * 1e6:.0f} µs to draw the uniforms it searches for.")


def llm_rows_table(results: dict[str, Any]) -> Table:
    """Tokens per second of every method the real-model section ran."""
    llm = results["sections"].get("llm", {})

    def fmt(x: Any, spec: str) -> str:
        return "—" if x is None else format(x, spec)

    rows = [[r["method"], r["lookahead"] or "—", fmt(r["tokens_per_second"], ".1f"), fmt(r["speedup"], ".2f") + "×",
             fmt(r["acceptance_rate"], ".3f"), fmt(r["tokens_per_call"], ".2f"), fmt(r["predicted_speedup"], ".2f")]
            for r in llm.get("rows", [])]
    return table(["method", "K", "tokens/s", "vs our autoregressive", "acceptance rate", "tokens per target call",
                  "predicted speed-up"], rows)


def _log_axes(fig: Any, rows: int, cols: int) -> None:
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            fig.update_xaxes(type="log", row=r, col=c)
            fig.update_yaxes(type="log", row=r, col=c)


def figures(results: dict[str, Any]) -> dict[str, Any]:
    """Plotly figures: sampler scaling, theory scaling, memory over runs, widget latency."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs: dict[str, Any] = {}
    scaled = results["sections"].get("sampler_scaling", {}).get("engines", {})
    engines = {k: v for k, v in scaled.items() if "axes" in v}
    if engines:
        fig = make_subplots(rows=1, cols=3, subplot_titles=("runs", "horizon T", "vocabulary V"))
        for i, (name, e) in enumerate(engines.items()):
            for c, axis in enumerate(("runs", "T", "V"), start=1):
                f = e["axes"][axis]
                fig.add_trace(go.Scatter(x=f["x"], y=f["seconds"], mode="lines+markers", name=name, legendgroup=name,
                                         showlegend=c == 1, marker_color=_color(i),
                                         hovertemplate=f"{name}<br>{axis}=%{{x}}<br>%{{y:.3g}} s"
                                                       f"<br>exponent {f['fit_tail']['exponent']:.2f}<extra></extra>"),
                              1, c)
        _log_axes(fig, 1, 3)
        fig.update_yaxes(title_text="seconds", row=1, col=1)
        fig.update_layout(title="Samplers: CPU time (log-log)", height=460, legend=dict(orientation="h", y=-0.2))
        figs["sampler_scaling"] = fig
    cases = {k: v for k, v in results["sections"].get("theory_scaling", {}).get("cases", {}).items() if "axes" in v}
    if cases:
        axes = [a for a in ("T", "V", "M", "K") if any(a in c["axes"] for c in cases.values())]
        fig = make_subplots(rows=1, cols=len(axes), subplot_titles=axes)
        for i, (name, c) in enumerate(cases.items()):
            for col, axis in enumerate(axes, start=1):
                if axis not in c["axes"]:
                    continue
                f = c["axes"][axis]
                fig.add_trace(go.Scatter(x=f["x"], y=f["seconds"], mode="lines+markers", name=name, legendgroup=name,
                                         showlegend=name not in {t.name for t in fig.data}, marker_color=_color(i),
                                         hovertemplate=f"{name}<br>{axis}=%{{x}}<br>%{{y:.3g}} s<br>exponent "
                                                       f"{f['fit_tail']['exponent']:.2f} (expect "
                                                       f"{f['expected_exponent']:g})<extra></extra>"),
                              1, col)
        _log_axes(fig, 1, len(axes))
        fig.update_yaxes(title_text="seconds", row=1, col=1)
        fig.update_layout(title="Exact theory: CPU time (log-log)", height=460, legend=dict(orientation="h", y=-0.2))
        figs["theory_scaling"] = fig
    mem = results["sections"].get("memory", {})
    if "runs" in mem:
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=mem["runs"], y=[b / MIB for b in mem["tracemalloc_unchunked_bytes"]],
                                 mode="lines+markers", name="one call"))
        fig.add_trace(go.Scatter(x=mem["runs"], y=[b / MIB for b in mem["tracemalloc_chunked_sum_bytes"]],
                                 mode="lines+markers", name=f"chunked_sum, chunk {mem['chunk_size']:,}"))
        fig.add_hline(y=GIB / MIB, line_dash="dot", annotation_text="1 GiB")
        fig.update_xaxes(type="log", title_text="runs")
        fig.update_yaxes(type="log", title_text="peak MiB (tracemalloc)")
        fig.update_layout(title=f"Peak memory of speculative decoding, V={mem['V']}, T={mem['T']}", height=400)
        figs["memory"] = fig
    updates = widget_timings(results)
    if updates:
        names = [k.split(":")[-1] for k in updates]
        fig = go.Figure(go.Bar(x=names, y=[v["median_s"] * 1e3 for v in updates.values()], name="median"))
        fig.add_hline(y=100, line_dash="dot", annotation_text="goal: 100 ms")
        fig.update_layout(title="Widget update latency at default settings (median)", yaxis_title="ms", height=380)
        figs["widgets"] = fig
    return figs


def _color(i: int) -> str:
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f", "#17becf", "#8c564b"]
    return palette[i % len(palette)]
