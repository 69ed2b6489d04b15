"""Answers read in the form the question asks, inside the lock, with messages that say the form and precision."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_lite import theory
from specdec_lite.exercises import bugs
from specdec_lite.exercises.feedback import run
from specdec_lite.exercises.part1 import (
    HAND_ATOL,
    check_expected_rejections_two_state,
    check_speedup,
    two_state_pair,
)


def test_token_ids_given_as_whole_floats_pass_and_others_name_integers():
    convert = bugs._tokens_and_calls(3, 3)
    tokens, calls = run(lambda: (np.array([0.0, 2.0, 1.0]), 4), convert=convert)[0]
    assert tokens.dtype == np.int64 and tokens.tolist() == [0, 2, 1] and calls == 4.0
    _, err = run(lambda: (np.array([0.5, 2.0, 1.0]), 4), convert=convert)
    assert "integer token ids" in err
    _, err = run(lambda: ([0, 3, 1], 4), convert=convert)
    assert "integer token ids in 0..2" in err and "outside" in err


def test_a_tensor_subclass_is_read_inside_the_lock():
    torch = pytest.importorskip("torch")
    reads = []

    class Sneaky(torch.Tensor):
        def numpy(self, *a, **k):
            from specdec_lite import _lock

            reads.append(_lock.held)
            return super().numpy(*a, **k)

    def sampling_law(logits, T):
        return torch.softmax(logits.float() / T, dim=-1).as_subclass(Sneaky)

    fb = bugs.check_sampling_law(sampling_law)
    assert fb.ok, fb.message
    assert reads and all("llm.verify.probs_from_logits" in held for held in reads), reads


def test_a_number_rounded_to_two_decimals_is_told_the_precision():
    draft, target = two_state_pair()
    exact = float(theory.rejection_profile(draft, target).sum())
    assert check_expected_rejections_two_state(exact + HAND_ATOL / 2).ok
    rounded = exact + 0.004 if abs(round(exact, 2) - exact) < 0.004 else round(exact, 2)
    fb = check_expected_rejections_two_state(rounded)
    assert not fb.ok and "two decimals" in fb.message and "three decimals" in fb.message
    far = check_expected_rejections_two_state(exact + 0.3)
    assert not far.ok and "three decimals" in far.message
    calls = theory.expected_oracle_calls(draft, target)
    fb = check_speedup(target.T / calls + 0.004)
    assert not fb.ok and "three decimals" in fb.message
