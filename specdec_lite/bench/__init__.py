"""Benchmarks: ``python -m specdec_lite.bench [--mode tiny|quick|full] [--json PATH]``.

Not tests: speed depends on the machine, so every figure is a ratio measured in
one run, or a scaling curve with a fitted exponent. Sections (one table,
``sections.SECTIONS``; the real-model section is skipped, with a note, where
torch, transformers or the trained model pair are missing):

* ``samplers``: each vectorised chain sampler against its per-run reference loop
  on the same chains (target: at least 50x faster per run at V = 7, T = 50, 10,000
  runs), token-steps per second, and its time as a multiple of the time to draw
  just the uniforms it consumes (target: at most 5x);
* ``sampler_scaling`` / ``theory_scaling``: cost over runs, T, V (samplers) and
  T, V, M, K (exact theory), with least-squares log-log exponents (Theorem 1
  should cost T V^2), and Theorem 1's pass at T = 1000, V = 200;
* ``memory``: peak memory over runs, unchunked and with ``chunking.chunked_sum``
  (target: a million runs within 1 GiB);
* ``widgets``: median latency of every widget ``*_update`` at its defaults (target: < 100 ms);
* ``llm``: the real-model engine against autoregressive decoding and Hugging
  Face's assisted generation (target: at least 80% of the predicted speed-up).

Each run ends with the list of targets above, each marked met, not met, or n/a (not
measured on this machine). ``--json benchmarks/results.json`` (full mode) is what the
book's Performance page renders.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._files import writable_file
from .sections import SECTIONS, SIZES, Section, Sizes, run_section
from .timing import best_time, machine

SCHEMA = 1
GIB = 2**30

__all__ = ["SECTIONS", "SIZES", "Section", "Sizes", "best_time", "machine", "main", "run", "targets"]


def _target(
    section: str, what: str, target: str, value: float | None, met: bool | None, measured: str, note: str = ""
) -> dict[str, Any]:
    return {
        "section": section,
        "what": what,
        "target": target,
        "value": value,
        "measured": measured,
        "met": met,
        "note": note,
    }


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target the benchmark checks, with the measured value and whether it is met (``None``: not measured)."""
    sec = results["sections"]
    out: list[dict[str, Any]] = []
    engines = sec.get("samplers", {}).get("engines", {})
    for name, r in engines.items():
        if r.get("baseline"):
            continue  # autoregressive sampling: context for the table, not a target
        if "skipped" in r:
            out.append(
                _target(
                    "samplers", f"{name}: vectorised vs reference", "≥ 50×", None, None, "not measured", r["skipped"]
                )
            )
            continue
        where = f"V={r['V']}, T={r['T']}, {r['runs']:,} runs"
        if r.get("reference"):
            x = r["speedup_vs_reference"]
            out.append(
                _target(
                    "samplers", f"{name}: vectorised vs per-run reference ({where})", "≥ 50×", x, x >= 50, f"{x:,.0f}×"
                )
            )
        else:
            out.append(
                _target(
                    "samplers",
                    f"{name}: vectorised vs per-run reference",
                    "≥ 50×",
                    None,
                    None,
                    "no reference",
                    r.get("note", ""),
                )
            )
        m = r["floor_multiple"]
        out.append(
            _target("samplers", f"{name}: time / time to draw its uniforms ({where})", "≤ 5×", m, m <= 5, f"{m:.1f}×")
        )
    th = sec.get("theory_scaling", {}).get("cases", {}).get("theorem1", {})
    if "axes" in th:
        eT, eV = (th["axes"][a]["fit_tail"]["exponent"] for a in ("T", "V"))
        ok = all(th["axes"][a]["exponent_check"] == "consistent" for a in ("T", "V"))
        out.append(
            _target(
                "theory_scaling", "Theorem 1 cost exponents (T, V)", "T¹·V² (±0.3)", None, ok, f"T^{eT:.2f}·V^{eV:.2f}"
            )
        )
    mem = sec.get("memory", {})
    if "runs" in mem:
        big = mem["runs"][-1]
        if big >= 1_000_000:
            b = mem["tracemalloc_unchunked_bytes"][-1] * 1_000_000 / big
            label = f"{b / GIB:.2f} GiB (tracemalloc)"
            if "rss_unchunked" in mem:
                label += f", {mem['rss_unchunked']['increase_bytes'] / GIB:.2f} GiB resident"
                b = max(b, mem["rss_unchunked"]["increase_bytes"])
        else:
            b = mem["bytes_per_run_unchunked"] * 1_000_000
            label = f"{b / GIB:.2f} GiB (projected from {big:,} runs)"
        out.append(
            _target(
                "memory",
                f"speculative, a million runs unchunked (V={mem['V']}, T={mem['T']})",
                "≤ 1 GiB",
                b,
                b <= GIB,
                label,
            )
        )
        c = mem["tracemalloc_chunked_sum_bytes"][-1]
        out.append(
            _target(
                "memory",
                f"speculative, {big:,} runs with chunked_sum (chunk {mem['chunk_size']:,})",
                "≤ 1 GiB",
                c,
                c <= GIB,
                f"{c / 2**20:.1f} MiB",
            )
        )
    for key, w in sec.get("widgets", {}).get("updates", {}).items():
        ms = w["median_s"] * 1e3
        out.append(
            _target("widgets", f"{key.split('.')[-1]} at defaults", "median < 100 ms", ms, ms < 100, f"{ms:.1f} ms")
        )
    llm = sec.get("llm", {})
    w = llm.get("widget", {})
    if "median_s" in w:
        ms = w["median_s"] * 1e3
        out.append(
            _target(
                "widgets", f"{w['function']} at defaults (real models)", "median < 100 ms", ms, ms < 100, f"{ms:.1f} ms"
            )
        )
    if "fraction_of_predicted" in llm:
        f = llm["fraction_of_predicted"]
        out.append(_target("llm", "achieved / predicted speed-up", "≥ 80%", f, f >= 0.8, f"{100 * f:.0f}%"))
    elif "skipped" in llm:
        out.append(_target("llm", "achieved / predicted speed-up", "≥ 80%", None, None, "not measured", llm["skipped"]))
    return out


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def run(mode: str = "quick", only: Sequence[str] | None = None, log: Any = print) -> dict[str, Any]:
    """Run the sections (all, or those named in ``only``) at the sizes of ``mode``; return the results."""
    if mode not in SIZES:
        raise ValueError(f"mode: must be one of {tuple(SIZES)}, got {mode!r}")
    names = [s.name for s in SECTIONS]
    if only:
        unknown = [o for o in only if o not in names]
        if unknown:
            raise ValueError(f"only: unknown section(s) {unknown}; sections are {names}")
    sizes = SIZES[mode]
    t0 = time.perf_counter()
    results: dict[str, Any] = {"schema": SCHEMA, "mode": mode, "machine": machine(), "sections": {}}
    for section in SECTIONS:
        if only and section.name not in only:
            continue
        results["sections"][section.name] = run_section(section, sizes, log)
    results["elapsed_s"] = time.perf_counter() - t0
    results["targets"] = targets(results)
    return json.loads(json.dumps(results, default=_jsonable))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m specdec_lite.bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--mode",
        choices=tuple(SIZES),
        default="quick",
        help="problem sizes: tiny (tests), quick (CI, default), full (the book's figures)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="SECTION",
        choices=[s.name for s in SECTIONS],
        help=f"run only these of {[s.name for s in SECTIONS]}",
    )
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.json:
        try:
            writable_file(args.json, "--json")
        except OSError as err:
            parser.error(str(err))
    results = run(args.mode, args.only)
    print("Targets:")
    for t in results["targets"]:
        mark = {True: "met", False: "not met", None: "n/a"}[t["met"]]
        note = f" - {t['note']}" if t["note"] else ""
        print(f"  [{mark}] {t['what']}: {t['measured']} (target {t['target']})" + note)
    print(f"total {results['elapsed_s']:.1f} s")
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1) + "\n")
    return results
