"""Theorems 4 and 5 on one token: the optimal rejection law, Loss*_TV, the linear Pareto front."""

import numpy as np
import pytest
from scipy.optimize import linprog

import specdec_lite as sd
from specdec_lite import tradeoff as tr
from specdec_lite.stats import chi_square, mean_and_se
from tests.conftest import ALPHA, Z


def random_laws(rng, V, size=(), sparse=False):
    alpha = np.full(V, 0.3 if sparse else 1.0)
    p = rng.dirichlet(alpha, size=size)
    q = rng.dirichlet(alpha, size=size)
    if sparse:  # exact zeros exercise p(x) = 0 and q(x) = 0
        p = np.where(p < 0.05, 0.0, p)
        q = np.where(q < 0.05, 0.0, q)
        p, q = p / p.sum(-1, keepdims=True), q / q.sum(-1, keepdims=True)
    return p, q


def brute_force_loss(p, q, b):
    """min over laws P of TV(b p + r P, q), as a linear program in (P, t) with t >= |b p + r P - q|."""
    V = p.size
    r = ((1 - b) * p).sum()
    c = np.concatenate([np.zeros(V), 0.5 * np.ones(V)])
    eye = np.eye(V)
    A_ub = np.block([[r * eye, -eye], [-r * eye, -eye]])
    b_ub = np.concatenate([q - b * p, b * p - q])
    A_eq = np.concatenate([np.ones(V), np.zeros(V)])[None]
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=[(0, None)] * (2 * V), method="highs")
    assert res.status == 0
    return res.fun, res.x[:V]


@pytest.mark.parametrize("seed", range(12))
def test_theorem4_closed_form_matches_linear_program(seed):
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 9))
    p, q = random_laws(rng, V, sparse=seed % 2 == 1)
    b = rng.random(V) ** rng.choice([0.3, 1.0, 3.0])
    lp_loss, lp_P = brute_force_loss(p, q, b)
    assert tr.tv_loss(p, q, b) == pytest.approx(lp_loss, abs=1e-9)
    # the canonical P* attains the minimum ...
    P_star = tr.optimal_rejection_law(p, q, b)
    assert P_star.sum() == pytest.approx(1) and np.all(P_star >= 0)
    assert tr.bias(p, q, b, P_star) == pytest.approx(lp_loss, abs=1e-9)
    # ... and the LP's optimum obeys the characterisation: P = 0 where A < 0, P <= A elsewhere
    r = ((1 - b) * p).sum()
    A = (q - b * p) / r
    assert np.all(lp_P[A < -1e-9] <= 1e-7)
    assert np.all(lp_P <= np.maximum(A, 0) + 1e-7)
    # a law that breaks the characterisation is strictly worse
    bad = np.full(V, 1.0 / V)
    if np.any(A < -1e-6):
        assert tr.bias(p, q, b, bad) > lp_loss + 1e-9


def test_theorem4_both_forms_of_the_loss():
    rng = np.random.default_rng(1)
    p, q = random_laws(rng, 6, size=(200,))
    b = rng.random((200, 6))
    half_form = 0.5 * np.abs(q - b * p).sum(-1) - 0.5 * ((1 - b) * p).sum(-1)
    np.testing.assert_allclose(tr.tv_loss(p, q, b), half_form, atol=1e-12)
    # below the speculative rule the loss is 0 and P* is Corollary 1's law
    b_low = rng.random((200, 6)) * sd.acceptance(p, q)
    np.testing.assert_allclose(tr.tv_loss(p, q, b_low), 0, atol=1e-15)
    r = ((1 - b_low) * p).sum(-1, keepdims=True)
    np.testing.assert_allclose(tr.optimal_rejection_law(p, q, b_low), (q - b_low * p) / r, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_theorem5_linear_front(seed):
    rng = np.random.default_rng(100 + seed)
    p, q = random_laws(rng, int(rng.integers(2, 12)), size=(500,), sparse=seed % 2 == 0)
    spec = sd.acceptance(p, q)
    b = spec + rng.random(spec.shape) ** 2 * (1 - spec)  # any rule between min(1, q/p) and 1
    reject, loss = tr.pareto_point(p, q, b)
    np.testing.assert_allclose(reject + loss, sd.tv(p, q), atol=1e-12)
    # the ends of the front: speculative decoding (TV, 0) and always-accept (0, TV)
    r0, l0 = tr.pareto_point(p, q, spec)
    np.testing.assert_allclose(r0, sd.tv(p, q), atol=1e-12)
    np.testing.assert_allclose(l0, 0, atol=1e-12)
    r1, l1 = tr.pareto_point(p, q, np.ones_like(p))
    np.testing.assert_allclose(r1, 0, atol=1e-12)
    np.testing.assert_allclose(l1, sd.tv(p, q), atol=1e-12)


def test_below_the_front_is_unattainable():
    """Any (b, P) at all: rejection + bias >= TV, so random algorithms scatter above the front."""
    rng = np.random.default_rng(7)
    p, q = random_laws(rng, 5, size=(2000,))
    b = rng.random((2000, 5))
    P = rng.dirichlet(np.ones(5), size=2000)
    reject = tr.reject_probability(p, b)
    assert np.all(reject + tr.bias(p, q, b, P) >= sd.tv(p, q) - 1e-12)
    assert np.all(reject + tr.tv_loss(p, q, b) >= sd.tv(p, q) - 1e-12)
    # and strictly above once the rule under-accepts a token that p over-weights
    low = b < sd.acceptance(p, q) - 1e-3
    strict = np.any(low & (p > q), axis=-1)
    assert np.all((reject + tr.tv_loss(p, q, b))[strict] > sd.tv(p, q)[strict])


def test_over_acceptance_identities():
    rng = np.random.default_rng(3)
    p, q = random_laws(rng, 7, size=(300,), sparse=True)
    for eps in [0.0, 0.01, 0.1, 0.5, 2.0]:
        b = tr.over_accept(p, q, eps)
        assert np.all((b >= sd.acceptance(p, q) - 1e-15) & (b <= 1))
        seen = p > 0
        np.testing.assert_allclose((q - b * p)[seen], np.maximum(q - p, -eps)[seen], atol=1e-15)
        # Theorem 4's optimum is the ordinary residual, and Decoding-OPT attains Loss*_TV
        np.testing.assert_allclose(tr.optimal_rejection_law(p, q, b), sd.residual(p, q), atol=1e-12)
        r_opt, l_opt = tr.over_accept_point(p, q, eps, "opt")
        r_uno, l_uno = tr.over_accept_point(p, q, eps, "uno")
        np.testing.assert_allclose(l_opt, tr.tv_loss(p, q, b), atol=1e-12)
        np.testing.assert_allclose(r_opt, r_uno)
        assert np.all(l_uno >= l_opt - 1e-12)  # OPT's loss never exceeds UNO's
        np.testing.assert_allclose(r_opt + l_opt, sd.tv(p, q), atol=1e-12)  # OPT is on the front
    np.testing.assert_array_equal(tr.over_accept(p, q, 0.0), sd.acceptance(p, q))
    assert np.all(tr.over_accept(p, q, 1.0) == 1.0)
    # UNO is strictly off the front for a moderate eps on generic laws
    _, l_uno = tr.over_accept_point(p, q, 0.05, "uno")
    assert np.mean(l_uno > tr.tv_loss(p, q, tr.over_accept(p, q, 0.05)) + 1e-9) > 0.5


def test_per_token_eps():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    b = tr.over_accept(p, q, np.array([0.1, 0.0, 0.0]))
    np.testing.assert_allclose(b, [0.6, 1.0, 1.0])
    assert tr.tv_loss(p, q, b) == pytest.approx(0.1)


def test_edges_equal_one_hot_and_float32():
    q = np.array([0.1, 0.6, 0.3])
    for eps in [0.0, 0.3]:
        assert tr.over_accept_point(q, q, eps, "opt") == (pytest.approx(0), pytest.approx(0))
        assert tr.over_accept_point(q, q, eps, "uno") == (pytest.approx(0), pytest.approx(0))
    e0, e2 = np.eye(3)[0], np.eye(3)[2]
    r, l = tr.pareto_point(e0, e2, np.array([0.25, 1.0, 1.0]))
    assert (r, l) == (pytest.approx(0.75), pytest.approx(0.25))
    np.testing.assert_allclose(tr.optimal_rejection_law(e0, e2, np.zeros(3)), e2)
    # always accept: nothing is rejected, every P is optimal, the canonical one is still a law
    P = tr.optimal_rejection_law(q, q, np.ones(3))
    assert P.sum() == pytest.approx(1)
    p32, q32 = np.array([0.7, 0.2, 0.1], np.float32), np.array([0.2, 0.2, 0.6], np.float32)
    r, l = tr.pareto_point(p32, q32, tr.over_accept(p32, q32, 0.2))
    assert r + l == pytest.approx(0.5, abs=1e-6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tr.over_accept([0.5, 0.5], [0.2, 0.8], -0.1), "eps"),
        (lambda: tr.over_accept([0.5, 0.5], [0.2, 0.8], np.nan), "eps"),
        (lambda: tr.tv_loss([0.5, 0.5], [0.2, 0.8], [1.2, 0.5]), "accept"),
        (lambda: tr.tv_loss([0.5, 0.5], [0.2, 0.8], [-0.1, 0.5]), "accept"),
        (lambda: tr.tv_loss([0.5, 0.5], [0.2, 0.8], [0.5, 0.5, 0.5]), "accept"),
        (lambda: tr.tv_loss([0.5, 0.5], [0.2, 0.3, 0.5], [0.5, 0.5]), "p and q"),
        (lambda: tr.pareto_point([0.5, 0.6], [0.2, 0.8], [0.5, 0.5]), "p"),
        (lambda: tr.rejection_law([0.5, 0.5], [0.2, 0.8], "best"), "^kind:"),
        (lambda: tr.output_law([0.5, 0.5], [1.0, 0.0], [0.3, 0.3, 0.4]), "rejection"),
        (lambda: sd.theory.optimal_rejection_law(np.ones((2, 3)) / 3, np.ones((4, 3)) / 3, np.ones(3)), "broadcast"),
    ],
)
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_theory_reexports():
    p, q, b = np.array([0.6, 0.4]), np.array([0.3, 0.7]), np.array([0.8, 1.0])
    assert sd.theory.tv_loss(p, q, b) == pytest.approx(0.18)
    assert sd.theory.pareto_point(p, q, b) == (pytest.approx(0.12), pytest.approx(0.18))
    np.testing.assert_allclose(sd.theory.optimal_rejection_law(p, q, b), [0, 1])


@pytest.mark.parametrize("kind, eps, seed", [("opt", 0.05, 0), ("uno", 0.05, 1), ("opt", 0.2, 2), ("uno", 0.0, 3)])
def test_one_token_monte_carlo_matches_the_pareto_point(kind, eps, seed):
    """Simulate one token of over-acceptance: output law P^A (chi-square) and P(reject) (5 SE)."""
    p, q = np.array([0.45, 0.30, 0.15, 0.10]), np.array([0.20, 0.25, 0.25, 0.30])
    draft, target = (sd.MarkovChain(x, np.empty((0, 4, 4))) for x in (p, q))
    res = sd.decoding.biased_speculative(draft, target, eps, kind, runs=100_000, rng=seed)
    b = tr.over_accept(p, q, eps)
    out = tr.output_law(p, b, tr.rejection_law(p, q, kind))
    assert chi_square(np.bincount(res.tokens[:, 0], minlength=4), out).pvalue > ALPHA
    m, se = mean_and_se(res.rejected[:, 0])
    reject, loss = tr.over_accept_point(p, q, eps, kind)
    assert abs(m - reject) <= Z * se
    # the law sampled is exactly the one whose TV to q is the loss (Theorem 4 for OPT)
    assert sd.tv(out, q) == pytest.approx(loss)
    if kind == "opt":
        assert reject + loss == pytest.approx(sd.tv(p, q))
    # power: the biased output is told apart from q
    if loss > 0.02:
        assert chi_square(np.bincount(res.tokens[:, 0], minlength=4), q).pvalue < ALPHA
