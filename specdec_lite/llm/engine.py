"""Autoregressive and speculative generation with two Hugging Face causal LMs.

``speculative_generate`` is Algorithm 1 of the book with a finite lookahead ``K``
and KV caches, in the convention of Chapter 7 (``lookahead.speculative_k``):
with ``R`` tokens still to generate, a round has the draft ``p`` propose
``k = min(K, R)`` tokens one by one, and the target ``q`` scores all of them in
one forward pass (one *oracle call*). The tokens are accepted left to right with
probability ``b = min(1, (q + eps)/p)``, and the first rejected one is replaced by
a draw from the rejection law (the residual ``[q - p]_+`` for ``"opt"``, ``q`` for
``"uno"``). If all ``k < R`` are accepted the target's law at the next position
is already computed, and a *bonus* token is sampled from it; if ``k = R`` the
sequence is complete (with ``K >= max_new_tokens`` there is never a bonus, the
paper's ``K = infinity``). Both caches are then cropped back to the tokens that
were kept.

One sequence at a time (batch size 1), exactly ``max_new_tokens`` new tokens
unless ``eos_token_id`` is given (then generation stops after the first
end-of-sequence token; off by default, so that runs are comparable).

Padded vocabularies: the draft and the target may output different numbers of
logits (one tokenizer, embedding tables padded to different sizes). The engine
works on the target's ``V`` tokens: a draft with fewer logits has ``p(x) = 0``
beyond its own (the residual ``[q - p]_+`` covers them), one with more is
restricted to the target's ``V`` before its softmax; the output law stays exactly
the target's (Theorem 1 holds for any draft law).

Failures are loud: NaN or ``+inf`` logits raise ``FloatingPointError`` (never
sampled), and prompts outside the vocabulary or longer than the models' context
raise ``ValueError`` before any forward pass. A token that a model cannot read
(its id is at least the rows of that model's input embedding: a draft reading
fewer ids than the target outputs) raises a ``ValueError`` naming the token and
the model, before the model is called on it. A model in training mode (dropout
on) runs in eval mode with a warning, and is put back in training mode after.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._i18n import _
from ..primitives import check_int, check_real
from . import _hf
from .verify import REJECTION_LAWS, over_accept, position_stats, probs_from_logits
from .verify import rejection_law as law_after_rejection

GeneratorLike = Any  # None, an int seed, or a torch.Generator on the models' device


@dataclass(frozen=True)
class GenerationResult:
    """New tokens and one record per generated position.

    ``drafted[i]``: position i was proposed by the draft and verified (else the
    target sampled it directly: a bonus token, or autoregressive decoding).
    ``accepted[i]``: the draft token was kept (False where not drafted).
    ``tv[i]``: ``TV(p_i, q_i)`` from the two models' logits, on the target's vocabulary (NaN where not drafted).
    ``reject_prob[i]``: ``sum (1 - b) p``, the chance position i was rejected (= ``tv`` when eps = 0).
    ``bias_opt[i]``, ``bias_uno[i]``: ``TV(P^A_i, q_i)``, the exact distance from the target's law of the law
    position i outputs, with rejection law ``[q - p]_+`` (Decoding-OPT) or ``q`` (Decoding-UNO) and this
    run's acceptance rule (``bias_opt`` is 0 when eps = 0). ``bias`` is the one of ``rejection_law``.
    ``target_logprob[i]``: ``log q_i(x_i)`` at temperature 1, the target's own log-likelihood of the token.
    ``oracle_calls``: target forward passes; ``draft_calls``: draft forward passes; ``wall_time`` in seconds,
    of which ``target_seconds`` and ``draft_seconds`` were spent inside the two models' forward passes.
    ``stopped_at_eos``: generation ended at an end-of-sequence token (only with ``eos_token_id``), so
    ``tokens`` may be shorter than ``max_new_tokens``.
    """

    tokens: torch.Tensor
    prompt_length: int
    drafted: np.ndarray
    accepted: np.ndarray
    tv: np.ndarray
    reject_prob: np.ndarray
    bias_opt: np.ndarray
    bias_uno: np.ndarray
    target_logprob: np.ndarray
    oracle_calls: int
    draft_calls: int
    wall_time: float
    target_seconds: float = math.nan
    draft_seconds: float = math.nan
    rejection_law: str = "opt"
    stopped_at_eos: bool = False

    @property
    def bias(self) -> np.ndarray:
        return self.bias_opt if self.rejection_law == "opt" else self.bias_uno

    @property
    def rejected(self) -> np.ndarray:
        """``R_n``: drafted and not accepted."""
        return self.drafted & ~self.accepted

    @property
    def rejections(self) -> int:
        return int(self.rejected.sum())

    @property
    def acceptance_rate(self) -> float:
        """Accepted draft tokens over drafted positions (NaN if nothing was drafted)."""
        n = int(self.drafted.sum())
        return float(self.accepted.sum() / n) if n else math.nan

    @property
    def predicted_rejections(self) -> float:
        """Theorem 1 along this run: the summed rejection probability at drafted positions."""
        return float(np.nansum(self.reject_prob[self.drafted]))

    @property
    def tokens_per_second(self) -> float:
        return len(self.tokens) / self.wall_time if self.wall_time > 0 else math.inf


def _check_temperature(temperature: Any) -> float:
    return check_real(temperature, "temperature", low=0.0, what="(0 = greedy) ")


def _prompt(input_ids: Any, device: torch.device, vocab: int) -> torch.Tensor:
    ids = torch.as_tensor(input_ids)
    if ids.dim() == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.dim() != 1 or ids.numel() < 1 or ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise ValueError(
            _("input_ids: expected one non-empty sequence of token ids, shape (n,) or (1, n), got {shape}").format(
                shape=tuple(ids.shape)
            )
        )
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= vocab:
        raise ValueError(
            _("input_ids: token ids must lie in [0, {vocab}) (the models' vocabulary), got {lo} .. {hi}").format(
                vocab=vocab, lo=lo, hi=hi
            )
        )
    return ids.to(device=device, dtype=torch.long)


def _check_context(models: dict[str, Any], prompt_length: int, max_new_tokens: int) -> None:
    """Prompt plus new tokens must fit every model's context (its config's ``max_position_embeddings``)."""
    for name, model in models.items():
        n = _hf.context_length(model)
        if n is not None and prompt_length + max_new_tokens > n:
            raise ValueError(
                _(
                    "max_new_tokens: the prompt ({prompt_length} tokens) plus max_new_tokens ({max_new_tokens}) "
                    "= {positions} positions exceed the {name}'s context of {n} "
                    "(config.max_position_embeddings); shorten the prompt or ask for fewer tokens"
                ).format(
                    prompt_length=prompt_length,
                    max_new_tokens=max_new_tokens,
                    positions=prompt_length + max_new_tokens,
                    name=name,
                    n=n,
                )
            )


def _check_eos(eos_token_id: Any, vocab: int) -> int | None:
    if eos_token_id is None:
        return None
    integer = isinstance(eos_token_id, (int, np.integer)) and not isinstance(eos_token_id, bool)
    if not integer or not 0 <= eos_token_id < vocab:
        raise ValueError(
            _("eos_token_id: must be None or a token id in [0, {vocab}), got {got!r}").format(
                vocab=vocab, got=eos_token_id
            )
        )
    return int(eos_token_id)


@contextmanager
def _eval_mode(models: dict[str, Any]) -> Iterator[None]:
    """Run with dropout off: a model in training mode is switched to eval (with a warning) and back after."""
    training = [(name, m) for name, m in models.items() if m.training]
    for name, m in training:
        warnings.warn(
            _(
                "{name}: the model was in training mode (dropout on, so a fixed seed would not reproduce); "
                "generating in eval mode and restoring training mode afterwards"
            ).format(name=name),
            stacklevel=4,
        )
        m.eval()
    try:
        yield
    finally:
        for _name, m in training:
            m.train()


def _generator(generator: GeneratorLike, device: torch.device) -> torch.Generator | None:
    if generator is None:
        return None
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return torch.Generator(device=device).manual_seed(int(generator))
    if isinstance(generator, torch.Generator):
        if torch.device(generator.device).type != device.type:
            raise ValueError(
                _("generator: lives on {where} but the models on {device}").format(
                    where=generator.device, device=device
                )
            )
        return generator
    raise ValueError(
        _("generator: expected None, an int seed or a torch.Generator, got {type_name}").format(
            type_name=type(generator).__name__
        )
    )


def _check_model(model: Any, name: str) -> None:
    if not isinstance(model, torch.nn.Module) or not hasattr(model, "get_output_embeddings"):
        raise ValueError(
            _("{name}: expected a Hugging Face causal LM (e.g. from AutoModelForCausalLM), got {type_name}").format(
                name=name, type_name=type(model).__name__
            )
        )


class _Clock:
    """Seconds spent in forward passes (waiting for the device where it runs asynchronously)."""

    def __init__(self, device: torch.device) -> None:
        syncs = {"cuda": torch.cuda.synchronize, "mps": getattr(getattr(torch, "mps", None), "synchronize", None)}
        self.sync = syncs.get(device.type)
        self.seconds = 0.0

    def forward(self, model: Any, ids: torch.Tensor, cache: Any) -> torch.Tensor:
        t0 = time.perf_counter()
        out = _hf.forward(model, ids, cache)
        if self.sync is not None:
            self.sync()
        self.seconds += time.perf_counter() - t0
        return out


def _normalised(probs: torch.Tensor) -> torch.Tensor:
    """Each row divided by its total: the law ``_draw`` draws from, so that ``min(1, q/p)`` reads the same law.

    A float32 softmax sums to 1 only within rounding (a draft entry can be ``1 + 2^-23``); the draw
    divides by the row's total, so the test must read the quotient too, or such a draft would be
    rejected against ``q(x) = 1``.
    """
    return probs / probs.sum(dim=-1, keepdim=True)


def _draw(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row by inverse CDF: the first index whose cumulative mass exceeds ``u * total``.

    Zero-probability tokens are never drawn (their cumulative mass equals the previous one).
    """
    cdf = probs.cumsum(dim=-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, device=probs.device) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True).clamp_(max=probs.shape[-1] - 1)


def _logprob(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, None])[:, 0]


def _eos_cut(tokens: torch.Tensor, eos: int | None) -> int | None:
    """Length up to and including the first ``eos`` in ``tokens`` (None if there is none or no ``eos``)."""
    if eos is None:
        return None
    hits = (tokens == eos).nonzero()
    return int(hits[0, 0]) + 1 if len(hits) else None


def _check_readable(
    ids: torch.Tensor, rows: int, first: int, source: str, reader: str, cause: str, how: str = ""
) -> None:
    """Raise a ``ValueError`` if a token of ``ids`` (new tokens ``first``, ``first + 1``, ...) is ``>= rows``.

    ``rows`` is the number of input-embedding rows of ``reader``, the model about to be fed ``ids``; a larger id
    would be an index error on a CPU and a device-side assert on a GPU.
    """
    bad = (ids >= rows).nonzero()
    if len(bad):
        i = int(bad[0, 0])
        raise ValueError(
            _(
                "{source} token {int_ids_i} (new token {first_i}{how}), which the {reader} cannot "
                "read: the {reader}'s input vocabulary is {rows} token ids ({cause})"
            ).format(
                source=source, int_ids_i=int(ids[i]), first_i=first + i, how=how, reader=reader, rows=rows, cause=cause
            )
        )


@dataclass(frozen=True)
class _Vocab:
    """The two models' vocabularies: logits ``v_p``, ``v_q`` and input-embedding rows ``rows_p``, ``rows_q``."""

    v_p: int
    v_q: int
    rows_p: int
    rows_q: int

    @classmethod
    def of(cls, draft: Any, target: Any) -> _Vocab:
        return cls(
            _hf.vocab_size(draft), _hf.vocab_size(target), _hf.input_vocab_size(draft), _hf.input_vocab_size(target)
        )

    def draft_probs(self, logits: torch.Tensor, temperature: float, name: str) -> torch.Tensor:
        """The draft's law: ``softmax`` of its first ``min(v_p, v_q)`` logits (logits beyond ``v_q`` dropped first).

        Dropping them keeps the output exact (Theorem 1 holds for any draft law): a token outside the target's
        vocabulary has ``q = 0`` and would always be rejected anyway, and the restricted law accepts at least as often.
        """
        return probs_from_logits(logits[..., : self.v_q] if self.v_p > self.v_q else logits, temperature, name=name)

    def on_target_vocab(self, p: torch.Tensor) -> torch.Tensor:
        """Draft law rows padded with zeros to the target's ``v_q`` tokens: ``p(x) = 0`` beyond the draft's logits."""
        return torch.nn.functional.pad(p, (0, self.v_q - self.v_p)) if self.v_p < self.v_q else p

    def check_emitted(self, ids: torch.Tensor, first: int, how: str) -> None:
        """Tokens the target emitted (``how``: from the residual, as a bonus), which both models read next."""
        if self.v_q > self.rows_p:
            cause = _("its input embedding has fewer rows than the target's {v} logits").format(v=self.v_q)
            _check_readable(ids, self.rows_p, first, _("the target emitted"), "draft", cause, f", {how}")
        if self.v_q > self.rows_q:
            cause = _("its input embedding has fewer rows than its own {v} logits").format(v=self.v_q)
            _check_readable(ids, self.rows_q, first, _("the target emitted"), "target", cause, f", {how}")

    def check_drafted(self, ids: torch.Tensor, first: int, reader: str) -> None:
        """Draft tokens (ids below ``min(v_p, v_q)``) about to be fed to ``reader``, the draft or the target."""
        rows, v = (self.rows_p, self.v_p) if reader == "draft" else (self.rows_q, self.v_q)
        if min(self.v_p, self.v_q) > rows:
            cause = _("its input embedding has fewer rows than its own {v} logits").format(v=v)
            if reader == "target":
                cause += _(", and the draft proposes any of the first {n}").format(n=min(self.v_p, self.v_q))
            _check_readable(ids, rows, first, _("the draft proposed"), reader, cause)


def autoregressive_generate(
    model: Any,
    input_ids: Any,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    generator: GeneratorLike = None,
    eos_token_id: int | None = None,
) -> GenerationResult:
    """Algorithm 3 with a KV cache: ``x_n ~ softmax(logits_n / temperature)``, one model call per token.

    ``temperature = 0`` (or one too small to divide by) is greedy decoding. With
    ``eos_token_id`` generation stops after that token.
    """
    _check_model(model, "model")
    m = check_int(max_new_tokens, "max_new_tokens")
    temperature = _check_temperature(temperature)
    device = _hf.model_device(model)
    vocab = min(_hf.vocab_size(model), _hf.input_vocab_size(model))
    prompt = _prompt(input_ids, device, vocab)
    _check_context({"model": model}, len(prompt), m)
    eos = _check_eos(eos_token_id, vocab)
    gen = _generator(generator, device)
    with _eval_mode({"model": model}), torch.inference_mode():
        return _autoregressive(model, prompt, m, temperature, gen, eos)


def _autoregressive(
    model: Any, prompt: torch.Tensor, m: int, temperature: float, gen: torch.Generator | None, eos: int | None
) -> GenerationResult:
    start = time.perf_counter()
    clock = _Clock(prompt.device)
    cache = _hf.new_cache(model)
    fed = prompt
    tokens, logprobs = [], []
    v, rows = _hf.vocab_size(model), _hf.input_vocab_size(model)
    for n in range(m):
        logits = clock.forward(model, fed, cache)[-1:]
        name = _("model logits at new token {n}").format(n=n)
        x = _draw(_normalised(probs_from_logits(logits, temperature, name=name)), gen)[:, 0]
        tokens.append(x)
        logprobs.append(_logprob(logits, x))
        fed = x
        if eos is not None and int(x) == eos:
            break
        if v > rows and n + 1 < m:  # the next call reads x
            cause = _("its input embedding has fewer rows than its own {v} logits").format(v=v)
            _check_readable(x, rows, n, _("the model emitted"), "model", cause)
    out = torch.cat(tokens)
    n = len(out)
    lp = torch.cat(logprobs).cpu().double().numpy()
    wall = time.perf_counter() - start
    nan = np.full(n, np.nan)
    off = np.zeros(n, bool)
    return GenerationResult(
        out.cpu(),
        len(prompt),
        off,
        off.copy(),
        nan,
        nan.copy(),
        nan.copy(),
        nan.copy(),
        lp,
        n,
        0,
        wall,
        target_seconds=clock.seconds,
        draft_seconds=0.0,
        stopped_at_eos=eos is not None and int(out[-1]) == eos,
    )


def speculative_generate(
    draft: Any,
    target: Any,
    input_ids: Any,
    max_new_tokens: int,
    *,
    lookahead: int = 4,
    temperature: float = 1.0,
    eps: float = 0.0,
    rejection_law: str = "opt",
    generator: GeneratorLike = None,
    eos_token_id: int | None = None,
) -> GenerationResult:
    """Speculative decoding of ``target`` (q) with ``draft`` (p), lookahead ``K = lookahead``.

    ``eps = 0`` with ``rejection_law="opt"`` is speculative decoding: the output has
    exactly the target's law. ``eps > 0`` over-accepts, ``b = min(1, (q + eps)/p)``,
    with rejection law ``"opt"`` (``[q - p]_+``, Decoding-OPT) or ``"uno"`` (``q``,
    Decoding-UNO); both are then biased, and UNO is biased even at ``eps = 0``.

    ``temperature = 0`` (or one too small to divide by) compares argmaxes: in exact
    arithmetic the output is the target's greedy output. In bfloat16 or float16 the
    target's logits from a ``k``-token verification call and from a one-token call can
    differ in the last bits, which can flip a near-tie between two tokens.

    With ``R`` tokens left a round drafts ``min(K, R)`` (Chapter 7's convention), so
    with ``K >= max_new_tokens`` every position is drafted, and ``K = 0`` is
    autoregressive decoding (each round one target call and its token, the draft unused). With ``eos_token_id``
    generation stops after that token.

    Padded vocabularies: the laws live on the target's ``V`` logits; a draft with fewer
    has ``p = 0`` beyond its own, one with more is cut to the first ``V`` before its
    softmax, and the output stays exactly the target's. A token a model cannot read
    (id at least its input-embedding rows) is a ``ValueError`` before it is fed.
    """
    _check_model(draft, "draft")
    _check_model(target, "target")
    m = check_int(max_new_tokens, "max_new_tokens")
    K = check_int(lookahead, "lookahead", low=0)
    temperature = _check_temperature(temperature)
    eps_f = check_real(eps, "eps", low=0.0)
    if rejection_law not in REJECTION_LAWS:
        raise ValueError(
            _("rejection_law: must be one of {choices}, got {got!r}").format(choices=REJECTION_LAWS, got=rejection_law)
        )
    device = _hf.model_device(target)
    if _hf.model_device(draft) != device:
        raise ValueError(
            _("draft and target must be on the same device, got {draft_device} and {target_device}").format(
                draft_device=_hf.model_device(draft), target_device=device
            )
        )
    models = {"draft": draft, "target": target}
    vocab = min(_hf.vocab_size(target), _hf.input_vocab_size(draft), _hf.input_vocab_size(target))
    prompt = _prompt(input_ids, device, vocab)
    _check_context(models, len(prompt), m)
    eos = _check_eos(eos_token_id, vocab)
    gen = _generator(generator, device)
    with _eval_mode(models), torch.inference_mode():
        return _speculative(draft, target, prompt, m, K, temperature, eps_f, rejection_law, gen, eos)


def _speculative(
    draft: Any,
    target: Any,
    prompt: torch.Tensor,
    m: int,
    K: int,
    temperature: float,
    eps: float,
    rejection_law: str,
    gen: torch.Generator | None,
    eos: int | None,
) -> GenerationResult:
    device = prompt.device
    start = time.perf_counter()
    d_clock, t_clock = _Clock(device), _Clock(device)
    d_cache, t_cache = _hf.new_cache(draft), _hf.new_cache(target)
    seq = prompt.clone()
    n0 = len(prompt)
    oracle_calls = draft_calls = 0
    rounds: list[tuple[int, int, int]] = []  # per round: (drafted positions kept, accepted, tokens emitted)
    stat_rows: list[torch.Tensor] = []  # per round: (drafted positions kept, 4) [tv, reject, bias_opt, bias_uno]
    logprobs: list[torch.Tensor] = []
    stopped = False
    voc = _Vocab.of(draft, target)
    while len(seq) - n0 < m and not stopped:
        done = len(seq) - n0
        R = m - done
        k = min(K, R)
        # Draft k tokens one by one; the draft has not yet seen seq[d_len:].
        drafts, p_rows = [], []
        fed = seq[_hf.cache_length(d_cache) :]
        for i in range(k):
            if i > 0:
                voc.check_drafted(fed, done + i - 1, "draft")
            logits = d_clock.forward(draft, fed, d_cache)[-1:]
            p = voc.draft_probs(logits, temperature, _("draft logits at new token {n}").format(n=done + i))
            draft_calls += 1
            fed = _draw(p, gen)[:, 0]
            drafts.append(fed)
            p_rows.append(p)
        x = torch.cat(drafts) if drafts else torch.empty(0, dtype=torch.long, device=device)
        # One oracle call scores the k drafts, and the position after them when it is still to be generated.
        scored = x if k < R else x[:-1]
        voc.check_drafted(scored, done, "target")
        t_logits = t_clock.forward(target, torch.cat([seq[_hf.cache_length(t_cache) :], scored]), t_cache)
        t_logits = t_logits[-(len(scored) + 1) :]
        oracle_calls += 1
        q = probs_from_logits(
            t_logits,
            temperature,
            name=_("target logits at new tokens {first}..{last}").format(first=done, last=done + k),
        )
        q = _normalised(q)
        if k == 0:  # K = 0 is autoregressive decoding: one oracle call, its token drawn from q (Chapter 7)
            n_acc, stats_k = 0, torch.empty((0, 4), device=device)
        else:
            p, qk = _normalised(voc.on_target_vocab(torch.cat(p_rows))), q[:k]  # both on the target's V tokens
            b_all = over_accept(p, qk, eps)
            stats_k = torch.stack(position_stats(p, qk, b_all), dim=1)
            b = b_all.gather(-1, x[:, None])[:, 0]
            u = torch.rand(k, generator=gen, device=device)
            n_acc = int((u < b).long().cumprod(0).sum())  # accepted prefix length
        if n_acc < k:  # first rejection at draft n_acc: resample from the rejection law there
            y = _draw(law_after_rejection(p[n_acc : n_acc + 1], qk[n_acc : n_acc + 1], rejection_law), gen)[:, 0]
            new = torch.cat([x[:n_acc], y])
        elif k < R:  # all accepted: bonus token from the target's next law
            new = torch.cat([x, _draw(q[k : k + 1], gen)[:, 0]])
        else:  # all accepted and the sequence is complete: no bonus
            new = x
        cut = _eos_cut(new, eos)
        if cut is not None:
            new, stopped = new[:cut], True
        j = len(new)
        logprobs.append(_logprob(t_logits[:j], new))
        rounds.append((min(j, k), min(n_acc, j), j))
        stat_rows.append(stats_k[: min(j, k)])
        seq = torch.cat([seq, new])
        if len(seq) - n0 < m and not stopped:  # both models read new[-1] next round, the draft also x[k-1] if kept
            how = _("as a bonus") if n_acc == k else _("from the residual") if rejection_law == "opt" else _("from q")
            voc.check_emitted(new[-1:], done + j - 1, how)
            if n_acc == k:
                voc.check_drafted(x[-1:], done + k - 1, "draft")
        # Keep in each cache only tokens of seq[:-1] (the draft never saw the last draft x[k-1]).
        _hf.crop(t_cache, max(0, _hf.cache_length(t_cache) - (len(seq) - 1)))
        _hf.crop(d_cache, max(0, _hf.cache_length(d_cache) - (len(seq) - 1)))
    n = len(seq) - n0
    drafted = np.concatenate([np.arange(j) < d for d, _, j in rounds])
    accepted = np.concatenate([np.arange(j) < a for _, a, j in rounds])
    stats = np.full((n, 4), np.nan)
    stats[drafted] = torch.cat(stat_rows).cpu().double().numpy()
    logprob = torch.cat(logprobs).cpu().double().numpy()
    wall = time.perf_counter() - start
    return GenerationResult(
        tokens=seq[n0:].cpu(),
        prompt_length=n0,
        drafted=drafted,
        accepted=accepted,
        tv=stats[:, 0],
        reject_prob=stats[:, 1],
        bias_opt=stats[:, 2],
        bias_uno=stats[:, 3],
        target_logprob=logprob,
        oracle_calls=oracle_calls,
        draft_calls=draft_calls,
        wall_time=wall,
        target_seconds=t_clock.seconds,
        draft_seconds=d_clock.seconds,
        rejection_law=rejection_law,
        stopped_at_eos=stopped,
    )
