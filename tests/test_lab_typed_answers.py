"""Typed numbers in the model answers of Labs 1 and 4, recomputed from the widgets' own instances.

nbgrader's markdown answer cells cannot glue, so each number quoted there is checked here
against the package: the instance the widget shows, the exact formula, and the number as the
answer prints it.
"""

from pathlib import Path

import numpy as np
import pytest

from specdec_lite.laws import tv
from specdec_lite.widgets.beat_speculative import INSTANCES
from specdec_lite.widgets.token_explorer import token_laws

ROOT = Path(__file__).resolve().parents[1]
LAB01 = (ROOT / "notebooks/source/lab01_markov_chains/lab01_markov_chains.md").read_text(encoding="utf-8")
LAB04 = (ROOT / "notebooks/source/lab04_optimality/lab04_optimality.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("V", [4, 5, 10])
def test_lab01_disjoint_supports_at_quality_055_shows_tv_0450(V):
    p, q = token_laws(V, "disjoint supports", 0.55)
    assert f"{float(tv(p, q)):.3f}" == "0.450" and "at 0.55, where the title shows 0.450" in LAB01
    steps = np.round(np.arange(0, 1.0001, 0.05), 2)
    below = [w for w in steps if tv(*token_laws(V, "disjoint supports", w)) < 0.5 - 1e-12]
    assert below[0] == 0.55  # the first slider step where the TV drops below 0.5


def output_bias(p, q, b, law):
    """TV between q and the output of rule b with rejection law `law`."""
    r = float(((1 - b) * p).sum())
    return float(tv(b * p + r * law, q))


def test_lab04_crossing_point_and_biases():
    p, q = (np.array(x) for x in INSTANCES["draft too confident"])
    assert f"{q[0] / p[0]:.3f}" == "0.455" and "0.25/0.55 \\approx 0.455" in LAB04
    assert f"{float(tv(p, q)):.2f}" == "0.30"
    spec = lambda p, q: np.minimum(1, q / np.where(p > 0, p, 1))  # noqa: E731 - the speculative rule
    assert f"{output_bias(p, q, spec(p, q), q):.3f}" == "0.150" and "bias 0.150 on *draft too confident*" in LAB04
    p, q = (np.array(x) for x in INSTANCES["mirror images"])
    assert f"{output_bias(p, q, spec(p, q), q):.3f}" == "0.140" and "0.140 on *mirror images*" in LAB04
    p, q = (np.array(x) for x in INSTANCES["draft misses a token"])
    assert f"{output_bias(p, q, spec(p, q), p):.3f}" == "0.300" and "exactly 0.300 for the speculative rule" in LAB04
    assert f"{float(((1 - spec(p, q)) * p).sum()):.1f}" == "0.3"  # "rejects with probability 0.3"


def test_lab02_share_of_bars_outside_two_standard_errors():
    """Lab 2, question 3: 3.9% of bars at 200 runs and 5.4% at 20,000, over 200 seeds of the default explorer."""
    from specdec_lite import decoding
    from specdec_lite.chains import one_token
    from specdec_lite.widgets.token_explorer import token_update  # noqa: F401 - the widget these numbers describe

    lab02 = (ROOT / "notebooks/source/lab02_unbiased/lab02_unbiased.md").read_text(encoding="utf-8")
    assert "3.9% of bars at 200 runs, 5.4% at 20,000" in lab02
    for runs, quoted in [(200, "3.9%"), (20_000, "5.4%")]:
        outside = 0
        for seed in range(200):
            p, q = token_laws(5, "shifted", 0.5, seed)  # the explorer's defaults, as token_update draws them
            tokens = decoding.speculative(*one_token(p, q), runs, rng=seed).tokens[:, 0]
            freq = np.bincount(tokens, minlength=5) / runs
            outside += int((np.abs(freq - q) > 2 * np.sqrt(q * (1 - q) / runs)).sum())
        assert f"{100 * outside / (200 * 5):.1f}%" == quoted, (runs, outside)
