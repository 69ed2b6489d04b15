"""Model answers and delegating answers for the labs' checks, shared by tests/test_checks_*.py."""

from __future__ import annotations

import numpy as np

import specdec_lite as sd
from specdec_lite import batch, lookahead, tradeoff
from specdec_lite.laws import tv as bound_tv

# --- model answers (as in the lab masters) ---------------------------------------------


def tv(p, q):
    return 0.5 * np.abs(p - q).sum()


def marginals(chain):
    mu = np.empty((chain.T, chain.V))
    mu[0] = chain.init
    for n in range(1, chain.T):
        mu[n] = mu[n - 1] @ chain.trans[n - 1]
    return mu


def acceptance(p, q):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, np.minimum(1.0, q / p), 1.0)


def residual(p, q):
    pos = np.maximum(q - p, 0.0)
    mass = pos.sum()
    return pos / mass if mass > 0 else q


def speculative_step(p, q, rng):
    x = rng.choice(len(p), p=p)
    if rng.random() < sd.acceptance(p, q)[x]:
        return x, False
    return rng.choice(len(q), p=sd.residual(p, q)), True


def unbiased_law(p, q, b):
    return (q - b * p) / ((1 - b) * p).sum()


def tv_loss(p, q, b):
    return np.maximum(b * p - q, 0.0).sum()


def optimal_law(p, q, b):
    pos = np.maximum(q - b * p, 0.0)
    return pos / pos.sum() if pos.sum() > 0 else q


def over_accept(p, q, eps):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, np.minimum(1.0, (q + eps) / p), 1.0)


def batch_improvement(p, q, M):
    prod, qm = 1.0, q
    for _ in range(M):
        prod *= sd.tv(qm, p)
        qm = sd.residual(p, qm)
    return sd.tv(q, p) - prod


def expected_rejections_batch(draft, target, M):
    p, q = draft.laws(), target.laws()
    reach, laws = batch.residual_cascade(p, q, M)
    rho, g = reach[-1], reach[-1][..., None] * laws[-1]
    tvs, h = sd.tv(p, q), np.maximum(q - p, 0)
    mu = target.marginals()
    total, f = rho[0, 0], g[0, 0]
    for n in range(1, target.T):
        rest = mu[n - 1] - f
        total += rest @ tvs[n] + f @ rho[n]
        f = rest @ h[n] + f @ g[n]
    return total


def expected_survivors(k, m, p_x):
    return 1 + (k - m) * p_x


def round_lengths(alpha, K, runs, rng):
    if alpha == 1.0:
        return np.full(runs, K + 1)
    return np.minimum(rng.geometric(1 - alpha, runs), K + 1)


def tokens_per_call(alpha, K):
    return sum(alpha**i for i in range(K + 1))


def speedup(alpha, K, c):
    return lookahead.expected_tokens_per_call(alpha, K) / (K * c + 1)


def verify_round(p, q, drafts, u):
    K = len(drafts)
    b = sd.acceptance(p, q[:K])[np.arange(K), drafts]
    accepted = 0
    while accepted < K and u[accepted] < b[accepted]:
        accepted += 1
    if accepted < K:
        return accepted, sd.residual(p[accepted], q[accepted])
    return K, q[K]


# --- answers that hand the work to the package -------------------------------------------
#: check name -> (the student's function that delegates, as a tuple of variants)
DELEGATING = {
    "check_tv": (
        lambda p, q: sd.laws.tv(p, q),
        lambda p, q: bound_tv(p, q),
        lambda p, q: sd.tv(p, q),
        lambda p, q: sd.laws.rejected_mass(p, q).sum(),
    ),
    "check_marginals": (lambda chain: chain.marginals(), lambda chain: sd.MarkovChain.marginals(chain)),
    "check_acceptance": (
        lambda p, q: sd.laws.acceptance(p, q),
        lambda p, q: sd.acceptance(p, q),
        lambda p, q: sd.laws.over_accept(p, q, 0.0),
    ),
    "check_residual": (
        lambda p, q: sd.laws.residual(p, q),
        lambda p, q: sd.residual(p, q),
        lambda p, q: sd.laws.rejection_law(p, q, "opt"),
    ),
    "check_speculative_step": (
        lambda p, q, rng: (lambda r: (int(r.tokens[0, 0]), bool(r.rejected[0, 0])))(
            sd.decoding.speculative(*sd.chains.one_token(p, q), runs=1, rng=rng)
        ),
        lambda p, q, rng: (lambda r: (int(r.tokens[0, 0]), bool(r.rejected[0, 0])))(
            sd.reference.speculative(*sd.chains.one_token(p, q), runs=1, rng=rng)
        ),
    ),
    "check_unbiased_rejection_law": (
        lambda p, q, b: sd.optimality.unbiased_rejection_law(p, q, b),
        lambda p, q, b: tradeoff.optimal_rejection_law(p, q, b),
        lambda p, q, b: sd.laws.residual(b * p, q, check=False),
    ),
    "check_tv_loss": (lambda p, q, b: tradeoff.tv_loss(p, q, b), lambda p, q, b: tradeoff.pareto_point(p, q, b)[1]),
    "check_optimal_rejection_law": (lambda p, q, b: tradeoff.optimal_rejection_law(p, q, b),),
    "check_over_accept": (
        lambda p, q, eps: tradeoff.over_accept(p, q, eps),
        lambda p, q, eps: sd.laws.over_accept(p, q, eps),
    ),
    "check_batch_improvement": (
        lambda p, q, M: batch.batch_improvement(p, q, M),
        lambda p, q, M: sd.tv(q, p) - batch.residual_cascade(p, q, M)[0][-1],
    ),
    "check_expected_rejections_batch": (
        lambda d, t, M: batch.expected_rejections_batch(d, t, M),
        lambda d, t, M: sd.theory.expected_rejections_batch(d, t, M),
        lambda d, t, M: float(batch.rejections_by_M(d, t, [M])[0]),
    ),
    "check_tokens_per_call": (
        lambda a, K: lookahead.expected_tokens_per_call(a, K),
        lambda a, K: lookahead.iid_speedup(a, K, 0.0),
    ),
    "check_wallclock_speedup": (lambda a, K, c: lookahead.iid_speedup(a, K, c),),
}


def _checks():
    from specdec_lite.exercises import batch as ex_batch
    from specdec_lite.exercises import lookahead as ex_lookahead
    from specdec_lite.exercises import part1, part2, real_models

    return {
        "check_tv": (part1.check_tv, tv),
        "check_marginals": (part1.check_marginals, marginals),
        "check_acceptance": (part1.check_acceptance, acceptance),
        "check_residual": (part1.check_residual, residual),
        "check_speculative_step": (part1.check_speculative_step, speculative_step),
        "check_unbiased_rejection_law": (part2.check_unbiased_rejection_law, unbiased_law),
        "check_tv_loss": (part2.check_tv_loss, tv_loss),
        "check_optimal_rejection_law": (part2.check_optimal_rejection_law, optimal_law),
        "check_over_accept": (part2.check_over_accept, over_accept),
        "check_batch_improvement": (ex_batch.check_batch_improvement, batch_improvement),
        "check_expected_rejections_batch": (ex_batch.check_expected_rejections_batch, expected_rejections_batch),
        "check_tree_survivors": (ex_batch.check_tree_survivors, expected_survivors),
        "check_round_lengths": (ex_lookahead.check_round_lengths, round_lengths),
        "check_tokens_per_call": (ex_lookahead.check_tokens_per_call, tokens_per_call),
        "check_wallclock_speedup": (ex_lookahead.check_wallclock_speedup, speedup),
        "check_verify_round": (real_models.check_verify_round, verify_round),
    }


#: Every check that takes the student's function: name -> (check, model answer).
FUNCTION_CHECKS = _checks()
