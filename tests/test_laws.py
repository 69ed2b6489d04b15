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
