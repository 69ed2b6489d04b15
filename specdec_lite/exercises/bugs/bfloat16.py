"""Section 7, a draft in bfloat16: the token must be drawn from the law ``p`` whose ``p(x)`` the ratio
``min(1, q(x) / p(x))`` and the residual ``[q - p]_+`` use, here ``softmax(logits / T)`` in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from .. import feedback as _feedback
from ..feedback import Feedback, correct, wrong
from .common import _failure, _guard, _student

try:  # this section runs torch models; the other sections need numpy only
    import torch
except ImportError:  # pragma: no cover - torch is part of the book's environment
    torch = None


def buggy_sampling_law(logits, temperature):
    return torch.softmax(logits / temperature, dim=-1)  # the law the draft's token is drawn from


def ratio_law(logits: Any, temperature: float) -> Any:
    """The draft law the acceptance ratio and the residual use: ``softmax(logits / T)`` in float32."""
    return torch.softmax(logits.float() / temperature, dim=-1)


def one_position_counts(
    sampling_law: Callable[[Any, float], Any],
    draft_logits: Any,
    target_logits: Any,
    temperature: float,
    n: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` speculative steps at one position, vectorised: ``(output counts, exact target law q)``.

    The draft token is drawn from ``sampling_law(draft_logits, T)``; the ratio ``min(1, q/p)``
    and the residual ``[q - p]_+`` use ``ratio_law`` (float32) for both models.
    """
    g = torch.Generator().manual_seed(seed)
    r = sampling_law(draft_logits, temperature).float()
    p, q = ratio_law(draft_logits, temperature), ratio_law(target_logits, temperature)
    x = torch.multinomial(r, n, replacement=True, generator=g)
    accept = torch.rand(n, generator=g) < torch.clamp(q / p, max=1)[x]
    y = torch.multinomial(torch.clamp(q - p, min=0), n, replacement=True, generator=g)
    counts = torch.where(accept, x, y).bincount(minlength=len(q)).numpy()
    law = q.double().numpy()
    return counts, law / law.sum()


def bf16_logits(seed: int = 0, V: int = 2048, scale: float = 2.0) -> Any:
    """Logits as a bfloat16 model outputs them: Gaussian, rounded to bfloat16."""
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(V, generator=g)).bfloat16()


def _plain_law(x: Any) -> Any:
    """The student's law as a plain float64 tensor, read inside the lock (a tensor subclass is read there too)."""
    try:
        arr = np.array(torch.as_tensor(x).detach().double().cpu().numpy(), dtype=np.float64)
    except (TypeError, ValueError, RuntimeError):
        raise _feedback._Refused(
            _("return the law as a tensor, got {feedback_kind_of_x}").format(feedback_kind_of_x=_feedback.kind_of(x))
        ) from None
    return torch.from_numpy(arr)


@_guard("llm.verify.probs_from_logits")
def check_sampling_law(sampling_law: Callable[[Any, float], Any]) -> Feedback:
    """Check ``sampling_law(logits, T)``: the law the draft samples from equals the ratio's float32 law."""
    for seed, T in ((0, 0.3), (1, 1.0)):
        logits = bf16_logits(seed)
        got, err = _student(sampling_law, logits.clone(), T, convert=_plain_law)
        if err:
            return _failure(_("{err} (temperature τ = {tau})").format(err=err, tau=T))
        want = ratio_law(logits, T).double()
        if got.shape != want.shape:
            return wrong(
                _("return one probability per token (shape {tuple_want_shape}), got {tuple_got_shape}.").format(
                    tuple_want_shape=tuple(want.shape), tuple_got_shape=tuple(got.shape)
                )
            )
        gap = float((got - want).abs().sum() / 2)
        if gap <= 1e-6:
            continue
        soft_bf16 = torch.softmax(logits / T, dim=-1).double()
        div_bf16 = torch.softmax((logits / T).float(), dim=-1).double()
        where = _("at temperature τ = {tau} your law is {gap:.2e} from the float32 law of the ratio in TV: ").format(
            tau=T, gap=gap
        )
        if (
            float((got - soft_bf16).abs().max()) < 1e-7
            or float((got / got.sum() - soft_bf16 / soft_bf16.sum()).abs().max()) < 1e-7
        ):
            return wrong(
                where
                + _(
                    "the softmax is still computed in bfloat16 (casting its result to float32 keeps the rounding). "
                    "Cast the logits to float32 first (deepseek-ai/DeepSpec #31)."
                )
            )
        if float((got - div_bf16).abs().max()) < 1e-7:
            return wrong(
                where
                + _(
                    "the division by the temperature is done in bfloat16 and rounds the scaled logits; cast to "
                    "float32 before dividing."
                )
            )
        return wrong(where + _("the token must be drawn from the same law as the one in the ratio and the residual."))
    return correct(_("the draft samples from the float32 law its ratio uses: the output law is the target's."))


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
