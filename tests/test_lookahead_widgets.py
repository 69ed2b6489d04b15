"""Chapter 7 explorer and figures: they draw exactly the package's numbers."""

import numpy as np
import plotly.graph_objects as go
import pytest

from specdec_lite import lookahead as la
from specdec_lite.figures import lookahead as F
from specdec_lite.widgets import lookahead_explorer as L


def trace(fig: go.Figure, prefix: str):
    found = [t for t in fig.data if t.name and t.name.startswith(prefix)]
    assert len(found) == 1, f"expected one trace named {prefix!r}..., got {[t.name for t in fig.data]}"
    return found[0]


@pytest.mark.parametrize("K, c, quality", [(4, 0.1, 0.7), (0, 0.0, 0.3), (12, 0.5, 0.95), (30, 0.02, 1.0)])
def test_update_draws_the_exact_speedup_curve(K, c, quality):
    fig = L.lookahead_update(K=K, c=c, quality=quality)
    draft, target = F.quality_pair(quality)
    want = la.speedup_curve(draft, target, c, range(L.K_MAX + 1))
    np.testing.assert_allclose(trace(fig, "exact").y, want, rtol=1e-12)
    np.testing.assert_array_equal(trace(fig, "exact").x, np.arange(L.K_MAX + 1))
    alpha = F.mean_acceptance(draft, target)
    np.testing.assert_allclose(trace(fig, "i.i.d.").y, [la.iid_speedup(alpha, k, c) for k in range(L.K_MAX + 1)])
    best, top = la.best_lookahead(draft, target, c, K_max=L.K_MAX)
    star = trace(fig, "best K")
    assert star.name == f"best K = {best}" and star.y[0] == pytest.approx(top)
    mine = trace(fig, "your K")
    assert mine.x[0] == K and mine.y[0] == pytest.approx(la.wallclock_speedup_k(draft, target, K, c))
    assert f"speed-up {want[K]:.2f}×" in fig.layout.title.text


def test_update_edges():
    # K = 0 is autoregressive decoding: speed-up exactly 1 whatever c and quality
    assert trace(L.lookahead_update(K=0, c=0.7, quality=0.2), "your K").y[0] == pytest.approx(1.0)
    # a perfect, free draft: one round of K_MAX drafts plus a bonus per K_MAX + 1 tokens
    fig = L.lookahead_update(K=L.K_MAX, c=0.0, quality=1.0)
    T = F.quality_pair(1.0)[1].T
    assert trace(fig, "your K").y[0] == pytest.approx(T / np.ceil(T / (L.K_MAX + 1)))
    # a draft costing as much as the target never pays
    assert trace(L.lookahead_update(K=3, c=1.0, quality=0.9), "best K").name == "best K = 0"


def test_update_rejects_bad_input():
    bad = [({"K": -1}, "K"), ({"K": L.K_MAX + 1}, "K"), ({"c": -0.5}, "c"), ({"quality": 1.5}, "quality")]
    for kwargs, name in bad:
        with pytest.raises(ValueError, match=f"^{name}:"):
            L.lookahead_update(**kwargs)


def test_explorer_builds_with_plain_controls():
    pytest.importorskip("ipywidgets")
    box = L.lookahead_explorer()
    names = {type(c).__name__ for row in box.children[:-1] for c in row.children}
    assert names <= {"IntSlider", "FloatSlider", "Dropdown"}


def test_finite_k_figure_holds_exact_and_monte_carlo():
    draft, target = F.quality_pair(0.6, 5, 20, 3)
    Ks = [0, 1, 3, 20]
    fig = F.finite_k_figure(draft, target, Ks, runs=300, seed=1)
    np.testing.assert_allclose(fig.data[0].y, [la.expected_oracle_calls_k(draft, target, K) for K in Ks])
    np.testing.assert_allclose(fig.data[2].y, [la.expected_rejections_k(draft, target, K) for K in Ks])
    rng = np.random.default_rng(1)
    calls = [la.speculative_k(draft, target, K, 300, rng).oracle_calls.mean() for K in Ks]
    np.testing.assert_allclose(fig.data[1].y, calls)


def test_leviathan_figure_points_are_tokens_per_call():
    d, t = la.tv_schedule_pair(4, 30, 0.2, rng=0)
    fig = F.leviathan_figure([("constant", d, t)], 0.8, [0, 2, 5])
    np.testing.assert_allclose(fig.data[0].y, [la.expected_tokens_per_call(0.8, K) for K in range(6)])
    np.testing.assert_allclose(fig.data[1].y, [30 / la.expected_oracle_calls_k(d, t, K) for K in (0, 2, 5)])


def test_best_k_slider_figure_steps():
    fig = F.best_k_slider_figure([0.5, 0.9], [0.0, 0.2], K_max=10, active=1)
    assert len(fig.data) == 2 * 2 * 3 and len(fig.layout.sliders[0].steps) == 2
    draft, target = F.quality_pair(0.9)
    K, s = la.best_lookahead(draft, target, 0.2, K_max=10)
    stars = [t for t in fig.data if t.name in (f"best K = {K}", f"best K ≥ {K}") and t.visible]  # ≥: range end
    assert any(t.y[0] == pytest.approx(s) for t in stars)
    # no-break spaces inside a pair (a narrow title breaks between pairs)
    assert "0.90 → " + F.best_k_text(K, 10, target.T) in fig.layout.title.text.replace("\xa0", " ")
    assert "0.90\xa0→\xa0" in fig.layout.title.text


def test_best_k_map_matches_closed_form():
    fig = F.best_k_map_figure([0.2, 0.6, 0.9], [0.01, 0.1, 0.5], K_cap=40)
    want = [[min(la.best_lookahead_iid(a, c, K_max=40), 40) for a in (0.2, 0.6, 0.9)] for c in (0.01, 0.1, 0.5)]
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), want)
