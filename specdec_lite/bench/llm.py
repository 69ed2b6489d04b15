"""Real models: ``llm.speculative_generate`` against autoregressive decoding and Hugging Face's assisted generation.

Uses the engine's own measurement, ``llm.speed.speed_benchmark`` (methods
interleaved prompt by prompt, one warm-up each), on the pair ``llm.load_pair``
chooses (the offline pair on a machine without a GPU). The predicted speed-up is
Leviathan et al.'s ``E[tokens per round] t_target / (K t_draft + t_verify(K))``
from the measured acceptance rate and call costs; the benchmark's target is to
achieve at least 80% of it.

On a CPU that is the offline pair shipped with the package, never a download.
"""

from __future__ import annotations

import math
from typing import Any


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _prompts(pair: Any) -> tuple[str, ...]:
    from ..llm.runs import default_prompts

    return default_prompts(pair)


def _widget_latency(pair: Any, prompt: str, calls: int) -> dict[str, Any]:
    """Median time of the real-models explorer's update at its defaults (it needs a pair, so it is timed here)."""
    from ..widgets.real_models import generation_update
    from .timing import clock, median_time

    update = generation_update(pair, prompt)
    t0 = clock()
    update()
    first = clock() - t0
    return {
        "function": "real_models:generation_update",
        "first_call_s": first,
        "median_s": median_time(update, calls),
        "calls": calls,
    }


def llm_section(sizes: Any, log: Any, pair: Any = None) -> dict[str, Any]:
    """Speed of the real-model engine on ``pair`` (default: ``llm.load_pair()``'s choice)."""
    import torch

    from ..llm.pairs import load_pair, pick_device
    from ..llm.speed import speed_benchmark

    cfg = sizes.llm
    if pair is None and cfg.get("off"):
        log(f"  llm: skipped ({cfg['off']})")
        return {"skipped": cfg["off"]}
    if pair is None:
        # On a CPU the benchmark measures the shipped offline pair, never a download.
        pair = load_pair(hub=pick_device().type == "cuda", verbose=False, progress=False)
    prompts = list(_prompts(pair))[: cfg["prompts"]]
    K = cfg["lookahead"]
    # One intra-op thread: these models are small, and threads that wait for a shared core make timings erratic.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows, costs = speed_benchmark(
            pair,
            prompts,
            max_new_tokens=cfg["new_tokens"],
            lookaheads=(K,),
            hf_lookaheads=(K,),
            repeats=cfg["repeat"],
            hf=True,
            progress=False,
        )
        widget = _widget_latency(pair, prompts[0], cfg.get("widget_calls", 3))
    finally:
        torch.set_num_threads(threads)
    by = {(r.method, r.lookahead): r for r in rows}
    ours, ar = by[("speculative", K)], by[("autoregressive", 0)]
    hf_ar, hf_as = by.get(("HF autoregressive", 0)), by.get(("HF assisted", K))
    achieved = ours.tokens_per_second / ar.tokens_per_second
    out: dict[str, Any] = {
        "pair": pair.describe(),
        "device": str(pair.device),
        "torch_threads": 1,
        "lookahead": K,
        "new_tokens": cfg["new_tokens"],
        "prompts": prompts,
        "repeats": cfg["repeat"],
        "rows": [{k: _num(v) if isinstance(v, float) else v for k, v in vars(r).items()} for r in rows],
        "costs": {
            "draft_s": costs.draft,
            "target_s": costs.target,
            "c": costs.c,
            "verify_s": {str(k): v for k, v in costs.verify.items()},
        },
        "acceptance_rate": ours.acceptance_rate,
        "achieved_speedup": achieved,
        "predicted_speedup": ours.predicted_speedup,
        "fraction_of_predicted": achieved / ours.predicted_speedup,
    }
    summary = {
        "pair": out["pair"],
        "cost ratio c = t_draft / t_target": f"{costs.c:.3f}",
        f"acceptance rate (K = {K})": f"{ours.acceptance_rate:.3f}",
        "speculative / autoregressive (ours)": f"{achieved:.2f}×",
        "predicted from acceptance rate and costs": f"{ours.predicted_speedup:.2f}×",
        "achieved / predicted": f"{100 * out['fraction_of_predicted']:.0f}%",
    }
    if hf_ar is not None and hf_as is not None:
        out["hf_assisted_over_hf_autoregressive"] = hf_as.tokens_per_second / hf_ar.tokens_per_second
        out["ours_over_hf_assisted"] = ours.tokens_per_second / hf_as.tokens_per_second
        out["ours_autoregressive_over_hf_autoregressive"] = ar.tokens_per_second / hf_ar.tokens_per_second
        summary["HF assisted / HF autoregressive"] = f"{out['hf_assisted_over_hf_autoregressive']:.2f}×"
        summary["ours speculative / HF assisted"] = f"{out['ours_over_hf_assisted']:.2f}×"
        summary["ours autoregressive / HF autoregressive"] = f"{out['ours_autoregressive_over_hf_autoregressive']:.2f}×"
    out["widget"] = widget
    if "median_s" in widget:
        summary[f"widget {widget['function']} at defaults (median)"] = f"{widget['median_s'] * 1e3:.0f} ms"
    out["summary"] = summary
    for k, v in summary.items():
        log(f"  {k}: {v}")
    return out
