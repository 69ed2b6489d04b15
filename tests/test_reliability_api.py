"""Bad input to the public API fails early with a ValueError naming the argument; edge cases stay features.

Every test is exact (no Monte Carlo): a call that must fail is written as the caller
would write it, and the error must start with the argument's name.
"""

import math
import tracemalloc

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import (
    _rng,
    batch,
    batch_reference,
    biased,
    chains,
    chunking,
    decoding,
    lookahead,
    lookahead_reference,
    optimality,
    primitives,
    reference,
    theory,
    tradeoff,
)

P = np.array([0.2, 0.5, 0.3])
Q = np.array([0.4, 0.4, 0.2])


@pytest.fixture(scope="module")
def chains_():
    return sd.MarkovChain.random(3, 3, rng=0), sd.MarkovChain.random(3, 3, rng=1)


def round_start(draft, target, M=2):
    reach, laws = batch.residual_cascade(draft.laws(), target.laws(), M)
    return reach[-1], reach[-1][..., None] * laws[-1]


# --- the shared number checks ----------------------------------------------------


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 1.7, 2.0, "3", None, np.ones(2), np.array(3), [3]])
def test_check_int_refuses_bools_floats_strings_and_arrays(bad):
    with pytest.raises(ValueError, match="^K: lookahead must be an integer >= 0, got"):
        primitives.check_int(bad, "K", low=0, what="lookahead ")


def test_check_int_takes_python_and_numpy_integers():
    assert primitives.check_int(3, "n") == 3
    assert primitives.check_int(np.int64(3), "n") == 3 and type(primitives.check_int(np.uint8(3), "n")) is int
    with pytest.raises(ValueError, match=r"^n: must be an integer in \[1, 4\], got 5"):
        primitives.check_int(5, "n", high=4)


@pytest.mark.parametrize("bad", [True, np.bool_(False), "0.1", None, math.nan, math.inf, -math.inf, np.ones(2), [0.1]])
def test_check_real_refuses_bools_strings_nan_inf_and_arrays(bad):
    with pytest.raises(ValueError, match="^x: must be a finite number, got"):
        primitives.check_real(bad, "x")


def test_check_real_bounds_and_accepted_types():
    assert primitives.check_real(np.float32(0.5), "x") == 0.5
    assert primitives.check_real(np.array(0.25), "x") == 0.25  # a 0-d array is one number
    assert primitives.check_real(3, "x") == 3.0 and type(primitives.check_real(np.int64(3), "x")) is float
    assert primitives.check_real(0, "x", low=0) == 0.0
    with pytest.raises(ValueError, match="^x: must be a finite number > 0, got 0"):
        primitives.check_real(0, "x", low=0, open_low=True)
    with pytest.raises(ValueError, match=r"^x: must be a finite number in \[0, 1\], got 1.5"):
        primitives.check_real(1.5, "x", low=0, high=1)
    with pytest.raises(ValueError, match=r"^x: must be a finite number in \[0, 1\), got 1"):
        primitives.check_real(1, "x", low=0, high=1, open_high=True)


def test_check_reals_and_as_real_array():
    np.testing.assert_array_equal(primitives.check_reals([0.1, 0.2], "e", low=0), [0.1, 0.2])
    for bad, match in [
        ([True, False], "^e: expected a number or an array of numbers"),
        ([0.5, True], "^e: expected a number or an array of numbers"),
        (["0.1"], "^e: expected a number or an array of numbers"),
        ([[1], [1, 2]], "^e: expected a number or an array of numbers"),
        (None, "^e: expected"),
        ([0.1, math.nan], "^e: contains NaN or inf"),
        ([0.1, -0.2], r"^e: must lie >= 0, got values in \[-0.2, 0.1\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            primitives.check_reals(bad, "e", low=0)
    np.testing.assert_array_equal(primitives.as_real_array([[1, 2]], "x"), [[1.0, 2.0]])


def test_check_ints_and_check_flag():
    assert primitives.check_ints(range(3), "Ks", low=0) == [0, 1, 2]
    assert primitives.check_ints(np.array([2, 4]), "Ks") == [2, 4] and primitives.check_ints([], "Ks") == []
    for bad in (3, "12", np.array(3), np.ones((2, 2), int), None):
        with pytest.raises(ValueError, match="^Ks: expected a sequence of integers"):
            primitives.check_ints(bad, "Ks")
    with pytest.raises(ValueError, match="^Ks: must be an integer >= 1, got 1.5"):
        primitives.check_ints([1, 1.5], "Ks")
    assert primitives.check_flag(np.bool_(True), "tree") is True
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match="^tree: must be True or False"):
            primitives.check_flag(bad, "tree")


# --- booleans and strings were taken as numbers -------------------------------------


def test_eps_true_is_refused(chains_):
    d, t = chains_
    with pytest.raises(ValueError, match="^eps: expected a number or an array of numbers, got True"):
        tradeoff.over_accept(P, Q, True)
    with pytest.raises(ValueError, match="^eps: expected"):
        tradeoff.over_accept_point(P, Q, "0.1", "opt")
    with pytest.raises(ValueError, match="^eps: expected"):
        biased.biased_speculative(d, t, True, "opt", 10, rng=0)
    with pytest.raises(ValueError, match="^eps: expected"):
        biased.biased_expected_rejections(d, t, np.array([True, False, True]), "uno")


def test_temperature_true_is_refused(chains_):
    d, _ = chains_
    with pytest.raises(ValueError, match="^temperature: must be a finite number > 0, got True"):
        d.with_temperature(True)
    with pytest.raises(ValueError, match="^temperature: must be a finite number > 0, got '0.5'"):
        d.with_temperature("0.5")
    np.testing.assert_allclose(d.with_temperature(np.float32(1.0)).trans, d.trans, atol=1e-12)


def test_rng_true_is_not_a_seed(chains_):
    d, t = chains_
    with pytest.raises(ValueError, match=r"^rng: expected a seed \(an integer >= 0\).*got True \(a bool\)"):
        _rng.as_generator(True)
    for bad in (1.7, "0", -1, [1, 2]):
        with pytest.raises(ValueError, match="^rng: expected a seed"):
            _rng.as_generator(bad)
    with pytest.raises(ValueError, match="^rng:"):
        decoding.speculative(d, t, 10, rng=True)
    with pytest.raises(ValueError, match="^rng:"):
        chunking.child_rngs(True, 2)
    with pytest.raises(ValueError, match="^rng:"):
        sd.MarkovChain.random(3, 3, rng=False)
    # Seeds of every integer type, SeedSequences, Generators and None still work.
    assert _rng.as_generator(np.uint8(3)).random() == np.random.default_rng(3).random()
    assert isinstance(_rng.as_generator(np.random.SeedSequence(1)), np.random.Generator)
    gen = np.random.default_rng(0)
    assert _rng.as_generator(gen) is gen and isinstance(_rng.as_generator(None), np.random.Generator)


def test_c_string_is_refused(chains_):
    d, t = chains_
    with pytest.raises(ValueError, match="^c: cost ratio must be a finite number >= 0, got '0.1' \\(a string\\)"):
        lookahead.wallclock_speedup_k(d, t, 2, "0.1")
    for call in (
        lambda: lookahead.check_cost(True),
        lambda: lookahead.iid_speedup(0.8, 2, "0.1"),
        lambda: lookahead.best_lookahead(d, t, None),
        lambda: lookahead.lookahead_profile(d, t, 2).speedup(True),
        lambda: lookahead.speculative_k(d, t, 2, 5, rng=0).time("0"),
    ):
        with pytest.raises(ValueError, match="^c:"):
            call()
    assert lookahead.check_cost(np.float32(0.25)) == 0.25


def test_seed_must_be_an_integer():
    for bad in (1.7, True, None, "3", -1):
        with pytest.raises(ValueError, match="^seed: must be an integer >= 0"):
            chains.seeded_pair(3, 4, 0.5, bad)
    for bad in (True, "0.5", 1.5, None):
        with pytest.raises(ValueError, match="^quality:"):
            chains.seeded_pair(3, 4, bad, 0)
    a, b, _ = chains.seeded_pair(3, 4, 0.5, np.int64(7))
    c, d, _ = chains.seeded_pair(3, 4, 0.5, 7)
    np.testing.assert_array_equal(a.trans, c.trans)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda d, t: decoding.speculative(d, t, True), "runs"),
        (lambda d, t: decoding.speculative(d, t, 10.0), "runs"),
        (lambda d, t: lookahead.speculative_k(d, t, True, 10), "K"),
        (lambda d, t: lookahead.expected_rejections_k(d, t, 2.0), "K"),
        (lambda d, t: batch.expected_rejections_batch(d, t, 1.7), "M"),
        (lambda d, t: batch.batch_speculative(d, t, True, 10), "M"),
        (lambda d, t: sd.MarkovChain.random(3, True), "T"),
        (lambda d, t: sd.MarkovChain.random(3, 3, concentration=True), "concentration"),
        (lambda d, t: sd.MarkovChain.random(3, 3, concentration="1"), "concentration"),
        (lambda d, t: sd.MarkovChain.random(3, 3, uniform_init="no"), "uniform_init"),
        (lambda d, t: d.mix(t, True), "weight"),
        (lambda d, t: d.mix(t, "0.5"), "weight"),
        (lambda d, t: sd.draft_for(t, True), "quality"),
        (lambda d, t: sd.draft_for(t, None), "quality"),
        (lambda d, t: lookahead.expected_tokens_per_call(True, 2), "alpha"),
        (lambda d, t: lookahead.best_lookahead_iid("0.8", 0.1), "alpha"),
        (lambda d, t: lookahead.iid_expected_oracle_calls(np.ones(3), 2, 5), "alpha"),
        (lambda d, t: lookahead.tv_schedule_pair(3, 3, True), "tv"),
        (lambda d, t: lookahead.tv_schedule_pair(3, 3, "0.3"), "tv"),
        (lambda d, t: batch.batch_improvement_bernoulli(True, 0.5, 2), "u"),
        (lambda d, t: batch.batch_improvement_uniform(math.inf, 2), "r"),
        (lambda d, t: optimality.is_unbiased(P, Q, np.ones(3), Q, atol="1e-9"), "atol"),
        (lambda d, t: optimality.random_unbiased_member(P, Q, 0, spread=True), "spread"),
        (lambda d, t: tradeoff.tv_loss(P, Q, [True, True, False]), "accept"),
        (lambda d, t: tradeoff.reject_probability(["0.2", "0.5", "0.3"], np.ones(3)), "p"),
        (lambda d, t: sd.MarkovChain(["0.5", "0.5"], np.empty((0, 2, 2))), "init"),
        (lambda d, t: chunking.chunk_sizes(10, 2.5), "chunk_size"),
    ],
)
def test_bools_floats_and_strings_are_not_numbers_anywhere(chains_, call, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call(*chains_)


# --- one_token --------------------------------------------------------------------


def test_one_token_needs_one_vocabulary():
    with pytest.raises(ValueError, match="^p and q must share the vocabulary: p has V = 3, q has V = 4"):
        chains.one_token(P, np.full(4, 0.25))
    with pytest.raises(ValueError, match=r"^p: must be one law of shape \(V,\)"):
        chains.one_token(np.full((2, 3), 1 / 3), P)
    with pytest.raises(ValueError, match="^q: expected an array of real numbers"):
        chains.one_token(P, ["a", "b", "c"])
    with pytest.raises(ValueError, match="^p: expected an array of real numbers"):
        chains.one_token(np.array([True, False]), [0.5, 0.5])  # a mask is not a law


def test_one_token_of_a_large_vocabulary_is_cheap_and_its_algorithms_refuse_before_allocating():
    V = 33_000
    gen = np.random.default_rng(0)
    p, q = gen.dirichlet(np.ones(V)), gen.dirichlet(np.ones(V))
    tracemalloc.start()
    try:
        draft, target = chains.one_token(p, q)
        assert (draft.V, draft.T) == (V, 1)
        for call in (
            lambda: theory.expected_rejections(draft, target),
            lambda: decoding.speculative(draft, target, 10, rng=0),
            lambda: batch.batch_speculative(draft, target, 2, 10, rng=0),
            lambda: lookahead.lookahead_profile(draft, target, 1),
        ):
            with pytest.raises(ValueError, match=r"^draft: its \(T, V, V\) = \(1, 33000, 33000\) table.*MAX_LAW_CELLS"):
                call()
        with pytest.raises(ValueError, match="^target: .*MAX_LAW_CELLS"):
            decoding.autoregressive(target, 10, rng=0)
        with pytest.raises(ValueError, match="^chain: .*MAX_LAW_CELLS"):
            draft.laws()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * V * 8  # a few vectors of V numbers, never V x V
    # The one-token quantities themselves come from the laws directly.
    assert float(sd.tv(p, q)) == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-15)


def test_one_token_small_vocabulary_is_theorem_1():
    draft, target = chains.one_token(P, Q)
    assert theory.expected_rejections(draft, target) == pytest.approx(0.2, abs=1e-15)


# --- rho ----------------------------------------------------------------------------


def test_batch_forward_checks_rho_and_rho_q(chains_):
    d, t = chains_
    rho, rho_q = round_start(d, t)
    np.testing.assert_allclose(batch.batch_forward(d, t, rho, rho_q), batch.batch_rejection_profile(d, t, 2))
    q = t.laws()
    for bad_rho, bad_rho_q, match in [
        (-np.ones_like(rho), rho_q, r"^rho: rejection probabilities must lie in \[0, 1\]"),
        (2 * np.ones_like(rho), rho_q, r"^rho: rejection probabilities must lie in \[0, 1\]"),
        (rho[0], rho_q, r"^rho: must have shape \(T, V\) = \(3, 3\)"),
        (rho, rho_q[0], r"^rho_q: must have shape \(T, V, V\) = \(3, 3, 3\)"),
        (np.full_like(rho, np.nan), rho_q, "^rho: contains NaN or inf"),
        ("rho", rho_q, "^rho: expected a number or an array of numbers"),
        (rho, None, "^rho_q: expected"),
        (np.ones_like(rho), 1.5 * q, "^rho_q: exceeds the target's law q"),  # gave negative E[R_n]
        (rho, -rho_q, "^rho_q: has negative entries"),
        (np.zeros_like(rho), rho_q, "^rho_q: each row must sum to rho"),
    ]:
        with pytest.raises(ValueError, match=match):
            batch.batch_forward(d, t, bad_rho, bad_rho_q)
    with pytest.raises(ValueError, match="^draft: expected a MarkovChain, got an array"):
        batch.batch_forward(np.ones(3), t, rho, rho_q)


def test_batch_forward_limits_and_edges(chains_):
    d, t = chains_
    # Proposition 1's limit (the target mass the draft cannot propose) and p == q (nothing rejected).
    p, q = d.laws(), t.laws()
    g = np.where(p > 0, 0.0, q)
    assert batch.batch_forward(d, t, g.sum(axis=-1), g).sum() == pytest.approx(batch.batch_rejection_limit(d, t))
    rho, rho_q = round_start(t, t)
    np.testing.assert_array_equal(batch.batch_forward(t, t, rho, rho_q), np.zeros(t.T))
    # rho = 1 everywhere with rho_q = q: every round start rejects, all positions are round starts.
    prof = batch.batch_forward(d, t, np.ones((t.T, t.V)), q)
    np.testing.assert_allclose(prof, np.ones(t.T), atol=1e-12)


# --- batch_joint_law with a draft that cannot propose a token -------------------------


def zero_token_pair():
    """Seed 0's target and a draft with no mass on token 0 (``q - g`` rounds to -5.55e-17 here)."""
    target = sd.MarkovChain.random(3, 3, rng=0)
    d = sd.MarkovChain.random(3, 3, rng=1000)
    init, trans = d.init.copy(), d.trans.copy()
    init[0], trans[..., 0] = 0.0, 0.0
    return sd.MarkovChain(init / init.sum(), trans / trans.sum(-1, keepdims=True)), target


@pytest.mark.parametrize("M", [1, 2, 3, 4])
def test_batch_joint_law_with_zero_draft_probability_is_theorem_3(M):
    draft, target = zero_token_pair()
    V, T = target.V, target.T
    law = batch.batch_joint_law(draft, target, M)
    assert law.min() >= 0 and law.sum() == pytest.approx(1, abs=1e-12)
    cube = law.reshape((V, 2) * T)
    marks = cube.sum(axis=tuple(range(0, 2 * T, 2)))  # law of (R_1, ..., R_T)
    rejections = sum(np.sum(marks, axis=tuple(j for j in range(T) if j != n))[1] for n in range(T))
    assert rejections == pytest.approx(batch.expected_rejections_batch(draft, target, M), abs=1e-12)
    tokens = cube.sum(axis=tuple(range(1, 2 * T, 2))).reshape(-1)
    np.testing.assert_allclose(tokens, sd.chains.sequence_law(target), atol=1e-12)


def test_clip_rounding_keeps_real_negatives_an_error():
    np.testing.assert_array_equal(primitives.clip_rounding(np.array([-5.55e-17, 0.0, 0.3]), "x"), [0.0, 0.0, 0.3])
    with pytest.raises(ValueError, match="^q - g: has negative entries beyond rounding"):
        primitives.clip_rounding(np.array([-1e-6, 0.5]), "q - g")


# --- every public function names its argument -----------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda d, t: decoding.autoregressive(np.ones(3), 10), "target"),
        (lambda d, t: decoding.speculative(d, "t", 10), "target"),
        (lambda d, t: reference.speculative(None, t, 2), "draft"),
        (lambda d, t: reference.speculative_one(np.ones(3), t, np.random.default_rng(0)), "draft"),
        (lambda d, t: reference.speculative_one(d, t, 0), "gen"),
        (lambda d, t: lookahead.lookahead_profiles(d, t, 3), "Ks"),
        (lambda d, t: lookahead.lookahead_profiles(d, t, None), "Ks"),
        (lambda d, t: lookahead.lookahead_profiles(d, t, [[1], [1, 2]]), "Ks"),
        (lambda d, t: lookahead.lookahead_profiles(d, t, []), "Ks"),
        (lambda d, t: lookahead.speedup_curve(d, t, 0.1, 3), "Ks"),
        (lambda d, t: lookahead.best_lookahead(d, None, 0.1), "target"),
        (lambda d, t: lookahead.best_lookahead(d, t, 0.1, K_max=2.0), "K_max"),
        (lambda d, t: lookahead.lookahead_joint_law(d, t, 2, max_sequences="many"), "max_sequences"),
        (lambda d, t: lookahead_reference.speculative_k_one(d, t, "2", np.random.default_rng(0)), "K"),
        (lambda d, t: lookahead_reference.speculative_k_one(d, 3, 2, np.random.default_rng(0)), "target"),
        (lambda d, t: batch.rejections_by_M(d, t, [[1], [1, 2]]), "Ms"),
        (lambda d, t: batch.rejections_by_M(d, t, "3"), "Ms"),
        (lambda d, t: batch.rejections_by_M(d, t, [1, 2], tree="yes"), "tree"),
        (lambda d, t: batch.residual_cascade(P, Q, 2, check="no"), "check"),
        (lambda d, t: batch.batch_joint_law(d, t, 2, max_sequences=None), "max_sequences"),
        (lambda d, t: batch.batch_improvement_bernoulli(0.3, None, 2), "v"),
        (lambda d, t: batch_reference.batch_one(d, t, 1.7, np.random.default_rng(0)), "M"),
        (lambda d, t: batch_reference.tree_one(d, t, 2, None), "gen"),
        (lambda d, t: batch_reference.tree_one(np.ones(3), t, 2, np.random.default_rng(0)), "draft"),
        (lambda d, t: theory.speedup(d, None), "target"),
        (lambda d, t: theory.speculative_joint_law(d, t, max_sequences=[1]), "max_sequences"),
        (lambda d, t: chains.sequence_law(np.ones(3)), "chain"),
        (lambda d, t: chains.sequence_law(d, max_sequences=math.inf), "max_sequences"),
        (lambda d, t: chains.draft_for(np.ones(3), 0.5), "target"),
        (lambda d, t: chains.prefix_average(np.ones(3), d.marginals()), "rows and mu"),
        (lambda d, t: sd.MarkovChain("abc", np.empty((0, 3, 3))), "init"),
        (lambda d, t: sd.MarkovChain(P, [[[1.0]], [[1.0, 0.0]]]), "trans"),
        (lambda d, t: d.log_prob([[0], [0, 1]]), "tokens"),
        (lambda d, t: d.conditional(1, "0"), "prev"),
        (lambda d, t: tradeoff.rejection_law(P, Q, np.ones(3)), "kind"),
        (lambda d, t: tradeoff.over_accept_point(P, Q, 0.1, None), "kind"),
        (lambda d, t: tradeoff.over_accept(P, Q, [0.1, 0.2]), "eps"),
        (lambda d, t: tradeoff.output_law(P, np.ones(3), ["a", "b", "c"]), "rejection"),
        (lambda d, t: optimality.random_unbiased_member(P, Q, 0, spread=None), "spread"),
        (lambda d, t: optimality.prob_all_accepted_joint(d, t, max_sequences=1.5), "max_sequences"),
        (lambda d, t: biased.biased_speculative(d, t, 0.1, np.ones(3), 10), "rejection_law"),
        (lambda d, t: biased.check_rule(d, "x", np.ones((3, 3, 3)) / 3), "accept"),
        (lambda d, t: biased.generic_speculative(d, *biased.over_accept_rule(d, t, 0, "opt"), 10, rng=-1), "rng"),
        (lambda d, t: biased.sequence_tv(d, t, max_sequences=None), "max_sequences"),
        (lambda d, t: chunking.child_rngs(0, -1), "n"),
        (lambda d, t: chunking.chunked("speculative", d, t, runs=10, chunk_size=3), "sampler"),
        (
            lambda d, t: chunking.chunked_sum(decoding.speculative, d, t, runs=10, chunk_size=3, statistic=None),
            "statistic",
        ),
        (lambda d, t: chunking.concatenate([]), "results"),
    ],
)
def test_errors_name_the_argument(chains_, call, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call(*chains_)


def test_checks_come_before_long_work():
    d, t = sd.MarkovChain.random(40, 20, rng=0), sd.MarkovChain.random(40, 20, rng=1)
    with pytest.raises(ValueError, match="^rng:"):
        decoding.speculative(d, t, 10**9, rng=True)  # no (runs, T) table is allocated first
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"^tokens and round positions: \(V J\)\^T = 840\^20 sequences"):
            lookahead.lookahead_joint_law(d, t, 20)  # its (T, VJ, VJ) table alone would be 113 MB
        with pytest.raises(ValueError, match=r"^tokens and marks: \(2V\)\^T = 80\^20 sequences"):
            batch.batch_joint_law(d, t, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


# --- edges stay features ------------------------------------------------------------


def test_equal_one_hot_and_zero_probability_edges():
    d, t = chains.one_token(Q, Q)
    assert theory.expected_rejections(d, t) == 0 and batch.expected_rejections_batch(d, t, 3) == 0
    d, t = chains.one_token([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    assert theory.expected_rejections(d, t) == 1 and batch.batch_rejection_limit(d, t) == 1
    d, t = chains.one_token([0.0, 0.5, 0.5], [0.2, 0.4, 0.4])
    assert batch.batch_rejection_limit(d, t) == pytest.approx(0.2, abs=1e-15)
    assert lookahead.best_lookahead_iid(np.float64(1.0), np.float32(0.5), K_max=np.int64(4)) == 4
    assert biased.biased_expected_rejections(d, t, np.float64(0.0), "opt") == pytest.approx(0.2, abs=1e-15)
