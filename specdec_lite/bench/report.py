"""Render committed benchmark results (``benchmarks/results.json``) as Markdown tables and plotly figures.

The book's Performance page calls these at build time; nothing here runs a benchmark.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._i18n import N_, _
from .timing import ROOT

RESULTS = ROOT / "benchmarks" / "results.json"
GIB, MIB = 2**30, 2**20
#: Below this a timed point is dominated by fixed costs and noise, and a fitted exponent says little.
MIN_FIT_SECONDS = 0.010

# The names of the things ``results.json`` keys, as the tables and figures show them (translated where shown, by
# :func:`_shown`); the JSON keeps its keys and its English. A key missing here, or a JSON text other than the one
# below, is shown as the JSON has it.

#: The samplers (``samplers`` and ``sampler_scaling`` engines), by key.
ENGINE_NAMES = {
    "speculative": N_("speculative"),
    "batch": N_("batch"),
    "tree": N_("tree"),
    "biased": N_("biased"),
    "lookahead": N_("lookahead"),
    "autoregressive": N_("autoregressive"),
}

#: Why a sampler has no per-run reference loop (an engine's ``note``), by engine key.
ENGINE_NOTES = {
    "biased": N_("the package has no per-run reference loop for biased verification"),
    "autoregressive": N_("baseline engine: there is no per-run reference loop for it"),
}

#: The cases of the exact theory (``theory_scaling`` cases) in a figure's legend, by key.
CASE_NAMES = {
    "theorem1": N_("theorem1"),
    "batch": N_("batch"),
    "tree": N_("tree"),
    "lookahead": N_("lookahead"),
}

#: The cases in the theory figure's legend, by key.
CASE_LEGENDS = {"theorem1": N_("Theorem 1")}

#: The cases' titles (a case's ``title``), by key.
CASE_TITLES = {
    "theorem1": N_("Theorem 1: expected_rejections"),
    "batch": N_("Theorem 3: expected_rejections_batch"),
    "tree": N_("draft tree: expected_rejections_tree"),
    "lookahead": N_("finite K: expected_rejections_k"),
}

#: Why a widget update is not timed in the widgets section (its ``notes``), by the update's name.
WIDGET_NOTES = {
    "specdec_lite.widgets.real_models:generation_update": N_("needs a model pair: timed in the real-models section"),
}

#: The axes of the scaling curves that are words, not symbols (T, V, M, K), by key.
AXIS_NAMES = {"runs": N_("runs")}

#: The methods of the real-model rows (a row's ``method``), by name.
METHOD_NAMES = {
    "autoregressive": N_("autoregressive"),
    "speculative": N_("speculative"),
    "HF autoregressive": N_("HF autoregressive"),
    "HF assisted": N_("HF assisted"),
}

#: The rows of the real-model summary (its keys, some with a number or a name in them), and the model pair's
#: description (``llm.pairs.ModelPair.describe``), as templates: a key or value that fits one is shown translated.
SUMMARY_TEMPLATES = (
    N_("pair"),
    N_("cost ratio c = t_draft / t_target"),
    N_("acceptance rate (K = {K})"),
    N_("speculative / autoregressive (ours)"),
    N_("predicted from acceptance rate and costs"),
    N_("achieved / predicted"),
    N_("HF assisted / HF autoregressive"),
    N_("ours speculative / HF assisted"),
    N_("ours autoregressive / HF autoregressive"),
    N_("widget {function} at defaults (median)"),
    N_("offline pair trained by specdec_lite on the Python standard library: draft {draft}, target {target} ({where})"),
    N_("draft {draft} → target {target} ({where})"),
)


def _shown(names: dict[str, str], key: str, text: str | None = None) -> str:
    """What ``results.json`` names ``text`` (default: ``key``) in the reader's language: the translation of
    ``names[key]`` where that is ``text``, else ``text`` as it is."""
    text = key if text is None else text
    return _(text) if names.get(key) == text else text


def _filled(text: str) -> str:
    """``text`` in the reader's language where it fits one of :data:`SUMMARY_TEMPLATES`, its fields kept."""
    for template in SUMMARY_TEMPLATES:
        parts = re.split(r"\{(\w+)\}", template)
        pattern = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+)" for i, p in enumerate(parts))
        found = re.fullmatch(pattern, text)
        if found:
            return _(template).format(**found.groupdict())
    return text


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
        def text(c: Any) -> str:
            # a code name ("expected_rejections_batch") may break after its underscores, not inside a word
            return re.sub(r"(?<=[A-Za-z0-9])_(?=[A-Za-z])", "_<wbr>", html.escape(str(c)))

        def cells(row: list[Any], tag: str = "td") -> str:
            return "".join(f"<{tag}>{text(c)}</{tag}>" for c in row)

        if any(str(h) for h in self.header):
            head = f"<thead><tr>{cells(self.header, 'th')}</tr></thead>"
            rows = [cells(row) for row in self.rows]
        else:  # a list of names and their values: no empty header row; each name heads its row
            head = ""
            rows = [f'<th scope="row">{text(row[0])}</th>{cells(row[1:])}' for row in self.rows]
        body = "".join(f"<tr>{r}</tr>" for r in rows)
        # in the data tables' scrolling box (figures.css): keyboard-scrollable, a shade at an edge it goes on past
        table = f'<table class="table">{head}<tbody>{body}</tbody></table>'
        return f'<div class="sd-table-scroll" tabindex="0">{table}</div>'


def table(header: list[str], rows: list[list[Any]]) -> Table:
    """A :class:`Table`."""
    return Table(list(header), [list(r) for r in rows])


def machine_table(results: dict[str, Any]) -> Table:
    m = results["machine"]
    load_avg = ", ".join(f"{x:.1f}" for x in m.get("load_average") or [])
    rows = [
        [
            "CPU",
            _("{cpu} ({machine}), {cores} cores ({usable} usable)").format(
                cpu=m["cpu"], machine=m["machine"], cores=m["cores"], usable=m.get("usable_cores")
            ),
        ],
        [_("memory"), f"{m['memory_bytes'] / GIB:.1f} GiB" if m.get("memory_bytes") else "?"],
        [_("load average at start (1, 5, 15 min)"), load_avg or "?"],
        [_("numpy BLAS threads"), m.get("openblas_threads") or _("library default")],
        [
            _("software"),
            f"Python {m['python']}, numpy {m['numpy']}, scipy {m.get('scipy')}, torch {m.get('torch')}, "
            f"transformers {m.get('transformers')}",
        ],
        [
            _("measured"),
            _("{date}, commit {commit}, mode {mode}, {minutes:.1f} min in all").format(
                date=m["date_utc"], commit=m.get("git_commit"), mode=results["mode"], minutes=results["elapsed_s"] / 60
            ),
        ],
    ]
    return table(["", ""], rows)


def _steps_per_s(rate: float) -> str:
    """A rate to three significant figures, written out with thousands separators (13,300,000, not 1.33e+07)."""
    return f"{float(f'{rate:.3g}'):,.0f}"


def samplers_table(results: dict[str, Any]) -> Table:
    rows = []
    for name, r in results["sections"].get("samplers", {}).get("engines", {}).items():
        ref = (
            _("{ms:.2f} ms ({runs} runs)").format(ms=r["reference_s_per_run"] * 1e3, runs=r["reference_runs_timed"])
            if r["reference"]
            else _("none")
        )
        speed = f"{r['speedup_vs_reference']:,.0f}×" if r["reference"] else "—"
        settings = ", ".join(f"{k}={v}" for k, v in r["settings"].items())
        rows.append(
            [
                _shown(ENGINE_NAMES, name) + (f" ({settings})" if settings else ""),
                f"{r['vectorised_s'] * 1e3:.1f} ms",
                _steps_per_s(r["token_steps_per_s"]),
                ref,
                speed,
                _("{multiple:.1f}× ({uniforms:.2f} per token step)").format(
                    multiple=r["floor_multiple"], uniforms=r["uniforms_per_token_step"]
                ),
            ]
        )
    header = [
        _("engine"),
        _("vectorised, all runs"),
        _("token-steps/s"),
        _("reference, per run"),
        _("speed-up per run"),
        _("time / RNG floor (uniforms)"),
    ]
    return table(header, rows)


def scaling_table(results: dict[str, Any]) -> Table:
    """One row per engine and axis: exponents fitted on the largest half of the sizes and on all, and the expected."""
    rows = []
    for name, e in results["sections"].get("sampler_scaling", {}).get("engines", {}).items():
        for axis, f in e.get("axes", {}).items():
            rows.append(
                [
                    _("{name} (sampler)").format(name=_shown(ENGINE_NAMES, name)),
                    _shown(AXIS_NAMES, axis),
                    f"{f['fit_tail']['exponent']:.2f}",
                    f"{f['fit_all']['exponent']:.2f}",
                    "1" if axis in ("runs", "T") else _("slow growth"),
                ]
            )
    for key, c in results["sections"].get("theory_scaling", {}).get("cases", {}).items():
        for axis, f in c.get("axes", {}).items():
            rows.append(
                [
                    _shown(CASE_TITLES, key, c["title"]),
                    _shown(AXIS_NAMES, axis),
                    f"{f['fit_tail']['exponent']:.2f}",
                    f"{f['fit_all']['exponent']:.2f}",
                    f"{f['expected_exponent']:g}",
                ]
            )
    header = [_("engine"), _("axis"), _("exponent (largest half)"), _("exponent (all points)"), _("expected")]
    return table(header, rows)


def memory_table(results: dict[str, Any]) -> Table:
    mem = results["sections"].get("memory", {})
    if "runs" not in mem:
        return table([_("memory")], [[_("not measured")]])
    rows = [
        [f"{r:,}", f"{u / MIB:.1f} MiB", f"{s / MIB:.1f} MiB"]
        for r, u, s in zip(
            mem["runs"], mem["tracemalloc_unchunked_bytes"], mem["tracemalloc_chunked_sum_bytes"], strict=True
        )
    ]
    header = [
        _("runs"),
        _("one call (tracemalloc peak)"),
        _("chunked_sum, chunk {size:,}").format(size=mem["chunk_size"]),
    ]
    return table(header, rows)


def memory_per_engine_table(results: dict[str, Any]) -> Table:
    mem = results["sections"].get("memory", {})
    rows = [
        [_shown(ENGINE_NAMES, k), f"{v['bytes_per_run']:.0f}", f"{v['projected_1e6_runs_bytes'] / MIB:.0f} MiB"]
        for k, v in mem.get("per_engine", {}).items()
        if "bytes_per_run" in v
    ]
    header = [
        _("engine"),
        _("bytes per run (V={V}, T={T})").format(V=mem.get("V"), T=mem.get("T")),
        _("a million runs, projected"),
    ]
    return table(header, rows)


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
    rows = [
        [k.split(".")[-1], f"{v['median_s'] * 1e3:.1f} ms", f"{v['first_call_s'] * 1e3:.0f} ms", v["calls"]]
        for k, v in timed.items()
    ]
    rows += [
        [k.split(".")[-1], _("not timed here"), "", _shown(WIDGET_NOTES, k, note)]
        for k, note in w.get("notes", {}).items()
        if k.split(".")[-1] not in {t.split(".")[-1] for t in timed}
    ]
    return table([_("update function"), _("median"), _("first call"), _("calls")], rows)


def llm_table(results: dict[str, Any]) -> Table:
    llm = results["sections"].get("llm", {})
    if "skipped" in llm or not llm:
        reason = llm.get("skipped", _("no results"))
        return table([_("real models")], [[_("not measured: {reason}").format(reason=reason)]])
    rows = [[_filled(k), _filled(v)] for k, v in llm.get("summary", {}).items()]
    return table(["", ""], rows)


def headlines(results: dict[str, Any]) -> list[str]:
    """A few measured numbers a reader can hold on to (Markdown bullets' text)."""
    sec, out = results["sections"], []
    sam = sec.get("samplers", {})
    spec = sam.get("engines", {}).get("speculative", {})
    if "vectorised_s" in spec:
        line = _(
            "Speculative decoding's sampler runs {runs:,} runs of a V = {V}, T = {T} chain in {ms:.1f} ms "
            "({rate} token-steps per second)"
        ).format(
            runs=sam["runs"],
            V=sam["V"],
            T=sam["T"],
            ms=spec["vectorised_s"] * 1e3,
            rate=_steps_per_s(spec["token_steps_per_s"]),  # as the table below prints both
        )
        if spec.get("reference"):
            line += _(", {speedup:,.0f} times faster per run than the loop that runs one sequence at a time.").format(
                speedup=spec["speedup_vs_reference"]
            )
        else:
            line += _(".")
        out.append(line)
    t1 = sec.get("theory_scaling", {}).get("theorem1_pass")
    if t1:
        out.append(
            _(
                "The exact expected number of rejections (Theorem 1(b)) for T = {T:,} positions and "
                "V = {V} tokens takes {ms:.0f} ms."
            ).format(T=t1["T"], V=t1["V"], ms=t1["seconds"] * 1e3)
        )
    timed = widget_timings(results)
    if timed:
        slowest = max(v["median_s"] for v in timed.values())
        out.append(
            _("Every lab explorer computes its new figure within {ms:.1f} ms of a slider move (median).").format(
                ms=slowest * 1e3
            )
        )
    llm = sec.get("llm", {}).get("summary", {})
    if "speculative / autoregressive (ours)" in llm:
        out.append(
            _(
                "On the real-model pair, speculative sampling is {ratio}× as fast as autoregressive sampling "
                "with the same models."
            ).format(ratio=str(llm["speculative / autoregressive (ours)"]).rstrip("×"))
        )
    return out


def measurements(results: Any) -> Any:
    """The results less the benchmark's pass/fail bookkeeping (``targets`` and ``exponent_check`` entries)."""
    if isinstance(results, dict):
        return {k: measurements(v) for k, v in results.items() if k not in ("targets", "exponent_check")}
    if isinstance(results, list):
        return [measurements(v) for v in results]
    return results


def floor_explanation(results: dict[str, Any]) -> str:
    """Why a sampler takes several times as long as drawing its random numbers, from the measurements."""
    engines = results["sections"].get("samplers", {}).get("engines", {})
    multiples = {k: r["floor_multiple"] for k, r in engines.items() if "floor_multiple" in r}
    if not multiples:
        return ""
    low, high = min(multiples.values()), max(multiples.values())
    return _(
        "The samplers take {low:.0f} to {high:.0f} times as long as drawing their uniforms. Besides drawing them, "
        "a sampler makes several passes over all runs at every position (the inverse-CDF search, the look-up of "
        "the acceptance probability, the rejection mask and the residual draw for rejected runs, writing the "
        "token column), and each pass costs about as much as drawing the uniforms or more. Fusing these passes "
        "would need compiled code; the package stays plain numpy."
    ).format(low=low, high=high) + _inverse_cdf_sentence(results["sections"].get("samplers", {}).get("inverse_cdf"))


def no_speedup(results: dict[str, Any]) -> str:
    """The sentence naming the samplers without a per-run reference loop, and why ("" when every one has one)."""
    engines = results["sections"].get("samplers", {}).get("engines", {})
    missing = [
        _("{engine} ({note})").format(engine=_shown(ENGINE_NAMES, k), note=_shown(ENGINE_NOTES, k, r["note"]))
        for k, r in engines.items()
        if "note" in r and not r.get("reference")
    ]
    return _("No speed-up for {engines}.").format(engines=_("; ").join(missing)) if missing else ""


def growth_sentences(results: dict[str, Any]) -> list[str]:
    """What the fitted exponents of the exact theory show, stating a power law only where the fit supports it.

    A law is stated when the points of the fit (the largest half of the sizes) each take at least
    ``MIN_FIT_SECONDS`` and the benchmark found the exponent consistent with the one the algorithm's loops predict;
    otherwise the sentence says what the fit shows and why it cannot be read as a law.
    """
    out = []
    for key, case in results["sections"].get("theory_scaling", {}).get("cases", {}).items():
        parts = []
        for axis, f in case.get("axes", {}).items():
            tail = f["fit_tail"]["points"]
            times = f["seconds"][-tail:]
            e, want = f["fit_tail"]["exponent"], f["expected_exponent"]
            held = ", ".join(f"{k} = {v:,}" for k, v in f["base"].items())
            span = _("over {axis} from {low:,.0f} to {high:,.0f} ({held}; {fastest} to {slowest} per call)").format(
                axis=axis,
                low=f["x"][-tail],
                high=f["x"][-1],
                held=held,
                fastest=_ms(min(times)),
                slowest=_ms(max(times)),
            )
            power = _power(axis, want)
            if min(times) < MIN_FIT_SECONDS:
                part = _(
                    "{span} the fitted exponent is {e:.2f}, but calls that short are dominated by fixed "
                    "costs and timing noise, so the fit says nothing about how the cost grows"
                )
            elif f["exponent_check"] == "consistent":
                part = _("{span} the cost grows like {power}, as the loops predict (fitted exponent {e:.2f})")
            elif e > want:
                part = _(
                    "{span} the cost grows faster than the {power} of the loops (fitted exponent {e:.2f}): "
                    "each call allocates and streams tables of tens to hundreds of MiB, and the cost of that "
                    "memory traffic is not captured by counting arithmetic"
                )
            else:
                part = _(
                    "{span} the cost grows slower than the {power} of the loops (fitted exponent {e:.2f}): "
                    "part of the work does not grow with {axis} (fixed costs per call and per position, "
                    "the loops over the other sizes) and still dominates at these sizes"
                )
            parts.append(part.format(span=span, e=e, power=power, axis=axis))
        if parts:
            out.append(
                _("**{title}**: {parts}.").format(
                    title=_shown(CASE_TITLES, key, case["title"]), parts=_("; ").join(parts)
                )
            )
    return out


def _power(axis: str, exponent: float) -> str:
    return axis if exponent == 1 else axis + f"{exponent:g}".translate(str.maketrans("0123456789.", "⁰¹²³⁴⁵⁶⁷⁸⁹·"))


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.01 else f"{seconds * 1e3:.2g} ms"


def _inverse_cdf_sentence(icdf: dict[str, Any] | None) -> str:
    if not icdf:
        return ""
    return _(
        " The largest of these passes is the inverse-CDF draw: one `sample_rows` call for {runs:,} runs "
        "(a binary search per run, V = {V}) took {search_us:.0f} µs, "
        "{ratio:.1f}× the {uniforms_us:.0f} µs to draw the uniforms it searches for."
    ).format(
        runs=icdf["runs"],
        V=icdf["V"],
        search_us=icdf["sample_rows_s"] * 1e6,
        ratio=icdf["ratio"],
        uniforms_us=icdf["uniforms_s"] * 1e6,
    )


def llm_rows_table(results: dict[str, Any]) -> Table:
    """Tokens per second of every method the real-model section ran."""
    llm = results["sections"].get("llm", {})

    def fmt(x: Any, spec: str) -> str:
        return "—" if x is None else format(x, spec)

    rows = [
        [
            _shown(METHOD_NAMES, r["method"]),
            r["lookahead"] or "—",
            fmt(r["tokens_per_second"], ".1f"),
            fmt(r["speedup"], ".2f") + "×",
            fmt(r["acceptance_rate"], ".3f"),
            fmt(r["tokens_per_call"], ".2f"),
            fmt(r["predicted_speedup"], ".2f"),
        ]
        for r in llm.get("rows", [])
    ]
    header = [
        _("method"),
        "K",
        _("tokens/s"),
        _("vs our autoregressive"),
        _("acceptance rate"),
        _("tokens per target call"),
        _("predicted speed-up"),
    ]
    return table(header, rows)


def _log_axes(fig: Any, rows: int, cols: int) -> None:
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            fig.update_xaxes(type="log", row=r, col=c)
            fig.update_yaxes(type="log", row=r, col=c)
    _decades(fig)


def _decades(fig: Any) -> None:
    """``fig``'s log axes labelled at whole decades (1, 10, 100, ...) with unlabelled minor ticks inside the plot
    where two decades or more lie within the data, else at 1, 2 and 5 times a power of ten, at least two of them:
    where fewer lie within the data, the axis reaches out to the nearest ones (a single label gives no scale)."""
    values: dict[str, list[float]] = {}
    for t in fig.data:
        for letter in ("x", "y"):
            ref = getattr(t, f"{letter}axis") or letter
            key = f"{letter}axis{ref[1:]}"
            values.setdefault(key, []).extend(float(v) for v in (getattr(t, letter) or ()) if v is not None and v > 0)
    for key, vs in values.items():
        axis = fig.layout[key]
        if axis.type != "log" or not vs:
            continue
        low, high = min(vs), max(vs)
        k0, k1 = math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1
        if sum(low <= 10.0**k <= high for k in range(k0, k1 + 1)) >= 2:
            axis.update(dtick=1, minor=dict(ticks="inside", ticklen=3, showgrid=False))
            continue
        # 1 and 3 times a power of ten where two of them lie within the data (on a phone "100" and "200" ran
        # together), else 1, 2 and 5 times (not 3 too: in a narrow panel four labels were tilted)
        for multiples in ((1, 3), (1, 2, 5)):
            series = sorted(m * 10.0**k for k in range(k0, k1 + 1) for m in multiples)
            ticks = [t for t in series if low <= t <= high]
            if len(ticks) >= 2:
                break
        while len(ticks) < 2:  # the nearest label outside the data, on the side where it is nearer
            below = max(t for t in series if t < (ticks[0] if ticks else low))
            above = min(t for t in series if t > (ticks[-1] if ticks else high))
            if math.log10(low / below) <= math.log10(above / high):
                ticks.insert(0, below)
            else:
                ticks.append(above)
        span = math.log10(max(high, ticks[-1])) - math.log10(min(low, ticks[0]))
        pad = 0.05 * max(span, 0.2)
        axis.update(
            tickvals=ticks,
            tickangle=0,
            range=[math.log10(min(low, ticks[0])) - pad, math.log10(max(high, ticks[-1])) + pad],
        )


def _two_columns_on_a_phone(fig: Any, panels: int, row_height: int = 300) -> Any:
    """``fig``'s row of ``panels`` panels in two columns on a phone, each row ``row_height`` pixels."""
    from ..plotting import grid_on_a_phone

    return grid_on_a_phone(fig, panels, -(-panels // 2) * row_height + 220, columns=2, gap_y=0.12)


def figures(results: dict[str, Any]) -> dict[str, Any]:
    """Plotly figures: sampler scaling, theory scaling, memory over runs, widget latency."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs: dict[str, Any] = {}
    scaled = results["sections"].get("sampler_scaling", {}).get("engines", {})
    engines = {k: v for k, v in scaled.items() if "axes" in v}
    if engines:
        fig = make_subplots(rows=1, cols=3, subplot_titles=(_("runs"), _("horizon T"), _("vocabulary V")))
        for i, (key, e) in enumerate(engines.items()):
            name = _shown(ENGINE_NAMES, key)
            for c, axis in enumerate(("runs", "T", "V"), start=1):
                f = e["axes"][axis]
                exponent = _("exponent {exponent:.2f}").format(exponent=f["fit_tail"]["exponent"])
                shown = _shown(AXIS_NAMES, axis)
                fig.add_trace(
                    go.Scatter(
                        x=f["x"],
                        y=f["seconds"],
                        mode="lines+markers",
                        name=name,
                        legendgroup=key,
                        showlegend=c == 1,
                        marker=dict(color=_color(i), symbol=_symbol(i)),
                        line=dict(color=_color(i)),
                        hovertemplate=f"{name}<br>{shown}=%{{x}}<br>%{{y:.3g}} s<br>{exponent}<extra></extra>",
                    ),
                    1,
                    c,
                )
        for c, axis in enumerate(("runs", "T", "V"), start=1):
            fig.update_xaxes(title_text=_shown(AXIS_NAMES, axis), row=1, col=c)
        _log_axes(fig, 1, 3)
        fig.update_yaxes(title_text=_("seconds"), row=1, col=1)
        fig.update_layout(title=_("Samplers: CPU time (log-log)"), height=460, legend=dict(orientation="h", y=-0.2))
        figs["sampler_scaling"] = _two_columns_on_a_phone(fig, 3)
    cases = {k: v for k, v in results["sections"].get("theory_scaling", {}).get("cases", {}).items() if "axes" in v}
    if cases:
        axes = [a for a in ("T", "V", "M", "K") if any(a in c["axes"] for c in cases.values())]
        fig = make_subplots(rows=1, cols=len(axes), subplot_titles=axes)
        for i, (key, c) in enumerate(cases.items()):
            name = _(CASE_LEGENDS[key]) if key in CASE_LEGENDS else _shown(CASE_NAMES, key)
            for col, axis in enumerate(axes, start=1):
                if axis not in c["axes"]:
                    continue
                f = c["axes"][axis]
                exponent = _("exponent {exponent:.2f} (expect {expected:g})").format(
                    exponent=f["fit_tail"]["exponent"], expected=f["expected_exponent"]
                )
                shown = _shown(AXIS_NAMES, axis)
                fig.add_trace(
                    go.Scatter(
                        x=f["x"],
                        y=f["seconds"],
                        mode="lines+markers",
                        name=name,
                        legendgroup=key,
                        showlegend=key not in {t.legendgroup for t in fig.data},
                        marker=dict(color=_color(i), symbol=_symbol(i)),
                        line=dict(color=_color(i)),
                        hovertemplate=f"{name}<br>{shown}=%{{x}}<br>%{{y:.3g}} s<br>{exponent}<extra></extra>",
                    ),
                    1,
                    col,
                )
        for col, axis in enumerate(axes, start=1):
            fig.update_xaxes(title_text=_shown(AXIS_NAMES, axis), row=1, col=col)
        _log_axes(fig, 1, len(axes))
        fig.update_yaxes(title_text=_("seconds"), row=1, col=1)
        fig.update_layout(title=_("Exact theory: CPU time (log-log)"), height=460, legend=dict(orientation="h", y=-0.2))
        figs["theory_scaling"] = _two_columns_on_a_phone(fig, len(axes))
    mem = results["sections"].get("memory", {})
    if "runs" in mem:
        fig = go.Figure()
        fig.add_trace(
            go.Scatter(
                x=mem["runs"],
                y=[b / MIB for b in mem["tracemalloc_unchunked_bytes"]],
                mode="lines+markers",
                name=_("one call"),
                marker=dict(color=_color(0), symbol=_symbol(0)),
                line=dict(color=_color(0)),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=mem["runs"],
                y=[b / MIB for b in mem["tracemalloc_chunked_sum_bytes"]],
                mode="lines+markers",
                name=_("chunked_sum, chunk {size:,}").format(size=mem["chunk_size"]),
                marker=dict(color=_color(1), symbol=_symbol(1)),
                line=dict(color=_color(1), dash="dash"),
            )
        )
        peaks = [b / MIB for b in mem["tracemalloc_unchunked_bytes"] + mem["tracemalloc_chunked_sum_bytes"] if b > 0]
        low = min(peaks) if peaks else 1.0
        # the 1 GiB line well inside the plot, its label under it
        fig.add_hline(y=GIB / MIB, line_dash="dot", line_color=GREY)
        # its label by hand: on a log axis an annotation's y is the logarithm (add_hline's would sit off the plot)
        fig.add_annotation(
            x=0,
            xref="paper",
            xanchor="left",
            xshift=6,  # clear of the axis line and its tick labels
            y=math.log10(GIB / MIB),
            yanchor="top",
            text="1 GiB",
            showarrow=False,
        )
        fig.update_xaxes(type="log", title_text=_("runs"))
        fig.update_yaxes(
            type="log", title_text=_("peak MiB (tracemalloc)"), range=[math.log10(low) - 0.3, math.log10(4 * GIB / MIB)]
        )
        _decades(fig)
        fig.update_layout(
            title=_("Peak memory of speculative decoding, V={V}, T={T}").format(V=mem["V"], T=mem["T"]), height=400
        )
        figs["memory"] = fig
    updates = widget_timings(results)
    if updates:
        # each update function by the explorer the labs call (token_update draws token_explorer()), in bars
        # across: the names stay level and apart on a phone
        names = [explorer_name(k) for k in updates]
        fig = go.Figure(
            go.Bar(
                y=names,
                x=[v["median_s"] * 1e3 for v in updates.values()],
                orientation="h",
                name=_("median"),
                marker_color=_color(0),
            )
        )
        fig.add_vline(x=100, line_dash="dot", line_color=GREY, annotation_text="100 ms")
        # each name over its bar, not beside the axis: on a phone the names beside it took half the width
        for name in names:
            fig.add_annotation(
                x=0, y=name, text=name, showarrow=False, xanchor="left", yanchor="bottom", yshift=9, font_size=12
            )
        fig.update_traces(width=0.45)
        fig.update_layout(
            title=_("Widget update latency at default settings (median)"),
            xaxis_title=_("median time of one update (ms)"),
            yaxis=dict(autorange="reversed", showticklabels=False, title=_("explorer")),
            height=160 + 46 * len(names),
        )
        figs["widgets"] = fig
    return figs


def explorer_name(key: str) -> str:
    """The explorer a timed update function draws, as the labs call it: ``module:token_update`` is
    ``token_explorer()``."""
    function = key.split(":")[-1].split(".")[-1]
    return (function[: -len("_update")] + "_explorer()") if function.endswith("_update") else function


#: The colour of reference lines (1 GiB, 100 ms).
GREY = "#666666"


def _color(i: int) -> str:
    """The book's colours (those of the chapters' figures), one per engine or case."""
    palette = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#444444", "#999933"]
    return palette[i % len(palette)]


def _symbol(i: int) -> str:
    """A marker per engine or case, so that the lines differ by more than their colour."""
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down"]
    return symbols[i % len(symbols)]
