"""Section 5, a round with lookahead ``K``, and section 10's decoder with one slip: after ``K`` accepted
drafts the bonus token is drawn from the target's ``q(. | x_K)``; the output follows the target's sequence law
and the target calls follow Chapter 7's count (``lookahead.expected_oracle_calls_k``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...chains import MarkovChain, sequence_law
from ...laws import residual
from ...lookahead import expected_oracle_calls_k
from ...stats import sequence_index
from .. import feedback as _feedback
from ..feedback import Feedback, correct, wrong
from .common import Z, _failure, _fits, _guard, _repeat, _tokens_and_calls


def buggy_speculative_k(draft, target, K, rng):
    T, V = target.T, target.V
    tokens, calls = [], 0
    while len(tokens) < T:
        n0 = len(tokens)
        prev = tokens[-1] if tokens else None
        drafts = []
        for n in range(n0, min(n0 + K, T)):  # draft up to K tokens from p
            prev = int(rng.choice(V, p=draft.conditional(n, prev)))
            drafts.append(prev)
        calls += 1  # one target call scores them all (and the position after them)
        prev = tokens[-1] if tokens else None
        for n, x in enumerate(drafts, start=n0):
            p_n, q_n = draft.conditional(n, prev), target.conditional(n, prev)
            if rng.random() < min(1.0, q_n[x] / p_n[x]):
                tokens.append(x)
                prev = x
            else:
                tokens.append(int(rng.choice(V, p=residual(p_n, q_n))))
                break
        else:  # every draft accepted: one more token, for free
            n = len(tokens)
            if n < T:
                tokens.append(int(rng.choice(V, p=draft.conditional(n, prev))))
    return np.array(tokens), calls


def bonus_pair() -> tuple[MarkovChain, MarkovChain, int]:
    """The chains ``(draft, target)`` and lookahead ``K`` of the bonus-token check: V = 3 tokens, T = 4 positions."""
    q_init = np.array([0.2, 0.5, 0.3])
    q_trans = np.array([[[0.6, 0.3, 0.1], [0.1, 0.3, 0.6], [0.3, 0.4, 0.3]]] * 3)
    p_init = np.array([0.3, 0.4, 0.3])
    p_trans = np.array([[[0.3, 0.5, 0.2], [0.3, 0.3, 0.4], [0.5, 0.2, 0.3]]] * 3)
    return MarkovChain(p_init, p_trans), MarkovChain(q_init, q_trans), 2


def decode_runs(
    fn: Callable[..., Any], draft: MarkovChain, target: MarkovChain, K: int, runs: int, seed: int = 0
) -> tuple[Any, str | None]:
    """``runs`` runs of ``fn(draft, target, K, rng) -> (tokens, calls)``: ``(sequence counts, calls)`` or an error."""
    gen = np.random.default_rng(seed)
    outs, err = _repeat(fn, [(draft, target, K, gen)] * runs, convert=_tokens_and_calls(target.T, target.V))
    if err:
        return None, err
    seqs, calls = np.empty((runs, target.T), dtype=np.int64), np.empty(runs)
    for i, (tokens, c) in enumerate(outs):
        seqs[i], calls[i] = tokens, c
    return (np.bincount(sequence_index(seqs, target.V), minlength=target.V**target.T), calls), None


@_guard(*_feedback.DECODERS)
def check_bonus(fn: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check a decoder with lookahead K: sequence law of the target (chi-square) and Theorem 1's exact calls."""
    draft, target, K = bonus_pair()
    got, err = decode_runs(fn, draft, target, K, runs, seed)
    if err:
        return _failure(err)
    counts, calls = got
    if not _fits(counts, sequence_law(target)):
        return wrong(
            _(
                "the sequences do not follow the target's law (chi-square test over all 81 sequences). When "
                "every draft is accepted, the next token is a bonus drawn from the target's law q at the next "
                "position, which the target's call already computed; drawing it from the draft p biases every "
                "position after a fully accepted round."
            )
        )
    want = expected_oracle_calls_k(draft, target, K)
    mean, se = calls.mean(), calls.std(ddof=1) / np.sqrt(runs)
    if abs(mean - want) > Z * max(se, 1e-12):
        if mean > want:
            return wrong(
                _(
                    "the output law is right, but you make {mean:.3f} target calls per run on average, against the "
                    "exact {want:.3f} of Chapter 7's count with lookahead K = {K}: a fully accepted round must also "
                    "emit its bonus token (dropping it wastes a call, as in ohdearquant/lattice #509)."
                ).format(mean=mean, want=want, K=K)
            )
        return wrong(
            _(
                "you count {mean:.3f} target calls per run, fewer than the exact {want:.3f}: count one call per round."
            ).format(mean=mean, want=want)
        )
    return correct(
        _(
            "the sequences follow the target, and {mean:.3f} ± {se:.3f} calls per run match Chapter 7's "
            "exact {want:.3f} at K = {K}."
        ).format(mean=mean, se=se, want=want, K=K)
    )


# --- The last section: one slip, not named --------------------------------------------------------


# The lab shows this source verbatim (inspect.getsource): the formatter leaves it as written.
# fmt: off
def mystery_speculative_k(draft, target, K, rng):
    T, V = target.T, target.V
    tokens, calls = [], 0
    while len(tokens) < T:
        n0 = len(tokens)
        prevs, drafts = [tokens[-1] if tokens else None], []
        for n in range(n0, min(n0 + K, T)):  # draft up to K tokens from p
            drafts.append(int(rng.choice(V, p=draft.conditional(n, prevs[-1]))))
            prevs.append(drafts[-1])
        calls += 1  # one target call scores them all (and the position after them)
        at = list(zip(range(n0, n0 + len(drafts)), prevs[:-1], drafts, strict=True))
        p_x = np.array([draft.conditional(n, u)[x] for n, u, x in at])
        q_x = np.array([target.conditional(n, u)[x] for n, u, x in at])
        u = rng.random(len(drafts))
        failed = u >= np.maximum(1.0, q_x / p_x)  # a draft fails its test where u is not below its ratio
        n_matches = int((failed.cumsum() < 1).sum())  # the drafts before the first failure
        tokens.extend(drafts[:n_matches])
        n = len(tokens)
        if n_matches < len(drafts):  # the first failure: draw from the residual instead
            tokens.append(int(rng.choice(V, p=residual(draft.conditional(n, prevs[n_matches]),
                                                       target.conditional(n, prevs[n_matches])))))
        elif n < T:  # every draft passed: the bonus token, from the target
            tokens.append(int(rng.choice(V, p=target.conditional(n, tokens[-1]))))
    return np.array(tokens), calls
# fmt: on


@_guard(*_feedback.DECODERS)
def check_mystery(fn: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check the last section's decoder: the target's sequence law (chi-square) and Chapter 7's exact calls."""
    draft, target, K = bonus_pair()
    got, err = decode_runs(fn, draft, target, K, runs, seed)
    if err:
        return _failure(err)
    counts, calls = got
    want = expected_oracle_calls_k(draft, target, K)
    mean, se = calls.mean(), calls.std(ddof=1) / np.sqrt(runs)
    law_ok, calls_ok = _fits(counts, sequence_law(target)), abs(mean - want) <= Z * max(se, 1e-12)
    if law_ok and calls_ok:
        return correct(
            _(
                "the sequences follow the target, and {mean:.3f} ± {se:.3f} calls per run match Chapter 7's "
                "exact {want:.3f} at K = {K}."
            ).format(mean=mean, se=se, want=want, K=K)
        )
    if mean < want:
        return wrong(
            _(
                "{mean:.3f} target calls per run, fewer than the exact {want:.3f} of Chapter 7's count at K = {K}"
            ).format(mean=mean, want=want, K=K)
            + ("" if law_ok else _(", and the sequences do not follow the target"))
            + _(": drafts pass that should fail.")
        )
    if not law_ok:
        return wrong(
            _(
                "the sequences do not follow the target's law (chi-square test over all 81 sequences): a draft "
                "must pass with probability min(1, q/p), a failure be replaced from the residual, and a round "
                "that keeps every draft end with a bonus token from q."
            )
        )
    return wrong(
        _(
            "the output law is right, but {mean:.3f} target calls per run differ from the exact {want:.3f} "
            "of Chapter 7's count at K = {K}: count one call per round, and end each round as the algorithm "
            "does."
        ).format(mean=mean, want=want, K=K)
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
