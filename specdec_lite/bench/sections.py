"""The benchmark's sections, registered in one table; each returns a JSON-ready dict.

Only the real-model section can be skipped (``{"skipped": note}``): it needs torch
and transformers, which the rest of the package does not.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import chunking, decoding, theory
from ..primitives import cumulative, sample_rows
from .engines import CHAIN_ENGINES, THEORY_CASES, pair, qualified_name
from .timing import (
    best_time,
    clock,
    count_uniforms,
    median_time,
    peak_traced_bytes,
    rng_floor,
    rss_in_subprocess,
    scaling,
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one mode (``tiny`` for tests, ``quick`` for CI, ``full`` for the book)."""

    V: int
    T: int
    runs: int
    reference_runs: int
    reference_budget_s: float
    repeat: int
    budget_s: float
    fill_s: float
    scale_runs: tuple[int, ...]
    scale_T: tuple[int, ...]
    scale_V: tuple[int, ...]
    scale_base_runs: int
    theory: dict[str, tuple[int, ...]]
    theory_base: dict[str, dict[str, int]]
    theorem1_pass: tuple[int, int]
    memory_runs: tuple[int, ...]
    memory_chunk: int
    memory_per_engine_runs: int
    rss: bool
    widget_calls: int
    llm: dict[str, Any] = field(default_factory=dict)


SIZES: dict[str, Sizes] = {
    "tiny": Sizes(
        V=3,
        T=5,
        runs=200,
        reference_runs=5,
        reference_budget_s=0.05,
        repeat=1,
        budget_s=0.1,
        fill_s=0.0,
        scale_runs=(100, 200, 400),
        scale_T=(4, 8),
        scale_V=(3, 6),
        scale_base_runs=100,
        theory={"T": (8, 16, 32), "V": (4, 8, 16), "M": (1, 2, 4), "K": (1, 2, 4)},
        theory_base={"T": {"V": 5}, "V": {"T": 5}, "M": {"V": 5, "T": 10}, "K": {"V": 5, "T": 10}},
        theorem1_pass=(5, 10),
        memory_runs=(1_000, 4_000),
        memory_chunk=500,
        memory_per_engine_runs=500,
        rss=False,
        widget_calls=1,
        llm={
            "new_tokens": 8,
            "lookahead": 4,
            "repeat": 1,
            "prompts": 1,
            "off": "tiny mode does not load models (tests/test_bench.py runs this section on a tiny random pair)",
        },
    ),
    "quick": Sizes(
        V=7,
        T=50,
        runs=10_000,
        reference_runs=50,
        reference_budget_s=0.3,
        repeat=2,
        budget_s=0.5,
        fill_s=0.1,
        scale_runs=(1_000, 4_000, 16_000),
        scale_T=(10, 20, 40),
        scale_V=(4, 8, 16),
        scale_base_runs=2_000,
        theory={"T": (100, 200, 400), "V": (25, 50, 100), "M": (1, 2, 4), "K": (2, 4, 8)},
        theory_base={"T": {"V": 30}, "V": {"T": 20}, "M": {"V": 30, "T": 100}, "K": {"V": 30, "T": 100}},
        theorem1_pass=(100, 200),
        memory_runs=(10_000, 40_000),
        memory_chunk=10_000,
        memory_per_engine_runs=10_000,
        rss=False,
        widget_calls=3,
        llm={"new_tokens": 32, "lookahead": 4, "repeat": 1, "prompts": 1},
    ),
    "full": Sizes(
        V=7,
        T=50,
        runs=10_000,
        reference_runs=500,
        reference_budget_s=4.0,
        repeat=3,
        budget_s=2.0,
        fill_s=0.3,
        scale_runs=(1_000, 3_000, 10_000, 30_000, 100_000, 300_000),
        scale_T=(12, 25, 50, 100, 200, 400, 800),
        scale_V=(4, 8, 16, 32, 64, 128, 256),
        scale_base_runs=10_000,
        # Sizes at which every timed point takes 10 ms or more, so that fitted exponents are not timing noise.
        theory={
            "T": (500, 700, 1_000, 1_400, 2_000, 2_800, 4_000),
            "V": (160, 200, 256, 320, 400, 512),
            "M": (1, 2, 4, 8, 16, 32),
            "K": (1, 2, 4, 8, 16, 32, 64, 128),
        },
        theory_base={"T": {"V": 64}, "V": {"T": 128}, "M": {"V": 100, "T": 200}, "K": {"V": 100, "T": 200}},
        theorem1_pass=(200, 1_000),
        memory_runs=(10_000, 100_000, 1_000_000),
        memory_chunk=100_000,
        memory_per_engine_runs=100_000,
        rss=True,
        widget_calls=15,
        llm={"new_tokens": 64, "lookahead": 4, "repeat": 3, "prompts": 3, "widget_calls": 10},
    ),
}


@dataclass(frozen=True)
class Section:
    """One part of the benchmark: a title, a function of the sizes, and the optional packages it needs."""

    name: str
    title: str
    run: Callable[[Sizes, Log], dict[str, Any]]
    requires: tuple[str, ...] = ()


def _skip(note: str, log: Log, what: str) -> dict[str, str]:
    log(f"  {what}: skipped ({note})")
    return {"skipped": note}


# --- vectorised samplers against the per-run reference ---------------------------


def _reference_time(ref: Callable[[int, Any], Any], runs: int, budget: float) -> tuple[float, int]:
    """Seconds per run of the reference loop, over ``runs`` runs or ``budget`` seconds (whichever ends first)."""
    gen = np.random.default_rng(0)
    done, block = 0, max(1, min(10, runs))
    t0 = clock()
    while done < runs:
        ref(block, gen)
        done += block
        if clock() - t0 > budget:
            break
    return (clock() - t0) / done, done


def interleaved_best(fn: Callable[[], Any], floor: Callable[[], float], repeat: int) -> tuple[float, float]:
    """Best time of ``fn`` and best value of ``floor()``, measured alternately so that load hits both alike."""
    times, floors = [], []
    for _ in range(max(1, repeat)):
        times.append(best_time(fn, 1))
        floors.append(floor())
    return min(times), min(floors)


def measure_sampler(
    engine: Any, V: int, T: int, runs: int, reference_runs: int, budget: float, repeat: int
) -> dict[str, Any]:
    """Vectorised time, token-steps/s, random-number floor and (if any) the reference's time per run."""
    vec, ref = engine.samplers(V, T)
    uniforms = count_uniforms(lambda g: vec(runs, g))
    t_vec, floor = interleaved_best(lambda: vec(runs, 0), lambda: rng_floor(uniforms, 1), repeat)
    out: dict[str, Any] = {
        "title": engine.title,
        "baseline": engine.baseline,
        "V": V,
        "T": T,
        "runs": runs,
        "settings": dict(engine.settings),
        "vectorised_s": t_vec,
        "token_steps_per_s": runs * T / t_vec,
        "uniforms": uniforms,
        "uniforms_per_token_step": uniforms / (runs * T),
        "rng_floor_s": floor,
        "floor_multiple": t_vec / floor,
    }
    if ref is None:
        out.update(reference=None, note=engine.no_reference_note)
        return out
    per_run_ref, done = _reference_time(ref, reference_runs, budget)
    out.update(
        reference=qualified_name(engine.reference),
        reference_s_per_run=per_run_ref,
        reference_runs_timed=done,
        speedup_vs_reference=per_run_ref / (t_vec / runs),
    )
    return out


def samplers(sizes: Sizes, log: Log) -> dict[str, Any]:
    engines: dict[str, Any] = {}
    for engine in CHAIN_ENGINES:
        # the headline figures: a few more repeats than the scaling points get
        r = measure_sampler(
            engine, sizes.V, sizes.T, sizes.runs, sizes.reference_runs, sizes.reference_budget_s, max(sizes.repeat, 7)
        )
        engines[engine.name] = r
        ref = (
            f"reference {r['reference_s_per_run'] * 1e3:.2f} ms/run -> {r['speedup_vs_reference']:.0f}x"
            if r["reference"]
            else "no reference loop"
        )
        log(
            f"  {engine.name}: {r['vectorised_s'] * 1e3:.1f} ms for {r['runs']:,} runs "
            f"({r['token_steps_per_s']:.3g} token-steps/s); {ref}; "
            f"{r['floor_multiple']:.1f}x the time to draw its {r['uniforms']:,} uniforms"
        )
    return {
        "V": sizes.V,
        "T": sizes.T,
        "runs": sizes.runs,
        "engines": engines,
        "inverse_cdf": inverse_cdf_cost(sizes.V, sizes.runs, sizes.repeat),
    }


def inverse_cdf_cost(V: int, runs: int, repeat: int) -> dict[str, Any]:
    """One inverse-CDF draw per run (``primitives.sample_rows``) against drawing the uniforms it consumes.

    Explains most of the distance to the random-number floor: a binary search per
    run on unsorted keys costs far more than producing the uniform it searches for.
    """
    gen = np.random.default_rng(0)
    cdf = cumulative(gen.dirichlet(np.ones(V), size=V))
    rows, u = gen.integers(0, V, runs), gen.random(runs)
    t_draw = best_time(lambda: sample_rows(cdf, rows, u), 5 * repeat)
    t_uniform = best_time(lambda: gen.random(runs), 5 * repeat)
    return {"V": V, "runs": runs, "sample_rows_s": t_draw, "uniforms_s": t_uniform, "ratio": t_draw / t_uniform}


# --- how cost grows ----------------------------------------------------------------


def sampler_scaling(sizes: Sizes, log: Log) -> dict[str, Any]:
    engines: dict[str, Any] = {}
    for engine in CHAIN_ENGINES:
        axes: dict[str, Any] = {}

        def timed(V: int, T: int, runs: int, engine: Any = engine) -> float:
            vec, _ = engine.samplers(V, T)
            return best_time(lambda: vec(runs, 0), sizes.repeat, sizes.budget_s, warmup=1, fill=sizes.fill_s)

        axes["runs"] = scaling(sizes.scale_runs, [timed(sizes.V, sizes.T, r) for r in sizes.scale_runs])
        axes["T"] = scaling(sizes.scale_T, [timed(sizes.V, T, sizes.scale_base_runs) for T in sizes.scale_T])
        axes["V"] = scaling(sizes.scale_V, [timed(V, sizes.T, sizes.scale_base_runs) for V in sizes.scale_V])
        engines[engine.name] = {"title": engine.title, "axes": axes}
        log(f"  {engine.name}: cost ~ " + ", ".join(f"{a}^{axes[a]['fit_tail']['exponent']:.2f}" for a in axes))
    return {"base": {"V": sizes.V, "T": sizes.T, "runs": sizes.scale_base_runs}, "engines": engines}


def _exponent_check(measured: float, expected: float, tol: float = 0.3) -> str:
    return "consistent" if abs(measured - expected) <= tol else "not consistent"


def theory_scaling(sizes: Sizes, log: Log) -> dict[str, Any]:
    cases: dict[str, Any] = {}
    for case in THEORY_CASES:
        axes: dict[str, Any] = {}
        for axis in case.axes:
            base = sizes.theory_base[axis]
            times = []
            for value in sizes.theory[axis]:
                if axis == "T":
                    fn = case.call(base["V"], value)
                elif axis == "V":
                    fn = case.call(value, base["T"])
                else:
                    fn = case.call(base["V"], base["T"], value)
                times.append(best_time(fn, sizes.repeat, sizes.budget_s, warmup=1, fill=sizes.fill_s))
                del fn
            fit = scaling(sizes.theory[axis], times)
            fit["base"] = base
            fit["expected_exponent"] = case.expected[axis]
            fit["exponent_check"] = _exponent_check(fit["fit_tail"]["exponent"], case.expected[axis])
            axes[axis] = fit
        cases[case.name] = {"title": case.title, "axes": axes}
        log(
            f"  {case.name}: cost ~ "
            + ", ".join(
                f"{a}^{axes[a]['fit_tail']['exponent']:.2f} (expected {axes[a]['expected_exponent']:g}, "
                f"{axes[a]['exponent_check']})"
                for a in axes
            )
        )
    out: dict[str, Any] = {"cases": cases}
    if "axes" in cases.get("theorem1", {}):
        ax = cases["theorem1"]["axes"]
        eT, eV = ax["T"]["fit_tail"]["exponent"], ax["V"]["fit_tail"]["exponent"]
        aT, aV = ax["T"]["fit_all"]["exponent"], ax["V"]["fit_all"]["exponent"]
        ok = _exponent_check(eT, 1.0) == "consistent" and _exponent_check(eV, 2.0) == "consistent"
        out["theorem1_summary"] = (
            f"Theorem 1's forward pass costs T^{eT:.2f} V^{eV:.2f} on the largest half of the sizes "
            f"(T^{aT:.2f} V^{aV:.2f} fitted on all of them): "
            + ("consistent with T·V²." if ok else "not the T·V² the algorithm's loops predict (see the curves).")
        )
        log("  " + out["theorem1_summary"])
    V, T = sizes.theorem1_pass
    draft, target = pair(V, T, seed=0)
    out["theorem1_pass"] = {
        "V": V,
        "T": T,
        "seconds": best_time(lambda: theory.expected_rejections(draft, target), sizes.repeat, warmup=1),
    }
    log(f"  Theorem 1 forward pass, T={T} V={V}: {out['theorem1_pass']['seconds'] * 1e3:.1f} ms")
    return out


# --- memory ------------------------------------------------------------------------


def _rejections(result: Any) -> np.ndarray:
    return np.asarray(result.rejections)


def memory(sizes: Sizes, log: Log) -> dict[str, Any]:
    draft, target = pair(sizes.V, sizes.T)
    chunk = sizes.memory_chunk
    unchunked, summed = [], []
    for runs in sizes.memory_runs:
        unchunked.append(peak_traced_bytes(lambda r=runs: decoding.speculative(draft, target, r, rng=0)))
        summed.append(
            peak_traced_bytes(
                lambda r=runs: chunking.chunked_sum(
                    decoding.speculative, draft, target, runs=r, chunk_size=chunk, statistic=_rejections, rng=0
                )
            )
        )
    big = sizes.memory_runs[-1]
    out: dict[str, Any] = {
        "engine": "speculative",
        "V": sizes.V,
        "T": sizes.T,
        "chunk_size": chunk,
        "runs": list(sizes.memory_runs),
        "tracemalloc_unchunked_bytes": unchunked,
        "tracemalloc_chunked_sum_bytes": summed,
        "bytes_per_run_unchunked": unchunked[-1] / big,
        "unchunked_growth": scaling(sizes.memory_runs, unchunked)["fit_all"],
        "tracemalloc_chunked_concatenated_bytes": peak_traced_bytes(
            lambda: chunking.chunked(decoding.speculative, draft, target, runs=big, chunk_size=chunk, rng=0)
        ),
    }
    log(
        f"  speculative V={sizes.V} T={sizes.T}: unchunked peak "
        + ", ".join(f"{b / 2**20:.1f} MiB @ {r:,}" for r, b in zip(sizes.memory_runs, unchunked, strict=True))
        + f"; chunked_sum (chunk {chunk:,}) "
        + ", ".join(f"{b / 2**20:.1f} MiB" for b in summed)
    )
    if sizes.rss:
        setup = (
            "from specdec_lite import decoding, chunking\nfrom specdec_lite.bench.engines import pair\n"
            f"draft, target = pair({sizes.V}, {sizes.T})"
        )
        out["rss_unchunked"] = rss_in_subprocess(setup, f"r = decoding.speculative(draft, target, {big}, rng=0)")
        out["rss_chunked_sum"] = rss_in_subprocess(
            setup,
            f"s = chunking.chunked_sum(decoding.speculative, draft, target, runs={big}, chunk_size={chunk}, "
            "statistic=lambda r: r.rejections, rng=0)",
        )
        log(
            f"  resident memory for {big:,} runs: unchunked +{out['rss_unchunked']['increase_bytes'] / 2**20:.0f} MiB,"
            f" chunked_sum +{out['rss_chunked_sum']['increase_bytes'] / 2**20:.0f} MiB"
        )
    per_engine: dict[str, Any] = {}
    n = sizes.memory_per_engine_runs
    for engine in CHAIN_ENGINES:
        vec, _ = engine.samplers(sizes.V, sizes.T)
        peak = peak_traced_bytes(lambda f=vec: f(n, 0))
        per_engine[engine.name] = {
            "runs": n,
            "peak_bytes": peak,
            "bytes_per_run": peak / n,
            "projected_1e6_runs_bytes": peak / n * 1_000_000,
        }
    out["per_engine"] = per_engine
    log("  bytes per run: " + ", ".join(f"{k} {v['bytes_per_run']:.0f}" for k, v in per_engine.items()))
    return out


# --- widgets -------------------------------------------------------------------------


def widget_updates() -> tuple[dict[str, Callable[[], Any]], dict[str, str]]:
    """Every explorer's pure ``*_update`` function, called with its defaults.

    Returns ``(callables by "module:function", notes for updates timed elsewhere)``.
    """
    from ..widgets import (
        batch_explorer,
        beat_speculative,
        lookahead_explorer,
        rejections_explorer,
        round_explorer,
        token_explorer,
        tradeoff_explorer,
    )

    updates = (
        batch_explorer.batch_update,
        beat_speculative.beat_update,
        lookahead_explorer.lookahead_update,
        rejections_explorer.rejections_update,
        round_explorer.round_update,
        token_explorer.token_update,
        tradeoff_explorer.tradeoff_update,
    )
    notes = {
        "specdec_lite.widgets.real_models:generation_update": "needs a model pair: timed in the real-models section"
    }
    return {qualified_name(fn): fn for fn in updates}, notes


def widget_latency(sizes: Sizes, log: Log) -> dict[str, Any]:
    found, notes = widget_updates()
    updates: dict[str, Any] = {}
    for key, fn in sorted(found.items()):
        t0 = clock()
        fn()
        first = clock() - t0
        med = median_time(fn, sizes.widget_calls)
        updates[key] = {"first_call_s": first, "median_s": med, "calls": sizes.widget_calls}
        log(f"  {key.split('.')[-1]}: median {med * 1e3:.1f} ms (first call {first * 1e3:.0f} ms)")
    for key, note in notes.items():
        log(f"  {key}: {note}")
    return {"updates": updates, "notes": notes}


# --- the registry ---------------------------------------------------------------------


def _llm(sizes: Sizes, log: Log) -> dict[str, Any]:
    from .llm import llm_section

    return llm_section(sizes, log)


SECTIONS: tuple[Section, ...] = (
    Section("samplers", "Vectorised samplers against the per-run reference loops", samplers),
    Section("sampler_scaling", "How the samplers' cost grows with runs, T and V", sampler_scaling),
    Section("theory_scaling", "How the exact theory's cost grows with T, V, M and K", theory_scaling),
    Section("memory", "Peak memory over runs, and chunking", memory),
    Section("widgets", "Widget update latency at default settings", widget_latency),
    Section(
        "llm",
        "Real models: speculative vs autoregressive vs Hugging Face assisted generation",
        _llm,
        requires=("torch", "transformers"),
    ),
)


def run_section(section: Section, sizes: Sizes, log: Log) -> dict[str, Any]:
    """The section's results, or ``{"skipped": note}`` when a package it needs is not installed."""
    log(f"{section.title}:")
    absent = [m for m in section.requires if importlib.util.find_spec(m) is None]
    if absent:
        return _skip(f"{', '.join(absent)} not installed", log, section.name)
    t0 = time.perf_counter()
    out = section.run(sizes, log)
    out["title"] = section.title
    out["elapsed_s"] = time.perf_counter() - t0
    return out
