"""Probability laws over a finite vocabulary: validation, TV distance, residual.

Every function works on the last axis and broadcasts over leading axes, so one
call handles a single law, a transition matrix, or a stack of them. ``tv`` and
``residual`` also accept ``torch`` tensors (the real-model chapter uses them on
logits' softmax), returning the same type they were given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: How far a law's total may sit from 1 before ``check_law`` refuses it.
SUM_ATOL = 1e-6


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def check_law(x: Any, name: str, *, atol: float = SUM_ATOL) -> np.ndarray:
    """Return ``x`` as a float64 array after checking it is a law on the last axis.

    Raises ``ValueError`` naming ``name`` for NaN/inf, negative entries, an empty
    vocabulary, or rows whose sum differs from 1 by more than ``atol``.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"{name}: needs a last axis with at least one token, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{name}: has negative entries (min {arr.min():.3g})")
    sums = arr.sum(axis=-1)
    worst = float(np.max(np.abs(sums - 1.0))) if sums.size else 0.0
    if worst > atol:
        raise ValueError(f"{name}: rows must sum to 1 (within {atol:g}); worst row is off by {worst:.3g}")
    return arr


def tv(p: Any, q: Any) -> Any:
    """Total variation ``TV(p, q) = 1/2 sum_x |p(x) - q(x)|`` over the last axis."""
    if _is_torch(p) or _is_torch(q):
        return 0.5 * (p - q).abs().sum(dim=-1)
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return 0.5 * np.abs(p - q).sum(axis=-1)


def residual_tolerance(dtype: Any) -> float:
    """Mass of ``max(q - p, 0)`` below which it is treated as rounding noise.

    Sixteen machine epsilons of the dtype: rounding in laws that each sum to 1
    leaves a positive part of a few epsilons, never more.
    """
    if _is_torch(dtype):
        import torch

        return 16 * float(torch.finfo(dtype).eps)
    return 16 * float(np.finfo(dtype).eps)


def residual(p: Any, q: Any) -> Any:
    """The residual law ``[q - p]_+ = max(q - p, 0) / sum_x max(q - p, 0)``.

    Guard: where the positive part has no mass beyond rounding (at most
    ``residual_tolerance`` of the inputs' dtype, e.g. when ``p == q``) the ratio is 0/0 and we return
    ``q`` instead. That choice is correct, not just finite: the residual is only
    sampled after a rejection, whose probability is exactly that mass, so in exact
    arithmetic the branch is never taken; under rounding, falling back to ``q``
    keeps the output law within rounding of ``q``.
    """
    if _is_torch(p) or _is_torch(q):
        pos = (q - p).clamp(min=0)
        mass = pos.sum(dim=-1, keepdim=True)
        ok = mass > residual_tolerance(pos.dtype)
        return (pos / mass.where(ok, mass.new_ones(()))).where(ok, q)
    p, q = np.asarray(p), np.asarray(q)
    tol = residual_tolerance(np.result_type(p.dtype, q.dtype, np.float16))
    p, q = p.astype(np.float64), q.astype(np.float64)
    pos = np.maximum(q - p, 0.0)
    mass = pos.sum(axis=-1, keepdims=True)
    ok = mass > tol
    return np.where(ok, pos / np.where(ok, mass, 1.0), np.broadcast_to(q, pos.shape))


def acceptance(p: Any, q: Any) -> np.ndarray:
    """Speculative acceptance probability ``min(1, q(x)/p(x))``.

    Where ``p(x) = 0`` the token is never proposed; we return 1 there so the
    array stays finite (the value is never used).
    """
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, np.minimum(1.0, q / np.where(p > 0, p, 1.0)), 1.0)
