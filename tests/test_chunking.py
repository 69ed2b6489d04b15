"""Chunked sampling: same law as one call, reproducible child seeds, memory bounded by the chunk.

Statistical checks use fixed seeds and fail at p-value < ALPHA or beyond Z standard errors (conftest).
"""

import tracemalloc

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import chunking, lookahead
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z


@pytest.fixture(scope="module")
def pair():
    target = sd.MarkovChain.random(3, 3, rng=31)
    draft = sd.MarkovChain.random(3, 3, rng=32, concentration=0.5)
    return draft, target


def test_chunk_sizes_cover_the_runs():
    assert chunking.chunk_sizes(10, 4) == [4, 4, 2]
    assert chunking.chunk_sizes(8, 4) == [4, 4]
    assert chunking.chunk_sizes(3, 100) == [3]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="chunk_size"):
            chunking.chunk_sizes(10, bad)
    with pytest.raises(ValueError, match="runs"):
        chunking.chunk_sizes(0, 4)
    with pytest.raises(ValueError, match="rng"):
        chunking.child_rngs("seed", 2)


def test_chunk_i_is_the_sampler_on_child_seed_i(pair):
    draft, target = pair
    got = chunking.chunked(sd.decoding.speculative, draft, target, runs=10, chunk_size=4, rng=5)
    children = np.random.SeedSequence(5).spawn(3)
    parts = [
        sd.decoding.speculative(draft, target, r, rng=np.random.default_rng(c))
        for r, c in zip([4, 4, 2], children, strict=True)
    ]
    for field in ("tokens", "rejected", "oracle_calls"):
        np.testing.assert_array_equal(getattr(got, field), np.concatenate([getattr(p, field) for p in parts]))
    # a Generator spawns its children the same way
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    got = chunking.chunked(sd.decoding.speculative, draft, target, runs=10, chunk_size=4, rng=g1)
    parts = [sd.decoding.speculative(draft, target, r, rng=c) for r, c in zip([4, 4, 2], g2.spawn(3), strict=True)]
    np.testing.assert_array_equal(got.tokens, np.concatenate([p.tokens for p in parts]))


def joint_fit(result, draft, target):
    joint = sd.theory.speculative_joint_law(draft, target)
    idx = sequence_index(2 * result.tokens.astype(np.int64) + result.rejected, 2 * draft.V)
    return chi_square(np.bincount(idx, minlength=joint.size), joint)


def test_chunked_output_has_the_exact_joint_law(pair):
    draft, target = pair
    res = chunking.chunked(sd.decoding.speculative, draft, target, runs=63_000, chunk_size=7_000, rng=11)
    assert res.tokens.shape == (63_000, 3)
    assert joint_fit(res, draft, target).pvalue > ALPHA


def test_reusing_one_seed_per_chunk_is_caught(pair):
    """Power check: chunks that repeat the same stream are not 63,000 independent runs."""
    draft, target = pair
    sizes = chunking.chunk_sizes(63_000, 7_000)
    bad = chunking.concatenate([sd.decoding.speculative(draft, target, r, rng=11) for r in sizes])
    assert joint_fit(bad, draft, target).pvalue < ALPHA


def test_chunked_sum_is_the_sum_over_the_chunked_runs(pair):
    draft, target = pair

    def stat(r):
        return np.stack([r.rejections, r.rejections**2], axis=1)

    total = chunking.chunked_sum(
        sd.decoding.speculative, draft, target, runs=5_000, chunk_size=1_500, statistic=stat, rng=3
    )
    res = chunking.chunked(sd.decoding.speculative, draft, target, runs=5_000, chunk_size=1_500, rng=3)
    np.testing.assert_array_equal(total, stat(res).sum(axis=0))
    with pytest.raises(ValueError, match="statistic"):
        chunking.chunked_sum(
            sd.decoding.speculative, draft, target, runs=10, chunk_size=4, statistic=lambda r: r.rejections.sum(), rng=3
        )


def test_theorem1_through_chunked_sum():
    target = sd.MarkovChain.random(5, 20, rng=41)
    draft = sd.MarkovChain.random(5, 20, rng=42)
    runs = 200_000
    s1, s2 = chunking.chunked_sum(
        sd.decoding.speculative,
        draft,
        target,
        runs=runs,
        chunk_size=30_000,
        statistic=lambda r: np.stack([r.rejections, r.rejections**2], 1),
        rng=4,
    )
    mean = s1 / runs
    se = np.sqrt((s2 / runs - mean**2) * runs / (runs - 1) / runs)
    assert abs(mean - sd.theory.expected_rejections(draft, target)) < Z * se


def test_concatenate_keeps_settings_and_refuses_mixed_ones():
    draft, target = sd.MarkovChain.random(3, 6, rng=1), sd.MarkovChain.random(3, 6, rng=2)
    res = chunking.chunked(lookahead.speculative_k, draft, target, runs=9, chunk_size=4, rng=0, K=2)
    assert type(res) is lookahead.LookaheadResult and res.K == 2 and res.bonus.shape == (9, 6)
    a = lookahead.speculative_k(draft, target, K=1, runs=2, rng=0)
    b = lookahead.speculative_k(draft, target, K=2, runs=2, rng=0)
    with pytest.raises(ValueError, match="differ"):
        chunking.concatenate([a, b])
    m, n = mean_and_se(res.rejections)
    assert np.isfinite(m) and np.isfinite(n)


def traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_is_set_by_the_chunk_not_the_runs():
    """A memory bound, not a timing: chunked_sum's peak stays below what one chunk may need.

    One chunk holds tokens (int16) and rejection flags (bool): 3 bytes per token step,
    plus at most 16 per-run temporaries of 8 bytes (uniforms, indices, the previous
    token ...) and the chains' (T, V, V) tables.
    """
    V, T, chunk = 7, 50, 2_000
    target, draft = sd.MarkovChain.random(V, T, rng=1), sd.MarkovChain.random(V, T, rng=2)
    bound = chunk * (3 * T + 16 * 8) + 4 * T * V * V * 8 + 64 * 1024

    def summed(runs):
        return chunking.chunked_sum(
            sd.decoding.speculative, draft, target, runs=runs, chunk_size=chunk, statistic=lambda r: r.rejections, rng=0
        )

    for runs in (4 * chunk, 40 * chunk):
        assert traced_peak(lambda r=runs: summed(r)) < bound
    # the bound is tight enough to fail: one unchunked call of the same runs exceeds it
    assert traced_peak(lambda: sd.decoding.speculative(draft, target, 40 * chunk, rng=0)) > 10 * bound
