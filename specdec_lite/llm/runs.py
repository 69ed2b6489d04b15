"""Prompts and repeated runs of the engine: what every measurement of Chapter 8 starts from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..primitives import check_int
from .engine import GenerationResult, speculative_generate
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


def progress_bar(iterable: Any, total: int, desc: str, progress: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not progress, mininterval=1.0)


def encode_prompts(pair: ModelPair, prompts: Sequence[str]) -> list[torch.Tensor]:
    if isinstance(prompts, str) or not prompts:
        raise ValueError("prompts: expected a non-empty list of strings")
    return [pair.encode(p) for p in prompts]


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
    runs = check_int(runs, "runs", low=2)
    ids = encode_prompts(pair, prompts)
    gen = torch.Generator(device=pair.device).manual_seed(seed)
    out: list[list[GenerationResult]] = [[] for _ in ids]
    jobs = [(i, r) for r in range(runs) for i in range(len(ids))]
    for i, _ in progress_bar(jobs, len(jobs), desc, progress):
        out[i].append(speculative_generate(pair.draft, pair.target, ids[i], max_new_tokens, lookahead=lookahead,
                                           temperature=temperature, eps=eps, rejection_law=rejection_law,
                                           generator=gen))
    return out
