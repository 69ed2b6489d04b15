"""Token-wise verification on torch tensors: laws from logits, acceptance, rejection law.

``over_accept``, ``rejection_law``, ``REJECTION_LAWS``, ``tv`` and the guarded
``residual`` are ``specdec_lite.laws``' own: one implementation for numpy arrays and
torch tensors (on the device, in the tensors' dtype).
"""

from __future__ import annotations

import torch

from .. import _lock
from .._i18n import _
from ..laws import REJECTION_LAWS, over_accept, rejection_law, tv

__all__ = ["REJECTION_LAWS", "over_accept", "position_stats", "probs_from_logits", "rejection_law"]


@_lock.guarded("llm.verify.probs_from_logits")
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
            _(
                "{name}: {int_bad_sum} NaN or +inf logit(s), {int_dead_sum} row(s) with no finite "
                "logit, in row(s) {rows_5} (float16 overflow or a broken checkpoint?); refusing to "
                "sample from them"
            ).format(name=name, int_bad_sum=int(bad.sum()), int_dead_sum=int(dead.sum()), rows_5=rows[:5])
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


@_lock.guarded("llm.verify.position_stats")
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
