"""The labs' checks judge right: right answers in any reasonable form pass, wrong ones fail, nothing raises."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import lookahead as la
from specdec_lite.exercises import Feedback, part1, part2, real_models
from specdec_lite.exercises import lookahead as ex_lookahead
from tests import check_answers as A

ROOT = Path(__file__).resolve().parents[1]
CHECKS = A.FUNCTION_CHECKS
FAST = {k: v for k, v in CHECKS.items() if k != "check_speculative_step"}  # the step check runs 10,000 calls


def ok(fb: Feedback) -> None:
    assert isinstance(fb, Feedback) and fb.ok, fb


def not_ok(fb: Feedback, *fragments: str) -> None:
    assert isinstance(fb, Feedback) and not fb.ok, fb
    for f in fragments:
        assert f in fb.message, fb.message


# --- right answers, in every reasonable form ------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_model_answer_passes(name):
    check, answer = CHECKS[name]
    ok(check(answer))


def as_float32(fn):
    def f32(*args):
        out = fn(*args)
        return np.float32(out) if np.ndim(out) == 0 else np.asarray(out, dtype=np.float32)

    return f32


def as_list(fn):
    return lambda *args: np.asarray(fn(*args)).tolist()


@pytest.mark.parametrize(
    "name",
    [
        "check_tv",
        "check_marginals",
        "check_acceptance",
        "check_residual",
        "check_unbiased_rejection_law",
        "check_tv_loss",
        "check_optimal_rejection_law",
        "check_over_accept",
        "check_batch_improvement",
        "check_expected_rejections_batch",
        "check_tree_survivors",
        "check_tokens_per_call",
        "check_wallclock_speedup",
    ],
)
def test_float32_and_list_answers_pass(name):
    check, answer = CHECKS[name]
    ok(check(as_float32(answer)))
    ok(check(as_list(answer)))


def test_rounding_level_negative_entries_pass():
    def nudged(fn):
        def f(*args):
            out = np.array(fn(*args), dtype=float)
            out[np.argmin(out)] -= 1e-17
            out[np.argmax(out)] += 1e-17
            return out

        return f

    ok(part1.check_residual(nudged(A.residual)))
    ok(part2.check_unbiased_rejection_law(nudged(A.unbiased_law)))
    ok(part2.check_optimal_rejection_law(nudged(A.optimal_law)))


def test_corollary_1_laws_computed_in_floating_point_are_unbiased_members():
    """Random instances: b below min(1, q/p), P = (q - b p) / sum (1 - b) p as a student computes it."""
    rng = np.random.default_rng(0)
    negative = 0
    for _ in range(300):
        V = int(rng.integers(2, 7))
        p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
        b = sd.acceptance(p, q) * rng.uniform(0.2, 1.0, V)
        b[rng.integers(V)] = sd.acceptance(p, q)[0] if rng.random() < 0.5 else b[0]
        b = np.minimum(b, sd.acceptance(p, q))
        P = (q - b * p) / ((1 - b) * p).sum()
        negative += bool(np.any(P < 0))
        ok(part2.check_unbiased_member(p, q, b, P))
        ok(part2.check_unbiased_member(p, q, b.tolist(), P.astype(np.float32)))
    assert negative > 0  # the instances include laws with rounding-level negative entries


def test_a_step_that_uses_its_randomness_differently_passes():
    def inverse_cdf(p, q, rng):
        u = rng.random()
        x = int(np.searchsorted(np.cumsum(p), u, side="right"))
        x = min(x, len(p) - 1)
        if rng.random() * p[x] < min(p[x], q[x]):
            return np.int64(x), np.bool_(False)
        r = np.maximum(q - p, 0)
        return int(np.searchsorted(np.cumsum(r / r.sum()), rng.random(), side="right")), 1

    ok(part1.check_speculative_step(inverse_cdf, runs=5000))


# --- the mistakes the instructor found --------------------------------------------------------


def test_a_step_with_an_independent_rejection_flag_fails():
    def independent(p, q, rng):
        return int(rng.choice(len(q), p=q)), bool(rng.random() < 0.5 * np.abs(p - q).sum())

    not_ok(part1.check_speculative_step(independent), "drawn apart")


@pytest.mark.slow
def test_the_step_test_level_comes_from_its_own_distribution():
    """At the model answer, the chi-square p-values over seeds are roughly uniform: few fall below 0.05."""
    from specdec_lite.stats import chi_square

    p, q = part1.STEP_PAIR
    joint = np.concatenate([np.minimum(p, q), np.maximum(q - p, 0)])
    low = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        tokens = [A.speculative_step(p, q, rng) for _ in range(2000)]
        cells = np.bincount([t + len(p) * r for t, r in tokens], minlength=2 * len(p))
        low += chi_square(cells, joint).pvalue < 0.05
    assert low <= 8  # Binomial(40, 0.05): mean 2, 8 is beyond 4 standard errors


def test_best_lookahead_is_exact_at_the_extremes():
    alpha, c = 0.999999, 1e-9
    best = la.best_lookahead_iid(alpha, c)
    assert best > 10_000
    ok(ex_lookahead.check_best_lookahead(best, alpha, c))
    not_ok(ex_lookahead.check_best_lookahead(10_000, alpha, c), "larger")
    top = la.iid_speedup(alpha, best, c)
    for K in (best - 1000, best - 1, best + 1, best + 1000):  # no neighbour does better
        assert la.iid_speedup(alpha, K, c) <= top * (1 + 1e-12)
    for K in (0, 5, 10_000, 10**9):
        not_ok(ex_lookahead.check_best_lookahead(K, 1.0, 0.05), "no K is best")
        not_ok(ex_lookahead.check_best_lookahead(K, 0.7, 0.0), "no K is best")
    ok(ex_lookahead.check_best_lookahead(0, 0.3, 0.4))
    ok(ex_lookahead.check_best_lookahead(7, 1.0, 1.0))  # every K gives 1x: all tie
    not_ok(ex_lookahead.check_best_lookahead(3, 0.8, 0.05), "larger")
    not_ok(ex_lookahead.check_best_lookahead(None, 0.8, 0.05), "not attempted yet")
    not_ok(ex_lookahead.check_best_lookahead("7", 0.8, 0.05), "whole number")
    ok(ex_lookahead.check_best_lookahead(float(la.best_lookahead_iid(0.8, 0.05)), 0.8, 0.05))


def test_a_mistake_costs_only_its_own_exercise():
    draft, target = part1.two_state_pair()
    exact = sd.theory.expected_rejections(draft, target)
    wrong_answer = exact + 0.2
    not_ok(part1.check_expected_rejections_two_state(wrong_answer))
    ok(part1.check_speedup(target.T / wrong_answer, rejections=wrong_answer))
    ok(part1.check_speedup(target.T / exact, rejections=wrong_answer))
    not_ok(part1.check_speedup(wrong_answer / target.T, rejections=wrong_answer), "inverse")
    not_ok(part1.check_speedup(target.T / wrong_answer))  # without the student's E[N_rej] it is just wrong
    masters = ROOT / "notebooks" / "source"
    lab2 = (masters / "lab02_unbiased" / "lab02_unbiased.md").read_text()
    assert "sd.acceptance(p, q)[x]" in lab2 and "p=sd.residual(p, q)" in lab2
    lab3 = (masters / "lab03_rejections" / "lab03_rejections.md").read_text()
    assert "check_speedup(speedup, rejections=answer).assert_correct()" in lab3
    lab4 = (masters / "lab04_optimality" / "lab04_optimality.md").read_text()
    assert "P = optimality.unbiased_rejection_law(p, q, b)" in lab4
    lab6 = (masters / "lab06_batch" / "lab06_batch.md").read_text()
    assert "theory.expected_rejections_batch" not in lab6
    lab7 = (masters / "lab07_lookahead" / "lab07_lookahead.md").read_text()
    assert "return la.expected_tokens_per_call(alpha, K) / (K * c + 1)" in lab7 and "la.iid_speedup(0.8, K" in lab7


def test_verify_round_uses_uniforms_a_draw_can_give():
    for _, _, _, _, u in real_models._cases():
        assert np.all((0 <= u) & (u < 1))


def test_acceptance_names_p_zero_only_when_it_matters():
    def boom(p, q):
        raise ValueError("boom")

    fb = part1.check_acceptance(boom)
    not_ok(fb, "ValueError: boom")
    assert "never proposed" not in fb.message

    def divide(p, q):
        if np.any(p == 0):
            raise ZeroDivisionError("division by zero")
        return A.acceptance(p, q)

    not_ok(part1.check_acceptance(divide), "never proposed")


# --- anything a student can produce gets feedback ---------------------------------------------


class BadFloat:
    def __float__(self):
        raise RuntimeError("no float for you")


class BadMessage(Exception):
    def __str__(self):
        raise RuntimeError("unprintable")


def _gen():
    yield 1.0


def _raise(e):
    def f(*args):
        raise e

    return f


def _recurse(*args):
    return _recurse(*args)


def _printer(*args):
    print("x" * 100_000)
    return "not a number"


def _mutator(*args):
    for a in args:
        if isinstance(a, np.ndarray):
            a[...] = np.nan
    return None


NASTY = {
    "ragged list": lambda *a: [[1, 2], [3]],
    "string": lambda *a: "0.3",
    "dict": lambda *a: {"tv": 0.3},
    "NaN": lambda *a: float("nan"),
    "inf array": lambda *a: np.full(3, np.inf),
    "complex": lambda *a: 0.3 + 1j,
    "complex array": lambda *a: np.ones(3) * 1j,
    "huge array": lambda *a: np.zeros(2_000_000),
    "generator": lambda *a: _gen(),
    "bad __float__": lambda *a: BadFloat(),
    "object array": lambda *a: np.array([BadFloat()] * 3, dtype=object),
    "bool": lambda *a: True,
    "Ellipsis": lambda *a: ...,
    "unprintable exception": _raise(BadMessage()),
    "SystemExit": _raise(SystemExit(3)),
    "KeyError": _raise(KeyError("k")),
    "recursion": _recurse,
    "prints a lot": _printer,
    "mutates its inputs": _mutator,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
@pytest.mark.parametrize("kind", sorted(NASTY))
def test_every_check_gives_feedback_on_any_answer(name, kind, capsys):
    check, _ = CHECKS[name]
    fb = check(NASTY[kind])
    assert isinstance(fb, Feedback) and not fb.ok and fb.message, (kind, fb)
    assert "the check could not judge" not in fb.message, fb.message
    assert len(capsys.readouterr().out) < 1000  # the student's prints are kept out of the notebook


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_a_stub_is_not_attempted_yet(name):
    check, _ = CHECKS[name]

    def stub(*args):
        raise NotImplementedError()

    for answer in (stub, None, ..., lambda *a: None):
        fb = check(answer)
        assert not fb.ok and "not attempted yet" in fb.message, fb.message
        assert "NotImplementedError: ." not in fb.message


@pytest.mark.parametrize("value", [None, ..., "0.8", [1, 2], {}, float("nan"), 1j, BadFloat(), _gen(), np.ones(3)])
def test_value_answers_get_feedback(value):
    draft, target = part1.two_state_pair()
    for fb in (
        part1.check_expected_rejections_two_state(value),
        part1.check_speedup(value),
        part1.check_speedup(1.0, rejections=value),
        ex_lookahead.check_best_lookahead(value, 0.8, 0.05),
        part2.check_unbiased_member(np.array([0.4, 0.6]), np.array([0.6, 0.4]), value, value),
    ):
        assert isinstance(fb, Feedback) and not fb.ok and fb.message, fb
    if value is None or value is ...:
        assert "not attempted yet" in part1.check_expected_rejections_two_state(value).message


def test_inputs_the_student_mutates_do_not_change_the_reference():
    def tv_then_mutate(p, q):
        out = 0.5 * np.abs(p - q).sum()
        p[:] = 0.0
        q[:] = 0.0
        return out

    ok(part1.check_tv(tv_then_mutate))
    ok(part1.check_tv(A.tv))

    def marginals_then_mutate(chain):
        out = A.marginals(chain)
        chain.trans[...] = 0.0
        return out

    ok(part1.check_marginals(marginals_then_mutate))


def test_a_correct_answer_that_prints_still_passes_quietly(capsys):
    def chatty(p, q):
        print("computing", p, q)
        return 0.5 * np.abs(p - q).sum()

    ok(part1.check_tv(chatty))
    assert "computing" not in capsys.readouterr().out
