"""The measurement planner: predicted seconds from call costs, and cuts in order until a budget fits (no models)."""

import dataclasses
import math

import pytest

from specdec_lite.llm import budget as b
from specdec_lite.lookahead import iid_expected_oracle_calls

FULL = b.MeasureSettings()


def unit_costs(**changes):
    """Every call costs 1 s, drafting is free and nothing is accepted: a run of T tokens costs exactly T seconds."""
    return b.Calibration(**{"target": 1.0, "draft": 0.0, "verify": {1: 1.0, 8: 1.0}, "alpha": 0.0, **changes})


def test_expected_calls_are_chapter_7s_rounds_with_the_horizon():
    for alpha, K, T in ((0.0, 4, 10), (0.3, 1, 7), (0.8, 4, 32), (1.0, 8, 20), (0.95, 6, 48)):
        rounds, drafts = b.expected_calls(alpha, K, T)
        assert math.isclose(rounds, iid_expected_oracle_calls(alpha, K, T), rel_tol=1e-12)
        assert rounds <= drafts <= K * rounds + 1e-12
    assert b.expected_calls(0.0, 4, 10) == (10.0, 4 * 7 + 3 + 2 + 1)  # one token a round, k = min(K, t) drafts
    assert b.expected_calls(1.0, 4, 10) == (2.0, 8.0)  # 5 + 5 tokens, the second round with no bonus
    assert b.expected_calls(0.5, 3, 0) == (0.0, 0.0)


def test_run_seconds_from_call_costs():
    cal = b.Calibration(
        target=2.0, draft=0.5, verify={1: 3.0, 5: 7.0}, alpha=1.0, ar_overhead=0.25, round_overhead=0.125, hf_ratio=1.5
    )
    assert cal.run_seconds("autoregressive", 0, 8) == 8 * 2.25
    assert cal.run_seconds("HF autoregressive", 0, 8) == 1.5 * 8 * 2.25
    assert cal.verify_seconds(3) == 5.0  # linear between the measured K
    # alpha = 1, K = 3, 8 tokens: rounds of 4 and 4 tokens, 3 + 3 drafts.
    assert cal.run_seconds("speculative", 3, 8) == 2 * (5.0 + 0.125) + 6 * 0.5
    assert cal.run_seconds("HF assisted", 3, 8) == 1.5 * cal.run_seconds("speculative", 3, 8)
    with pytest.raises(ValueError, match="K = 6"):
        cal.run_seconds("speculative", 6, 8)
    with pytest.raises(ValueError, match="method"):
        cal.run_seconds("beam search", 1, 8)


def test_stage_seconds_count_every_run():
    stages = b.stage_seconds(FULL, unit_costs())
    # speed: 10 methods (ours: autoregressive + 5 K; Hugging Face: autoregressive + 3 K), each a 4-token warm-up
    # and 4 prompts x 2 repeats x 48 tokens; Theorem 1: 4 prompts x 20 runs x 32; eps: 5 values x 2 laws x 4 x 4 x 32.
    assert stages == {"speed": 10 * (4 + 4 * 2 * 48), "theorem1": 4 * 20 * 32, "eps_sweep": 5 * 2 * 4 * 4 * 32}
    no_hf = b.stage_seconds(dataclasses.replace(FULL, hf_lookaheads=()), unit_costs())
    assert no_hf["speed"] == 6 * (4 + 4 * 2 * 48)


def test_an_ample_budget_cuts_nothing():
    cal = unit_costs(seconds=40.0)
    for budget_s in (None, 40 + 3880 + 2560 + 5120, 1e9):
        plan = b.plan_measurement(FULL, cal, budget_s)
        assert plan.settings == FULL and plan.cuts == () and plan.fits
        assert plan.total_s == 40 + 3880 + 2560 + 5120  # the calibration's seconds count
    assert b.plan_measurement(FULL, cal, None).summary() == "no time budget: the settings as given; predicted 11,600 s"
    assert b.plan_measurement(FULL, cal, 1e5).summary() == "budget 100,000 s: nothing cut; predicted 11,600 s"


def test_cuts_go_in_order_and_stop_as_soon_as_the_plan_fits():
    cal = unit_costs()
    plan = b.plan_measurement(FULL, cal, 11559)  # one second short: repeats go first, and nothing else
    assert plan.settings == dataclasses.replace(FULL, speed_repeats=1) and plan.total_s == 9640
    assert plan.summary() == "budget 11,559 s: speed repeats 2→1; predicted 9,640 s"
    plan = b.plan_measurement(FULL, cal, 9000)  # then eps runs, one at a time: 4 → 3 fits
    assert plan.settings == dataclasses.replace(FULL, speed_repeats=1, eps_runs=3) and plan.total_s == 8360
    # Steps 1-6 at their floors: HF at the K nearest Theorem 1's, eps values 0 / a middle one / the largest,
    # lookaheads the smallest / Theorem 1's / the largest, 8 Theorem 1 runs.
    floors = dataclasses.replace(
        FULL,
        speed_repeats=1,
        eps_runs=2,
        hf_lookaheads=(4,),
        eps_values=(0.0, 0.01, 0.1),
        lookaheads=(1, 4, 8),
        theorem1_runs=8,
    )
    total = 6 * (4 + 4 * 48) + 4 * 8 * 32 + 3 * 2 * 4 * 2 * 32
    plan = b.plan_measurement(FULL, cal, total)
    assert plan.settings == floors and plan.total_s == total
    assert [c.knob for c in plan.cuts] == [
        "speed_repeats",
        "eps_runs",
        "hf_lookaheads",
        "eps_values",
        "lookaheads",
        "theorem1_runs",
    ]
    assert str(plan.cuts[2]) == "HF lookaheads 3→1" and str(plan.cuts[3]) == "eps values 5→3"
    plan = b.plan_measurement(FULL, cal, total - 1)  # then the tokens, the longest runs first
    assert plan.settings == dataclasses.replace(floors, speed_tokens=47)
    assert str(plan.cuts[-1]) == "speed tokens 48→47"


def test_a_coarse_last_cut_gives_back_tokens_while_the_plan_fits():
    # Steps 1-10 at their floors cost 1228 s; one prompt fewer 924 s, two fewer 620 s: 80 s unused of 700.
    plan = b.plan_measurement(FULL, unit_costs(), 700)
    s = plan.settings
    assert (s.prompts, s.theorem1_runs, s.eps_runs, s.speed_repeats) == (2, 8, 2, 1)
    assert (s.speed_tokens, s.theorem1_tokens, s.eps_tokens) == (18, 18, 18)  # 16 → 18 given back (19: 734 s)
    assert s.lookaheads == (1, 4) and s.eps_values == (0.0, 0.1) and s.hf_lookaheads == ()
    assert plan.total_s == 3 * (4 + 2 * 18) + 2 * 8 * 18 + 2 * 2 * 2 * 2 * 18 == 696
    assert "tokens 48/32/32→18" in plan.summary() and "prompts 4→2" in plan.summary()


def test_every_budget_gets_a_plan_within_it():
    cal = unit_costs(seconds=5.0)
    smallest = b.plan_measurement(FULL, cal, 1.0).total_s
    previous = None
    for budget_s in sorted({smallest * 1.07**i for i in range(80)} | {11565.0}, reverse=True):
        plan = b.plan_measurement(FULL, cal, budget_s)
        assert plan.fits and plan.total_s <= budget_s
        assert (plan.cuts == ()) == (budget_s >= 11565)  # 11565 s: the full settings, calibration included
        if previous is not None:  # a smaller budget never keeps more K values or eps values
            for name in ("lookaheads", "hf_lookaheads", "eps_values"):
                assert len(getattr(plan.settings, name)) <= len(getattr(previous, name))
        previous = plan.settings


def test_planning_again_keeps_what_was_measured_and_cuts_the_rest_at_the_pace_so_far():
    cal = unit_costs()
    first = b.plan_measurement(FULL, cal, 5000)
    assert first.total_s == 6 * 196 + 4 * 17 * 32 + 3 * 2 * 4 * 2 * 32 == 4888  # 17 Theorem 1 runs fit
    # The speed stage took twice its 1176 predicted seconds: the rest is planned again at twice the cost per call.
    again = b.plan_measurement(FULL, cal.scaled(2.0, seconds=2 * 1176), 5000, done=["speed"], used=first.settings)
    s = again.settings
    for name in ("speed_repeats", "hf_lookaheads", "lookaheads", "speed_tokens", "prompts"):  # as measured
        assert getattr(s, name) == getattr(first.settings, name)
    assert (s.theorem1_runs, s.theorem1_tokens, s.eps_runs, s.eps_values, s.eps_tokens) == (
        8,
        16,
        2,
        (0.0, 0.01, 0.1),
        16,
    )
    assert again.stages == {"theorem1": 2 * 4 * 8 * 16, "eps_sweep": 2 * 3 * 2 * 4 * 2 * 16}
    assert again.total_s == 2352 + 1024 + 1536 <= 5000
    assert "speed tokens" not in again.summary() and "Theorem 1 tokens 32→16, eps tokens 32→16" in again.summary()
    with pytest.raises(ValueError, match="used"):
        b.plan_measurement(FULL, cal, 5000, done=["speed"])
    with pytest.raises(ValueError, match="done"):
        b.plan_measurement(FULL, cal, 5000, done=["warm-up"], used=FULL)
    with pytest.raises(ValueError, match="pace"):
        cal.scaled(0.0, seconds=1.0)


def test_a_budget_too_small_keeps_the_smallest_plan_and_says_so():
    plan = b.plan_measurement(FULL, unit_costs(seconds=100.0), 60)
    s = plan.settings
    assert not plan.fits and plan.total_s == 100 + 3 * (4 + 8) + 2 * 8 + 2 * 2 * 2 * 8
    assert (s.speed_repeats, s.eps_runs, s.hf_lookaheads, s.theorem1_runs, s.prompts) == (1, 2, (), 2, 1)
    assert s.lookaheads == (1, 4) and s.eps_values == (0.0, 0.1)
    assert (s.speed_tokens, s.theorem1_tokens, s.eps_tokens) == (8, 8, 8)
    line = plan.summary()
    assert line.startswith("budget 60 s is too small") and "predicted at 216 s" in line
    assert "no Hugging Face comparison" in line and "tokens 48/32/32→8" in line and "Theorem 1 runs 20→2" in line
    record = plan.record()
    assert record["fits"] is False and record["predicted_s"]["total"] == 216 and record["requested"]["prompts"] == 4
    assert {"knob": "theorem1_runs", "from": 20, "to": 2} in record["cuts"]


def test_settings_are_checked_at_construction():
    for bad, match in (
        ({"lookaheads": ()}, "lookaheads"),
        ({"lookaheads": (2, 2)}, "lookaheads"),
        ({"lookaheads": "1,2"}, "lookaheads"),
        ({"hf_lookaheads": (0,)}, "hf_lookaheads"),
        ({"eps_values": (0.0, -0.1)}, "eps_values"),
        ({"eps_values": (True,)}, "eps_values"),
        ({"eps_values": ()}, "eps_values"),
        ({"theorem1_runs": 1}, "theorem1_runs"),
        ({"eps_runs": 1}, "eps_runs"),
        ({"speed_tokens": 0}, "speed_tokens"),
        ({"prompts": True}, "prompts"),
        ({"temperature": True}, "temperature"),
        ({"temperature": math.nan}, "temperature"),
        ({"seed": -1}, "seed"),
    ):
        with pytest.raises(ValueError, match=match):
            b.MeasureSettings(**bad)
    s = b.MeasureSettings(lookaheads=[1, 3], eps_values=[0, 0.5])
    assert s.lookaheads == (1, 3) and s.eps_values == (0.0, 0.5) and s.all_lookaheads == (1, 2, 3, 4, 8)


def test_numbers_are_checked():
    assert b.check_real(2, "x", low=0.0) == 2.0  # the package's shared check (primitives)
    for bad in (True, math.inf, -1.0, "3", None):
        with pytest.raises(ValueError, match="x: must be a finite number >= 0"):
            b.check_real(bad, "x", low=0.0)
    with pytest.raises(ValueError, match="budget_s: must be a finite number > 0"):
        b.plan_measurement(FULL, unit_costs(), 0)
    with pytest.raises(ValueError, match="budget_s"):
        b.plan_measurement(FULL, unit_costs(), True)
    with pytest.raises(ValueError, match="settings"):
        b.plan_measurement({"runs": 2}, unit_costs(), 10)
    with pytest.raises(ValueError, match="verify"):
        unit_costs(verify={})
    with pytest.raises(ValueError, match="alpha"):
        unit_costs(alpha=1.5)
    with pytest.raises(ValueError, match="target"):
        unit_costs(target=-1.0)
