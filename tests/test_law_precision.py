"""One law per draw, each dtype held to its own rounding, and the law normal sampling uses.

Cases a new user meets first: a float16 or float32 law accepted by ``check_law`` is a
chain's law too; a sampler draws from and tests against the same normalised law; and
``sampling_law`` is the law ``transformers``' ``generate`` samples from.
"""

from __future__ import annotations

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.chains import MarkovChain, one_token
from specdec_lite.laws import rejected_mass, sum_tolerance
from specdec_lite.sampling import sampling_law

P16 = np.array([0.1, 0.2, 0.7], np.float16)  # sums to 0.99902... in float64: off by 9.8e-4


def test_a_float16_law_is_a_chains_law_at_float16s_tolerance():
    off = abs(float(P16.astype(np.float64).sum()) - 1.0)
    assert sum_tolerance(np.float64, 3) < off <= sum_tolerance(np.float16, 3)  # the case: float64 would refuse it
    sd.check_law(P16, "p")
    draft, target = one_token(P16, P16[::-1].copy())
    assert draft.init.dtype == np.float64 and draft.init.sum() == pytest.approx(1.0, abs=1e-15)
    trans = np.broadcast_to(P16, (2, 3, 3)).copy()
    chain = MarkovChain(P16, trans)
    assert np.allclose(chain.trans.sum(axis=-1), 1.0, atol=1e-15)
    with pytest.raises(ValueError, match="rows must sum to 1"):
        MarkovChain(P16.astype(np.float64), trans.astype(np.float64))  # the same numbers in float64: refused


def test_a_draft_is_tested_against_the_law_it_was_drawn_from():
    """A float32 draft of 1 + 2^-23 on the target's only token: drawn with probability 1, so never rejected."""
    p = np.array([1 + 2**-23], np.float32)
    assert float(p[0]) > 1.0
    draft, target = one_token(p, np.array([1.0]))
    assert draft.init[0] == 1.0
    assert rejected_mass(draft.init, target.init) == 0.0
    assert sd.decoding.speculative(draft, target, runs=1000, rng=0).rejections.sum() == 0


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def hf_law(logits, temperature, top_k, top_p, min_p):
    """The law ``transformers``' sampling draws from: its own warpers, in ``generate``'s order, then softmax."""
    from transformers.generation import logits_process as lp

    warpers = lp.LogitsProcessorList()
    if temperature != 1.0:
        warpers.append(lp.TemperatureLogitsWarper(temperature))
    if top_k:
        warpers.append(lp.TopKLogitsWarper(top_k))
    if top_p < 1.0:
        warpers.append(lp.TopPLogitsWarper(top_p))
    if min_p:
        warpers.append(lp.MinPLogitsWarper(min_p))
    scores = torch.tensor(logits, dtype=torch.float64)
    return torch.softmax(warpers(None, scores), dim=-1).numpy()


@pytest.mark.parametrize(
    ("temperature", "top_k", "top_p", "min_p"),
    [(1.0, 0, 1.0, 0.0), (0.7, 10, 1.0, 0.0), (1.3, 0, 0.9, 0.0), (0.8, 0, 1.0, 0.1), (0.7, 12, 0.85, 0.05)],
)
def test_sampling_law_is_transformers_sampling_law(temperature, top_k, top_p, min_p):
    logits = np.random.default_rng(3).normal(scale=2.0, size=(40, 50))
    ours = sampling_law(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    np.testing.assert_allclose(ours, hf_law(logits, temperature, top_k, top_p, min_p), atol=1e-12)
    assert np.all((ours > 0).sum(axis=-1) >= 1)


def test_top_p_from_the_original_law_keeps_another_support():
    """sglang PR #36173's case: [0.35, 0.25, 0.20, 0.05, 0.03, ...], top-k 4, top-p 0.82."""
    probs = np.array([0.35, 0.25, 0.20, 0.05, 0.03] + [0.12 / 6] * 6)
    logits = np.log(probs)
    kept = sampling_law(logits, top_k=4, top_p=0.82)
    original = sampling_law(logits, top_k=4, top_p=0.82, top_p_from="original")
    assert (kept > 0).sum() == 3  # top-k renormalises to mass 0.85, and three tokens hold 0.94 of it
    assert (original > 0).sum() == 4  # from the original law 0.80 < 0.82, so the fourth token stays
    assert sd.tv(kept, original) > 0.05


def test_sampling_law_edges():
    logits = np.array([[0.0, 2.0, 2.0, -np.inf]])
    np.testing.assert_array_equal(sampling_law(logits, temperature=0), [[0, 1, 0, 0]])  # greedy: first maximum
    assert sampling_law(logits)[0, 3] == 0.0
    for bad in (np.array([0.0, np.nan]), np.array([0.0, np.inf]), np.array([-np.inf, -np.inf])):
        with pytest.raises(ValueError, match="logits"):
            sampling_law(bad)
    for kwargs, name in (
        (dict(top_p=0.0), "top_p"),
        (dict(top_k=-1), "top_k"),
        (dict(min_p=1.5), "min_p"),
        (dict(temperature=-1.0), "temperature"),
        (dict(top_p_from="sorted"), "top_p_from"),
    ):
        with pytest.raises(ValueError, match=name):
            sampling_law(logits, **kwargs)
