"""Token-wise verification on torch tensors: laws from logits, acceptance, rejection law.

The numpy originals of these formulas are ``specdec_lite.tradeoff.over_accept``,
``tradeoff.rejection_law`` and ``tradeoff.over_accept_point`` (which work on
float64 arrays); the engine needs them on the device, on float32 tensors, so they
are restated here once for torch and tested against the originals. ``tv`` and the
guarded ``residual`` are ``specdec_lite.laws``' own (they accept tensors).
"""

from __future__ import annotations

import torch

from ..laws import residual, tv

REJECTION_LAWS = ("opt", "uno")


def probs_from_logits(logits: torch.Tensor, temperature: float, *, name: str = "logits") -> torch.Tensor:
    """The sampling law ``softmax(logits / temperature)`` in float32 on the last axis.

    ``temperature = 0`` means greedy: the one-hot law of the argmax (first maximum).
    So does a temperature so small that ``logits / temperature`` overflows float32 in a
    row (the limit of the softmax as the temperature falls to 0, ties to the first).
    Logits that are NaN or ``+inf`` (float16 overflow, a broken checkpoint) and rows
    with no finite logit raise a ``FloatingPointError`` naming ``name``: such laws are
    reported, never sampled. ``-inf`` marks a token of probability 0.
    """
    logits = logits.float()
    bad = torch.isnan(logits) | (logits == torch.inf)
    dead = ~torch.isfinite(logits).any(dim=-1)
    if bool(bad.any()) or bool(dead.any()):
        rows = sorted(set(bad.any(dim=-1).nonzero()[:, 0].tolist()) | set(dead.nonzero()[:, 0].tolist()))
        raise FloatingPointError(
            f"{name}: {int(bad.sum())} NaN or +inf logit(s), {int(dead.sum())} row(s) with no finite logit, "
            f"in row(s) {rows[:5]} (float16 overflow or a broken checkpoint?); refusing to sample from them"
        )
    greedy = torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).float()
    if temperature == 0:
        return greedy
    scaled = logits / temperature
    # Overflow to +inf, or every entry of a row to -inf (then the shifted softmax is NaN).
    shifted = scaled - scaled.amax(dim=-1, keepdim=True)
    overflow = ((scaled == torch.inf) | shifted.isnan()).any(dim=-1, keepdim=True)
    probs = torch.softmax(scaled, dim=-1)
    return torch.where(overflow, greedy, probs) if bool(overflow.any()) else probs


def over_accept(p: torch.Tensor, q: torch.Tensor, eps: float) -> torch.Tensor:
    """``b(x) = min(1, (q(x) + eps) / p(x))``; ``eps = 0`` is speculative decoding's ``min(1, q/p)``.

    Where ``p(x) = 0`` the token is never proposed; we return 1 there.
    """
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return torch.where(p > 0, ((q + eps) / safe).clamp(max=1.0), torch.ones_like(p))


def rejection_law(p: torch.Tensor, q: torch.Tensor, kind: str) -> torch.Tensor:
    """Law sampled after a rejection: ``"opt"`` = ``[q - p]_+`` (guarded), ``"uno"`` = ``q``."""
    if kind == "opt":
        return residual(p, q)
    if kind == "uno":
        return q
    raise ValueError(f"rejection_law: must be one of {REJECTION_LAWS}, got {kind!r}")


def position_stats(
    p: torch.Tensor, q: torch.Tensor, accept: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per position: ``TV(p, q)``, rejection probability ``r = sum (1 - b) p``, and the bias of each rejection law.

    The bias is ``TV(P^A, q)`` with ``P^A = b p + r P``, the law of the token the
    position outputs. For an over-accepting rule (``b >= min(1, q/p)``, i.e.
    ``eps >= 0``) with ``P = [q - p]_+`` it is Theorem 4's optimum
    ``sum_x max(0, b p - q)`` (0 when ``eps = 0``); with ``P = q`` it is
    ``1/2 sum_x |b p - (1 - r) q|``. With ``eps = 0`` the rejection probability
    equals ``TV(p, q)`` (Theorem 1's per-position fact).
    """
    kept = accept * p
    r = 1.0 - kept.sum(dim=-1)
    bias_opt = (kept - q).clamp(min=0).sum(dim=-1)
    bias_uno = 0.5 * (kept - (1.0 - r)[..., None] * q).abs().sum(dim=-1)
    return tv(p, q), r, bias_opt, bias_uno
