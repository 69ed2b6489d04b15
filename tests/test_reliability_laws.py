"""Laws, stats and row sampling in 16-bit arithmetic and on bad input: right answers or named errors."""

import numpy as np
import pytest
from scipy import stats as st

import specdec_lite as sd
from specdec_lite import laws, stats
from specdec_lite.primitives import cumulative, sample_rows

torch = pytest.importorskip("torch")

HALF = (torch.bfloat16, torch.float16)


def t(x, dtype=torch.float32):
    return torch.tensor(x, dtype=torch.float32).to(dtype)


# --- residual in 16-bit arithmetic ----------------------------------------------------------------


def test_bf16_residual_is_the_positive_part_not_q():
    r = sd.residual(t([0.6, 0.4], torch.bfloat16), t([0.5, 0.5], torch.bfloat16))
    assert r.dtype == torch.float32
    assert r.tolist() == [0.0, 1.0]


def test_fp16_residual_is_the_positive_part_not_q():
    r = sd.residual(t([0.5, 0.5], torch.float16), t([0.49, 0.51], torch.float16))
    assert r.tolist() == [0.0, 1.0]
    r = sd.residual(np.array([0.5, 0.5], np.float16), np.array([0.49, 0.51], np.float16))
    assert r.dtype == np.float64 and r.tolist() == [0.0, 1.0]


def softmax_pair(V=32_000, shift=0.3, seed=0):
    """A float32 softmax pair over ``V`` tokens at TV about 0.11 (``shift`` scales the logit noise)."""
    g = torch.Generator().manual_seed(seed)
    logits, noise = 2 * torch.randn(V, generator=g), torch.randn(V, generator=g)
    return torch.softmax(logits + shift * noise, -1), torch.softmax(logits, -1)


def test_bf16_softmax_residual_matches_float32():
    p, q = softmax_pair()
    assert float(sd.tv(p, q)) == pytest.approx(0.115, abs=0.005)
    pb, qb = p.bfloat16(), q.bfloat16()
    r = sd.residual(pb, qb)
    assert r.dtype == torch.float32 and r.device == pb.device
    # The float32 residual of the very same (bf16-rounded) numbers, exactly.
    assert torch.equal(r, sd.residual(pb.float(), qb.float(), check=False))
    # Against the float32 laws the gap is the inputs' rounding (was 0.52: the guard returned q).
    assert float(sd.tv(r, sd.residual(p, q), check=False)) < 0.01
    assert float(sd.tv(r, qb.float(), check=False)) > 0.3


@pytest.mark.parametrize("dtype", HALF)
def test_rejection_law_opt_shares_the_16_bit_residual(dtype):
    p, q = t([0.6, 0.4], dtype), t([0.5, 0.5], dtype)
    assert laws.rejection_law(p, q, "opt").tolist() == [0.0, 1.0]
    assert laws.rejection_law(p, q, "uno").tolist() == [0.5, 0.5]
    assert laws.rejection_law(p, q, "uno").dtype == torch.float32


def test_llm_verify_rejection_law_is_laws_own():
    verify = pytest.importorskip("specdec_lite.llm.verify")
    assert verify.rejection_law is laws.rejection_law
    p, q = t([0.6, 0.4], torch.bfloat16), t([0.5, 0.5], torch.bfloat16)
    assert verify.rejection_law(p, q, "opt").tolist() == [0.0, 1.0]


@pytest.mark.parametrize("dtype", HALF)
def test_16_bit_guard_still_falls_back_to_q_when_p_equals_q_up_to_rounding(dtype):
    q = t([0.1, 0.2, 0.7], dtype)
    assert torch.equal(sd.residual(q, q), q.float())
    # One float32 law rounded to the dtype two ways, to nearest and toward zero: they differ by rounding only.
    g = torch.Generator().manual_seed(1)
    law = torch.softmax(3 * torch.randn(4, 5000, generator=g), -1)
    near = law.to(dtype)
    down = torch.where(near.float() > law, torch.nextafter(near, torch.zeros_like(near)), near)
    eps, sub = laws._float_info(dtype)  # one ulp is at most eps x, or the smallest subnormal
    assert torch.all(down.float() <= law) and torch.all(near.float() - down.float() <= law * eps + sub)
    mass = (near.double() - down.double()).clamp(min=0).sum(-1)
    assert torch.all(mass > 0) and torch.all(mass <= laws.residual_tolerance(dtype, 5000))
    assert torch.equal(sd.residual(down, near), near.float())


def test_residual_tolerance_follows_the_dtype():
    assert laws.residual_tolerance(np.float64) == 16 * np.finfo(np.float64).eps
    assert laws.residual_tolerance(np.float32) == 16 * np.finfo(np.float32).eps
    assert laws.residual_tolerance(torch.bfloat16) == pytest.approx(2**-7)
    assert laws.residual_tolerance(torch.float16, 1000) == pytest.approx(2**-10 + 1000 * 2**-24)
    assert laws.residual_tolerance(np.float16) == laws.residual_tolerance(torch.float16)


def test_16_bit_tv_is_computed_in_float32():
    p, q = t([0.6, 0.4], torch.bfloat16), t([0.5, 0.5], torch.bfloat16)
    d = sd.tv(p, q)
    assert d.dtype == torch.float32
    assert float(d) == pytest.approx(0.5 * float((p.double() - q.double()).abs().sum()), abs=1e-7)


def test_edges_in_bf16_one_hot_and_zero_draft_mass():
    e0, e1 = t([1.0, 0.0, 0.0], torch.bfloat16), t([0.0, 1.0, 0.0], torch.bfloat16)
    assert sd.residual(e0, e1).tolist() == [0.0, 1.0, 0.0]
    assert sd.residual(e1, e1).tolist() == [0.0, 1.0, 0.0]
    assert sd.acceptance(e0, e1).tolist() == [0.0, 1.0, 1.0]  # tokens 1, 2 are never proposed


# --- sum tolerances from the dtype's rounding ----------------------------------------------------


@pytest.mark.parametrize("total", [1.2, 1.01])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
def test_rows_that_do_not_sum_to_1_are_refused_in_every_dtype(dtype, total):
    bad = t([0.5, total - 0.5], dtype)
    assert abs(float(bad.double().sum()) - 1) > 0.009  # the row, rounded to the dtype, still misses 1
    with pytest.raises(ValueError, match="^p: rows must sum to 1"):
        sd.tv(bad, t([0.5, 0.5], dtype))
    with pytest.raises(ValueError, match="^q: rows must sum to 1"):
        sd.residual(t([0.5, 0.5], dtype), bad)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numpy_rows_summing_to_1_01_are_refused(dtype):
    with pytest.raises(ValueError, match="^p: rows must sum to 1"):
        sd.tv(np.array([0.5, 0.51], dtype), np.array([0.5, 0.5], dtype))
    with pytest.raises(ValueError, match="^q: rows must sum to 1"):
        sd.check_law(np.array([0.5, 0.51], dtype), "q")


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("V", [1000, 50_000, 256_000])
def test_real_16_bit_softmax_rows_are_accepted(dtype, V):
    g = torch.Generator().manual_seed(V)
    logits = 3 * torch.randn(4, V, generator=g)
    for law in (torch.softmax(logits, -1).to(dtype), torch.softmax(logits.to(dtype), -1)):
        assert torch.all(sd.tv(law, law.flip(-1)) >= 0)
        assert torch.all(torch.isfinite(sd.residual(law, law.flip(-1))))


def test_sum_tolerance_values():
    assert laws.sum_tolerance(np.float64) == laws.SUM_ATOL
    assert laws.sum_tolerance(np.float32) == 32 * np.finfo(np.float32).eps
    assert laws.sum_tolerance(torch.bfloat16) == 2**-7
    assert laws.sum_tolerance(torch.float16, 1) == pytest.approx(2**-10 + 2**-24)
    assert laws.sum_tolerance(np.float16, 50_000) == pytest.approx(2**-10 + 50_000 * 2**-24)
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="^V:"):
            laws.sum_tolerance(np.float16, bad)
        with pytest.raises(ValueError, match="^V:"):
            laws.residual_tolerance(np.float16, bad)


# --- acceptance validates its laws ---------------------------------------------------------------


@pytest.mark.parametrize(
    "p, q, message",
    [
        ([np.nan, 1.0], [0.5, 0.5], "^p: contains NaN"),
        ([2.0, -1.0], [0.5, 0.5], "^p: has negative entries"),
        ([0.5, 0.5], [0.5, 0.6], "^q: rows must sum to 1"),
        ([0.5, 0.5], [0.2, 0.3, 0.5], "share the vocabulary"),
        ([True, False], [0.5, 0.5], "^p: expected an array of real numbers, got booleans"),
        ([0.5, 0.5], ["0.5", "0.5"], "^q: expected an array of real numbers, got strings"),
    ],
)
def test_acceptance_refuses_bad_laws(p, q, message):
    with pytest.raises(ValueError, match=message):
        sd.acceptance(p, q)


def test_acceptance_on_laws_and_unchecked():
    np.testing.assert_array_equal(sd.acceptance([0.6, 0.4], [0.3, 0.7]), [0.5, 1.0])
    half = np.array([0.3, 0.2])  # a measure: only unchecked
    np.testing.assert_array_equal(sd.acceptance(half, [0.3, 0.7], check=False), [1.0, 1.0])
    with pytest.raises(ValueError, match="^p: has negative"):
        sd.acceptance(t([2.0, -1.0]), t([0.5, 0.5]))


# --- the rest of laws' API: non-numbers, wrong types, mixed libraries ---------------------------


@pytest.mark.parametrize(
    "law, message",
    [
        ([True, False], "got booleans"),
        ([True, 0.0], "booleans among them"),
        (np.array(["0.5", "0.5"]), "got strings"),
        (np.array([0.5, None], dtype=object), "got objects"),
        (np.array([0.5 + 0j, 0.5]), "got complex numbers"),
        ([[0.5, 0.5], [1.0]], "expected an array of real numbers"),
        ("ab", "got strings"),
    ],
)
def test_check_law_refuses_non_numbers_naming_the_argument(law, message):
    with pytest.raises(ValueError, match=message) as err:
        sd.check_law(law, "q")
    assert str(err.value).startswith("q:")


@pytest.mark.parametrize(
    "fn", [sd.tv, sd.residual, sd.acceptance, laws.law_split, laws.accepted_mass, laws.rejected_mass]
)
def test_every_checked_function_names_the_bad_argument(fn):
    good = np.array([0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="^q: contains NaN"):
        fn(good, np.array([np.nan, 0.5, 0.5]))
    with pytest.raises(ValueError, match="^p: has negative"):
        fn(np.array([1.2, -0.2, 0.0]), good)
    with pytest.raises(ValueError, match="^p: expected an array of real numbers, got booleans"):
        fn(np.array([True, False, False]), good)
    with pytest.raises(ValueError, match="^p: expected a floating-point tensor"):
        fn(torch.tensor([True, False, False]), torch.tensor(good))
    with pytest.raises(ValueError, match="^p and q: both torch tensors or neither"):
        fn(torch.tensor(good), good)


def test_mass_functions_unchecked_take_measures():
    half, q = np.array([0.25, 0.15, 0.1]), np.array([0.5, 0.3, 0.2])
    np.testing.assert_allclose(laws.rejected_mass(half, q, check=False), [0.25, 0.15, 0.1])
    np.testing.assert_allclose(laws.accepted_mass(half, q, check=False), half)
    with pytest.raises(ValueError, match="^p: rows must sum to 1"):
        laws.rejected_mass(half, q)


def test_check_law_tolerance_argument_and_torch_input():
    with pytest.raises(ValueError, match="^atol:"):
        sd.check_law([0.5, 0.5], "q", atol=-1)
    with pytest.raises(ValueError, match="^atol:"):
        sd.check_law([0.5, 0.5], "q", atol=True)
    np.testing.assert_array_equal(sd.check_law([0.5, 0.51], "q", atol=0.02), [0.5, 0.51])
    out = sd.check_law(t([0.25, 0.75], torch.bfloat16), "q")
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.tolist() == [0.25, 0.75]
    with pytest.raises(ValueError, match="^q: rows must sum to 1"):
        sd.check_law(t([0.6, 0.6], torch.bfloat16), "q")


@pytest.mark.parametrize("kind", [None, ["opt"], "OPT"])
def test_rejection_law_kind_is_named(kind):
    with pytest.raises(ValueError, match="^rejection_law: must be one of"):
        laws.rejection_law(np.array([0.5, 0.5]), np.array([0.5, 0.5]), kind)


# --- stats.chi_square ---------------------------------------------------------------------------


def test_chi_square_known_value_and_integral_floats():
    fit = stats.chi_square([30, 70], [0.5, 0.5])
    assert fit.statistic == pytest.approx(16.0) and fit.dof == 1
    assert fit.pvalue == pytest.approx(st.chi2.sf(16.0, 1))
    assert stats.chi_square(np.array([30.0, 70.0]), np.array([0.5, 0.5])) == fit
    assert stats.chi_square([0, 10], [0.5, 0.5]).dof == 1
    freq = np.array([3727, 16273]) / 20_000  # counts rebuilt from frequencies miss whole numbers by rounding
    assert (freq * 20_000)[0] != 3727
    assert stats.chi_square(freq * 20_000, [0.2, 0.8]) == stats.chi_square([3727, 16273], [0.2, 0.8])
    impossible = stats.chi_square([5, 5, 1], [0.5, 0.5, 0.0])
    assert impossible.pvalue == 0.0 and impossible.statistic == np.inf


@pytest.mark.parametrize(
    "counts, probs, message",
    [
        ([100, 100, np.nan], [0.5, 0.25, 0.25], "^counts: contains NaN"),
        ([100, 100, 900], [0.5, 0.5, np.nan], "^probs: contains NaN"),
        ([60, 60, 0], [0.6, 0.6, -0.2], "^probs: has negative entries"),
        ([60, 60, 0], [0.6, 0.6, 0.2], "^probs: rows must sum to 1"),
        ([-1, 5], [0.5, 0.5], "^counts: has negative entries"),
        ([1.5, 2], [0.5, 0.5], "^counts: must be whole numbers"),
        ([0, 0], [0.5, 0.5], "^counts: all zero"),
        ([True, False], [0.5, 0.5], "^counts: expected an array of real numbers, got booleans"),
        (["3", "4"], [0.5, 0.5], "^counts: expected an array of real numbers, got strings"),
        ([1, 2], [True, False], "^probs: expected an array of real numbers, got booleans"),
        ([1, 2, 3], [0.5, 0.5], "same shape"),
        (np.ones((2, 2)), np.full(4, 0.25), "same shape"),
        (5, [1.0], "^counts: expected an array"),
    ],
)
def test_chi_square_refuses_bad_input(counts, probs, message):
    with pytest.raises(ValueError, match=message):
        stats.chi_square(counts, probs)


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf, True, "5"])
def test_chi_square_min_expected_is_named(bad):
    with pytest.raises(ValueError, match="^min_expected:"):
        stats.chi_square([30, 70], [0.5, 0.5], min_expected=bad)


# --- stats.sequence_index -----------------------------------------------------------------------


def test_sequence_index_known_values_and_the_int64_edge():
    np.testing.assert_array_equal(stats.sequence_index([[1, 2], [2, 0]], 3), [5, 6])
    assert stats.sequence_index(np.ones((1, 63), np.int64), 2)[0] == 2**63 - 1  # 2**63 sequences: the last fits
    assert stats.sequence_index(np.full((1, 39), 2), 3)[0] == 3**39 - 1
    np.testing.assert_array_equal(stats.sequence_index(np.zeros((3, 0), np.int64), 5), [0, 0, 0])  # T = 0
    assert stats.sequence_index(np.array([[1, 1]], np.int16), 300)[0] == 301


@pytest.mark.parametrize(
    "tokens, V, message",
    [
        ([[5]], 3, r"^tokens: ids must lie in \[0, 3\)"),
        ([[3, 0]], 3, r"^tokens: ids must lie in \[0, 3\)"),
        ([[-1, 0]], 3, r"^tokens: ids must lie in \[0, 3\)"),
        ([[1] * 40], 3, "^tokens: V\\*\\*T = 3\\*\\*40 sequences do not fit an int64"),
        (np.ones((1, 64), np.int64), 2, "do not fit an int64"),
        ([[0.0, 1.0]], 3, "^tokens: expected an array of integers, got floats"),
        ([[True, False]], 3, "^tokens: expected an array of integers, got booleans"),
        (2, 3, "^tokens: expected sequences on the last axis"),
        ([[0, 1]], 0, "^V:"),
        ([[0, 1]], 3.0, "^V:"),
        ([[0, 1]], True, "^V:"),
    ],
)
def test_sequence_index_refuses_what_it_cannot_index(tokens, V, message):
    with pytest.raises(ValueError, match=message):
        stats.sequence_index(tokens, V)


# --- stats.mean_and_se and running_mean --------------------------------------------------------


def test_mean_and_se_checks_its_sample():
    m, se = stats.mean_and_se([True, False, True, True])  # indicators are a sample of 0/1
    assert m == 0.75 and se == pytest.approx(np.std([1, 0, 1, 1], ddof=1) / 2)
    for bad, message in [
        ([1.0, np.nan], "^x: contains NaN"),
        ([1.0, np.inf], "^x: contains NaN or inf"),
        (["1", "2"], "^x: expected an array"),
        ([1.0], "^x: need at least 2"),
    ]:
        with pytest.raises(ValueError, match=message):
            stats.mean_and_se(bad)
    with pytest.raises(ValueError, match="^x: contains NaN"):
        stats.running_mean([0.0, np.nan])
    mean, se = stats.running_mean([1.0, 3.0])
    np.testing.assert_allclose(mean, [1.0, 2.0])
    np.testing.assert_allclose(se, [0.0, 1.0])


# --- primitives.sample_rows: a zero-probability token is never drawn ----------------------------


def old_formula(cdf, rows, u):
    """The draw before the fix (for comparison where ``r + u`` does not round up)."""
    V = cdf.shape[-1]
    flat = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
    return np.minimum(np.searchsorted(flat, rows + u, side="right") - rows * V, V - 1)


def test_u_that_rounds_up_with_the_row_offset_stays_off_a_zero_probability_last_token():
    R = 1000
    cdf = cumulative(np.tile([0.5, 0.5, 0.0], (R, 1)))
    rows = np.arange(R)
    u = np.full(R, np.nextafter(1.0, 0.0))
    assert np.all(rows[1:] + u[1:] == rows[1:] + 1)  # the rounding really happens for every row >= 1
    assert np.all(old_formula(cdf, rows, u)[1:] == 2)  # ...and drew the zero-probability token
    np.testing.assert_array_equal(sample_rows(cdf, rows, u), np.ones(R))


def test_zero_probability_tokens_anywhere_are_never_drawn_at_the_edges_of_u():
    laws_ = np.array([[0.0, 0.3, 0.0, 0.7, 0.0], [0.2, 0.0, 0.0, 0.8, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]] * 300)
    cdf = cumulative(laws_)
    rows = np.repeat(np.arange(cdf.shape[0]), 6)
    edges = [0.0, np.nextafter(0.3, 0), 0.3, 0.2, np.nextafter(0.2, 0), np.nextafter(1.0, 0.0)]
    u = np.tile(edges, cdf.shape[0])
    x = sample_rows(cdf, rows, u)
    assert np.all((x >= 0) & (x < 5))
    assert np.all(laws_[rows, x] > 0)
    ok = rows + u < rows + 1  # where no rounding up happens, the draw is the one it always was
    np.testing.assert_array_equal(x[ok], old_formula(cdf, rows[ok], u[ok]))


def test_sample_rows_matches_the_inverse_cdf_on_random_uniforms():
    gen = np.random.default_rng(0)
    laws_ = gen.dirichlet(np.ones(7), size=50)
    laws_[:, 3] = 0.0
    cdf = cumulative(laws_)
    rows, u = gen.integers(0, 50, 100_000), gen.random(100_000)
    x = sample_rows(cdf, rows, u)
    np.testing.assert_array_equal(x, old_formula(cdf, rows, u))
    assert not np.any(x == 3)
    # Row 0 has no offset: exactly the first x with u < F(x).
    zero = rows == 0
    np.testing.assert_array_equal(x[zero], np.searchsorted(cdf[0], u[zero], side="right"))
    # int16 rows (the samplers' token dtype) are not multiplied in int16.
    big = cumulative(np.tile([0.5, 0.5], (300, 1)))
    np.testing.assert_array_equal(sample_rows(big, np.array([299], np.int16), np.array([0.75])), [1])


@pytest.mark.parametrize("bad", [np.zeros((2, 3)), np.array([[0.5, np.nan, 0.5]]), np.array([[1.5, -0.5, 0.0]])])
def test_cumulative_refuses_rows_without_a_cdf(bad):
    with pytest.raises(ValueError, match="^laws:"):
        cumulative(bad)
