"""Section 6, greedy decoding with KV caches: after a rejection the caches are rolled back to the accepted
prefix, not reset; at temperature 0 speculative decoding returns the target's greedy output (on the offline pair).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._i18n import _
from .. import feedback as _feedback
from ..feedback import Feedback, correct, wrong
from .common import _failure, _guard, _student

try:  # this section runs torch models; the other sections need numpy only
    import torch
except ImportError:  # pragma: no cover - torch is part of the book's environment
    torch = None


def buggy_rollback(cache, keep):
    cache.reset()  # forget the rejected drafts (and, with them, everything else)


def greedy_speculative(
    draft: Any, target: Any, prompt: Any, n_new: int, K: int, rollback: Callable[[Any, int], Any]
) -> tuple[list[int], int, int]:
    """Greedy speculative decoding with KV caches: ``(new tokens, accepted drafts, drafted tokens)``.

    The draft proposes its argmax ``K`` times; the target scores them in one call and
    keeps the prefix that matches its own argmax, then emits its own token. The loop
    remembers how many tokens each cache holds and feeds only the rest, so after each
    round ``rollback(cache, keep)`` must leave exactly the first ``keep`` tokens in it.
    """
    from ...llm import _hf

    seq = [int(t) for t in prompt]
    n0 = len(seq)
    models = {"draft": draft, "target": target}
    caches = {name: _hf.new_cache(m) for name, m in models.items()}
    held = {"draft": 0, "target": 0}  # tokens of seq each cache holds
    accepted = drafted = 0
    with torch.inference_mode():
        while len(seq) - n0 < n_new:
            k = min(K, n_new - (len(seq) - n0))
            drafts: list[int] = []
            for _i in range(k):
                fed = (seq + drafts)[held["draft"] :]
                logits = _hf.forward(draft, torch.tensor(fed), caches["draft"])
                held["draft"] += len(fed)
                drafts.append(int(logits[-1].argmax()))
            fed = (seq + drafts)[held["target"] :]
            logits = _hf.forward(target, torch.tensor(fed), caches["target"])[-(k + 1) :]
            held["target"] += len(fed)
            choice = logits.argmax(-1).tolist()  # the target's greedy token after each drafted prefix
            n = 0
            while n < k and drafts[n] == choice[n]:
                n += 1
            seq += drafts[:n] + [choice[n]]
            accepted, drafted = accepted + n, drafted + k
            for name in caches:  # both caches must now hold at most seq[:-1]
                held[name] = min(held[name], len(seq) - 1)
                rollback(caches[name], held[name])
    return seq[n0 : n0 + n_new], accepted, drafted


def _keys(cache: Any) -> list[Any]:
    """The key tensors of every layer of a ``DynamicCache`` (transformers 5: ``layers``; 4: ``key_cache``)."""
    if hasattr(cache, "layers"):
        return [layer.keys for layer in cache.layers]
    return list(cache.key_cache)


def _pair() -> Any:
    from ...llm import load_pair

    return load_pair(hub=False, progress=False)


@_guard()
def check_rollback(
    rollback: Callable[[Any, int], Any],
    pair: Any = None,
    prompt: str = "def __init__(self, ",
    n_new: int = 32,
    K: int = 4,
) -> Feedback:
    """Check ``rollback(cache, keep)`` on a real cache, then by the greedy-equality test on the offline pair."""
    from ...llm import _hf, autoregressive_generate

    try:
        pair = pair if pair is not None else _pair()
    except Exception as e:  # noqa: BLE001 - report, never raise
        return wrong(
            _("could not load the offline pair ({type_e_name}: {e}).").format(type_e_name=type(e).__name__, e=e)
        )
    ids = torch.as_tensor(pair.encode(prompt))
    cache = _hf.new_cache(pair.target)
    with torch.inference_mode():
        _hf.forward(pair.target, ids, cache)
    n, keep = len(ids), len(ids) - 3
    before = [k[..., :keep, :].clone() for k in _keys(cache)]
    # in place: the cache itself goes to the student's function (a copy would hide what it did)
    _done, err = _student(lambda: (rollback(cache, keep), True)[1])
    if err:
        return _failure(err)
    length = int(cache.get_seq_length())
    if length != keep:
        if length == 0:
            return wrong(
                _(
                    "after rollback(cache, {keep}) the cache is empty: a reset, not a rollback. The loop then feeds "
                    "only the new tokens, so the models see almost no context: drafts are rejected that should not "
                    "be and the output leaves the target's (the 1/k acceptance of paiml/aprender #2014)."
                ).format(keep=keep)
            )
        if length == n:
            return wrong(
                _(
                    "the cache still holds all {n} tokens: the rejected drafts stay in it and the next round attends "
                    "to them (the no-op trim of ml-explore/mlx-lm #1109)."
                ).format(n=n)
            )
        if length == n - keep:
            return wrong(
                _(
                    "the cache holds {length} tokens, not {keep}: crop(-m) removes m tokens from the end; remove the "
                    "{n_keep} extra ones."
                ).format(length=length, keep=keep, n_keep=n - keep)
            )
        return wrong(
            _("rollback(cache, {keep}) left {length} tokens in a cache of {n}; it must keep exactly {keep}.").format(
                keep=keep, length=length, n=n
            )
        )
    if not all(torch.equal(k, b) for k, b in zip(_keys(cache), before, strict=True)):
        return wrong(
            _(
                "the cache holds {keep} tokens but not the first {keep}: keep the oldest entries, drop the newest."
            ).format(keep=keep)
        )
    try:
        got, acc, drafted = greedy_speculative(pair.draft, pair.target, ids, n_new, K, rollback)
    except Exception as e:  # noqa: BLE001 - a student's rollback may break the loop in any way
        return _failure(
            _("the speculative loop with your rollback failed ({type_e_name}: {e})").format(
                type_e_name=type(e).__name__, e=e
            )
        )
    greedy = autoregressive_generate(pair.target, ids, n_new, temperature=0).tokens.tolist()
    if got != greedy:
        first = next(i for i, (a, b) in enumerate(zip(got, greedy, strict=True)) if a != b)
        return wrong(
            _(
                "with your rollback the greedy speculative output leaves the target's greedy output at new token "
                "{first}: the caches do not hold what the loop thinks they hold."
            ).format(first=first)
        )
    return correct(
        _(
            "the greedy speculative output equals the target's greedy output ({n_new} tokens); {acc} of "
            "{drafted} drafts accepted."
        ).format(n_new=n_new, acc=acc, drafted=drafted)
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
