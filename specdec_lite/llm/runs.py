"""Prompts and repeated runs of the engine: what every measurement of Chapter 8 starts from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .._i18n import _
from ..primitives import check_int, check_real
from .engine import GenerationResult, speculative_generate
from .pairs import ModelPair
from .verify import REJECTION_LAWS

#: Called after each run with its method (``"speculative"``, ``"autoregressive"``, ...), ``K`` and tokens asked for.
OnRun = Callable[[str, int, int], None]

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


def progress_bar(iterable: Any, total: float, desc: str, progress: bool, **options: Any) -> Any:
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not progress, mininterval=1.0, **options)


def check_prompts(prompts: Any) -> list[str]:
    """``prompts`` as a list after checking it is a non-empty sequence of non-empty strings (not one string)."""
    if isinstance(prompts, str):
        raise ValueError(
            _("prompts: expected a list of strings, got one string {prompts_40!r} (wrap it in a list)").format(
                prompts_40=prompts[:40]
            )
        )
    if not isinstance(prompts, Sequence) or not prompts or not all(isinstance(p, str) and p for p in prompts):
        raise ValueError(
            _("prompts: expected a non-empty list of non-empty strings, got {prompts!r}").format(prompts=prompts)
        )
    return list(prompts)


def encode_prompts(pair: ModelPair, prompts: Sequence[str]) -> list[torch.Tensor]:
    return [pair.encode(p) for p in check_prompts(prompts)]


def check_run_args(temperature: Any, eps: Any = 0.0, rejection_law: str = "opt") -> tuple[float, float]:
    """Temperature and eps as floats after checking them (finite, >= 0, not bools), and the rejection law."""
    if rejection_law not in REJECTION_LAWS:
        raise ValueError(
            _("rejection_law: must be one of {REJECTION_LAWS}, got {rejection_law!r}").format(
                REJECTION_LAWS=REJECTION_LAWS, rejection_law=rejection_law
            )
        )
    return check_real(temperature, "temperature", low=0.0), check_real(eps, "eps", low=0.0)


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
    desc: str | None = None,
    on_run: OnRun | None = None,
) -> list[list[GenerationResult]]:
    """``runs`` independent speculative generations per prompt (one seeded generator for all)."""
    runs = check_int(runs, "runs", low=2)
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens")
    lookahead = check_int(lookahead, "lookahead")
    temperature, eps = check_run_args(temperature, eps, rejection_law)
    seed = check_int(seed, "seed", low=0)
    ids = encode_prompts(pair, prompts)
    gen = torch.Generator(device=pair.device).manual_seed(seed)
    out: list[list[GenerationResult]] = [[] for _ in ids]
    jobs = [(i, r) for r in range(runs) for i in range(len(ids))]
    for i, _job in progress_bar(jobs, len(jobs), _("speculative runs") if desc is None else desc, progress):
        out[i].append(
            speculative_generate(
                pair.draft,
                pair.target,
                ids[i],
                max_new_tokens,
                lookahead=lookahead,
                temperature=temperature,
                eps=eps,
                rejection_law=rejection_law,
                generator=gen,
            )
        )
        if on_run is not None:
            on_run("speculative", lookahead, max_new_tokens)
    return out
