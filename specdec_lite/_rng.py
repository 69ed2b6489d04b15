"""One way to turn the ``rng`` argument every sampler takes into a Generator."""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._i18n import _
from .primitives import check_int, describe

RNGLike = Union[None, int, np.random.Generator, np.random.SeedSequence]


def check_rng(rng: Any, name: str = "rng") -> RNGLike:
    """``rng`` after checking it is a seed (an integer >= 0, not a bool), a ``SeedSequence``, a Generator or None."""
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    raise ValueError(
        _(
            "{name}: expected a seed (an integer >= 0), a numpy Generator, a SeedSequence or None, got {describe_rng}"
        ).format(name=name, describe_rng=describe(rng))
    )


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Accept a seed, a ``SeedSequence``, a ``Generator`` or ``None`` (fresh entropy); anything else is an error."""
    rng = check_rng(rng)
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def check_generator(gen: Any, name: str = "gen") -> np.random.Generator:
    """``gen`` after checking it is a numpy ``Generator`` (the one-run references draw from the caller's stream)."""
    if not isinstance(gen, np.random.Generator):
        raise ValueError(
            _("{name}: expected a numpy Generator (np.random.default_rng(seed)), got {describe_gen}").format(
                name=name, describe_gen=describe(gen)
            )
        )
    return gen


def check_runs(runs: Any) -> int:
    """Validate a number of Monte Carlo runs: an integer >= 1."""
    return check_int(runs, "runs")
