"""Reading the model-shapes results files: the call costs ``c`` and ``c_K``, and the speed-up they predict.

A file written by ``python -m specdec_lite.llm.shapes`` holds, per model shape and
context length ``L``, the seconds of a call on ``n`` new tokens (``n = 1`` and
``n = K + 1``). For a draft ``p`` and a target ``q`` of the same file those give
:class:`~specdec_lite.llm.speed.CallCosts`, and Chapter 7's wall-clock model with
measured costs (:func:`~specdec_lite.llm.speed.predicted_speedup`,
``E[tokens per round] t_q / (K t_p + t_verify(K))``) the speed-up predicted at
each acceptance rate ``alpha``. The weights were random: it is a prediction from
measured costs, not a measured speed-up.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._i18n import _
from .speed import CallCosts, predicted_speedup

#: The version of the shapes results file (written by :mod:`specdec_lite.llm.shapes`, read here).
SCHEMA = 1
#: What a shapes results file says it is (``measure_pair`` files have no ``kind``).
KIND = "model shapes"
#: Where shapes results files live, relative to the repository root (``measure_pair`` files: its parent).
RESULTS_DIR = Path("benchmarks") / "real_models" / "shapes"
#: The lookaheads of the verification calls (a call on K + 1 new tokens).
LOOKAHEADS = tuple(range(1, 9))


def results_label(results: Mapping[str, Any]) -> str:
    """The line naming a shapes file's device, dtype, torch version and weights, for every table and figure of it."""
    d = results["device"]
    if d["type"] == "cuda":
        where = f"{d['name']}, compute capability {'.'.join(map(str, d['capability']))}"
    else:
        load = f", load average {d['load_average']:g}" if "load_average" in d else ""
        where = f"{d['type'].upper()} ({d['name']}, {d['torch_threads']} thread(s){load})"
    timed = "; timed in CPU seconds" if results["settings"].get("clock") == "cpu" else ""
    return (
        f"{where}; {results['dtype']}; torch {results['versions']['torch']}; {results['weights']}{timed}; "
        f"measured {results['created'][:10]}"
    )


#: The start of the weights label of ``shapes.weights_label``, which a file stores in English.
_WEIGHTS_PREFIX = "random weights, shapes of "


def threads_text(n: int) -> str:
    """A count of threads as a line says it, in the current language: "1 thread", "2 threads"."""
    n = int(n)
    return (_("{n} thread") if n == 1 else _("{n} threads")).format(n=n)


def table_label(results: Mapping[str, Any]) -> str:
    """:func:`results_label` in the current language: the line heading the file's table of call costs."""
    d = results["device"]
    if d["type"] == "cuda":
        where = _("{name}, compute capability {capability}").format(
            name=d["name"], capability=".".join(map(str, d["capability"]))
        )
    else:
        load = _(", load average {load:g}").format(load=d["load_average"]) if "load_average" in d else ""
        where = _("CPU ({name}, {threads}{load})").format(
            name=d["name"], threads=threads_text(d["torch_threads"]), load=load
        )
    weights = str(results["weights"])
    if weights.startswith(_WEIGHTS_PREFIX):
        weights = _("random weights, shapes of {names}").format(names=weights[len(_WEIGHTS_PREFIX) :])
    timed = _("; timed in CPU seconds") if results["settings"].get("clock") == "cpu" else ""
    return _("{where}; {dtype}; torch {torch}; {weights}{timed}; measured {date}").format(
        where=where,
        dtype=results["dtype"],
        torch=results["versions"]["torch"],
        weights=weights,
        timed=timed,
        date=results["created"][:10],
    )


def panel_label(results: Mapping[str, Any]) -> str:
    """The short line heading a shapes file's panel of Figure 8.9, in the current language: the device, the
    dtype and the torch version, separated as the measured figures' panels separate device and dtype (the
    figure's title says the weights are random; the chapter gives the rest)."""
    d = results["device"]
    where = d["name"] if d["type"] == "cuda" else _("CPU ({name})").format(name=d["name"])
    return _("{where}, {dtype}, torch {torch}").format(
        where=where, dtype=results["dtype"], torch=results["versions"]["torch"]
    )


#: The paper's pair (Table 1 of Yin et al.): the draft and target shapes the chapter predicts for first.
PAPER_SHAPES = ("pythia-70m", "pythia-2.8b")
#: Keys every shapes results file holds.
REQUIRED = (
    "schema",
    "kind",
    "created",
    "weights",
    "device",
    "dtype",
    "versions",
    "settings",
    "draft",
    "models",
    "skipped",
)


def repository_shapes_dir() -> Path:
    """``benchmarks/real_models/shapes`` of the repository this package was imported from."""
    return Path(__file__).resolve().parents[2] / RESULTS_DIR


def check_results(data: Any, where: str) -> dict[str, Any]:
    """``data`` if it is a shapes results file this code reads, else a ``ValueError`` naming ``where`` and the cause."""
    if not isinstance(data, dict):
        raise ValueError(
            _("{where}: not a shapes results file (a JSON {type_data_name}, not an object)").format(
                where=where, type_data_name=type(data).__name__
            )
        )
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(
            _("{where}: not a shapes results file (no {join_missing})").format(
                where=where, join_missing=", ".join(missing)
            )
        )
    if data["kind"] != KIND or data["schema"] != SCHEMA:
        raise ValueError(
            _(
                "{where}: a file of kind {data_kind!r}, schema {data_schema!r}; this code reads kind "
                "{KIND!r}, schema {SCHEMA}"
            ).format(where=where, data_kind=data["kind"], data_schema=data["schema"], KIND=KIND, SCHEMA=SCHEMA)
        )
    contexts = [str(L) for L in data["settings"]["contexts"]]
    sizes = ["1", *(str(K + 1) for K in LOOKAHEADS)]
    for name, m in data["models"].items():
        for L in contexts:
            got = m.get("call_s", {}).get(L, {})
            if any(not isinstance(got.get(n), (int, float)) or got[n] <= 0 for n in sizes):
                raise ValueError(
                    _("{where}: {name} lacks a positive call time for context {L} and every n in {join_sizes}").format(
                        where=where, name=name, L=L, join_sizes=", ".join(sizes)
                    )
                )
    if data["draft"] not in data["models"]:
        raise ValueError(
            _("{where}: the draft {data_draft!r} is not among the models measured").format(
                where=where, data_draft=data["draft"]
            )
        )
    return data


def load_shape_results(folder: str | Path | None = None) -> list[dict[str, Any]]:
    """Every shapes results file in ``folder`` (default: the repository's), sorted by name, each with its ``file``."""
    root = Path(folder) if folder is not None else repository_shapes_dir()
    found = []
    for path in sorted(root.glob("*.json")) if root.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(
                _("{path}: not a shapes results file (not valid JSON: {err})").format(path=path, err=err)
            ) from None
        found.append({**check_results(data, str(path)), "file": path.name})
    return found


def call_costs(results: Mapping[str, Any], draft: str, target: str, context: int) -> CallCosts:
    """The measured seconds of ``draft``'s and ``target``'s one-token calls and ``target``'s verification calls."""
    for name in (draft, target):
        if name not in results["models"]:
            raise ValueError(
                _("{name}: not measured in this file (measured: {join_results_models})").format(
                    name=name, join_results_models=", ".join(results["models"])
                )
            )
    if context not in results["settings"]["contexts"]:
        raise ValueError(
            _("context: {context} was not measured (measured: {results_settings_contexts})").format(
                context=context, results_settings_contexts=results["settings"]["contexts"]
            )
        )
    p = results["models"][draft]["call_s"][str(context)]
    q = results["models"][target]["call_s"][str(context)]
    return CallCosts(draft=p["1"], target=q["1"], verify={K: q[str(K + 1)] for K in LOOKAHEADS})


def predicted_pair(results: Mapping[str, Any]) -> tuple[str, str] | None:
    """The pair to predict for: the paper's if both were measured, else the smallest and the largest measured."""
    models = results["models"]
    if len(models) < 2:
        return None
    if all(name in models for name in PAPER_SHAPES):
        return PAPER_SHAPES
    ranked = sorted(models, key=lambda k: models[k]["parameters"])
    return ranked[0], ranked[-1]


def reference_context(results: Mapping[str, Any]) -> int:
    """The middle one of the context lengths measured (the figure's)."""
    contexts = sorted(results["settings"]["contexts"])
    return contexts[len(contexts) // 2]


def speedup_curves(costs: CallCosts, alphas: Sequence[float]) -> dict[int, np.ndarray]:
    """The predicted speed-up at each ``alpha``, one curve per ``K`` of :data:`LOOKAHEADS`."""
    return {K: np.array([predicted_speedup(float(a), K, costs) for a in alphas]) for K in LOOKAHEADS}


def best_lookaheads(curves: Mapping[int, np.ndarray]) -> np.ndarray:
    """At each ``alpha``, the ``K`` with the largest predicted speed-up, ``K = 0`` included (ties to the smaller ``K``).

    ``K = 0`` is not drafting at all: autoregressive sampling, speed-up 1. Where no lookahead of
    ``curves`` predicts more than 1, the best choice is ``K = 0``.
    """
    Ks = [0, *sorted(K for K in curves if K != 0)]
    rows = [np.ones(len(next(iter(curves.values()))))] + [np.asarray(curves[K], dtype=float) for K in Ks[1:]]
    return np.array(Ks)[np.argmax(np.vstack(rows), axis=0)]


def best_speedups(curves: Mapping[int, np.ndarray], best: Sequence[int]) -> np.ndarray:
    """The predicted speed-up of the best lookahead ``best[i]`` at each ``alpha``: 1 where it is ``K = 0``."""
    return np.array([1.0 if int(K) == 0 else float(curves[int(K)][i]) for i, K in enumerate(best)])


def largest_inversion(costs: CallCosts) -> tuple[int, float, float]:
    """``(K, c_K, c_{K+1})`` where ``c_K - c_{K+1}`` is largest: a call on more tokens timed as cheaper.

    ``c_K = t_verify(K) / t_target``. A call on ``K + 2`` tokens does more work than one on ``K + 1``,
    so ``c_{K+1} < c_K`` measures the timing noise of the file (the gap is ``<= 0`` when no pair inverts).
    """
    Ks = sorted(costs.verify)
    c = {K: costs.verify[K] / costs.target for K in Ks}
    K = max(Ks[:-1], key=lambda k: c[k] - c[k + 1])
    return K, c[K], c[K + 1]


def cost_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per model and context: the one-token call's seconds, ``c`` against the file's draft, and ``c_K`` for each K."""
    draft = results["models"][results["draft"]]
    rows = []
    for name, m in results["models"].items():
        for L in results["settings"]["contexts"]:
            one = m["call_s"][str(L)]
            rows.append(
                {
                    "model": name,
                    "context": L,
                    "one_token_s": one["1"],
                    "c": draft["call_s"][str(L)]["1"] / one["1"],
                    "c_K": {K: one[str(K + 1)] / one["1"] for K in LOOKAHEADS},
                }
            )
    return rows


#: A date ("2026-12-02") or a name with hyphens ("pythia-160m", "cpu-float32"): one unit on a page's line.
_WHOLE = re.compile(r"(?<![\w-])\w+(?:-\w+)+(?![\w-])", re.ASCII)


def whole_names_html(text: str) -> str:
    """``text`` as HTML in which each date and hyphenated name is one unit that never breaks at its hyphen (the
    book's class ``sd-whole-unit``; a notebook shows it as plain text)."""
    return _WHOLE.sub(lambda m: f'<span class="sd-whole-unit">{m.group()}</span>', html.escape(text))


def costs_table(results: Mapping[str, Any]) -> str:
    """The file's call costs as an HTML table, in the current language: a row per model shape and context length."""
    head = [
        _("model shape"),
        _("context L"),
        _("one-token call"),
        _("c (draft {draft})").format(draft=results["draft"]),
        *(f"c_{K}" for K in LOOKAHEADS),
    ]
    # the c_K headers are typeset by MathJax on the book's page (its "math" class), as c with a subscript
    math = {f"c_{K}": f'<span class="math notranslate nohighlight">\\(c_{{{K}}}\\)</span>' for K in LOOKAHEADS}
    body = []
    for r in cost_rows(results):
        cells = [
            r["model"],
            str(r["context"]),
            f"{1e3 * r['one_token_s']:.2f} ms",
            f"{r['c']:.3f}",
            *(f"{v:.2f}" for v in r["c_K"].values()),
        ]
        body.append("<tr>" + "".join(f"<td>{whole_names_html(c)}</td>" for c in cells) + "</tr>")
    skipped = "".join(f"<li>{html.escape(s['reason'])}</li>" for s in results["skipped"])
    return (
        "<p>"
        + _("{file}: {label}").format(
            file=f"<b>{whole_names_html(results.get('file', ''))}</b>", label=whole_names_html(table_label(results))
        )
        + "</p>"
        # the table scrolls in its own box (the book's a11y.css), so its fading edge never covers the line above
        '<div class="sd-output-table" tabindex="0"><table class="table"><thead><tr>'
        + "".join(f"<th>{math.get(h) or whole_names_html(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
        + ("<p>" + html.escape(_("Skipped:")) + f"</p><ul>{skipped}</ul>" if skipped else "")
    )


def summary(results: Mapping[str, Any]) -> str:
    """A shapes file in one line per model: ``c`` and ``c_K`` at the reference context."""
    L = reference_context(results)
    lines = [f"{results_label(results)}; at context {L}:"]
    for r in cost_rows(results):
        if r["context"] == L:
            lines.append(
                f"  {r['model']}: one-token call {1e3 * r['one_token_s']:.2f} ms, c = {r['c']:.3f}, c_K = "
                + ", ".join(f"{v:.2f}" for v in r["c_K"].values())
                + " (K = 1..8)"
            )
    lines += [f"  skipped: {s['reason']}" for s in results["skipped"]]
    return "\n".join(lines)
