"""Part I explorers and figures: the update functions draw exactly the package's numbers."""

import numpy as np
import plotly.graph_objects as go
import pytest

import specdec_lite as sd
from specdec_lite.figures import part1 as F
from specdec_lite.stats import chi_square, mean_and_se
from specdec_lite.widgets import rejections_explorer as R
from specdec_lite.widgets import token_explorer as TE
from tests.conftest import ALPHA, Z


def trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, f"expected one trace named {name!r}, got {[t.name for t in fig.data]}"
    return found[0]


# --- token explorer (chapters 1-2) ---------------------------------------------


@pytest.mark.parametrize("preset", TE.PRESETS)
@pytest.mark.parametrize("V", [3, 5, 8])
def test_token_laws_are_laws_and_quality_one_is_the_target(preset, V):
    p, q = TE.token_laws(V, preset, 0.3, seed=4)
    sd.check_law(p, "p"), sd.check_law(q, "q")
    p1, q1 = TE.token_laws(V, preset, 1.0, seed=4)
    np.testing.assert_allclose(p1, q1)
    # TV shrinks linearly with quality: p = w q + (1 - w) other.
    p0, _ = TE.token_laws(V, preset, 0.0, seed=4)
    assert sd.tv(p, q) == pytest.approx(0.7 * sd.tv(p0, q))


def test_disjoint_preset_rejects_always_at_quality_zero():
    p, q = TE.token_laws(6, "disjoint supports", 0.0)
    assert sd.tv(p, q) == pytest.approx(1.0)
    fig = TE.token_update(6, "disjoint supports", 0.0, runs=500, seed=1)
    assert "observed rejection rate 1.000" in fig.layout.title.text


@pytest.mark.parametrize(
    "V, preset, quality, seed", [(5, "shifted", 0.5, 0), (3, "random", 0.2, 3), (8, "flat draft", 0.0, 1)]
)
def test_token_update_bars_are_p_q_acceptance_residual(V, preset, quality, seed):
    p, q = TE.token_laws(V, preset, quality, seed)
    fig = TE.token_update(V, preset, quality, runs=3000, seed=seed)
    np.testing.assert_allclose(trace(fig, "p (draft)").y, p)
    np.testing.assert_allclose(trace(fig, "q (target)").y, q)
    np.testing.assert_allclose(trace(fig, "acceptance").y, sd.acceptance(p, q))
    np.testing.assert_allclose(trace(fig, "residual").y, sd.residual(p, q))
    np.testing.assert_allclose(trace(fig, "q (bars: ± 2 SE)").y, q)
    np.testing.assert_allclose(trace(fig, "q (bars: ± 2 SE)").error_y.array, 2 * np.sqrt(q * (1 - q) / 3000))
    assert f"TV(p, q) = {sd.tv(p, q):.3f}" in fig.layout.title.text


def test_token_update_histogram_is_the_samplers_output_and_follows_q():
    V, runs, seed = 6, 20_000, 5
    p, q = TE.token_laws(V, "shifted", 0.3, seed)
    fig = TE.token_update(V, "shifted", 0.3, runs=runs, seed=seed)
    freq = np.asarray(trace(fig, "speculative (Monte Carlo)").y)
    draft, target = TE.one_token(p, q)
    res = sd.decoding.speculative(draft, target, runs, rng=seed)
    np.testing.assert_allclose(freq, np.bincount(res.tokens[:, 0], minlength=V) / runs)
    assert chi_square(freq * runs, q).pvalue > ALPHA
    # Power: the same counts are far from the draft p.
    assert chi_square(freq * runs, p).pvalue < ALPHA


def test_token_laws_bad_input():
    with pytest.raises(ValueError, match="preset"):
        TE.token_laws(5, "nope")
    with pytest.raises(ValueError, match="V"):
        TE.token_laws(1)
    with pytest.raises(ValueError, match="quality"):
        TE.token_laws(5, "shifted", 1.5)


# --- rejections explorer (chapter 3) --------------------------------------------


@pytest.mark.parametrize("V, T, quality, seed", [(7, 50, 0.0, 10), (3, 20, 0.6, 2), (12, 1, 0.3, 0)])
def test_rejections_update_draws_theorem1_and_the_sampler(V, T, quality, seed):
    runs = 3000
    fig = R.rejections_update(V, T, quality, runs, seed)
    draft, target, s_mc = F.pair(V, T, quality, seed)
    exact = sd.theory.expected_rejections(draft, target)
    np.testing.assert_allclose(trace(fig, "exact E[N<sub>rej</sub>] (Theorem 1(b))").y, [exact, exact])
    np.testing.assert_allclose(trace(fig, "exact E[R<sub>n</sub>]").y, sd.theory.rejection_profile(draft, target))
    res = sd.decoding.speculative(draft, target, runs, rng=np.random.default_rng(s_mc))
    np.testing.assert_allclose(trace(fig, "observed rate").y, res.rejected.mean(axis=0))
    mean = trace(fig, "Monte Carlo running mean")
    assert mean.x[-1] == runs and mean.y[-1] == pytest.approx(res.rejections.mean())
    m, se = mean_and_se(res.rejections)
    assert abs(m - exact) <= Z * se + 1e-12
    calls = sd.theory.expected_oracle_calls(draft, target)
    assert f"= {T / calls:.2f}" in fig.layout.title.text


def test_rejections_update_equal_models_never_reject():
    fig = R.rejections_update(5, 30, 1.0, 500, 3)
    assert trace(fig, "exact E[N<sub>rej</sub>] (Theorem 1(b))").y[0] == 0
    assert np.all(np.asarray(trace(fig, "Monte Carlo running mean").y) == 0)
    assert "paper's T / E[N<sub>rej</sub>] = ∞" in fig.layout.title.text


def test_explorers_build_and_redraw(monkeypatch):
    import specdec_lite.widgets.core as core

    shown = []
    monkeypatch.setattr(core, "show", shown.append)
    box = TE.token_explorer()
    assert len(shown) == 1
    box.children[0].children[2].value = 0.9  # draft quality
    assert len(shown) == 2 and trace(shown[-1], "p (draft)").y is not None
    R.rejections_explorer()
    assert len(shown) == 3


# --- figure builders ------------------------------------------------------------


def test_tv_traces_split_mass_into_shared_and_two_excesses():
    p, q = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.1, 0.3, 0.2, 0.4])
    shared, p_over, q_over = (np.asarray(t.y) for t in F.tv_traces(p, q))
    np.testing.assert_allclose(shared + p_over, p)
    np.testing.assert_allclose(shared + q_over, q)
    assert p_over.sum() == pytest.approx(sd.tv(p, q)) and q_over.sum() == pytest.approx(sd.tv(p, q))
    assert "0.400" in F.tv_figure(p, q).layout.title.text


def test_slider_figures_hold_one_step_per_quality():
    q, other = np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.2, 0.7])
    fig = F.tv_slider_figure(q, other, qualities=[0.0, 0.5, 1.0])
    assert len(fig.data) == 9 and len(fig.layout.sliders[0].steps) == 3
    last = fig.data[6:9]
    assert np.allclose(last[1].y, 0) and np.allclose(last[2].y, 0)  # p == q: no excess
    fig = F.split_slider_figure(q, other, qualities=[0.0, 0.25])
    accepted, after_rej, p_marks, q_marks = fig.data[:4]
    np.testing.assert_allclose(np.asarray(accepted.y) + np.asarray(after_rej.y), q)  # Theorem 1(a), one token
    np.testing.assert_allclose(q_marks.y, q) and np.testing.assert_allclose(p_marks.y, other)


def test_running_mean_traces():
    x = np.arange(10.0)
    band, mean, exact = F.running_mean_traces(x, 4.0, max_points=10)
    assert mean.y[-1] == pytest.approx(4.5) and list(exact.y) == [4.0, 4.0] and exact.x[-1] == 10
    se = x.std(ddof=1) / np.sqrt(10)
    assert max(band.y) - min(band.y[len(band.y) // 2 - 1 : len(band.y) // 2 + 1]) == pytest.approx(4 * se)


def test_plot_points():
    idx = F.plot_points(5000, 400)
    assert idx[0] == 0 and idx[-1] == 4999 and np.all(np.diff(idx) > 0) and idx.size <= 400
    assert list(F.plot_points(3)) == [0, 1, 2]
    with pytest.raises(ValueError, match="n"):
        F.plot_points(0)


def test_figure2_exact_line_and_monte_carlo_agree():
    fig = F.figure2_slider(V=7, T=50, runs=5000, qualities=(0.0, 0.5), seed=10)
    for step, w in enumerate((0.0, 0.5)):
        draft, target, s_mc = F.pair(7, 50, w, 10)
        exact = sd.theory.expected_rejections(draft, target)
        band, mean, line = fig.data[3 * step : 3 * step + 3]
        assert line.y[0] == pytest.approx(exact)
        rej = sd.decoding.speculative(draft, target, 5000, rng=np.random.default_rng(s_mc)).rejections
        m, se = mean_and_se(rej)
        assert mean.y[-1] == pytest.approx(m) and abs(m - exact) <= Z * se


def test_quality_sweep_is_linear_in_quality_and_ends_at_T():
    target = sd.MarkovChain.random(7, 40, rng=3)
    w = np.linspace(0, 1, 6)
    s = F.quality_sweep(target, w, seed=4)
    # draft_for keeps the same unrelated chain, so every TV (hence E[N_rej]) scales with 1 - quality.
    np.testing.assert_allclose(s["rejections"], (1 - w) * s["rejections"][0], atol=1e-12)
    assert s["speedup"][-1] == pytest.approx(40) and np.isinf(s["speedup_paper"][-1])
    assert np.all(np.diff(s["speedup"]) > 0)
    np.testing.assert_allclose(s["speedup"], 40 / s["calls"])
    fig = F.quality_sweep_slider(V=4, Ts=(5, 10), qualities=w, seed=1, active=1)
    assert len(fig.data) == 6 and fig.data[3].visible and not fig.data[0].visible
