"""Theorems 4 and 5 by Monte Carlo: simulate biased acceptance rules and estimate rejections and loss.

The exact checks (tests/test_tradeoff.py) compare Theorem 4's closed form with a
linear program. Here the samplers themselves are run. For one token with acceptance
rule ``b`` and rejection law ``P``, each run gives a rejection mark ``R`` and an
output token ``X``. With ``A = {x : P^A(x) > q(x)}`` (``P^A`` the exact output law),
``1{X in A} - q(A)`` is an unbiased estimate of ``TV(P^A, q)``, the rule's loss. So

* Theorem 4: with ``P = P*`` the estimated loss matches ``Loss*_TV(b)``, and any
  other law's estimated loss is not below it;
* Theorem 5: for ``min(1, q/p) <= b <= 1`` and ``P = P*``, the per-run quantity
  ``R + 1{X in A} - q(A)`` has mean ``TV(p, q)``.

Means are checked within ``Z`` standard errors, laws by chi-square at ``ALPHA``.
"""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import biased as bi
from specdec_lite import tradeoff as tr
from specdec_lite.laws import acceptance
from specdec_lite.stats import chi_square, mean_and_se
from tests.conftest import ALPHA, Z

RUNS = 100_000


def one_token_chain(law: np.ndarray) -> sd.MarkovChain:
    return sd.MarkovChain(law, np.empty((0, law.size, law.size)))


def instance(seed: int, V: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """A draft and a target on ``V`` tokens; seed 0 gives the draft a zero where the target has mass."""
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
    if seed == 0:
        p[0] = 0.0
        p /= p.sum()
    return p, q


def simulate(p: np.ndarray, b: np.ndarray, P: np.ndarray, seed: int) -> sd.decoding.DecodeResult:
    """One token of Algorithm 2 with rule ``(b, P)``, through the package's chain sampler."""
    V = p.size
    accept, rejection = (np.broadcast_to(a, (1, V, V)).copy() for a in (b, P))
    return bi.generic_speculative(one_token_chain(p), accept, rejection, runs=RUNS, rng=seed)


def loss_estimate(tokens: np.ndarray, out: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-run unbiased estimates of ``TV(out, q)``: ``1{X in A} - q(A)`` with ``A = {out > q}``."""
    above = out > q
    return above[tokens].astype(float) - q[above].sum()


def rules_on_the_front(p: np.ndarray, q: np.ndarray, seed: int) -> list[np.ndarray]:
    """Acceptance rules between speculative decoding's ``min(1, q/p)`` and 1 (Theorem 5's range)."""
    spec = acceptance(p, q)
    u = np.random.default_rng(seed).random(p.size)
    return [spec, spec + 0.3 * (1 - spec), spec + 0.8 * (1 - spec), spec + u * (1 - spec)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem5_rejections_plus_loss_is_tv_by_monte_carlo(seed):
    p, q = instance(seed)
    for i, b in enumerate(rules_on_the_front(p, q, seed)):
        P = tr.optimal_rejection_law(p, q, b)
        res = simulate(p, b, P, seed=100 * seed + i)
        x, r = res.tokens[:, 0].astype(int), res.rejected[:, 0].astype(float)
        out = tr.output_law(p, b, P)
        # the sampler draws the law Theorem 4 describes, and rejects at its rate
        assert chi_square(np.bincount(x, minlength=p.size), out).pvalue > ALPHA, (seed, i)
        m, se = mean_and_se(r)
        assert abs(m - tr.reject_probability(p, b)) <= Z * se, (seed, i, m)
        # Theorem 5, estimated run by run: E[R + loss estimate] = TV(p, q)
        m, se = mean_and_se(r + loss_estimate(x, out, q))
        assert abs(m - sd.tv(p, q)) <= Z * se, (seed, i, m, sd.tv(p, q))


@pytest.mark.parametrize("seed", [1, 2])
def test_theorem4_optimal_law_attains_the_loss_and_others_do_not_beat_it(seed):
    p, q = instance(seed)
    b = rules_on_the_front(p, q, seed)[3]
    star = tr.tv_loss(p, q, b)
    assert star > 0.01  # an over-accepting rule, so the loss is visible
    P_star = tr.optimal_rejection_law(p, q, b)
    res = simulate(p, b, P_star, seed=10 + seed)
    m, se = mean_and_se(loss_estimate(res.tokens[:, 0].astype(int), tr.output_law(p, b, P_star), q))
    assert abs(m - star) <= Z * se, (m, star, se)
    # other rejection laws: the target itself (Decoding-UNO's choice) and a random law
    others = {"uno": q, "random": np.random.default_rng(seed).dirichlet(np.ones(p.size))}
    for name, P in others.items():
        out = tr.output_law(p, b, P)
        res = simulate(p, b, P, seed=20 + seed)
        m, se = mean_and_se(loss_estimate(res.tokens[:, 0].astype(int), out, q))
        assert abs(m - sd.tv(out, q)) <= Z * se, (name, m, sd.tv(out, q))
        assert m >= star - Z * se, (name, m, star)
        if sd.tv(out, q) > star + 0.02:  # power: a worse law is seen to be worse
            assert m > star + Z * se, (name, m, star, se)


@pytest.mark.parametrize("kind, eps, seed", [("opt", 0.1, 5), ("uno", 0.1, 6), ("opt", 0.3, 7)])
def test_over_acceptance_on_chains_rejections_and_loss_per_position(kind, eps, seed):
    """Decoding-OPT and -UNO on a chain: per position, P(reject) and the output law by Monte Carlo."""
    target = sd.MarkovChain.random(4, 5, rng=seed, concentration=1.0)
    draft = sd.MarkovChain.random(4, 5, rng=seed + 50, concentration=1.0)
    res = sd.decoding.biased_speculative(draft, target, eps, kind, runs=RUNS, rng=seed)
    prof = bi.biased_rejection_profile(draft, target, eps, kind)
    m, se = res.rejected.mean(0), np.sqrt(np.maximum(prof * (1 - prof), 1e-12) / res.runs)
    assert np.all(np.abs(m - prof) <= Z * se), (m, prof)
    mu = bi.biased_output_chain(draft, target, eps, kind).marginals()
    for n in range(draft.T):
        assert chi_square(np.bincount(res.tokens[:, n], minlength=4), mu[n]).pvalue > ALPHA, n
    if kind == "opt":  # Theorem 5 at the first position: P(reject) + loss = TV
        loss = sd.tv(mu[0], target.init)
        assert prof[0] + loss == pytest.approx(sd.tv(draft.init, target.init))
