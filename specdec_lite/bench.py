"""Benchmarks: ``python -m specdec_lite.bench``. Figures are ratios measured in one run.

Not tests: speed depends on the machine. This prints, for the book's default
setting (V = 7, T = 50):

* the vectorised speculative sampler against the per-run reference loop on the
  same chains (goal: at least 50x faster per run),
* token-steps per second of the vectorised sampler (runs x T / seconds),
* the Theorem 1 forward pass at T = 1000, V = 200.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from . import decoding, reference, theory
from .chains import MarkovChain


def best_time(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls (seconds)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def sampler_vs_reference(V: int = 7, T: int = 50, runs: int = 10_000, reference_runs: int = 500) -> dict:
    """Vectorised ``decoding.speculative`` against ``reference.speculative``, per run."""
    target = MarkovChain.random(V, T, rng=10)
    draft = MarkovChain.random(V, T, rng=11)
    t_vec = best_time(lambda: decoding.speculative(draft, target, runs, rng=0))
    t_ref = best_time(lambda: reference.speculative(draft, target, reference_runs, rng=0), repeat=1)
    per_run_vec, per_run_ref = t_vec / runs, t_ref / reference_runs
    return {
        "V": V,
        "T": T,
        "runs": runs,
        "vectorised_s": t_vec,
        "reference_s_per_run": per_run_ref,
        "reference_runs_timed": reference_runs,
        "speedup_vs_reference": per_run_ref / per_run_vec,
        "token_steps_per_s": runs * T / t_vec,
    }


def theorem1_pass(V: int = 200, T: int = 1000) -> dict:
    """Time of ``theory.expected_rejections`` (one O(T V^2) pass)."""
    target = MarkovChain.random(V, T, rng=0)
    draft = MarkovChain.random(V, T, rng=1)
    return {"V": V, "T": T, "seconds": best_time(lambda: theory.expected_rejections(draft, target))}


def machine() -> dict:
    import os

    return {"python": platform.python_version(), "numpy": np.__version__, "cpu": platform.processor(),
            "machine": platform.machine(), "cores": os.cpu_count()}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    results = {"machine": machine(), "sampler": sampler_vs_reference(), "theorem1": theorem1_pass()}
    s, t1 = results["sampler"], results["theorem1"]
    print(f"speculative, V={s['V']} T={s['T']}, {s['runs']:,} runs: {s['vectorised_s']:.3f} s vectorised; "
          f"reference {s['reference_s_per_run'] * 1e3:.2f} ms/run -> {s['speedup_vs_reference']:.0f}x faster per run")
    print(f"token-steps per second (vectorised): {s['token_steps_per_s']:.3g}")
    print(f"Theorem 1 forward pass, T={t1['T']} V={t1['V']}: {t1['seconds'] * 1e3:.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return results


if __name__ == "__main__":
    main()
