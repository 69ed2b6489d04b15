"""The quality/speed trade-off of over-acceptance on real models (Decoding-OPT and Decoding-UNO across eps)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._i18n import _
from ..primitives import check_int, check_real
from ..stats import mean_and_se
from .engine import GenerationResult
from .pairs import ModelPair
from .runs import OnRun, check_prompts, check_run_args, progress_bar, sample_runs


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
    return EpsRow(
        float(eps),
        rejection_law,
        len(results),
        *mean_and_se(rate),
        at_drafted("reject_prob"),
        loss,
        at_drafted("bias_opt"),
        at_drafted("bias_uno"),
        *mean_and_se(ll),
        tokens / calls,
    )


def eps_sweep(
    pair: ModelPair,
    prompts: Sequence[str],
    eps_values: Sequence[float],
    *,
    runs: int = 10,
    max_new_tokens: int = 32,
    lookahead: int = 4,
    rejection_laws: Sequence[str] = ("opt", "uno"),
    temperature: float = 1.0,
    seed: int = 0,
    progress: bool = True,
    on_run: OnRun | None = None,
) -> list[EpsRow]:
    """Over-acceptance ``b = min(1, (q + eps)/p)`` for each eps and rejection law (Decoding-OPT and -UNO).

    Every argument is checked before the first run.
    """
    if isinstance(eps_values, str) or not isinstance(eps_values, (Sequence, np.ndarray)) or not len(eps_values):
        raise ValueError(
            _("eps_values: expected a non-empty list of numbers, got {eps_values!r}").format(eps_values=eps_values)
        )
    eps_values = [check_real(e, "eps_values", low=0.0) for e in eps_values]
    if isinstance(rejection_laws, str) or not rejection_laws:
        raise ValueError(
            _("rejection_laws: expected a non-empty list of law names, got {rejection_laws!r}").format(
                rejection_laws=rejection_laws
            )
        )
    for law in rejection_laws:
        check_run_args(temperature, 0.0, law)
    check_prompts(prompts)
    check_int(runs, "runs", low=2)
    check_int(max_new_tokens, "max_new_tokens")
    check_int(lookahead, "lookahead")
    rows = []
    settings = [(e, law) for e in eps_values for law in rejection_laws]
    for e, law in progress_bar(settings, len(settings), _("eps sweep"), progress):
        res = sample_runs(
            pair,
            prompts,
            runs=runs,
            max_new_tokens=max_new_tokens,
            lookahead=lookahead,
            temperature=temperature,
            eps=e,
            rejection_law=law,
            seed=seed,
            progress=False,
            on_run=on_run,
        )
        rows.append(eps_rows(e, law, [r for per_prompt in res for r in per_prompt]))
    return rows
