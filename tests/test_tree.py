"""The draft tree (the book's own variant of batch decoding): unbiasedness, exact rejections, tree <= batch."""

import functools
import itertools

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import batch, batch_reference
from specdec_lite.laws import residual
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z


def pair(V, T, seed, concentration=1.0, uniform_init=True):
    kw = dict(concentration=concentration, uniform_init=uniform_init)
    return sd.MarkovChain.random(V, T, rng=seed + 1000, **kw), sd.MarkovChain.random(V, T, rng=seed, **kw)


def brute_force_rejections(draft, target, M, tree):
    """E[N_rej] by enumerating every set of M drafts and every outcome of the coins.

    Independent of the package's forward passes: it never uses the Binomial count of
    survivors or the Markov state, only the algorithm as stated (``tree=False`` keeps
    the accepted draft alone, Algorithm 4; ``tree=True`` keeps every matching draft).
    """
    T, V = target.T, target.V

    @functools.cache
    def round_from(n0, prev):
        if n0 == T:
            return 0.0
        seqs = list(itertools.product(range(V), repeat=T - n0))
        probs = []
        for s in seqs:
            pr, u = 1.0, prev
            for j, x in enumerate(s):
                pr *= draft.conditional(n0 + j, u)[x]
                u = x
            probs.append(pr)
        total = 0.0
        for combo in itertools.product(range(len(seqs)), repeat=M):
            w = float(np.prod([probs[i] for i in combo]))
            if w > 0:
                total += w * inside(n0, n0, prev, [seqs[i] for i in combo])
        return total

    def inside(n, n0, prev, alive):
        p, q = draft.conditional(n, prev), target.conditional(n, prev)
        j = n - n0
        value, reach, qm = 0.0, 1.0, q
        for d in alive:
            x = d[j]
            a = min(1.0, qm[x] / p[x])
            if a > 0 and n + 1 < T:
                keep = [e for e in alive if e[j] == x] if tree else [d]
                value += reach * a * inside(n + 1, n0, x, keep)
            reach *= 1.0 - a
            qm = residual(p, qm)
        return value + reach * (1.0 + sum(qm[x] * round_from(n + 1, x) for x in range(V) if qm[x] > 0))

    return round_from(0, None)


@pytest.mark.parametrize("V, T, M, seed", [(2, 3, 2, 0), (2, 3, 3, 1), (3, 2, 2, 2), (2, 4, 2, 3)])
def test_exact_formulas_match_brute_force(V, T, M, seed):
    draft, target = pair(V, T, seed, uniform_init=False)
    assert batch.expected_rejections_tree(draft, target, M) == pytest.approx(
        brute_force_rejections(draft, target, M, tree=True), rel=1e-12
    )
    assert batch.expected_rejections_batch(draft, target, M) == pytest.approx(
        brute_force_rejections(draft, target, M, tree=False), rel=1e-12
    )


def test_brute_force_can_tell_the_tree_from_algorithm4():
    draft, target = pair(2, 3, 4, uniform_init=False)
    tree, dfs = (brute_force_rejections(draft, target, 3, tree=t) for t in (True, False))
    assert tree < dfs - 1e-3


@pytest.mark.parametrize("M", [2, 5])
def test_tree_sampler_is_unbiased(M):
    V, T = 3, 4
    draft, target = pair(V, T, seed=7, uniform_init=False)
    res = batch.tree_speculative(draft, target, M, runs=60_000, rng=M)
    counts = np.bincount(sequence_index(res.tokens, V), minlength=V**T)
    assert chi_square(counts, sd.theory.sequence_law(target)).pvalue > ALPHA
    # Power: the same counts are far from the draft's law.
    assert chi_square(counts, sd.theory.sequence_law(draft)).pvalue < ALPHA


def test_tree_reference_is_unbiased_and_matches_exact():
    V, T, M = 2, 4, 3
    draft, target = pair(V, T, seed=8, uniform_init=False)
    res = batch_reference.tree_speculative(draft, target, M, runs=3000, rng=1)
    counts = np.bincount(sequence_index(res.tokens, V), minlength=V**T)
    assert chi_square(counts, sd.theory.sequence_law(target)).pvalue > ALPHA
    m, se = mean_and_se(res.rejections)
    assert abs(m - batch.expected_rejections_tree(draft, target, M)) <= Z * se
    profile = batch.tree_rejection_profile(draft, target, M)
    se_n = np.sqrt(np.maximum(profile * (1 - profile), 1e-12) / res.runs)
    assert np.all(np.abs(res.rejected.mean(axis=0) - profile) <= Z * se_n)


@pytest.mark.parametrize(
    "V, T, M, concentration, seed",
    [(7, 50, 4, 1.0, 10), (7, 50, 16, 1.0, 10), (2, 12, 3, 1.0, 0), (7, 30, 8, 0.2, 11), (12, 20, 2, 0.5, 12)],
)
def test_tree_formula_matches_monte_carlo(V, T, M, concentration, seed):
    draft, target = pair(V, T, seed, concentration)
    res = batch.tree_speculative(draft, target, M, runs=20_000, rng=seed)
    m, se = mean_and_se(res.rejections)
    exact = batch.expected_rejections_tree(draft, target, M)
    assert abs(m - exact) <= Z * se, (m, exact, se)
    profile = batch.tree_rejection_profile(draft, target, M)
    se_n = np.sqrt(np.maximum(profile * (1 - profile), 1e-12) / res.runs)
    assert np.all(np.abs(res.rejected.mean(axis=0) - profile) <= Z * se_n + 1e-12)
    assert np.array_equal(res.oracle_calls, 1 + res.rejected[:, :-1].sum(axis=1))


@pytest.mark.parametrize("seed", [0, 1])
def test_one_draft_tree_is_theorem1(seed):
    draft, target = pair(7, 40, seed)
    assert batch.expected_rejections_tree(draft, target, 1) == pytest.approx(
        sd.theory.expected_rejections(draft, target), rel=1e-13
    )


def test_tree_never_rejects_more_than_algorithm4():
    # Proposition (tree <= Algorithm 4) and the monotonicity in M of both, on random instances.
    gen = np.random.default_rng(0)
    for trial in range(40):
        V, T = int(gen.integers(2, 6)), int(gen.integers(1, 15))
        conc = float(gen.choice([0.1, 0.5, 1.0, 3.0]))
        draft, target = pair(V, T, 100 + trial, conc, uniform_init=bool(trial % 2))
        Ms = [1, 2, 3, 4, 6, 9]
        tree = batch.rejections_by_M(draft, target, Ms, tree=True)
        dfs = batch.rejections_by_M(draft, target, Ms)
        assert np.all(tree <= dfs + 1e-12), (trial, tree, dfs)
        assert np.all(np.diff(dfs) <= 1e-12) and np.all(dfs >= batch.batch_rejection_limit(draft, target) - 1e-12)
        # Not proved in the book, only observed: the tree's rejections also fall with M.
        assert np.all(np.diff(tree) <= 1e-12), (trial, tree)


def test_tree_keeps_falling_with_full_support_draft():
    draft, target = pair(5, 20, 3)
    Ms = [1, 2, 4, 8, 16, 32, 64]
    tree = np.array([batch.expected_rejections_tree(draft, target, M) for M in Ms])
    dfs = np.array([batch.expected_rejections_batch(draft, target, M) for M in Ms])
    assert np.all(np.diff(tree) < 0) and np.all(tree[1:] < dfs[1:])
    limit = batch.batch_rejection_limit(draft, target)
    assert tree[-1] < limit < dfs[-1]  # below the floor of Proposition 1


def test_tree_edges_and_errors():
    q = sd.MarkovChain.random(4, 10, rng=0)
    assert batch.expected_rejections_tree(q, q, 6) == 0.0
    res = batch.tree_speculative(q, q, 6, runs=300, rng=0)
    assert not res.rejected.any()
    V, T = 3, 5
    e0, e2 = np.eye(V)[0], np.eye(V)[2]
    draft = sd.MarkovChain(e0, np.broadcast_to(e0, (T - 1, V, V)))
    target = sd.MarkovChain(e2, np.broadcast_to(e2, (T - 1, V, V)))
    assert batch.expected_rejections_tree(draft, target, 4) == pytest.approx(T)
    res = batch.tree_speculative(draft, target, 4, runs=100, rng=1)
    assert res.rejected.all() and np.all(res.tokens == 2)
    with pytest.raises(ValueError, match="M"):
        batch.tree_speculative(q, q, 0, runs=10)
    with pytest.raises(ValueError, match="runs"):
        batch.tree_speculative(q, q, 2, runs=0)


def test_exact_tree_is_polynomial():
    target = sd.MarkovChain.random(7, 100, rng=0)
    draft = sd.draft_for(target, 0.5, rng=1)
    values = [batch.expected_rejections_tree(draft, target, M) for M in (1, 8, 64)]
    assert 0 < values[2] < values[1] < values[0] < 100
    assert values[0] == pytest.approx(sd.theory.expected_rejections(draft, target), rel=1e-12)


def test_zero_draft_probabilities():
    # Tokens the draft never proposes: brute force agrees, and Monte Carlo agrees on a longer chain.
    V, T = 3, 2
    target = sd.MarkovChain.random(V, T, rng=5, uniform_init=False)
    draft = sd.MarkovChain([0.0, 0.6, 0.4], np.array([[[0.7, 0.0, 0.3]] * V]))
    for M in (2, 3):
        for tree, exact in ((True, batch.expected_rejections_tree), (False, batch.expected_rejections_batch)):
            assert exact(draft, target, M) == pytest.approx(brute_force_rejections(draft, target, M, tree), rel=1e-12)
    gen = np.random.default_rng(4)
    V, T = 4, 8
    target = sd.MarkovChain.random(V, T, rng=4, concentration=0.5)
    p = (0.5 + gen.random((T, V, V))) * (gen.random((T, V, V)) > 0.4)
    p[..., 1] += 0.3
    p /= p.sum(axis=-1, keepdims=True)
    draft = sd.MarkovChain(p[0, 0], p[1:])
    M = 10
    res = batch.tree_speculative(draft, target, M, runs=20_000, rng=1)
    m, se = mean_and_se(res.rejections)
    assert abs(m - batch.expected_rejections_tree(draft, target, M)) <= Z * se
    counts = np.bincount(sequence_index(res.tokens[:, :3], V), minlength=V**3)
    head = sd.MarkovChain(target.init, target.trans[:2])
    assert chi_square(counts, sd.theory.sequence_law(head)).pvalue > ALPHA


@pytest.mark.parametrize("Ms", [[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 40], [7], [3, 1, 2]])
def test_rejections_by_M_equals_one_M_at_a_time(Ms):
    draft, target = pair(5, 12, 9)
    tree = batch.rejections_by_M(draft, target, Ms, tree=True)
    dfs = batch.rejections_by_M(draft, target, Ms)
    np.testing.assert_allclose(tree, [batch.expected_rejections_tree(draft, target, M) for M in Ms], rtol=1e-12)
    np.testing.assert_allclose(dfs, [batch.expected_rejections_batch(draft, target, M) for M in Ms], rtol=1e-12)
    with pytest.raises(ValueError, match="Ms"):
        batch.rejections_by_M(draft, target, [2, 0])
