"""An answer is read into plain numbers while the package is still switched off.

Each hostile student function below returns an object that computes the answer with the package only when
the check reads it (``__array__``, ``__float__``, ``__bool__``, ``__eq__``, a tensor subclass). Read inside the
lock, the package refuses and the student gets no credit; read after it, the student got full marks.
"""

from __future__ import annotations

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.exercises import bugs, part1, part2, real_models


def no_credit(fb) -> None:
    assert not fb.ok, f"a hostile answer got credit: {fb.message}"


class LazyArray:
    """Computes its values when read (``np.asarray``), with whatever is in reach at that time."""

    def __init__(self, compute):
        self.compute = compute

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.compute(), dtype=dtype)

    def __len__(self):
        return len(self.__array__())


def test_a_lazy_residual_is_read_inside_the_lock():
    def fixed_residual(p, q):
        def compute():
            mass = np.maximum(q - p, 0).sum()
            return sd.laws.residual(p, q) if mass > 1e-9 else q

        return LazyArray(compute)

    assert bugs.check_residual_guard(lambda p, q: LazyArray(lambda: _plain_residual(p, q))).ok  # lazy but own work
    fb = bugs.check_residual_guard(fixed_residual)
    no_credit(fb)
    assert "write it yourself" in fb.message


def _plain_residual(p, q):
    pos = np.maximum(q - p, 0)
    return pos / pos.sum() if pos.sum() > 1e-9 else q


def test_an_acceptance_that_claims_to_be_a_bool_is_read_inside_the_lock():
    class Verdict:
        """Passes ``isinstance(v, bool)`` and decides only when its truth is asked."""

        __class__ = property(lambda self: bool)

        def __init__(self, p, q, x, u):
            self.args = p, q, x, u

        def __bool__(self):
            p, q, x, u = self.args
            return bool(u < sd.laws.acceptance(p, q)[x])

    assert isinstance(Verdict(None, None, 0, 0.0), bool)
    fb = bugs.check_accept(Verdict)
    no_credit(fb)
    assert "write it yourself" in fb.message or "True (accept) or False (reject)" in fb.message, fb.message
    assert bugs.check_accept(lambda p, q, x, u: u < min(1.0, q[x] / p[x]))  # numpy's bool passes
    fb = bugs.check_accept(lambda p, q, x, u: int(u < min(1.0, q[x] / p[x])))
    assert not fb.ok and "True (accept) or False (reject), got the number 1" in fb.message, fb.message


def test_a_numpy_subclass_whose_float_calls_the_package_is_read_inside_the_lock():
    class Late(np.ndarray):
        def __float__(self):
            return float(sd.tv(self.p, self.q))

    def tv(p, q):
        out = np.zeros(()).view(Late)
        out.p, out.q = p, q
        return out

    fb = part1.check_tv(tv)
    no_credit(fb)
    assert "write it yourself" in fb.message


def test_a_lazy_law_for_lab4_and_lab5_is_read_inside_the_lock():
    fb = part2.check_optimal_rejection_law(
        lambda p, q, b: LazyArray(lambda: sd.tradeoff.optimal_rejection_law(p, q, b))
    )
    no_credit(fb)
    assert "write it yourself" in fb.message
    fb = part2.check_unbiased_rejection_law(
        lambda p, q, b: LazyArray(lambda: sd.optimality.unbiased_rejection_law(p, q, b))
    )
    no_credit(fb)
    assert "write it yourself" in fb.message


def test_lab8_counts_that_compare_equal_to_anything_are_read_inside_the_lock():
    class Count:
        """Equal to every number, and a number only through the package's own verify_round."""

        def __init__(self, args):
            self.args = args

        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

        def __float__(self):
            return float(real_models.verify_round(*self.args)[0])

        __index__ = __int__ = lambda self: int(self.__float__())

    def verify_round(p, q, drafts, u):
        return Count((p, q, drafts, u)), LazyArray(lambda: real_models.verify_round(p, q, drafts, u)[1])

    fb = real_models.check_verify_round(verify_round)
    no_credit(fb)
    assert "write it yourself" in fb.message


def test_lab9_tokens_in_a_tensor_subclass_are_read_inside_the_lock():
    torch = pytest.importorskip("torch")

    class Tokens(torch.Tensor):
        """Zeros until read, then the package's own decoding."""

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.decode(), dtype=dtype)

        def numpy(self, *a, **k):
            return self.__array__()

        def tolist(self):
            return self.__array__().tolist()

    def fixed_speculative_k(draft, target, K, rng):
        out = torch.zeros(target.T, dtype=torch.int64).as_subclass(Tokens)
        state = {}

        def decode():
            if "tokens" not in state:
                r = sd.lookahead.speculative_k(draft, target, K, 1, rng)
                state["tokens"], state["calls"] = r.tokens[0], float(r.oracle_calls[0])
            return state["tokens"]

        out.decode = decode
        return out, LazyCalls(lambda: (decode(), state["calls"])[1])

    for check in (bugs.check_bonus, bugs.check_mystery):
        fb = check(fixed_speculative_k, runs=200)
        no_credit(fb)
        assert "write it yourself" in fb.message, fb.message


class LazyCalls:
    def __init__(self, compute):
        self.compute = compute

    def __float__(self):
        return float(self.compute())
