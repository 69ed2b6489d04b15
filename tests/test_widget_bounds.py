"""Widgets and figures refuse sizes they cannot draw with a named error, before allocating anything, and print an
infinite speed-up as infinite."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from specdec_lite import lookahead as la
from specdec_lite.figures.lookahead import MAX_PLOTTED_K, speedup_traces
from specdec_lite.figures.part1 import MAX_TOKEN_LABELS, pair, token_labels
from specdec_lite.widgets.rejections_explorer import MAX_RUNS, MAX_T, MAX_V, rejections_update

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(V=2000), rf"V: must be an integer in \[1, {MAX_V}\], got 2000"),
        (dict(V=0), rf"V: must be an integer in \[1, {MAX_V}\], got 0"),
        (dict(T=10**6), rf"T: must be an integer in \[1, {MAX_T}\]"),
        (dict(runs=10**9), rf"runs: must be an integer in \[1, {MAX_RUNS}\]"),
        (dict(V=7.5), r"V: must be an integer"),
    ],
)
def test_rejections_explorer_refuses_sizes_it_cannot_draw(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rejections_update(**kwargs)


def test_no_possible_rejection_is_an_infinite_speed_up():
    """V = 1: both laws are the one token; E[N_rej] is a few ulps of rounding, and T / E[N_rej] is infinite."""
    title = rejections_update(V=1, T=50, runs=100).layout.title.text
    assert title.endswith("paper's T / E[N<sub>rej</sub>] = ∞</sup>") and "e+" not in title and "000000" not in title
    title = rejections_update(V=3, T=50, quality=1.0, runs=100).layout.title.text
    assert title.endswith("= ∞</sup>")
    finite = rejections_update(V=3, T=50, quality=0.5, runs=100).layout.title.text
    assert not finite.endswith("∞</sup>")


def test_token_labels_are_bounded():
    assert token_labels(3) == ["x=0", "x=1", "x=2"] and len(token_labels(MAX_TOKEN_LABELS)) == MAX_TOKEN_LABELS
    for V in (10**8, MAX_TOKEN_LABELS + 1, 0, -1, 2.0):
        with pytest.raises(ValueError, match="V: number of tokens labelled must be an integer"):
            token_labels(V)


def test_speedup_traces_are_bounded_and_flat_past_the_horizon():
    draft, target, _ = pair(4, 6, 0.3, 1)
    with pytest.raises(ValueError, match=rf"K_max: lookahead must be an integer in \[0, {MAX_PLOTTED_K}\]"):
        speedup_traces(draft, target, 0.1, 10**6, name="x", color="red")
    with pytest.raises(ValueError, match="K_max: lookahead must be an integer >= 0"):
        speedup_traces(draft, target, 0.1, -1, name="x", color="red")
    curve = speedup_traces(draft, target, 0.1, 40, name="x", color="red")[0].y
    assert len(curve) == 41
    np.testing.assert_allclose(curve, la.speedup_curve(draft, target, 0.1, range(41)), rtol=1e-12)


@pytest.mark.slow
def test_refused_sizes_allocate_nothing_under_a_memory_cap():
    """Under a 1 GiB address-space cap the sizes that asked for gigabytes are named errors, not MemoryErrors."""
    child = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
        from specdec_lite.figures.lookahead import speedup_traces
        from specdec_lite.figures.part1 import pair, token_labels
        from specdec_lite.widgets.rejections_explorer import rejections_update
        rejections_update(V=20, T=200, runs=5000)  # the sliders' maxima fit
        draft, target, _ = pair(4, 6, 0.3, 1)
        for call in (lambda: rejections_update(V=2000), lambda: token_labels(10**8),
                     lambda: speedup_traces(draft, target, 0.1, 10**6, name="x", color="red")):
            try:
                call()
            except ValueError as err:
                print("refused:", str(err).split(", got")[0])
    """)
    proc = subprocess.run(
        [sys.executable, "-c", child],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        f"refused: V: must be an integer in [1, {MAX_V}]",
        f"refused: V: number of tokens labelled must be an integer in [1, {MAX_TOKEN_LABELS}]",
        f"refused: K_max: lookahead must be an integer in [0, {MAX_PLOTTED_K}]",
    ]
