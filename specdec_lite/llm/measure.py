"""Measurements for the real-models chapter: Theorem 1, the eps trade-off, and speed.

Each function runs the engines many times on a :class:`~specdec_lite.llm.pairs.ModelPair`
and returns plain rows of numbers (means with standard errors over runs), which the
chapter turns into tables and figures.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..lookahead import expected_tokens_per_call
from ..stats import mean_and_se
from . import _hf
from .engine import GenerationResult, autoregressive_generate, speculative_generate
from .pairs import ModelPair

#: Prompts for the offline pair, which has only ever read Python source.
CODE_PROMPTS = (
    "def __init__(self, ",
    "import os\nimport sys\n\n",
    "        for i in range(len(",
    "class Error(Exception):\n    ",
)
#: Prompts for natural-language models (instructions in the style of AlpacaFarm's evaluation set).
TEXT_PROMPTS = (
    "Give three tips for staying healthy.",
    "Explain why the sky is blue to a ten-year-old.",
    "Write a short story about a robot that learns to paint.",
    "What are the main differences between a list and a tuple in Python?",
)


def default_prompts(pair: ModelPair) -> tuple[str, ...]:
    """Code prompts for the offline pair, instructions for hub models."""
    return CODE_PROMPTS if pair.source == "fallback" else TEXT_PROMPTS


def _progress(iterable: Any, total: int, desc: str, progress: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not progress, mininterval=1.0)


def _prompts(pair: ModelPair, prompts: Sequence[str]) -> list[torch.Tensor]:
    if isinstance(prompts, str) or not prompts:
        raise ValueError("prompts: expected a non-empty list of strings")
    return [pair.encode(p) for p in prompts]


def _runs(value: Any, name: str = "runs", minimum: int = 2) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def sample_runs(
    pair: ModelPair,
    prompts: Sequence[str],
    *,
    runs: int,
    max_new_tokens: int,
    lookahead: int,
    temperature: float = 1.0,
    eps: float = 0.0,
    rejection_law: str = "opt",
    seed: int = 0,
    progress: bool = True,
    desc: str = "speculative runs",
) -> list[list[GenerationResult]]:
    """``runs`` independent speculative generations per prompt (one seeded generator for all)."""
    runs = _runs(runs)
    ids = _prompts(pair, prompts)
    gen = torch.Generator(device=pair.device).manual_seed(seed)
    out: list[list[GenerationResult]] = [[] for _ in ids]
    jobs = [(i, r) for r in range(runs) for i in range(len(ids))]
    for i, _ in _progress(jobs, len(jobs), desc, progress):
        out[i].append(speculative_generate(pair.draft, pair.target, ids[i], max_new_tokens, lookahead=lookahead,
                                           temperature=temperature, eps=eps, rejection_law=rejection_law,
                                           generator=gen))
    return out


@dataclass(frozen=True)
class Theorem1Row:
    """Per prompt: observed rejections, predicted ``sum TV`` at drafted positions, and their difference."""

    prompt: str
    runs: int
    observed: float
    observed_se: float
    predicted: float
    predicted_se: float
    difference: float
    difference_se: float

    @property
    def z(self) -> float:
        """Difference in standard errors (Theorem 1 says its mean is 0)."""
        return self.difference / self.difference_se if self.difference_se > 0 else math.nan


def theorem1_rows(prompts: Sequence[str], results: list[list[GenerationResult]]) -> list[Theorem1Row]:
    """Theorem 1 on real models, per prompt.

    At a drafted position the rejection probability given everything before it is
    ``TV(p_n, q_n)``, and which positions are drafted is decided by the past, so
    ``N_rej - sum_{n drafted} TV(p_n, q_n)`` has mean exactly 0 in every run.
    """
    rows = []
    for prompt, res in zip(prompts, results, strict=True):
        obs = np.array([r.rejections for r in res], dtype=float)
        pred = np.array([r.predicted_rejections for r in res])
        rows.append(Theorem1Row(prompt, len(res), *mean_and_se(obs), *mean_and_se(pred), *mean_and_se(obs - pred)))
    return rows


def theorem1_check(pair: ModelPair, prompts: Sequence[str], *, runs: int = 40, max_new_tokens: int = 32,
                   lookahead: int = 4, temperature: float = 1.0, seed: int = 0,
                   progress: bool = True) -> list[Theorem1Row]:
    """Run speculative decoding ``runs`` times per prompt and compare rejections with summed TV."""
    res = sample_runs(pair, prompts, runs=runs, max_new_tokens=max_new_tokens, lookahead=lookahead,
                      temperature=temperature, seed=seed, progress=progress, desc="Theorem 1 runs")
    return theorem1_rows(prompts, res)


@dataclass(frozen=True)
class EpsRow:
    """One (eps, rejection law) setting, averaged over prompts and runs.

    ``rejection_rate``: rejections per drafted position (observed); ``reject_prob``:
    its exact per-position value ``sum (1 - b) p`` averaged; ``loss``: the exact
    per-token bias ``TV(P^A_n, q_n)`` of the law used, averaged over drafted
    positions, and ``loss_opt`` / ``loss_uno`` both laws' at the same positions;
    ``loglik``: the target's mean log-likelihood per generated token (a quality
    proxy); ``tokens_per_call``: generated tokens per target call.
    """

    eps: float
    rejection_law: str
    runs: int
    rejection_rate: float
    rejection_rate_se: float
    reject_prob: float
    loss: float
    loss_opt: float
    loss_uno: float
    loglik: float
    loglik_se: float
    tokens_per_call: float


def eps_rows(eps: float, rejection_law: str, results: list[GenerationResult]) -> EpsRow:
    """Summarise runs made with one ``eps`` and ``rejection_law``."""
    drafted = [r.drafted for r in results]
    rate = np.array([r.rejected.sum() / max(1, d.sum()) for r, d in zip(results, drafted, strict=True)])
    pick = np.concatenate(drafted)

    def at_drafted(attr: str) -> float:
        return float(np.concatenate([getattr(r, attr) for r in results])[pick].mean())

    ll = np.array([r.target_logprob.mean() for r in results])
    calls = sum(r.oracle_calls for r in results)
    tokens = sum(len(r.tokens) for r in results)
    loss = at_drafted("bias_opt" if rejection_law == "opt" else "bias_uno")
    return EpsRow(float(eps), rejection_law, len(results), *mean_and_se(rate), at_drafted("reject_prob"), loss,
                  at_drafted("bias_opt"), at_drafted("bias_uno"), *mean_and_se(ll), tokens / calls)


def eps_sweep(pair: ModelPair, prompts: Sequence[str], eps_values: Sequence[float], *, runs: int = 10,
              max_new_tokens: int = 32, lookahead: int = 4, rejection_laws: Sequence[str] = ("opt", "uno"),
              temperature: float = 1.0, seed: int = 0, progress: bool = True) -> list[EpsRow]:
    """Over-acceptance ``b = min(1, (q + eps)/p)`` for each eps and rejection law (Decoding-OPT and -UNO)."""
    rows = []
    settings = [(e, law) for e in eps_values for law in rejection_laws]
    for e, law in _progress(settings, len(settings), "eps sweep", progress):
        res = sample_runs(pair, prompts, runs=runs, max_new_tokens=max_new_tokens, lookahead=lookahead,
                          temperature=temperature, eps=e, rejection_law=law, seed=seed, progress=False)
        rows.append(eps_rows(e, law, [r for per_prompt in res for r in per_prompt]))
    return rows


# --- speed -----------------------------------------------------------------------------------


@torch.inference_mode()
def forward_seconds(model: Any, *, tokens: int = 1, context: int = 32, repeats: int = 20, seed: int = 0) -> float:
    """Wall time of one cached forward pass on ``tokens`` new tokens after ``context`` tokens.

    The minimum over ``repeats`` passes (as ``timeit`` does): other work on the
    machine can only add time, so the fastest pass is the best estimate of the cost.
    """
    gen = torch.Generator().manual_seed(seed)
    V = _hf.vocab_size(model)
    dev = _hf.model_device(model)
    cache = _hf.new_cache(model)
    _hf.forward(model, torch.randint(V, (context,), generator=gen).to(dev), cache)
    times = []
    for _ in range(repeats + 2):
        ids = torch.randint(V, (tokens,), generator=gen).to(dev)
        t0 = time.perf_counter()
        _hf.forward(model, ids, cache)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        _hf.crop(cache, tokens)
    return float(np.min(times[2:]))


@dataclass(frozen=True)
class CallCosts:
    """Measured seconds per draft call, per target call (one token) and per verification call (``K + 1`` tokens)."""

    draft: float
    target: float
    verify: dict[int, float]

    @property
    def c(self) -> float:
        """Cost ratio: one draft call in target calls."""
        return self.draft / self.target


def call_costs(pair: ModelPair, lookaheads: Sequence[int], *, repeats: int = 20) -> CallCosts:
    """Call costs from a micro-benchmark (fastest of ``repeats`` calls), outside any generation."""
    return CallCosts(
        draft=forward_seconds(pair.draft, repeats=repeats),
        target=forward_seconds(pair.target, repeats=repeats),
        verify={K: forward_seconds(pair.target, tokens=K + 1, repeats=repeats) for K in lookaheads},
    )


def predicted_speedup(alpha: float, K: int, costs: CallCosts) -> float:
    """Leviathan et al.'s model with measured costs: ``E[tokens per round] t_target / (K t_draft + t_verify(K))``.

    ``E[tokens per round] = (1 - alpha^(K+1)) / (1 - alpha)`` (``lookahead.expected_tokens_per_call``);
    with ``t_verify = t_target`` this is ``lookahead.iid_speedup(alpha, K, c)``.
    """
    return float(expected_tokens_per_call(alpha, K)) * costs.target / (K * costs.draft + costs.verify[K])


def hf_generate(pair: ModelPair, prompt: torch.Tensor, max_new_tokens: int, *, lookahead: int | None = None,
                temperature: float = 1.0, seed: int = 0) -> tuple[torch.Tensor, float]:
    """Hugging Face's own ``generate``: plain sampling, or assisted generation with the draft as assistant.

    Pure sampling (``top_k=0``, ``top_p=1``), exactly ``max_new_tokens`` tokens, and
    for assisted generation a constant ``num_assistant_tokens = lookahead`` with the
    confidence early-stop off, so that it matches ``speculative_generate``.
    Returns the new tokens and the wall time.
    """
    torch.manual_seed(seed)
    kwargs: dict[str, Any] = dict(max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens,
                                  pad_token_id=pair.tokenizer.eos_token_id)
    kwargs.update(dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if temperature > 0
                  else dict(do_sample=False))
    gc = pair.draft.generation_config
    saved = {k: getattr(gc, k, None) for k in ("num_assistant_tokens", "num_assistant_tokens_schedule",
                                                "assistant_confidence_threshold")}
    if lookahead is not None:
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule = lookahead, "constant"
        gc.assistant_confidence_threshold = 0.0
        kwargs["assistant_model"] = pair.draft
    try:
        ids = prompt[None, :]
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = pair.target.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs)
        wall = time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            setattr(gc, k, v)
    return out[0, ids.shape[1]:].cpu(), wall


@dataclass(frozen=True)
class SpeedRow:
    """One decoding method: tokens per second, speed-up over our autoregressive loop, and what explains it.

    ``target_ms_per_token`` and ``draft_ms_per_token``: time inside the two models'
    forward passes per generated token (the rest of ``ms_per_token`` is the engine's
    own work); NaN for Hugging Face's methods, which we time only as a whole.
    """

    method: str
    lookahead: int
    tokens_per_second: float
    speedup: float
    acceptance_rate: float
    tokens_per_call: float
    predicted_speedup: float
    ms_per_token: float = math.nan
    target_ms_per_token: float = math.nan
    draft_ms_per_token: float = math.nan


def speed_benchmark(pair: ModelPair, prompts: Sequence[str], *, max_new_tokens: int = 48,
                    lookaheads: Sequence[int] = (1, 2, 3, 4, 6, 8), repeats: int = 3, temperature: float = 1.0,
                    hf: bool = True, hf_lookaheads: Sequence[int] | None = None, seed: int = 0,
                    progress: bool = True) -> tuple[list[SpeedRow], CallCosts]:
    """Wall-clock of autoregressive vs speculative sampling (ours for each K, and Hugging Face's).

    Each (prompt, method) run is seeded, so repeating it redoes exactly the same
    work (same tokens, same acceptances); its time is the minimum over ``repeats``
    repetitions, which filters out other work on the machine without favouring
    lucky runs. Methods are interleaved prompt by prompt.

    Returns the rows and the call costs *measured inside these runs* (time in the
    models' forward passes per call: the draft's, the target's on one token in
    autoregressive decoding, and on ``K + 1`` tokens when verifying), from which
    each speculative row's ``predicted_speedup`` is computed.
    """
    repeats = _runs(repeats, "repeats", 1)
    ids = _prompts(pair, prompts)
    hf_ks = list(lookaheads) if hf_lookaheads is None else list(hf_lookaheads)
    methods: list[tuple[str, int]] = [("autoregressive", 0)] + [("speculative", K) for K in lookaheads]
    if hf:
        methods += [("HF autoregressive", 0)] + [("HF assisted", K) for K in hf_ks]
    wall = dict.fromkeys(methods, 0.0)
    tokens = dict.fromkeys(methods, 0)
    accepted, drafted, calls = dict.fromkeys(methods, 0), dict.fromkeys(methods, 0), dict.fromkeys(methods, 0)
    t_target, t_draft, d_calls = dict.fromkeys(methods, 0.0), dict.fromkeys(methods, 0.0), dict.fromkeys(methods, 0)

    def run(method: tuple[str, int], prompt: torch.Tensor, n: int, s: int) -> tuple[float, float, float]:
        """One seeded run: adds its tokens and counts; returns its wall time and time in the target and draft."""
        name, K = method
        gen = torch.Generator(device=pair.device).manual_seed(s)
        if name == "autoregressive":
            r = autoregressive_generate(pair.target, prompt, n, temperature=temperature, generator=gen)
        elif name == "speculative":
            r = speculative_generate(pair.draft, pair.target, prompt, n, lookahead=K, temperature=temperature,
                                     generator=gen)
        else:
            out, t = hf_generate(pair, prompt, n, lookahead=K or None, temperature=temperature, seed=s)
            tokens[method] += len(out)
            return t, math.nan, math.nan
        tokens[method] += len(r.tokens)
        accepted[method] += int(r.accepted.sum())
        drafted[method] += int(r.drafted.sum())
        calls[method] += r.oracle_calls
        d_calls[method] += r.draft_calls
        return r.wall_time, r.target_seconds, r.draft_seconds

    for m in methods:  # warm-up (first calls pay one-off costs)
        run(m, ids[0], 4, seed)
    for m in methods:
        tokens[m], accepted[m], drafted[m], calls[m], d_calls[m] = 0, 0, 0, 0, 0
    jobs = [(i, m) for i in range(len(ids)) for m in methods]
    for i, m in _progress(jobs, len(jobs), "speed", progress):
        fastest = min(run(m, ids[i], max_new_tokens, seed + i) for _ in range(repeats))
        wall[m] += fastest[0]
        t_target[m] += fastest[1]
        t_draft[m] += fastest[2]
    for m in methods:  # every repetition counted its tokens: keep one repetition's worth
        tokens[m], accepted[m], drafted[m], calls[m], d_calls[m] = (
            v // repeats for v in (tokens[m], accepted[m], drafted[m], calls[m], d_calls[m])
        )
    spec = [m for m in methods if m[0] == "speculative"]
    ar = methods[0]
    costs = CallCosts(
        draft=sum(t_draft[m] for m in spec) / max(1, sum(d_calls[m] for m in spec)),
        target=t_target[ar] / calls[ar],
        verify={m[1]: t_target[m] / calls[m] for m in spec},
    )
    base = tokens[ar] / wall[ar]
    rows = []
    for m in methods:
        name, K = m
        tps = tokens[m] / wall[m]
        alpha = accepted[m] / drafted[m] if drafted[m] else math.nan
        ours = name in ("autoregressive", "speculative")
        per_call = tokens[m] / calls[m] if ours else math.nan
        pred = predicted_speedup(alpha, K, costs) if name == "speculative" else math.nan
        t_ms, d_ms = ((1e3 * t_target[m] / tokens[m], 1e3 * t_draft[m] / tokens[m]) if ours
                      else (math.nan, math.nan))
        rows.append(SpeedRow(name, K, tps, tps / base, alpha, per_call, pred, 1e3 / tps, t_ms, d_ms))
    return rows, costs


def speed_verdict(rows: Sequence[SpeedRow], costs: CallCosts, *, goal: float = 1.5) -> str:
    """The speed goals in words: best-K speed-up against ``goal``, ours against Hugging Face's, and why."""
    ours = [r for r in rows if r.method == "speculative"]
    if not ours:
        raise ValueError("rows: no speculative rows to judge")
    best = max(ours, key=lambda r: r.speedup)
    lines = [f"Best lookahead K = {best.lookahead}: {best.speedup:.2f}x the tokens per second of autoregressive "
             f"sampling (goal {goal:g}x: {'met' if best.speedup >= goal else 'missed'})."]
    a = best.acceptance_rate
    ceiling = 1.0 / (1.0 - a) if a < 1 else math.inf
    lines.append(f"Measured acceptance rate {a:.3f} (at most {ceiling:.2f} tokens per target call for any K), "
                 f"cost ratio c = {costs.c:.3f}, predicted speed-up at this K {best.predicted_speedup:.2f}x, "
                 f"measured {best.tokens_per_call:.2f} tokens per target call.")
    ar = next((r for r in rows if r.method == "autoregressive"), None)
    if ar is not None and not math.isnan(best.target_ms_per_token):
        lines.append(f"Per generated token: autoregressive {ar.ms_per_token:.2f} ms ({ar.target_ms_per_token:.2f} in "
                     f"the target); speculative {best.ms_per_token:.2f} ms = target {best.target_ms_per_token:.2f} "
                     f"+ draft {best.draft_ms_per_token:.2f} + engine "
                     f"{best.ms_per_token - best.target_ms_per_token - best.draft_ms_per_token:.2f}.")
    if best.speedup < goal:
        if best.predicted_speedup < goal:
            lines.append(f"The prediction itself is below {goal:g}x: with this acceptance rate, the draft's cost and "
                         "the cost of verifying K + 1 tokens, no engine reaches the goal at this K.")
        else:
            lines.append("The prediction reaches the goal but the measurement does not: the gap is the engine's "
                         "own work per round and correlated acceptances, which the i.i.d. prediction leaves out.")
    hf = [r for r in rows if r.method == "HF assisted"]
    if hf:
        hf_best = max(hf, key=lambda r: r.speedup)
        same = [r for r in ours if r.lookahead == hf_best.lookahead]
        ratio = best.tokens_per_second / hf_best.tokens_per_second
        lines.append(f"Hugging Face assisted generation: best {hf_best.speedup:.2f}x at K = {hf_best.lookahead}; "
                     f"ours at its best K is {ratio:.2f}x as fast "
                     f"({'at least as fast: goal met' if ratio >= 1 else 'slower: goal missed'})"
                     + (f", and {same[0].tokens_per_second / hf_best.tokens_per_second:.2f}x at the same K."
                        if same else "."))
    return "\n".join(lines)
