"""Probability laws over a finite vocabulary: validation, TV distance, residual, acceptance.

Every function works on the last axis and broadcasts over leading axes, so one
call handles a single law, a transition matrix, or a stack of them. ``tv``,
``residual``, ``law_split``, ``over_accept`` and ``rejection_law`` also accept
``torch`` tensors (the real-model chapter uses them on logits' softmax), returning
the same type they were given.

``tv`` and ``residual`` check their inputs (finite, nonnegative, rows summing to 1
within the dtype's rounding, one vocabulary) unless called with ``check=False``:
the samplers validate their chains once and then call them per position unchecked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: How far a law's total may sit from 1 before ``check_law`` refuses it.
SUM_ATOL = 1e-6

#: The two rejection laws of over-acceptance: Decoding-OPT's ``[q - p]_+`` and Decoding-UNO's ``q``.
REJECTION_LAWS = ("opt", "uno")


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


def sum_tolerance(dtype: Any) -> float:
    """How far a row of ``dtype`` may sum from 1: ``SUM_ATOL``, or 32 machine epsilons if larger.

    float64 and float32 get ``1e-6`` and ``3.8e-6``; the 16-bit floats, whose laws
    round to 1 only within a few percent, get ``0.03`` (float16) and ``0.25`` (bfloat16).
    """
    if _is_torch(dtype):
        import torch

        eps = float(torch.finfo(dtype).eps)
    else:
        eps = float(np.finfo(np.result_type(dtype, np.float16)).eps)
    return max(SUM_ATOL, 32 * eps)


def _check_torch_law(x: Any, name: str) -> None:
    import torch

    if not torch.is_floating_point(x):
        raise ValueError(f"{name}: expected a floating-point tensor, got {x.dtype}")
    if x.ndim == 0 or x.shape[-1] < 1:
        raise ValueError(f"{name}: needs a last axis with at least one token, got shape {tuple(x.shape)}")
    # One device-to-host transfer for all three checks.
    finite, nonneg, worst = torch.stack(
        [torch.isfinite(x).all().float(), (x >= 0).all().float(), (x.float().sum(-1) - 1).abs().max()]
    ).tolist()
    if not finite:
        raise ValueError(f"{name}: contains NaN or inf")
    if not nonneg:
        raise ValueError(f"{name}: has negative entries (min {float(x.min()):.3g})")
    atol = sum_tolerance(x.dtype)
    if worst > atol:
        raise ValueError(f"{name}: rows must sum to 1 (within {atol:g}); worst row is off by {worst:.3g}")


def check_pair(p: Any, q: Any, a: str = "p", b: str = "q") -> tuple[Any, Any]:
    """``p`` and ``q`` after checking they are laws over one vocabulary whose leading axes broadcast.

    Numpy inputs come back as float64 arrays, torch tensors unchanged. Each row must
    sum to 1 within ``sum_tolerance`` of the input's dtype; errors name the argument.
    """
    out = []
    for name, x in ((a, p), (b, q)):
        if _is_torch(x):
            _check_torch_law(x, name)
            out.append(x)
            continue
        arr = np.asarray(x)
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name}: expected an array of probabilities, got dtype {arr.dtype}")
        out.append(check_law(arr, name, atol=sum_tolerance(arr.dtype if arr.dtype.kind == "f" else np.float64)))
    sp, sq = tuple(np.shape(p)), tuple(np.shape(q))
    if sp[-1] != sq[-1]:
        raise ValueError(f"{a} and {b} must share the vocabulary (last axis): got shapes {sp} and {sq}")
    try:
        np.broadcast_shapes(sp, sq)
    except ValueError:
        raise ValueError(f"{a} and {b}: shapes {sp} and {sq} do not broadcast") from None
    return out[0], out[1]


def tv(p: Any, q: Any, *, check: bool = True) -> Any:
    """Total variation ``TV(p, q) = 1/2 sum_x |p(x) - q(x)|`` over the last axis."""
    if check:
        check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        return 0.5 * (p - q).abs().sum(dim=-1)
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return 0.5 * np.abs(p - q).sum(axis=-1)


def law_split(p: Any, q: Any) -> tuple[Any, Any]:
    """Algorithm 1's two ways to output ``x``: ``(min(p, q), max(q - p, 0))``.

    Given the prefix, ``x`` is output unrejected with probability
    ``p(x) min(1, q(x)/p(x)) = min(p, q)(x)`` and after a rejection with probability
    ``TV(p, q) [q - p]_+(x) = max(q - p, 0)(x)``; the two add up to ``q(x)``
    (Theorem 1(a)), and the second sums to ``TV(p, q)``.
    """
    if _is_torch(p) or _is_torch(q):
        return p.minimum(q), (q - p).clamp(min=0)
    return np.minimum(p, q), np.maximum(q - p, 0.0)


def residual_tolerance(dtype: Any) -> float:
    """Mass of ``max(q - p, 0)`` below which it is treated as rounding noise.

    Sixteen machine epsilons of the dtype: rounding in laws that each sum to 1
    leaves a positive part of a few epsilons, never more.
    """
    if _is_torch(dtype):
        import torch

        return 16 * float(torch.finfo(dtype).eps)
    return 16 * float(np.finfo(dtype).eps)


def residual(p: Any, q: Any, *, check: bool = True) -> Any:
    """The residual law ``[q - p]_+ = max(q - p, 0) / sum_x max(q - p, 0)``.

    Guard: where the positive part has no mass beyond rounding (at most
    ``residual_tolerance`` of the inputs' dtype, e.g. when ``p == q``) the ratio is 0/0 and we return
    ``q`` instead. That choice is correct, not just finite: the residual is only
    sampled after a rejection, whose probability is exactly that mass, so in exact
    arithmetic the branch is never taken; under rounding, falling back to ``q``
    keeps the output law within rounding of ``q``.

    With ``check=False`` ``p`` may be any nonnegative measure (Theorem 4's
    ``[q - b p]_+`` is ``residual(b * p, q, check=False)``).
    """
    if check:
        check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        pos = law_split(p, q)[1]
        mass = pos.sum(dim=-1, keepdim=True)
        ok = mass > residual_tolerance(pos.dtype)
        return (pos / mass.where(ok, mass.new_ones(()))).where(ok, q)
    p, q = np.asarray(p), np.asarray(q)
    tol = residual_tolerance(np.result_type(p.dtype, q.dtype, np.float16))
    p, q = p.astype(np.float64), q.astype(np.float64)
    pos = law_split(p, q)[1]
    mass = pos.sum(axis=-1, keepdims=True)
    ok = mass > tol
    return np.where(ok, pos / np.where(ok, mass, 1.0), np.broadcast_to(q, pos.shape))


def over_accept(p: Any, q: Any, eps: Any) -> Any:
    """The rule ``b(x) = min(1, max(0, (q(x) + eps)/p(x)))``: over-acceptance for ``eps >= 0``.

    ``eps = 0`` is speculative decoding's ``min(1, q/p)``, ``eps > 0`` over-accepts,
    and ``eps < 0`` under-accepts (the rewriting of any rule in Theorem 2's proof;
    for ``eps >= 0`` the ``max(0, .)`` never acts). Where ``p(x) = 0`` the token is
    never proposed and we return 1. Unchecked (``tradeoff.over_accept`` validates
    ``p``, ``q`` and ``eps >= 0``); numpy inputs give float64, torch tensors keep
    their dtype and device.
    """
    if _is_torch(p) or _is_torch(q):
        safe = p.where(p > 0, p.new_ones(()))
        return ((q + eps) / safe).clamp(min=0.0, max=1.0).where(p > 0, p.new_ones(()))
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, np.clip((q + eps) / np.where(p > 0, p, 1.0), 0.0, 1.0), 1.0)


def acceptance(p: Any, q: Any) -> np.ndarray:
    """Speculative acceptance probability ``min(1, q(x)/p(x))`` (``over_accept`` with ``eps = 0``).

    Where ``p(x) = 0`` the token is never proposed; we return 1 there so the
    array stays finite (the value is never used).
    """
    return over_accept(p, q, 0.0)


def rejection_law(p: Any, q: Any, kind: str) -> Any:
    """The law sampled after a rejection: ``"opt"`` is ``[q - p]_+`` (Decoding-OPT), ``"uno"`` is ``q`` (Decoding-UNO).

    Unchecked apart from ``kind`` (``tradeoff.rejection_law`` validates the laws);
    numpy inputs give a new float64 array of the broadcast shape, torch tensors keep theirs.
    """
    if kind not in REJECTION_LAWS:
        raise ValueError(f"rejection_law: must be one of {REJECTION_LAWS}, got {kind!r}")
    if kind == "opt":
        return residual(p, q, check=False)
    if _is_torch(p) or _is_torch(q):
        return q
    q = np.asarray(q, dtype=np.float64)
    return np.broadcast_to(q, np.broadcast_shapes(np.shape(p), q.shape)).copy()
