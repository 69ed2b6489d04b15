import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.laws import residual_tolerance


def test_tv_known_values_and_batching():
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    q = np.array([[0.25, 0.25, 0.5], [0.0, 1.0, 0.0]])
    np.testing.assert_allclose(sd.tv(p, q), [0.5, 1.0])
    np.testing.assert_allclose(sd.tv(q, p), sd.tv(p, q))
    # TV = 1 - sum min(p, q)
    np.testing.assert_allclose(sd.tv(p, q), 1 - np.minimum(p, q).sum(-1))


def test_residual_is_normalised_positive_part():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(sd.residual(p, q), [0, 0, 1])
    p, q = np.array([0.5, 0.1, 0.4]), np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(sd.residual(p, q), [0, 2 / 3, 1 / 3])


def test_residual_guard_equal_laws_returns_q_without_nan():
    q = np.array([0.1, 0.2, 0.7])
    r = sd.residual(q, q)
    assert np.all(np.isfinite(r))
    np.testing.assert_array_equal(r, q)


def test_residual_guard_float32_rounding():
    """Two float32 laws equal up to rounding: the guard returns q, not amplified noise."""
    rng = np.random.default_rng(0)
    q = rng.dirichlet(np.ones(1000)).astype(np.float32)
    p = (q * np.float32(3)) / (q * np.float32(3)).sum(dtype=np.float32)
    mass = np.maximum(q.astype(np.float64) - p, 0).sum()
    assert 0 < mass <= residual_tolerance(np.float32)  # rounding noise is really there
    np.testing.assert_array_equal(sd.residual(p, q), q.astype(np.float64))
    # ...while a genuine difference well above float32 rounding is kept.
    p2 = q.astype(np.float64).copy()
    p2[0] += 1e-4
    p2[1] -= 1e-4
    r = sd.residual(p2.astype(np.float32), q)
    assert r[1] > 0.99 and abs(r.sum() - 1) < 1e-9


def test_residual_batched_mixes_guarded_and_regular_rows():
    p = np.array([[0.5, 0.5], [0.9, 0.1]])
    q = np.array([[0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(sd.residual(p, q), [[0.5, 0.5], [0.0, 1.0]])


def test_residual_where_draft_has_no_mass():
    p, q = np.array([1.0, 0.0]), np.array([0.5, 0.5])
    np.testing.assert_allclose(sd.residual(p, q), [0.0, 1.0])
    np.testing.assert_allclose(sd.acceptance(p, q), [0.5, 1.0])  # token 1 is never proposed


def test_tv_and_residual_accept_torch_tensors():
    torch = pytest.importorskip("torch")
    p = torch.tensor([[0.5, 0.1, 0.4], [0.2, 0.3, 0.5]], dtype=torch.float32)
    q = torch.tensor([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]], dtype=torch.float32)
    r = sd.residual(p, q)
    assert isinstance(r, torch.Tensor)
    np.testing.assert_allclose(r.numpy(), sd.residual(p.numpy(), q.numpy()), atol=1e-6)
    np.testing.assert_allclose(sd.tv(p, q).numpy(), sd.tv(p.numpy(), q.numpy()), atol=1e-6)


@pytest.mark.parametrize(
    "law, message",
    [
        ([0.5, 0.6], "sum to 1"),
        ([1.5, -0.5], "negative"),
        ([np.nan, 1.0], "NaN"),
        ([np.inf, 0.0], "NaN or inf"),
        ([], "at least one token"),
    ],
)
def test_check_law_names_argument_and_problem(law, message):
    with pytest.raises(ValueError, match=message) as err:
        sd.check_law(law, "q")
    assert str(err.value).startswith("q:")


# --- bad inputs to tv and residual: loud errors naming the argument -------------------------------

GOOD = np.array([0.5, 0.3, 0.2])


@pytest.mark.parametrize("fn", [sd.tv, sd.residual])
@pytest.mark.parametrize(
    "p, q, message",
    [
        (np.array([np.nan, 0.5, 0.5]), GOOD, "^p: contains NaN"),
        (GOOD, np.array([0.5, np.inf, 0.0]), "^q: contains NaN or inf"),
        (np.array([1.2, -0.2, 0.0]), GOOD, "^p: has negative entries"),
        (GOOD, np.array([0.5, 0.3, 0.3]), "^q: rows must sum to 1"),
        (np.array([0.5, 0.5]), GOOD, "share the vocabulary"),
        (np.ones((2, 3)) / 3, np.ones((3, 3)) / 3, "do not broadcast"),
        (np.array([1.0]), GOOD, "share the vocabulary"),
        (np.array(1.0), GOOD, "^p: needs a last axis"),
    ],
)
def test_bad_laws_are_refused_with_the_argument_named(fn, p, q, message):
    with pytest.raises(ValueError, match=message):
        fn(p, q)


def test_residual_of_a_nan_draft_is_an_error_not_q():
    with pytest.raises(ValueError, match="^p: contains NaN"):
        sd.residual(np.full(3, np.nan), GOOD)


def test_sum_tolerance_follows_the_dtype():
    """float32 laws that sum to 1 within float32 rounding pass; a row off by 1e-3 does not."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(1000), size=4).astype(np.float32)
    q = rng.dirichlet(np.ones(1000), size=4).astype(np.float32)
    assert np.abs(p.sum(-1, dtype=np.float64) - 1).max() < sd.laws.sum_tolerance(np.float32)
    np.testing.assert_allclose(sd.tv(p, q), sd.tv(p.astype(np.float64), q.astype(np.float64)), rtol=1e-5)
    bad = p.copy()
    bad[0, 0] += 1e-3
    with pytest.raises(ValueError, match="^p: rows must sum to 1"):
        sd.tv(bad, q)
    assert sd.laws.sum_tolerance(np.float64) == sd.laws.SUM_ATOL
    assert sd.laws.sum_tolerance(np.float32) == 32 * np.finfo(np.float32).eps


def test_torch_laws_are_checked_too():
    torch = pytest.importorskip("torch")
    p = torch.tensor([0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="^q: contains NaN"):
        sd.tv(p, torch.tensor([float("nan"), 0.5, 0.5]))
    with pytest.raises(ValueError, match="^p: has negative"):
        sd.residual(torch.tensor([1.2, -0.2, 0.0]), p)
    with pytest.raises(ValueError, match="^q: rows must sum to 1"):
        sd.residual(p, torch.tensor([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match="share the vocabulary"):
        sd.tv(p, torch.tensor([0.5, 0.5]))
    # float32 softmax over a large vocabulary passes, bfloat16 laws too
    logits = torch.randn(4, 50_000, generator=torch.Generator().manual_seed(0))
    a, b = torch.softmax(logits, -1), torch.softmax(logits.flip(-1), -1)
    assert torch.all(sd.tv(a, b) >= 0)
    assert torch.all(sd.tv(a.bfloat16(), b.bfloat16()) >= 0)


def test_unchecked_calls_skip_validation():
    """``check=False`` is the samplers' per-position path: the formula alone, e.g. Theorem 4's ``[q - b p]_+``."""
    half = 0.5 * GOOD  # a measure of mass 1/2, not a law
    np.testing.assert_allclose(sd.residual(half, GOOD, check=False), GOOD)  # [q - q/2]_+ normalised is q
    assert sd.tv(half, GOOD, check=False) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="^p: rows must sum to 1"):
        sd.residual(half, GOOD)


def test_over_accept_is_one_formula_for_numpy_and_torch():
    p, q = np.array([0.6, 0.3, 0.1, 0.0]), np.array([0.2, 0.3, 0.1, 0.4])
    for eps in (-0.1, 0.0, 0.05, 1.0):
        want = np.where(p > 0, np.clip((q + eps) / np.where(p > 0, p, 1), 0, 1), 1.0)
        np.testing.assert_array_equal(sd.laws.over_accept(p, q, eps), want)
    np.testing.assert_array_equal(sd.acceptance(p, q), sd.laws.over_accept(p, q, 0.0))
    torch = pytest.importorskip("torch")
    for eps in (0.0, 0.05):
        got = sd.laws.over_accept(torch.tensor(p), torch.tensor(q), eps)
        np.testing.assert_allclose(got.numpy(), sd.laws.over_accept(p, q, eps), rtol=1e-12)


def test_law_split_adds_up_to_q_and_its_rejected_part_to_tv():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(6), size=5), rng.dirichlet(np.ones(6), size=5)
    accepted, rejected = sd.laws.law_split(p, q)
    np.testing.assert_allclose(accepted + rejected, q, atol=1e-15)
    np.testing.assert_allclose(rejected.sum(-1), sd.tv(p, q), atol=1e-15)
