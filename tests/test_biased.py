"""Biased speculative decoding on chains: Monte Carlo against the exact output chain and rejection count."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import biased as bi
from specdec_lite import tradeoff as tr
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z

V, T = 3, 4


@pytest.fixture(scope="module")
def pair():
    target = sd.MarkovChain.random(V, T, rng=41, concentration=1.0)
    draft = sd.MarkovChain.random(V, T, rng=42, concentration=0.3)  # sparse: p = 0 where q > 0
    return draft, target


def seq_fit(tokens, law, V):
    return chi_square(np.bincount(sequence_index(tokens, V), minlength=law.size), law)


@pytest.mark.parametrize("kind, eps, seed", [("opt", 0.1, 1), ("uno", 0.1, 2), ("opt", 0.4, 3), ("uno", 0.02, 4)])
def test_sequence_law_and_rejections_match_exact(pair, kind, eps, seed):
    draft, target = pair
    res = sd.decoding.biased_speculative(draft, target, eps, kind, runs=200_000, rng=seed)
    out = bi.biased_output_chain(draft, target, eps, kind)
    # whole sequences, and tokens together with rejection marks
    assert seq_fit(res.tokens, sd.theory.sequence_law(out), V).pvalue > ALPHA
    joint = sd.theory.sequence_law(bi.joint_chain(draft, *bi.over_accept_rule(draft, target, eps, kind)))
    assert seq_fit(2 * res.tokens.astype(int) + res.rejected, joint, 2 * V).pvalue > ALPHA
    # per-token output law, position by position
    mu = out.marginals()
    for n in range(T):
        assert chi_square(np.bincount(res.tokens[:, n], minlength=V), mu[n]).pvalue > ALPHA
    # expected rejections (total and per position) and oracle calls
    exact = bi.biased_expected_rejections(draft, target, eps, kind)
    m, se = mean_and_se(res.rejections)
    assert abs(m - exact) <= Z * se, (m, exact, se)
    prof = bi.biased_rejection_profile(draft, target, eps, kind)
    se_n = np.sqrt(np.maximum(prof * (1 - prof), 1e-12) / res.runs)
    assert np.all(np.abs(res.rejected.mean(0) - prof) <= Z * se_n + 1e-12)
    np.testing.assert_array_equal(res.oracle_calls, 1 + res.rejected[:, :-1].sum(1))


def test_biased_sampler_is_detectably_biased(pair):
    """Power check: with eps > 0 the output is not the target, and the test sees it."""
    draft, target = pair
    res = sd.decoding.biased_speculative(draft, target, 0.3, "uno", runs=50_000, rng=5)
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), V).pvalue < ALPHA
    assert bi.biased_sequence_tv(draft, target, 0.3, "uno") > 0.05


def test_eps_zero_opt_is_speculative_decoding(pair):
    draft, target = pair
    out = bi.biased_output_chain(draft, target, 0.0, "opt")
    np.testing.assert_allclose(out.laws(), target.laws(), atol=1e-12)
    assert bi.biased_sequence_tv(draft, target, 0.0, "opt") == pytest.approx(0, abs=1e-12)
    np.testing.assert_allclose(
        bi.biased_rejection_profile(draft, target, 0.0, "opt"), sd.theory.rejection_profile(draft, target), atol=1e-12
    )
    res = sd.decoding.biased_speculative(draft, target, 0.0, "opt", runs=100_000, rng=6)
    assert seq_fit(res.tokens, sd.theory.sequence_law(target), V).pvalue > ALPHA


def test_accept_everything_is_the_draft(pair):
    draft, target = pair
    for kind in ("opt", "uno"):
        out = bi.biased_output_chain(draft, target, 1.0, kind)
        np.testing.assert_allclose(out.laws(), draft.laws(), atol=1e-12)
        assert bi.biased_expected_rejections(draft, target, 1.0, kind) == 0.0
        assert bi.biased_sequence_tv(draft, target, 1.0, kind) == pytest.approx(bi.sequence_tv(draft, target))


def test_per_position_trade_off_and_sequence_bounds():
    """Per position (prefix drawn from the output chain) OPT sits on the front; the losses bound sequence TV."""
    target = sd.MarkovChain.random(4, 6, rng=7, concentration=0.5)
    draft = sd.MarkovChain.random(4, 6, rng=8, concentration=0.5)
    for eps in [0.0, 0.02, 0.1, 0.3]:
        seq = {}
        for kind in ("opt", "uno"):
            out = bi.biased_output_chain(draft, target, eps, kind)
            loss = bi.loss_profile(out, target)
            seq[kind] = bi.sequence_tv(out, target)
            assert loss[0] - 1e-12 <= seq[kind] <= loss.sum() + 1e-12
            reject = bi.biased_rejection_profile(draft, target, eps, kind)
            # the prefixes are drawn from the output chain, so weight TV(p_n, q_n) by its marginals
            mu = out.marginals()
            row_tv = sd.tv(draft.laws(), target.laws())
            weighted_tv = np.concatenate([[row_tv[0, 0]], np.einsum("nu,nu->n", mu[:-1], row_tv[1:])])
            if kind == "opt":  # Theorem 5 position by position
                np.testing.assert_allclose(reject + loss, weighted_tv, atol=1e-12)
            else:
                assert np.all(reject + loss >= weighted_tv - 1e-12)
        if eps > 0:
            assert seq["opt"] < seq["uno"]


def test_per_token_eps_and_uno_vs_opt_one_position():
    """T = 1: the chain quantities reduce to the single-token ones of tradeoff."""
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    draft, target = sd.MarkovChain(p, np.empty((0, 3, 3))), sd.MarkovChain(q, np.empty((0, 3, 3)))
    for kind in ("opt", "uno"):
        r, loss = tr.over_accept_point(p, q, 0.1, kind)
        assert bi.biased_expected_rejections(draft, target, 0.1, kind) == pytest.approx(r)
        assert bi.biased_sequence_tv(draft, target, 0.1, kind) == pytest.approx(loss)


def test_edges_equal_and_one_hot():
    q = sd.MarkovChain.random(3, 5, rng=0)
    res = sd.decoding.biased_speculative(q, q, 0.2, "uno", runs=500, rng=1)
    assert not res.rejected.any() and bi.biased_sequence_tv(q, q, 0.2, "uno") == pytest.approx(0, abs=1e-12)
    e0, e2 = np.eye(3)[0], np.eye(3)[2]
    draft = sd.MarkovChain(e0, np.broadcast_to(e0, (2, 3, 3)))
    target = sd.MarkovChain(e2, np.broadcast_to(e2, (2, 3, 3)))
    res = sd.decoding.biased_speculative(draft, target, 0.25, "opt", runs=20_000, rng=2)
    assert set(np.unique(res.tokens)) == {0, 2}
    m, se = mean_and_se(res.rejections)
    assert abs(m - 3 * 0.75) <= Z * se
    assert bi.biased_expected_rejections(draft, target, 0.25, "opt") == pytest.approx(2.25)


def test_seeds_reproduce(pair):
    draft, target = pair
    a = sd.decoding.biased_speculative(draft, target, 0.1, "opt", 100, rng=9)
    b = sd.decoding.biased_speculative(draft, target, 0.1, "opt", 100, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.rejected, b.rejected)


def test_errors(pair):
    draft, target = pair
    with pytest.raises(ValueError, match="eps"):
        sd.decoding.biased_speculative(draft, target, -0.1, "opt", 10)
    with pytest.raises(ValueError, match="eps"):
        sd.decoding.biased_speculative(draft, target, np.zeros(5), "opt", 10)
    with pytest.raises(ValueError, match="rejection_law"):
        sd.decoding.biased_speculative(draft, target, 0.1, "greedy", 10)
    with pytest.raises(ValueError, match="runs"):
        sd.decoding.biased_speculative(draft, target, 0.1, "opt", 0)
    with pytest.raises(ValueError, match="must share"):
        sd.decoding.biased_speculative(draft, sd.MarkovChain.random(V, T + 1, 0), 0.1, "opt", 10)
    b, P = bi.over_accept_rule(draft, target, 0.1, "opt")
    with pytest.raises(ValueError, match="accept"):
        bi.generic_speculative(draft, b[:-1], P, 10)
    with pytest.raises(ValueError, match="accept"):
        bi.generic_speculative(draft, b + 0.5, P, 10)
    with pytest.raises(ValueError, match="rejection"):
        bi.output_chain(draft, b, 2 * P)
    with pytest.raises(ValueError, match="draft"):
        bi.output_chain("chain", b, P)
    with pytest.raises(ValueError, match="max_sequences"):
        bi.sequence_tv(sd.MarkovChain.random(10, 8, 0), sd.MarkovChain.random(10, 8, 1))


def test_opt_sequence_tv_never_above_uno_on_random_small_chains():
    """The observation Chapter 5 reports (not a theorem): 200 random chain pairs x 4 margins."""
    checked = 0
    for s in range(200):
        rng = np.random.default_rng(s)
        V, T = int(rng.integers(2, 5)), int(rng.integers(2, 6))
        c = float(rng.choice([0.2, 0.5, 1.0, 3.0]))
        target = sd.MarkovChain.random(V, T, rng=s, concentration=c, uniform_init=False)
        draft = sd.MarkovChain.random(V, T, rng=s + 1000, concentration=c, uniform_init=False)
        for eps in (0.01, 0.05, 0.1, 0.3):
            opt = bi.biased_sequence_tv(draft, target, eps, "opt")
            uno = bi.biased_sequence_tv(draft, target, eps, "uno")
            assert opt <= uno + 1e-12, (s, eps, opt, uno)
            checked += 1
    assert checked == 800
