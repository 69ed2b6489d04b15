"""The engines the benchmark knows, each behind an import check so a missing one is skipped.

A chain engine builds, for a random (draft, target) pair of size ``(V, T)``, a
vectorised sampler ``sample(runs, rng)`` and, where the package has one, the
per-run reference loop with the same signature. A theory case is an exact
quantity timed along the axes (T, V, M or K) its cost depends on.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..chains import MarkovChain

Sampler = Callable[[int, Any], Any]


def missing(requires: tuple[str, ...]) -> str | None:
    """``None`` when every ``"module"`` or ``"module:attribute"`` imports, else a note naming the first gap."""
    for req in requires:
        module, _, attr = req.partition(":")
        try:
            mod = importlib.import_module(module)
        except ImportError as err:
            return f"{module} is not available yet ({err.__class__.__name__}: {err})"
        if attr and not hasattr(mod, attr):
            return f"{module}.{attr} does not exist yet"
    return None


def resolve(req: str) -> Any:
    """The object named ``"module:attribute"``."""
    module, _, attr = req.partition(":")
    return getattr(importlib.import_module(module), attr)


def pair(V: int, T: int, seed: int = 10) -> tuple[MarkovChain, MarkovChain]:
    """The benchmark's (draft, target): independent random chains (Dirichlet(1) rows)."""
    return MarkovChain.random(V, T, rng=seed + 1), MarkovChain.random(V, T, rng=seed)


@dataclass(frozen=True)
class ChainEngine:
    """A sampler on Markov chains: ``vectorised`` and optional ``reference`` are ``"module:function"``.

    ``settings`` are extra keyword arguments passed to both (``M``, ``K``, ``eps`` ...).
    """

    name: str
    title: str
    vectorised: str
    reference: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    needs_draft: bool = True
    no_reference_note: str = ""
    baseline: bool = False

    @property
    def requires(self) -> tuple[str, ...]:
        return (self.vectorised,) + ((self.reference,) if self.reference else ())

    def missing(self) -> str | None:
        return missing(self.requires)

    def samplers(self, V: int, T: int) -> tuple[Sampler, Sampler | None]:
        draft, target = pair(V, T)
        chains = (draft, target) if self.needs_draft else (target,)

        def bind(name: str) -> Sampler:
            fn = resolve(name)
            return lambda runs, rng: fn(*chains, runs=runs, rng=rng, **self.settings)

        return bind(self.vectorised), (bind(self.reference) if self.reference else None)


CHAIN_ENGINES: tuple[ChainEngine, ...] = (
    ChainEngine("speculative", "speculative decoding (Algorithm 1, K = ∞)",
                "specdec_lite.decoding:speculative", "specdec_lite.reference:speculative"),
    ChainEngine("batch", "batch speculative (Algorithm 4, M = 4 drafts)",
                "specdec_lite.batch:batch_speculative", "specdec_lite.batch_reference:batch_speculative",
                settings={"M": 4}),
    ChainEngine("tree", "draft tree (M = 4 drafts)",
                "specdec_lite.batch:tree_speculative", "specdec_lite.batch_reference:tree_speculative",
                settings={"M": 4}),
    ChainEngine("biased", "biased speculative (ε = 0.05, Decoding-OPT)",
                "specdec_lite.biased:biased_speculative", None, settings={"eps": 0.05, "rejection_law": "opt"},
                no_reference_note="the package has no per-run reference loop for biased verification"),
    ChainEngine("lookahead", "finite lookahead (K = 4)",
                "specdec_lite.lookahead:speculative_k", "specdec_lite.lookahead_reference:speculative_k",
                settings={"K": 4}),
    ChainEngine("autoregressive", "autoregressive sampling (Algorithm 3, baseline)",
                "specdec_lite.decoding:autoregressive", None, needs_draft=False, baseline=True,
                no_reference_note="baseline engine: there is no per-run reference loop for it"),
)


@dataclass(frozen=True)
class TheoryCase:
    """An exact quantity ``function(draft, target, **{param: value})`` timed along ``axes``.

    ``expected`` gives the exponent the cost should have along each axis (from the
    algorithm's loops) so the report can say whether the measured one agrees.
    """

    name: str
    title: str
    function: str
    axes: tuple[str, ...]
    expected: dict[str, float]
    param: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def missing(self) -> str | None:
        return missing((self.function,))

    def call(self, V: int, T: int, value: int | None = None) -> Callable[[], Any]:
        draft, target = pair(V, T)
        fn = resolve(self.function)
        kw = dict(self.extra)
        if self.param is not None and value is not None:
            kw[self.param] = value
        return lambda: fn(draft, target, **kw)


THEORY_CASES: tuple[TheoryCase, ...] = (
    TheoryCase("theorem1", "Theorem 1: expected_rejections", "specdec_lite.theory:expected_rejections",
               ("T", "V"), {"T": 1.0, "V": 2.0}),
    TheoryCase("batch", "Theorem 3: expected_rejections_batch", "specdec_lite.batch:expected_rejections_batch",
               ("T", "V", "M"), {"T": 1.0, "V": 2.0, "M": 1.0}, param="M", extra={"M": 4}),
    TheoryCase("tree", "draft tree: expected_rejections_tree", "specdec_lite.batch:expected_rejections_tree",
               ("M",), {"M": 2.0}, param="M", extra={"M": 4}),
    TheoryCase("lookahead", "finite K: expected_rejections_k", "specdec_lite.lookahead:expected_rejections_k",
               ("K",), {"K": 1.0}, param="K", extra={"K": 4}),
)
