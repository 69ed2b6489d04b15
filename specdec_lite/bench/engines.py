"""The engines the benchmark times: the package's samplers and exact quantities, by reference.

A chain engine builds, for a random (draft, target) pair of size ``(V, T)``, a
vectorised sampler ``sample(runs, rng)`` and, where the package has one, the
per-run reference loop with the same signature. A theory case is an exact
quantity timed along the axes (T, V, M or K) its cost depends on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import batch, batch_reference, biased, decoding, lookahead, lookahead_reference, reference, theory
from ..chains import MarkovChain

Sampler = Callable[[int, Any], Any]


def qualified_name(fn: Callable[..., Any]) -> str:
    """``"module:function"``: how the results name a function."""
    return f"{fn.__module__}:{fn.__qualname__}"


def pair(V: int, T: int, seed: int = 10) -> tuple[MarkovChain, MarkovChain]:
    """The benchmark's (draft, target): independent random chains (Dirichlet(1) rows)."""
    return MarkovChain.random(V, T, rng=seed + 1), MarkovChain.random(V, T, rng=seed)


@dataclass(frozen=True)
class ChainEngine:
    """A sampler on Markov chains: the ``vectorised`` function and, if the package has one, its ``reference`` loop.

    ``settings`` are extra keyword arguments passed to both (``M``, ``K``, ``eps`` ...).
    """

    name: str
    title: str
    vectorised: Callable[..., Any]
    reference: Callable[..., Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    needs_draft: bool = True
    no_reference_note: str = ""
    baseline: bool = False

    def samplers(self, V: int, T: int) -> tuple[Sampler, Sampler | None]:
        draft, target = pair(V, T)
        chains = (draft, target) if self.needs_draft else (target,)

        def bind(fn: Callable[..., Any]) -> Sampler:
            return lambda runs, rng: fn(*chains, runs=runs, rng=rng, **self.settings)

        return bind(self.vectorised), (bind(self.reference) if self.reference else None)


CHAIN_ENGINES: tuple[ChainEngine, ...] = (
    ChainEngine(
        "speculative", "speculative decoding (Algorithm 1, K = ∞)", decoding.speculative, reference.speculative
    ),
    ChainEngine(
        "batch",
        "batch speculative (Algorithm 4, M = 4 drafts)",
        batch.batch_speculative,
        batch_reference.batch_speculative,
        settings={"M": 4},
    ),
    ChainEngine(
        "tree", "draft tree (M = 4 drafts)", batch.tree_speculative, batch_reference.tree_speculative, settings={"M": 4}
    ),
    ChainEngine(
        "biased",
        "biased speculative (ε = 0.05, Decoding-OPT)",
        biased.biased_speculative,
        None,
        settings={"eps": 0.05, "rejection_law": "opt"},
        no_reference_note="the package has no per-run reference loop for biased verification",
    ),
    ChainEngine(
        "lookahead",
        "finite lookahead (K = 4)",
        lookahead.speculative_k,
        lookahead_reference.speculative_k,
        settings={"K": 4},
    ),
    ChainEngine(
        "autoregressive",
        "autoregressive sampling (Algorithm 3, baseline)",
        decoding.autoregressive,
        None,
        needs_draft=False,
        baseline=True,
        no_reference_note="baseline engine: there is no per-run reference loop for it",
    ),
)


@dataclass(frozen=True)
class TheoryCase:
    """An exact quantity ``function(draft, target, **{param: value})`` timed along ``axes``.

    ``expected`` gives the exponent the cost should have along each axis (from the
    algorithm's loops) so the report can say whether the measured one agrees.
    """

    name: str
    title: str
    function: Callable[..., Any]
    axes: tuple[str, ...]
    expected: dict[str, float]
    param: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, V: int, T: int, value: int | None = None) -> Callable[[], Any]:
        draft, target = pair(V, T)
        kw = dict(self.extra)
        if self.param is not None and value is not None:
            kw[self.param] = value
        return lambda: self.function(draft, target, **kw)


THEORY_CASES: tuple[TheoryCase, ...] = (
    TheoryCase(
        "theorem1", "Theorem 1: expected_rejections", theory.expected_rejections, ("T", "V"), {"T": 1.0, "V": 2.0}
    ),
    TheoryCase(
        "batch",
        "Theorem 3: expected_rejections_batch",
        batch.expected_rejections_batch,
        ("T", "V", "M"),
        {"T": 1.0, "V": 2.0, "M": 1.0},
        param="M",
        extra={"M": 4},
    ),
    TheoryCase(
        "tree",
        "draft tree: expected_rejections_tree",
        batch.expected_rejections_tree,
        ("M",),
        {"M": 2.0},
        param="M",
        extra={"M": 4},
    ),
    TheoryCase(
        "lookahead",
        "finite K: expected_rejections_k",
        lookahead.expected_rejections_k,
        ("K",),
        {"K": 1.0},
        param="K",
        extra={"K": 4},
    ),
)
