"""One way to turn the ``rng`` argument every sampler takes into a Generator."""

from __future__ import annotations

from typing import Union

import numpy as np

from .primitives import check_int

RNGLike = Union[None, int, np.random.Generator, np.random.SeedSequence]


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Accept a seed, a ``SeedSequence``, a ``Generator`` or ``None`` (fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng: expected a seed, a numpy Generator or None, got {type(rng).__name__}")


def check_runs(runs: int) -> int:
    """Validate a number of Monte Carlo runs."""
    return check_int(runs, "runs")
