"""The law a user configures: logits through temperature, top-k, top-p and min-p, as normal sampling applies them.

Speculative decoding is unbiased for the law ``q`` it verifies against (Theorem 1).
An engine whose verifier builds ``q`` differently from its normal sampler therefore
outputs the verifier's law, not the one the user asked for, and no test that compares
the output with the verifier's own ``q`` can see it. ``sampling_law`` builds the law
of normal sampling from the logits, so that an output can be compared with it.

The filters run in the order of Hugging Face ``transformers``' ``generate``
(temperature, then top-k, top-p, min-p), each on the scores the previous one left:

* temperature ``T``: ``logits / T``; ``T = 0`` is greedy (the one-hot law of the first
  maximum) and skips the filters;
* top-k: keeps the scores at least the ``k``-th largest (ties with it stay);
* top-p: sorts the current law ascending and drops the tokens whose cumulative mass is at
  most ``1 - top_p`` (the most likely token always stays). With ``top_p_from="original"``
  the cutoff is taken from the law before top-k and the two supports intersect, which is
  how SGLang's normal sampler applies top-p (sgl-project/sglang PR #36173 proposed
  aligning its speculative verifier with it);
* min-p: drops the tokens whose probability is below ``min_p`` times the largest.

The result is the softmax over the kept tokens, in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lock
from ._i18n import _
from .laws import _numbers
from .primitives import check_real

#: Where top-p reads its cutoff: the law top-k left (``transformers``), or the law before top-k (SGLang).
TOP_P_FROM = ("kept", "original")


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _top_p_drop(scores: np.ndarray, top_p: float) -> np.ndarray:
    """Tokens top-p drops from the law ``softmax(scores)``: ascending cumulative mass at most ``1 - top_p``."""
    order = np.argsort(scores, axis=-1, kind="stable")
    cumulative = np.cumsum(np.take_along_axis(_softmax(scores), order, axis=-1), axis=-1)
    drop_sorted = cumulative <= 1.0 - top_p
    drop_sorted[..., -1] = False
    drop = np.empty_like(drop_sorted)
    np.put_along_axis(drop, order, drop_sorted, axis=-1)
    return drop


@_lock.guarded("sampling.sampling_law")
def sampling_law(
    logits: Any,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    min_p: float = 0.0,
    top_p_from: str = "kept",
) -> np.ndarray:
    """The law normal sampling draws from: ``softmax`` of ``logits`` after temperature, top-k, top-p and min-p.

    ``logits`` has the vocabulary on its last axis; ``top_k = 0``, ``top_p = 1`` and
    ``min_p = 0`` switch a filter off. ``-inf`` marks a token of probability 0; NaN,
    ``+inf`` and a row without a finite logit raise ``ValueError``.
    """
    scores = _numbers(logits, "logits", "f").astype(np.float64)
    if scores.ndim == 0 or scores.shape[-1] < 1:
        raise ValueError(
            _("logits: needs a last axis with at least one token, got shape {shape}").format(shape=scores.shape)
        )
    if np.isnan(scores).any() or (scores == np.inf).any() or not np.isfinite(scores).any(axis=-1).all():
        raise ValueError(_("logits: NaN or +inf, or a row without a finite logit; no law to sample from"))
    temperature = check_real(temperature, "temperature", low=0.0)
    top_p = check_real(top_p, "top_p", low=0.0, high=1.0, open_low=True)
    min_p = check_real(min_p, "min_p", low=0.0, high=1.0)
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 0:
        raise ValueError(_("top_k: must be an integer >= 0 (0 keeps every token), got {value!r}").format(value=top_k))
    if top_p_from not in TOP_P_FROM:
        raise ValueError(
            _("top_p_from: must be one of {choices}, got {value!r}").format(choices=TOP_P_FROM, value=top_p_from)
        )
    if temperature == 0:
        return np.eye(scores.shape[-1])[scores.argmax(axis=-1)]
    scaled = scores / temperature
    before_top_k = scaled
    if 0 < top_k < scaled.shape[-1]:
        kth = np.sort(scaled, axis=-1)[..., -top_k, None]
        scaled = np.where(scaled < kth, -np.inf, scaled)
    if top_p < 1.0:
        scaled = np.where(_top_p_drop(before_top_k if top_p_from == "original" else scaled, top_p), -np.inf, scaled)
    if min_p > 0.0:
        law = _softmax(scaled)
        scaled = np.where(law < min_p * law.max(axis=-1, keepdims=True), -np.inf, scaled)
    return _softmax(scaled)
