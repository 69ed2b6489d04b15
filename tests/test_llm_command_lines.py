"""The commands meet a bad argument with one line naming it and exit status 2, before any expensive work; the
measurement planner costs a bounded number of predictions whatever is asked for."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_lite.llm import budget as b
from specdec_lite.lookahead import iid_expected_oracle_calls

ROOT = Path(__file__).resolve().parents[1]
MEASURE = ["-m", "specdec_lite.llm.measure_pair", "--no-progress"]
NOT_A_FOLDER = "/proc/version/results"  # under a file: no one, root included, can write there


def run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HOME": str(tmp_path / "hf_home"),
        "HF_HUB_OFFLINE": "1",
        "SPECDEC_LITE_CACHE": str(tmp_path / "cache"),
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, message",
    [
        (MEASURE + ["--device", "nope"], "error: --device: 'nope' is not a device torch knows"),
        (MEASURE + ["--dtype", "bad"], "error: --dtype: expected one of float32, float16, bfloat16, float64"),
        (MEASURE + ["--eps", "0,0"], "error: eps_values: expected at least one value, all distinct, got (0.0, 0.0)"),
        (MEASURE + ["--seed", str(2**70)], "error: argument --seed: must be an integer in [0, 2**63 - 1]"),
        (
            MEASURE + ["--draft", "no such model", "--target", "x/y"],
            "error: --draft: 'no such model' is neither a folder nor a hub name",
        ),
        (MEASURE + ["--out", NOT_A_FOLDER], "error: --out: cannot write in '/proc/version/results'"),
        (
            MEASURE + ["--draft", "owner/not-cached", "--target", "owner/nor-this"],
            "error: LocalEntryNotFoundError: ",
        ),  # HF_HUB_OFFLINE and an empty cache: the hub's own error, one line
        (["-m", "specdec_lite.bench", "--only", "nope"], "error: argument --only: invalid choice: 'nope'"),
        (["-m", "specdec_lite.bench", "--json", NOT_A_FOLDER + "/b.json"], "error: --json: cannot write in"),
        (
            ["-m", "specdec_lite.llm.offline", "--check", "--out", "missing"],
            "error: --out: 'missing' holds no trained ",
        ),
        (
            ["-m", "specdec_lite.llm.offline", "--retrain", "--out", NOT_A_FOLDER + "/pair"],
            "error: --out: cannot write in",
        ),
    ],
    ids=lambda v: " ".join(v[1:5]) if isinstance(v, list) else None,
)
def test_a_bad_argument_is_one_named_line_and_exit_2(tmp_path, args, message):
    proc = run(args, tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert message in last and last.startswith("python -m specdec_lite."), last
    assert not (tmp_path / "benchmarks").exists() and not (tmp_path / "cache").exists()  # nothing written, trained


# --- the planner -----------------------------------------------------------------------------------------------------


CAL = b.Calibration(target=0.01, draft=0.002, verify={1: 0.012, 8: 0.02}, alpha=0.8, seconds=2.0)


def tokens(T: int, **changes) -> b.MeasureSettings:
    return dataclasses.replace(b.MeasureSettings(), speed_tokens=T, theorem1_tokens=T, eps_tokens=T, **changes)


@pytest.mark.parametrize("hf", [(2, 4, 8), ()])
def test_planning_costs_a_bounded_number_of_predictions(monkeypatch, hf):
    """Each knob is set by bisection: a billion tokens or runs cost a few dozen predictions more than sixteen."""
    calls = []
    stage_seconds = b.stage_seconds

    def counted(*args, **kwargs):
        calls.append(1)
        return stage_seconds(*args, **kwargs)

    monkeypatch.setattr(b, "stage_seconds", counted)
    counts = []
    for T, runs in ((16, 20), (1600, 20), (10**9, 10**9)):
        calls.clear()
        plan = b.plan_measurement(tokens(T, hf_lookaheads=hf, theorem1_runs=runs), CAL, 20.0)
        assert plan.fits and plan.total_s <= 20.0
        counts.append(len(calls))
    assert counts[2] <= counts[0] + 4 * 31  # log2 of a billion per bisected knob (tokens and runs, down and up)


def test_an_empty_hugging_face_list_is_planned_when_the_budget_needs_cuts():
    plan = b.plan_measurement(tokens(200, hf_lookaheads=()), CAL, 5.0)
    assert plan.fits and plan.settings.hf_lookaheads == () and plan.cuts


def test_expected_calls_past_the_exact_table_follow_the_stationary_rate():
    for alpha, K in ((0.0, 3), (0.5, 1), (0.8, 4), (0.99, 8), (1.0, 3)):
        T = b.EXACT_TOKENS + 977
        rounds, drafts = b.expected_calls(alpha, K, T)
        exact = iid_expected_oracle_calls(alpha, K, T)
        # alpha = 1 is periodic (rounds of K + 1 tokens): off by a fraction of the last round; else 3e-8 at worst
        assert abs(rounds - exact) < 1 if alpha == 1.0 else rounds == pytest.approx(exact, rel=1e-6)
        assert rounds <= drafts <= K * rounds
    assert b.expected_calls(0.8, 4, 10**12)[0] == pytest.approx(10**12 * (1 - 0.8) / (1 - 0.8**5), rel=1e-9)


def test_a_seed_torch_cannot_take_is_refused():
    with pytest.raises(ValueError, match=r"seed: must be an integer in \[0, 9223372036854775807\]"):
        b.MeasureSettings(seed=2**70)


@pytest.mark.slow
def test_more_tokens_than_the_models_context_are_refused_before_measuring():
    pytest.importorskip("transformers")
    from specdec_lite.llm import load_pair
    from specdec_lite.llm.measure_pair import check_context, measure_pair

    pair = load_pair(hub=False, device="cpu", verbose=False)
    prompts = ["def f(x):"]
    check_context(pair, prompts, tokens(64))
    with pytest.raises(
        ValueError,
        match=r"tokens: 100000 new tokens after a prompt of \d+ tokens \(and K \+ 1 = 9 "
        r"positions of lookahead\) exceed the draft's context of 512 positions; "
        r"ask for at most \d+ \(--tokens\)",
    ):
        measure_pair(pair, tokens(100_000), budget_s=20.0, prompts=prompts, progress=False)
