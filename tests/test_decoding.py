"""Samplers are unbiased (exact law by enumeration), and the engines agree in distribution.

Each goodness-of-fit test uses a fixed seed and fails at p-value < ALPHA (conftest).
"""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.stats import chi_square, sequence_index
from tests.conftest import ALPHA

V, T = 3, 4


@pytest.fixture(scope="module")
def pair():
    # a sparse draft (zeros where the target has mass) exercises the p = 0 edge
    target = sd.MarkovChain.random(V, T, rng=21, concentration=1.0)
    draft = sd.MarkovChain.random(V, T, rng=22, concentration=0.3)
    return draft, target


def seq_fit(tokens, law, V):
    return chi_square(np.bincount(sequence_index(tokens, V), minlength=law.size), law)


def test_speculative_output_law_is_the_target(pair):
    draft, target = pair
    res = sd.decoding.speculative(draft, target, runs=200_000, rng=1)
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), V).pvalue > ALPHA


def test_speculative_joint_law_of_tokens_and_rejections(pair):
    draft, target = pair
    res = sd.decoding.speculative(draft, target, runs=200_000, rng=2)
    joint = sd.theory.speculative_joint_law(draft, target)
    assert seq_fit(2 * res.tokens.astype(int) + res.rejected, joint, 2 * V).pvalue > ALPHA


def test_reference_matches_exact_joint_law(pair):
    """The per-run reference drafts whole blocks; its joint law must be the same."""
    draft, target = pair
    res = sd.reference.speculative(draft, target, runs=20_000, rng=3)
    joint = sd.theory.speculative_joint_law(draft, target)
    assert seq_fit(2 * res.tokens + res.rejected, joint, 2 * V).pvalue > ALPHA
    np.testing.assert_array_equal(res.oracle_calls, 1 + res.rejected[:, :-1].sum(1))


def test_autoregressive_is_the_target(pair):
    _, target = pair
    res = sd.decoding.autoregressive(target, runs=200_000, rng=4)
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), V).pvalue > ALPHA
    assert np.all(res.oracle_calls == T) and res.rejections.sum() == 0


def test_the_goodness_of_fit_can_fail(pair):
    """Power check: the draft's own samples are rejected as draws from the target."""
    draft, target = pair
    res = sd.decoding.autoregressive(draft, runs=20_000, rng=5)
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), V).pvalue < ALPHA


def test_target_mass_where_draft_has_none():
    """q puts mass on token 2, which p never proposes: only the residual can produce it."""
    p_row, q_row = np.array([0.6, 0.4, 0.0]), np.array([0.2, 0.3, 0.5])
    draft = sd.MarkovChain(p_row, np.broadcast_to(p_row, (1, 3, 3)))
    target = sd.MarkovChain(q_row, np.broadcast_to(q_row, (1, 3, 3)))
    res = sd.decoding.speculative(draft, target, runs=100_000, rng=6)
    assert np.all(res.rejected[res.tokens == 2])
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), 3).pvalue > ALPHA


def test_seeds_reproduce():
    target = sd.MarkovChain.random(5, 10, rng=0)
    draft = sd.MarkovChain.random(5, 10, rng=1)
    a = sd.decoding.speculative(draft, target, 50, rng=7)
    b = sd.decoding.speculative(draft, target, 50, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a.tokens, b.tokens)


@pytest.mark.parametrize("runs", [0, -3, 2.5, True])
def test_bad_runs(runs):
    c = sd.MarkovChain.random(3, 3, rng=0)
    with pytest.raises(ValueError, match="runs"):
        sd.decoding.speculative(c, c, runs)
    with pytest.raises(ValueError, match="runs"):
        sd.decoding.autoregressive(c, runs)


def test_mismatched_pair():
    a, b = sd.MarkovChain.random(3, 3, rng=0), sd.MarkovChain.random(3, 4, rng=0)
    for f in (sd.decoding.speculative, sd.reference.speculative):
        with pytest.raises(ValueError, match="must share V and T"):
            f(a, b, 10)
    with pytest.raises(ValueError, match="draft: expected a MarkovChain"):
        sd.theory.expected_rejections(np.ones(3), b)


def test_bad_rng():
    c = sd.MarkovChain.random(3, 3, rng=0)
    with pytest.raises(ValueError, match="rng"):
        sd.decoding.speculative(c, c, 5, rng="seed")
