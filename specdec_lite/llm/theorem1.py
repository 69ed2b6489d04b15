"""Theorem 1 on real models: observed rejections against the summed TV at drafted positions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._i18n import _
from ..stats import mean_and_se
from .engine import GenerationResult
from .pairs import ModelPair
from .runs import OnRun, sample_runs


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


def theorem1_check(
    pair: ModelPair,
    prompts: Sequence[str],
    *,
    runs: int = 40,
    max_new_tokens: int = 32,
    lookahead: int = 4,
    temperature: float = 1.0,
    seed: int = 0,
    progress: bool = True,
    on_run: OnRun | None = None,
) -> list[Theorem1Row]:
    """Run speculative decoding ``runs`` times per prompt and compare rejections with summed TV."""
    res = sample_runs(
        pair,
        prompts,
        runs=runs,
        max_new_tokens=max_new_tokens,
        lookahead=lookahead,
        temperature=temperature,
        seed=seed,
        progress=progress,
        desc=_("Theorem 1 runs"),
        on_run=on_run,
    )
    return theorem1_rows(prompts, res)
