import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.stats import chi_square, mean_and_se
from tests.conftest import ALPHA, Z


def test_shapes_and_sizes():
    c = sd.MarkovChain.random(5, 7, rng=0)
    assert (c.V, c.T) == (5, 7)
    assert c.trans.shape == (6, 5, 5) and c.laws().shape == (7, 5, 5)
    one = sd.MarkovChain([1.0], np.zeros((0, 1, 1)))
    assert (one.V, one.T) == (1, 1)


def test_random_is_reproducible_and_uniform_init():
    a, b = sd.MarkovChain.random(4, 3, rng=1), sd.MarkovChain.random(4, 3, rng=1)
    np.testing.assert_array_equal(a.trans, b.trans)
    np.testing.assert_allclose(a.init, 0.25)


def test_chain_is_immutable():
    c = sd.MarkovChain.random(3, 3, rng=0)
    with pytest.raises(ValueError):
        c.trans[0, 0, 0] = 1.0


def test_marginals_match_simulation():
    c = sd.MarkovChain.random(4, 6, rng=3)
    runs = 50_000
    tokens = sd.decoding.autoregressive(c, runs, rng=4).tokens
    mu = c.marginals()
    for n in (1, 5):
        fit = chi_square(np.bincount(tokens[:, n], minlength=4), mu[n])
        assert fit.pvalue > ALPHA


def test_log_prob_agrees_with_sequence_law():
    c = sd.MarkovChain.random(3, 4, rng=2)
    law = sd.theory.sequence_law(c)
    seqs = np.array(np.unravel_index(np.arange(law.size), (3,) * 4)).T
    np.testing.assert_allclose(np.exp(c.log_prob(seqs)), law)
    assert abs(law.sum() - 1) < 1e-12


def test_draft_for_quality_endpoints_and_linearity():
    q = sd.MarkovChain.random(6, 5, rng=0)
    assert sd.theory.expected_rejections(sd.draft_for(q, 1.0, rng=1), q) == pytest.approx(0, abs=1e-12)
    far = sd.draft_for(q, 0.0, rng=1)
    half = sd.draft_for(q, 0.5, rng=1)
    e_far, e_half = sd.theory.expected_rejections(far, q), sd.theory.expected_rejections(half, q)
    assert e_half == pytest.approx(e_far / 2)


def test_temperature_sharpens_and_keeps_zeros():
    c = sd.MarkovChain([0.5, 0.3, 0.2, 0.0], np.full((1, 4, 4), 0.25))
    cold = c.with_temperature(0.5)
    np.testing.assert_allclose(cold.init, np.array([25, 9, 4, 0]) / 38)
    hot = c.with_temperature(1e6)
    np.testing.assert_allclose(hot.init[:3], 1 / 3, atol=1e-5)


@pytest.mark.parametrize(
    "init, trans, message",
    [
        ([0.5, 0.5], np.full((2, 3, 3), 1 / 3), "trans: must have shape"),
        ([[0.5, 0.5]], np.full((2, 2, 2), 0.5), "init: must have shape"),
        ([0.5, 0.5], np.full((2, 2, 2), 0.6), "trans: rows must sum to 1"),
        ([0.7, 0.7], np.full((2, 2, 2), 0.5), "init: rows must sum to 1"),
        ([0.5, 0.5], np.full((2, 2), 0.5), "trans: must have shape"),
    ],
)
def test_constructor_errors(init, trans, message):
    with pytest.raises(ValueError, match=message):
        sd.MarkovChain(init, trans)


@pytest.mark.parametrize("V, T", [(0, 3), (3, 0), (2.5, 3), (True, 3)])
def test_random_rejects_bad_sizes(V, T):
    with pytest.raises(ValueError, match="must be an integer >= 1"):
        sd.MarkovChain.random(V, T)


def test_mix_and_draft_errors():
    a, b = sd.MarkovChain.random(3, 4, rng=0), sd.MarkovChain.random(4, 4, rng=0)
    with pytest.raises(ValueError, match="must share V and T"):
        a.mix(b, 0.5)
    with pytest.raises(ValueError, match="weight"):
        a.mix(a, 1.5)
    with pytest.raises(ValueError, match="quality"):
        sd.draft_for(a, -0.1)
    with pytest.raises(ValueError, match="temperature"):
        a.with_temperature(0)


def test_mean_and_se_is_a_standard_error():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=40_000)
    m, se = mean_and_se(x)
    assert se == pytest.approx(2.0 / 200, rel=0.05)
    assert abs(m - 3.0) < Z * se


def test_negative_or_too_large_token_ids_are_refused():
    chain = sd.MarkovChain.random(4, 3, rng=0)
    with pytest.raises(ValueError, match=r"^prev: token ids must lie in \[0, 4\)"):
        chain.conditional(1, -1)
    with pytest.raises(ValueError, match="^prev: token ids"):
        chain.conditional(2, np.array([0, 4]))
    with pytest.raises(ValueError, match="^prev: token ids must be integers"):
        chain.conditional(1, 1.5)
    with pytest.raises(ValueError, match="^tokens: token ids must lie"):
        chain.log_prob([0, -1, 2])
    with pytest.raises(ValueError, match="^n: position must be an integer"):
        chain.conditional(3, 0)
    np.testing.assert_array_equal(chain.conditional(1, np.int64(3)), chain.trans[0][3])
    np.testing.assert_array_equal(chain.conditional(0, np.array([1, 2])), np.broadcast_to(chain.init, (2, 4)))


@pytest.mark.parametrize("bad", [np.inf, np.nan, 0.0, -1.0])
def test_temperature_and_concentration_must_be_finite_and_positive(bad):
    chain = sd.MarkovChain.random(3, 2, rng=0)
    with pytest.raises(ValueError, match="^temperature: must be a finite number > 0"):
        chain.with_temperature(bad)
    with pytest.raises(ValueError, match="^concentration: must be a finite number > 0"):
        sd.MarkovChain.random(3, 2, rng=0, concentration=bad)


def test_sequence_law_and_one_token_live_with_the_chains():
    chain = sd.MarkovChain.random(3, 4, rng=1)
    law = sd.chains.sequence_law(chain)
    tokens = np.array(list(np.ndindex(3, 3, 3, 3)))
    np.testing.assert_allclose(law, np.exp(chain.log_prob(tokens)), rtol=1e-12)
    p, q = np.array([0.2, 0.8]), np.array([0.6, 0.4])
    draft, target = sd.chains.one_token(p, q)
    assert (draft.T, target.T) == (1, 1)
    np.testing.assert_array_equal(draft.init, p)
    np.testing.assert_array_equal(target.init, q)
