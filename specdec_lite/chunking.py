"""Run any vectorised sampler in chunks of runs, so that peak memory is set by the chunk.

A sampler vectorised over runs holds every run's tokens at once: its memory grows
linearly in ``runs``. ``chunked`` calls it on ``ceil(runs / chunk_size)`` blocks with
independent child seeds and concatenates the results (memory still linear in runs,
for the output only); ``chunked_sum`` keeps only a per-run statistic summed over
runs, so its peak memory is that of one chunk whatever ``runs`` is.

Child seeds come from ``SeedSequence.spawn`` (or ``Generator.spawn``): chunk ``i``
is the sampler called with ``rng = child_rngs(rng, n)[i]``. Runs are i.i.d. within
a chunk and the children are independent streams, so the chunked output has the
same law as one unchunked call (not the same numbers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ._i18n import _
from ._rng import RNGLike, check_rng, check_runs
from .primitives import check_int, describe


def _check_callable(f: Any, name: str) -> None:
    if not callable(f):
        raise ValueError(_("{name}: expected a function, got {describe_f}").format(name=name, describe_f=describe(f)))


def chunk_sizes(runs: int, chunk_size: int) -> list[int]:
    """Split ``runs`` into blocks of ``chunk_size`` (the last one may be smaller)."""
    runs = check_runs(runs)
    chunk_size = check_int(chunk_size, "chunk_size")
    full, rest = divmod(runs, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def child_rngs(rng: RNGLike, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``rng`` (a seed, SeedSequence, Generator or None)."""
    rng, n = check_rng(rng), check_int(n, "n", low=0)
    if isinstance(rng, np.random.Generator):
        return rng.spawn(n)
    if not isinstance(rng, np.random.SeedSequence):
        rng = np.random.SeedSequence(rng)
    return [np.random.default_rng(s) for s in rng.spawn(n)]


def concatenate(results: list[Any]) -> Any:
    """Join per-chunk results along the runs axis.

    Arrays (ndim >= 1) are concatenated; dataclasses (e.g. ``DecodeResult``), tuples
    and dicts field by field; anything else (a scalar setting) must agree across chunks.
    """
    if not isinstance(results, (list, tuple)) or not results:
        raise ValueError(
            _("results: expected a non-empty list of per-chunk results, got {describe_results}").format(
                describe_results=describe(results)
            )
        )
    first = results[0]
    if isinstance(first, np.ndarray) and first.ndim >= 1:
        return np.concatenate(results, axis=0)
    if dataclasses.is_dataclass(first) and not isinstance(first, type):
        values = {
            f.name: concatenate([getattr(r, f.name) for r in results]) for f in dataclasses.fields(first) if f.init
        }
        return dataclasses.replace(first, **values)
    if isinstance(first, tuple):
        parts = [concatenate(list(p)) for p in zip(*results, strict=True)]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)
    if isinstance(first, dict):
        return {k: concatenate([r[k] for r in results]) for k in first}
    if all(np.array_equal(np.asarray(r), np.asarray(first)) for r in results[1:]):
        return first
    raise ValueError(
        _("results: cannot join chunks whose {type_first_name} values differ").format(
            type_first_name=type(first).__name__
        )
    )


def chunked(
    sampler: Callable[..., Any], *args: Any, runs: int, chunk_size: int, rng: RNGLike = None, **kwargs: Any
) -> Any:
    """``sampler(*args, runs=r, rng=child, **kwargs)`` over chunks of runs, concatenated."""
    _check_callable(sampler, "sampler")
    sizes = chunk_sizes(runs, chunk_size)
    children = child_rngs(rng, len(sizes))
    return concatenate([sampler(*args, runs=r, rng=g, **kwargs) for r, g in zip(sizes, children, strict=True)])


def chunked_sum(
    sampler: Callable[..., Any],
    *args: Any,
    runs: int,
    chunk_size: int,
    statistic: Callable[[Any], np.ndarray],
    rng: RNGLike = None,
    **kwargs: Any,
) -> np.ndarray:
    """``sum over runs of statistic(result)`` with one chunk in memory at a time.

    ``statistic`` maps a chunk's result to a per-run array of shape ``(chunk, ...)``;
    e.g. ``lambda r: np.stack([r.rejections, r.rejections ** 2], 1)`` gives the first
    two moments of ``N_rej`` after dividing by ``runs``.
    """
    _check_callable(sampler, "sampler")
    _check_callable(statistic, "statistic")
    sizes = chunk_sizes(runs, chunk_size)
    children = child_rngs(rng, len(sizes))
    total: np.ndarray | None = None
    for r, g in zip(sizes, children, strict=True):
        stat = np.asarray(statistic(sampler(*args, runs=r, rng=g, **kwargs)), dtype=np.float64)
        if stat.ndim < 1 or stat.shape[0] != r:
            raise ValueError(
                _("statistic: must return one row per run (leading axis {r}), got shape {stat_shape}").format(
                    r=r, stat_shape=stat.shape
                )
            )
        part = stat.sum(axis=0)
        total = part if total is None else total + part
    assert total is not None
    return total
