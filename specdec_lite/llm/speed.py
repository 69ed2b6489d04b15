"""Speed in seconds: our engine against autoregressive sampling and Hugging Face's assisted generation."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .._i18n import N_, _
from ..lookahead import expected_tokens_per_call
from ..primitives import check_int, check_real
from .budget import WARMUP_TOKENS, check_distinct_ints
from .engine import autoregressive_generate, speculative_generate
from .pairs import ModelPair
from .runs import OnRun, check_run_args, encode_prompts, progress_bar


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


def predicted_speedup(alpha: float, K: int, costs: CallCosts) -> float:
    """Leviathan et al.'s model with measured costs: ``E[tokens per round] t_target / (K t_draft + t_verify(K))``.

    ``E[tokens per round] = (1 - alpha^(K+1)) / (1 - alpha)`` (``lookahead.expected_tokens_per_call``);
    with ``t_verify = t_target`` this is ``lookahead.iid_speedup(alpha, K, c)``.
    """
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0)
    K = check_int(K, "K")
    if K not in costs.verify:
        raise ValueError(
            _("K: no verification cost measured for K = {K} (measured: {sorted_costs_verify})").format(
                K=K, sorted_costs_verify=sorted(costs.verify)
            )
        )
    return float(expected_tokens_per_call(alpha, K)) * costs.target / (K * costs.draft + costs.verify[K])


def hf_generate(
    pair: ModelPair,
    prompt: torch.Tensor,
    max_new_tokens: int,
    *,
    lookahead: int | None = None,
    temperature: float = 1.0,
    seed: int = 0,
) -> tuple[torch.Tensor, float]:
    """Hugging Face's own ``generate``: plain sampling, or assisted generation with the draft as assistant.

    Pure sampling (``top_k=0``, ``top_p=1``), exactly ``max_new_tokens`` tokens, and
    for assisted generation a constant ``num_assistant_tokens = lookahead`` with the
    confidence early-stop off, so that it matches ``speculative_generate``.
    Returns the new tokens and the wall time.
    """
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens")
    lookahead = None if lookahead is None else check_int(lookahead, "lookahead")
    temperature, _eps = check_run_args(temperature)
    torch.manual_seed(check_int(seed, "seed", low=0))
    kwargs: dict[str, Any] = dict(
        max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, pad_token_id=pair.tokenizer.eos_token_id
    )
    kwargs.update(
        dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if temperature > 0 else dict(do_sample=False)
    )
    gc = pair.draft.generation_config
    saved = {
        k: getattr(gc, k, None)
        for k in ("num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold")
    }
    if lookahead is not None:
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule = lookahead, "constant"
        gc.assistant_confidence_threshold = 0.0
        kwargs["assistant_model"] = pair.draft
    # Assisted generation calls the assistant's own generate with a generation config and
    # arguments together, and transformers warns about that call of its own, not about ours.
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        ids = prompt[None, :]
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = pair.target.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs)
        wall = time.perf_counter() - t0
    finally:
        hf_logging.set_verbosity(verbosity)
        for k, v in saved.items():
            setattr(gc, k, v)
    return out[0, ids.shape[1] :].cpu(), wall


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


def speed_benchmark(
    pair: ModelPair,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 48,
    lookaheads: Sequence[int] = (1, 2, 3, 4, 6, 8),
    repeats: int = 3,
    temperature: float = 1.0,
    hf: bool = True,
    hf_lookaheads: Sequence[int] | None = None,
    seed: int = 0,
    progress: bool = True,
    on_run: OnRun | None = None,
) -> tuple[list[SpeedRow], CallCosts]:
    """Wall-clock of autoregressive vs speculative sampling (ours for each K, and Hugging Face's).

    Each (prompt, method) run is seeded, so repeating it redoes exactly the same
    work (same tokens, same acceptances); its time is the minimum over ``repeats``
    repetitions, which filters out other work on the machine without favouring
    lucky runs. Methods are interleaved prompt by prompt.

    Returns the rows and the call costs *measured inside these runs* (time in the
    models' forward passes per call: the draft's, the target's on one token in
    autoregressive decoding, and on ``K + 1`` tokens when verifying), from which
    each speculative row's ``predicted_speedup`` is computed. ``on_run`` is called after
    every run (warm-up and repetitions included).
    """
    repeats = check_int(repeats, "repeats")
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens")
    temperature, _eps = check_run_args(temperature)
    seed = check_int(seed, "seed", low=0)
    lookaheads = list(check_distinct_ints(lookaheads, "lookaheads"))
    hf_ks = (
        lookaheads if hf_lookaheads is None else list(check_distinct_ints(hf_lookaheads, "hf_lookaheads", empty=True))
    )
    ids = encode_prompts(pair, prompts)
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
            r = speculative_generate(
                pair.draft, pair.target, prompt, n, lookahead=K, temperature=temperature, generator=gen
            )
        else:
            out, t = hf_generate(pair, prompt, n, lookahead=K or None, temperature=temperature, seed=s)
            tokens[method] += len(out)
            if on_run is not None:
                on_run(name, K, n)
            return t, math.nan, math.nan
        if on_run is not None:
            on_run(name, K, n)
        tokens[method] += len(r.tokens)
        accepted[method] += int(r.accepted.sum())
        drafted[method] += int(r.drafted.sum())
        calls[method] += r.oracle_calls
        d_calls[method] += r.draft_calls
        return r.wall_time, r.target_seconds, r.draft_seconds

    for m in methods:  # warm-up (first calls pay one-off costs)
        run(m, ids[0], WARMUP_TOKENS, seed)
    for m in methods:
        tokens[m], accepted[m], drafted[m], calls[m], d_calls[m] = 0, 0, 0, 0, 0
    jobs = [(i, m) for i in range(len(ids)) for m in methods]
    for i, m in progress_bar(jobs, len(jobs), _("speed"), progress):
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
        t_ms, d_ms = (1e3 * t_target[m] / tokens[m], 1e3 * t_draft[m] / tokens[m]) if ours else (math.nan, math.nan)
        rows.append(SpeedRow(name, K, tps, tps / base, alpha, per_call, pred, 1e3 / tps, t_ms, d_ms))
    return rows, costs


#: The methods of :func:`speed_benchmark`'s rows, as its tables name them.
METHOD_LABELS = {
    "autoregressive": N_("autoregressive"),
    "speculative": N_("speculative"),
    "HF assisted": N_("HF assisted"),
}

#: The columns of :func:`speed_table`.
SPEED_COLUMNS = (
    N_("method"),
    N_("K"),
    N_("tokens/s"),
    N_("speed-up"),
    N_("predicted"),
    N_("accept"),
    N_("tokens/call"),
    N_("ms/token"),
    N_("target ms/token"),
    N_("draft ms/token"),
)


def costs_line(costs: CallCosts) -> str:
    """The call costs measured inside the runs, in one line: a draft call, a target call, each verification call."""
    verify = _(", ").join(_("K={K}: {ms:.2f} ms").format(K=K, ms=1e3 * t) for K, t in costs.verify.items())
    return _(
        "inside the runs: one draft call {draft_ms:.2f} ms, one target call {target_ms:.2f} ms "
        "(c = {c:.3f}); verification calls {verify}"
    ).format(draft_ms=1e3 * costs.draft, target_ms=1e3 * costs.target, c=costs.c, verify=verify)


def speed_table(rows: Sequence[SpeedRow]) -> str:
    """:func:`speed_benchmark`'s rows as an HTML table, a dash where a column does not apply."""

    def num(value: float, digits: int) -> str:
        return f"{value:.{digits}f}" if math.isfinite(value) else "—"

    cells = [
        [
            _(METHOD_LABELS.get(r.method, r.method)),
            str(r.lookahead),
            num(r.tokens_per_second, 1),
            num(r.speedup, 2),
            num(r.predicted_speedup, 2),
            num(r.acceptance_rate, 3),
            num(r.tokens_per_call, 2),
            num(r.ms_per_token, 2),
            num(r.target_ms_per_token, 2),
            num(r.draft_ms_per_token, 2),
        ]
        for r in rows
    ]
    head = "".join(f"<th>{_(h)}</th>" for h in SPEED_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for row in cells)
    return f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def speed_summary(rows: Sequence[SpeedRow], costs: CallCosts) -> str:
    """The measurement in words: the best K's speed-up, the prediction and what explains the gap, and Hugging Face's."""
    ours = [r for r in rows if r.method == "speculative"]
    if not ours:
        raise ValueError(_("rows: no speculative rows to summarise"))
    best = max(ours, key=lambda r: r.speedup)
    lines = [
        _("Best lookahead K = {K}: {speedup:.2f}x the tokens per second of autoregressive sampling.").format(
            K=best.lookahead, speedup=best.speedup
        )
    ]
    a = best.acceptance_rate
    ceiling = 1.0 / (1.0 - a) if a < 1 else math.inf
    lines.append(
        _(
            "Measured acceptance rate {alpha:.3f} (at most {ceiling:.2f} tokens per target call for any K), "
            "cost ratio c = {c:.3f}, predicted speed-up at this K {predicted:.2f}x, "
            "measured {per_call:.2f} tokens per target call."
        ).format(alpha=a, ceiling=ceiling, c=costs.c, predicted=best.predicted_speedup, per_call=best.tokens_per_call)
    )
    ar = next((r for r in rows if r.method == "autoregressive"), None)
    if ar is not None and not math.isnan(best.target_ms_per_token):
        lines.append(
            _(
                "Per generated token: autoregressive {ar_ms:.2f} ms ({ar_target_ms:.2f} in the target); "
                "speculative {ms:.2f} ms = target {target_ms:.2f} + draft {draft_ms:.2f} + engine {engine_ms:.2f}."
            ).format(
                ar_ms=ar.ms_per_token,
                ar_target_ms=ar.target_ms_per_token,
                ms=best.ms_per_token,
                target_ms=best.target_ms_per_token,
                draft_ms=best.draft_ms_per_token,
                engine_ms=best.ms_per_token - best.target_ms_per_token - best.draft_ms_per_token,
            )
        )
    if best.speedup < best.predicted_speedup:
        lines.append(
            _(
                "The measurement falls short of the prediction by the engine's own work per round and by "
                "correlated acceptances, which the i.i.d. prediction leaves out."
            )
        )
    hf = [r for r in rows if r.method == "HF assisted"]
    if hf:
        hf_best = max(hf, key=lambda r: r.speedup)
        same = [r for r in ours if r.lookahead == hf_best.lookahead]
        ratio = best.tokens_per_second / hf_best.tokens_per_second
        line = _(
            "Hugging Face assisted generation: best {hf_speedup:.2f}x at K = {hf_K}; "
            "ours at its best K runs {ratio:.2f}x its tokens per second"
        ).format(hf_speedup=hf_best.speedup, hf_K=hf_best.lookahead, ratio=ratio)
        if same:
            line += _(", and {ratio:.2f}x at the same K.").format(
                ratio=same[0].tokens_per_second / hf_best.tokens_per_second
            )
        else:
            line += _(".")
        lines.append(line)
    return "\n".join(lines)
