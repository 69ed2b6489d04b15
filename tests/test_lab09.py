"""Lab 9: each shipped bug is caught by its tool, each fix passes it, and each check judges fixes and bugs.

* The detection tools of the lab, run on each buggy implementation and on the master's
  fix, at fixed seeds: the chi-square test against the exact law (false alarm ``ALPHA``),
  Theorem 1's exact count of target calls (``Z`` standard errors), the greedy-equality
  test on the shipped pair.
* Every ``check_`` of ``specdec_lite.exercises.bugs``: correct on the master's fix, a
  specific message on the unfixed bug and on the typical wrong fixes, "not attempted
  yet" on the stub, and feedback (never an exception) on garbage.
* The lab shows the buggy implementations verbatim. (The master runs under nbval as every
  lab's does, collected from ``notebooks/source``; ``tests/test_classroom.py`` checks that every
  student copy, this one included, is what nbgrader releases.)
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import torch

from specdec_lite import theory
from specdec_lite.exercises import Feedback, bugs
from specdec_lite.laws import residual, tv
from specdec_lite.stats import chi_square, mean_and_se
from tests.conftest import ALPHA, Z

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab09_bugs"
MASTER_MD = ROOT / "notebooks" / "source" / LAB / f"{LAB}.md"
MASTER = MASTER_MD.with_suffix(".ipynb")


def _solutions() -> dict:
    """The master's imports cell and every code solution cell, executed: the model fixes by name."""
    nb = jupytext.read(MASTER_MD)
    code = [c for c in nb.cells if c.cell_type == "code"]
    imports = next(c for c in code if "from specdec_lite.exercises import bugs" in c.source)
    ns: dict = {}
    exec(imports.source, ns)  # noqa: S102 - the lab's own cells
    for c in code:
        if c.metadata.get("nbgrader", {}).get("solution"):
            exec(c.source, ns)  # noqa: S102
    return ns


FIX = _solutions()
torch.set_num_threads(1)


def stub(*args):
    raise NotImplementedError()


GARBAGE = [None, 3, "x", lambda *a: None, lambda *a: "x", lambda *a: (1, 2, 3), lambda *a: np.full(7, np.nan)]


@pytest.fixture(scope="module")
def pair():
    from specdec_lite.llm import load_pair

    return load_pair(hub=False, progress=False)


@pytest.fixture(scope="module")
def greedy(pair):
    from specdec_lite.llm import autoregressive_generate

    prompt = pair.encode("def __init__(self, ")
    return prompt, autoregressive_generate(pair.target, prompt, 32, temperature=0).tokens.tolist()


# --- the tools catch each bug, and pass each fix ------------------------------------------------


def test_residual_bug_fails_on_p_equal_q_and_the_fix_is_unbiased():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    tokens, _ = bugs.buggy_step_all_at_once(p, q, 20_000, np.random.default_rng(0))
    assert chi_square(np.bincount(tokens, minlength=3), q).pvalue >= ALPHA, "a generic pair does not show the bug"
    same = np.array([0.7, 0.2, 0.1])
    with np.errstate(invalid="ignore"):
        assert np.isnan(bugs.buggy_residual(same, same)).all()
        with pytest.raises(ValueError, match="NaN"):
            bugs.buggy_step_all_at_once(same, same, 20_000, np.random.default_rng(0))
    tokens, rejected = bugs.buggy_step_all_at_once(same, same, 20_000, np.random.default_rng(0), FIX["fixed_residual"])
    assert not rejected.any(), "Theorem 1: p = q never rejects"
    assert chi_square(np.bincount(tokens, minlength=3), same).pvalue >= ALPHA


def _step_counts(step, args, V, runs=4000, seed=1):
    rng = np.random.default_rng(seed)
    out = [step(*args, rng) for _ in range(runs)]
    return np.bincount([x for x, _ in out], minlength=V), np.array([r for _, r in out])


@pytest.mark.slow
def test_argmax_draft_is_biased_and_the_fix_is_not():
    counts, _ = _step_counts(bugs.buggy_step_argmax, (bugs.P, bugs.Q), 5)
    assert chi_square(counts, bugs.Q).pvalue < ALPHA
    counts, rejected = _step_counts(FIX["fixed_step"], (bugs.P, bugs.Q), 5)
    assert chi_square(counts, bugs.Q).pvalue >= ALPHA
    t = float(tv(bugs.P, bugs.Q))
    assert abs(rejected.mean() - t) <= Z * np.sqrt(t * (1 - t) / len(rejected))


@pytest.mark.slow
def test_one_sided_temperature_follows_the_untempered_target():
    d, t = bugs.LOGITS
    T = 0.5
    counts, _ = _step_counts(bugs.buggy_step_temperature, (d, t, T), 5)
    assert chi_square(counts, bugs.softmax(t / T)).pvalue < ALPHA
    assert chi_square(counts, bugs.softmax(t)).pvalue >= ALPHA, "unbiased for the untempered target"
    counts, _ = _step_counts(FIX["fixed_temperature_step"], (d, t, T), 5)
    assert chi_square(counts, bugs.softmax(t / T)).pvalue >= ALPHA


def test_u_le_b_accepts_an_impossible_token_on_the_grid():
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.5, 0.3, 0.2, 0.0])
    law = np.minimum(p, q) / np.minimum(p, q).sum()
    counts, err = bugs.grid_acceptance(bugs.buggy_accept, p, q)
    assert err is None and counts[3] > 0 and chi_square(counts, law).pvalue == 0
    counts, err = bugs.grid_acceptance(FIX["fixed_accept"], p, q)
    assert err is None and counts[3] == 0 and chi_square(counts, law).pvalue >= ALPHA
    rng = np.random.default_rng(0)  # Monte Carlo cannot see it: u = 0 has probability 2**-53
    assert not any(bugs.buggy_accept(p, q, 3, rng.random()) for _ in range(100_000))


def _dropped_bonus_source() -> str:
    """The master's decoder, renamed ``dropped``, with its bonus branch removed."""
    (cell,) = [c.source for c in jupytext.read(MASTER_MD).cells if "def fixed_speculative_k" in c.source]
    src = cell.replace("fixed_speculative_k", "dropped")
    src = re.sub(r"\n        else:\n            n = len\(tokens\)\n.*?\n(?=    return)", "\n", src, flags=re.S)
    assert "target.conditional(n, prev)))" not in src and "return np.array(tokens), calls" in src
    return src


_NS = dict(FIX)
exec(_dropped_bonus_source(), _NS)  # noqa: S102 - the master's own fix, minus its bonus token
_dropped_bonus = _NS["dropped"]


@pytest.mark.slow
def test_bonus_from_the_draft_is_biased_and_a_dropped_bonus_costs_calls():
    draft, target, K = bugs.bonus_pair()
    law = theory.sequence_law(target)
    exact = theory.expected_oracle_calls_k(draft, target, K)
    (counts, _), _ = bugs.decode_runs(bugs.buggy_speculative_k, draft, target, K, 4000)
    assert chi_square(counts, law).pvalue < ALPHA
    (counts, calls), _ = bugs.decode_runs(_dropped_bonus, draft, target, K, 4000)
    mean, se = mean_and_se(calls)
    assert chi_square(counts, law).pvalue >= ALPHA and mean - exact > Z * se
    (counts, calls), _ = bugs.decode_runs(FIX["fixed_speculative_k"], draft, target, K, 4000)
    mean, se = mean_and_se(calls)
    assert chi_square(counts, law).pvalue >= ALPHA and abs(mean - exact) <= Z * se


@pytest.mark.slow
def test_the_unnamed_slip_accepts_every_draft_and_both_tools_see_it():
    draft, target, K = bugs.bonus_pair()
    law = theory.sequence_law(target)
    exact = theory.expected_oracle_calls_k(draft, target, K)
    (counts, calls), _ = bugs.decode_runs(bugs.mystery_speculative_k, draft, target, K, 4000)
    assert (calls == 2).all(), "every draft accepted: rounds of K + 1 tokens, 2 calls for T = 4"
    mean, se = mean_and_se(calls)
    assert exact > 2.05 and chi_square(counts, law).pvalue < ALPHA
    (counts, calls), _ = bugs.decode_runs(FIX["fixed_mystery_k"], draft, target, K, 4000)
    mean, se = mean_and_se(calls)
    assert chi_square(counts, law).pvalue >= ALPHA and abs(mean - exact) <= Z * se


def test_the_lab_shows_the_unnamed_slip_verbatim_and_never_names_it():
    text = MASTER_MD.read_text()
    section = text.split("## 11.", 1)[1].split("### BEGIN SOLUTION", 1)[0]
    assert inspect.getsource(bugs.mystery_speculative_k) in section
    for word in ["accept every", "accepts every", "#28508", "maximum", "n_matches bug"]:
        assert word not in section.replace("np.maximum", ""), word


@pytest.mark.slow
def test_a_reset_or_kept_cache_breaks_greedy_equality(pair, greedy):
    prompt, want = greedy
    for rollback in (bugs.buggy_rollback, lambda cache, keep: None):
        got, _, _ = bugs.greedy_speculative(pair.draft, pair.target, prompt, 32, 4, rollback)
        assert got != want
    got, accepted, drafted = bugs.greedy_speculative(pair.draft, pair.target, prompt, 32, 4, FIX["fixed_rollback"])
    assert got == want and 0 < accepted <= drafted


@pytest.mark.slow
def test_bfloat16_sampling_is_biased_at_a_low_temperature(pair):
    ids = torch.as_tensor(pair.encode("def __init__(self, "))[None]
    with torch.inference_mode():
        d = pair.draft(input_ids=ids).logits[0, -1].bfloat16()
        t = pair.target(input_ids=ids).logits[0, -1].bfloat16()
    counts, q = bugs.one_position_counts(bugs.buggy_sampling_law, d, t, 0.3, 1_000_000)
    assert chi_square(counts, q).pvalue < ALPHA
    counts, q = bugs.one_position_counts(FIX["fixed_sampling_law"], d, t, 0.3, 1_000_000, seed=1)
    assert chi_square(counts, q).pvalue >= ALPHA


def _race_draft_without_law(logits, rng):
    p = bugs.softmax(logits)
    return int(np.argmax(p / rng.exponential(size=len(p)))), None


def test_the_overwritten_draft_law_is_biased_and_the_missing_one_rejects_too_often():
    """Bug 8: the race's scores in the ratio fail the chi-square test; no law at all passes it but not Theorem 1."""
    logits, q = bugs.RACE
    p = bugs.softmax(logits)
    t, runs = float(tv(p, q)), 4000
    (counts, rejected, drafted, _), err = bugs.verified_runs(bugs.buggy_draft, logits, q, runs)
    assert err is None and chi_square(counts, q).pvalue < ALPHA
    assert chi_square(np.bincount(drafted, minlength=len(p)), p).pvalue >= ALPHA, "the race itself draws from p"
    (counts, rejected, _, _), _ = bugs.verified_runs(_race_draft_without_law, logits, q, runs)
    assert chi_square(counts, q).pvalue >= ALPHA, "the one-hot fallback is unbiased"
    one_hot = 1 - float(p @ q)
    assert abs(rejected.mean() - one_hot) <= Z * np.sqrt(one_hot * (1 - one_hot) / runs)
    assert one_hot - t > 2 * Z * np.sqrt(t * (1 - t) / runs), "Theorem 1's rate TV(p, q) is far below"
    (counts, rejected, _, _), _ = bugs.verified_runs(FIX["fixed_draft"], logits, q, runs)
    assert chi_square(counts, q).pvalue >= ALPHA and abs(rejected.mean() - t) <= Z * np.sqrt(t * (1 - t) / runs)


def test_verify_drafted_is_exact_for_the_law_handed_over():
    """The verifier's output law, summed over its uniform numbers exactly: q for p, and q for the one-hot law too."""
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    grid = (np.arange(400) + 0.5) / 400
    for law in (p, None):
        out = np.zeros(3)
        for x in range(3):
            for u in grid:
                token, rejected = bugs.verify_drafted(x, law, q, u, 0.5)
                if not rejected:
                    out[token] += p[x] / len(grid)
                else:  # the residual's law, weighted by this rejection's probability
                    fallback = residual(np.eye(3)[x] if law is None else law, q, check=False)
                    out += p[x] / len(grid) * fallback
        assert np.allclose(out, q, atol=1e-2), (law, out)
    fallback = residual(p, q)
    drawn = [bugs.verify_drafted(0, p, q, 0.999, v)[0] for v in grid]  # token 0 rejected: the inverse of the residual
    assert np.allclose(np.bincount(drawn, minlength=3) / len(grid), fallback, atol=1e-2)


# --- the checks ---------------------------------------------------------------------------------

#: check, the master's fix, the unfixed bug, words the bug's message must contain, typical wrong fixes.
CASES = {
    "residual": (
        bugs.check_residual_guard,
        "fixed_residual",
        bugs.buggy_residual,
        "#5",
        [
            (lambda p, q: np.nan_to_num(bugs.buggy_residual(p, q)), "all zeros"),
            (lambda p, q: np.maximum(q - p, 0), "not a law"),
        ],
    ),
    "argmax": (bugs.check_draft_sampling, "fixed_step", bugs.buggy_step_argmax, "argmax", []),
    "temperature": (bugs.check_temperature, "fixed_temperature_step", bugs.buggy_step_temperature, "#9", []),
    "accept": (
        bugs.check_accept,
        "fixed_accept",
        bugs.buggy_accept,
        "#35771",
        [
            (lambda p, q, x, u: u < min(1.0, p[x] / q[x]) if q[x] > 0 else False, "must be"),
        ],
    ),
    "bonus": (
        bugs.check_bonus,
        "fixed_speculative_k",
        bugs.buggy_speculative_k,
        "bonus",
        [
            (_dropped_bonus, "#509"),
        ],
    ),
    "mystery": (
        bugs.check_mystery,
        "fixed_mystery_k",
        bugs.mystery_speculative_k,
        "drafts pass that should fail",
        [
            (_dropped_bonus, "differ from the exact"),
            (bugs.buggy_speculative_k, "do not follow the target"),
        ],
    ),
    "draft_probs": (
        bugs.check_draft_probs,
        "fixed_draft",
        bugs.buggy_draft,
        "#16952",
        [
            (_race_draft_without_law, "#40149"),
            (lambda z, rng: (int(np.argmax(bugs.softmax(z))), bugs.softmax(z)), "argmax of p"),
            (lambda z, rng: (int(rng.choice(len(z), p=bugs.softmax(z))), bugs.softmax(z) / 2), "not the law p"),
        ],
    ),
    "sampling_law": (
        bugs.check_sampling_law,
        "fixed_sampling_law",
        bugs.buggy_sampling_law,
        "#31",
        [
            (lambda z, T: torch.softmax((z / T).float(), dim=-1), "division by the temperature"),
            (lambda z, T: torch.softmax(z / T, dim=-1).float(), "bfloat16"),
        ],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_check_on_fix_bug_wrong_fixes_stub_and_garbage(name):
    check, fix, bug, words, wrong_fixes = CASES[name]
    fb = check(FIX[fix])
    assert isinstance(fb, Feedback) and fb.ok, fb
    fb = check(bug)
    assert not fb.ok and words in fb.message, fb
    for fn, message in wrong_fixes:
        fb = check(fn)
        assert not fb.ok and message in fb.message, fb
    fb = check(stub)
    assert not fb.ok and "not attempted yet" in fb.message and "NotImplementedError" in fb.message, fb
    for junk in GARBAGE:
        fb = check(junk)
        assert isinstance(fb, Feedback) and not fb.ok, (junk, fb)


@pytest.mark.slow
def test_check_draft_probs_passes_the_fix_on_ten_draws_and_fails_a_tabulated_answer():
    """The drawn pairs: the fix passes whatever is drawn; right on the lab's logits only is wrong, and says the draw."""
    for _ in range(10):
        fb = bugs.check_draft_probs(FIX["fixed_draft"])
        assert fb.ok, fb
    public = bugs.RACE[0].tobytes()

    def tabulated(logits, rng):
        if logits.tobytes() == public:
            return FIX["fixed_draft"](logits, rng)
        return bugs.buggy_draft(logits, rng)

    fb = bugs.check_draft_probs(tabulated)
    assert not fb.ok and "On logits drawn for this check, log p (p = [" in fb.message and "#16952" in fb.message, fb


@pytest.mark.slow
def test_argmax_with_its_own_one_hot_law_is_accepted_as_unbiased():
    def one_hot(p, q, rng):
        x = int(np.argmax(p))
        if rng.random() < min(1.0, q[x]):
            return x, False
        return int(rng.choice(len(q), p=residual(np.eye(len(p))[x], q))), True

    fb = bugs.check_draft_sampling(one_hot)
    assert fb.ok and "one-hot" in fb.message, fb


def test_check_temperature_names_the_untempered_target():
    assert "temperature 1" in bugs.check_temperature(bugs.buggy_step_temperature).message


@pytest.mark.slow
def test_check_rollback(pair):
    fb = bugs.check_rollback(FIX["fixed_rollback"], pair)
    assert fb.ok, fb
    for fn, words in [
        (bugs.buggy_rollback, "#2014"),
        (lambda cache, keep: None, "mlx-lm #1109"),
        (lambda cache, keep: cache.crop(-keep), "crop(-m)"),
        (stub, "not attempted yet"),
    ]:
        fb = bugs.check_rollback(fn, pair)
        assert not fb.ok and words in fb.message, fb
    for junk in GARBAGE:
        fb = bugs.check_rollback(junk, pair)
        assert isinstance(fb, Feedback) and not fb.ok, (junk, fb)


# --- the notebook ---------------------------------------------------------------------------------


def test_the_lab_shows_each_buggy_implementation_verbatim():
    text = MASTER_MD.read_text()
    shown = [n for n in dir(bugs) if n.startswith("buggy_")]
    assert len(shown) >= 6
    for name in shown:
        assert inspect.getsource(getattr(bugs, name)) in text, f"{name}: the lab's cell and the package's differ"


def test_every_report_is_linked():
    text = MASTER_MD.read_text()
    for ref in [
        "jaymody/speculative-sampling/issues/5",
        "vllm-project/vllm/pull/2336",
        "jaymody/speculative-sampling/issues/3",
        "huggingface/transformers/issues/32867",
        "huggingface/transformers/issues/47932",
        "vllm-project/vllm/pull/10198",
        "vllm-project/vllm/issues/9834",
        "sgl-project/sglang/issues/35771",
        "ohdearquant/lattice/pull/509",
        "paiml/aprender/pull/2014",
        "ml-explore/mlx-lm/pull/1109",
        "deepseek-ai/DeepSpec/issues/31",
        "vllm-project/vllm/pull/16952",
        "vllm-project/vllm/issues/40149",
        "vllm-project/vllm/pull/40269",
    ]:
        assert f"https://github.com/{ref}" in text, ref


def test_a_fix_that_calls_the_package_answer_is_refused():
    """Bugs 5 and 7: the package's speculative_k and probs_from_logits are switched off while their checks run."""
    from specdec_lite import lookahead
    from specdec_lite.llm.verify import probs_from_logits

    def delegate_k(draft, target, K, rng):
        res = lookahead.speculative_k(draft, target, K, 1, rng)
        return res.tokens[0], res.oracle_calls[0]

    for check, fn in (
        (bugs.check_bonus, delegate_k),
        (bugs.check_sampling_law, lambda z, T: probs_from_logits(z.float(), T)),
    ):
        fb = check(fn)
        assert not fb.ok and "switched off" in fb.message, fb
