"""Lab 9's section on the law the user asked for: the buggy verifier law, and the check of its fix."""

from __future__ import annotations

import numpy as np

from specdec_lite.chains import one_token
from specdec_lite.decoding import speculative
from specdec_lite.exercises import verifier_law as vl
from specdec_lite.laws import tv
from specdec_lite.sampling import sampling_law
from specdec_lite.stats import chi_square

from .conftest import ALPHA


def fixed_target_law(logits, temperature, top_k, top_p):
    z = np.asarray(logits, dtype=float) / temperature
    q = np.exp(z - z.max())
    q /= q.sum()
    order = np.argsort(q)
    drop = np.cumsum(q[order]) <= 1 - top_p  # top-p's cutoff from the law before top-k
    drop[-1] = False
    keep = np.ones(len(q), dtype=bool)
    keep[order[drop]] = False
    keep &= z >= np.sort(z)[-top_k]  # and top-k
    q = np.where(keep, q, 0.0)
    return q / q.sum()


def test_the_buggy_verifier_outputs_its_own_law_not_the_users():
    """Theorem 1 holds for the verifier's q, so a test against it passes; against the user's law it fails."""
    logits, T, k, p = vl.CASE
    buggy, user = vl.buggy_target_law(logits, T, k, p), vl.user_law(logits, T, k, p)
    assert tv(buggy, user) > 0.05
    draft = np.full(len(logits), 1 / len(logits))
    tokens = speculative(*one_token(draft, buggy), runs=20_000, rng=1).tokens[:, 0]
    counts = np.bincount(tokens, minlength=len(logits))
    assert chi_square(counts, buggy).pvalue > ALPHA
    assert chi_square(counts, user).pvalue < ALPHA


def test_check_target_law_accepts_the_fix_and_names_the_slip():
    assert vl.check_target_law(fixed_target_law).ok
    fb = vl.check_target_law(vl.buggy_target_law)
    assert not fb.ok and "36173" in fb.message
    fb = vl.check_target_law(lambda logits, T, k, p: sampling_law(logits, temperature=T, top_k=k))
    assert not fb.ok  # top-p dropped: another support
    fb = vl.check_target_law(
        lambda logits, T, k, p: sampling_law(logits, temperature=T, top_k=k, top_p=p, top_p_from="original")
    )
    assert not fb.ok and "specdec_lite" in fb.message  # the package's own answer refuses to run inside the check


def test_the_drawn_configurations_keep_away_from_top_ps_boundary():
    rng = np.random.default_rng(0)
    for logits, T, k, p in vl._drawn_cases(rng, n=200):
        assert 2 <= k < len(logits) and len(set(logits)) == len(logits) and not vl._near_boundary(logits, T, p)
        assert np.array_equal(fixed_target_law(logits, T, k, p) > 0, vl.user_law(logits, T, k, p) > 0)


def test_a_right_law_in_float32_passes_and_a_law_off_its_support_fails():
    """Nothing is sampled: a right law passes whatever the precision; one token too many fails, however light."""
    import torch

    def float32_law(logits, T, k, p):
        z = torch.tensor(logits, dtype=torch.float32) / T
        law = torch.softmax(z, -1)
        mass, order = torch.sort(law)
        drop = torch.cumsum(mass, 0) <= 1 - p
        drop[-1] = False
        keep = torch.ones_like(law, dtype=torch.bool)
        keep[order[drop]] = False
        keep &= z >= torch.sort(z).values[-k]
        law = torch.where(keep, law, 0.0)
        return (law / law.sum()).numpy()

    assert vl.check_target_law(float32_law).ok

    def one_more_token(logits, T, k, p):
        law = fixed_target_law(logits, T, k, p)
        law[np.argmin(np.where(law > 0, np.inf, np.asarray(logits)))] = 1e-12  # the least likely token, kept
        return law / law.sum()

    fb = vl.check_target_law(one_more_token)
    assert not fb.ok and "where normal sampling keeps tokens" in fb.message


def test_the_lab_shows_the_buggy_verifier_law_verbatim_and_links_the_report():
    import inspect
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "notebooks/source/lab09_bugs/lab09_bugs.md").read_text()
    assert inspect.getsource(vl.buggy_target_law) in text
    assert "https://github.com/sgl-project/sglang/pull/36173" in text
    assert "check_target_law(fixed_target_law).assert_correct()" in text


def test_a_law_without_the_temperature_fails_on_every_draw():
    """The lab's case has temperature 1, so only the drawn configurations (never at temperature 1) see it."""
    for _ in range(5):
        fb = vl.check_target_law(lambda logits, T, k, p: fixed_target_law(logits, 1.0, k, p))
        assert not fb.ok and "temperature" in fb.message
