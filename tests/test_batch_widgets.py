"""Chapter 6 explorer and figures: they draw exactly the package's numbers."""

import numpy as np
import plotly.graph_objects as go
import pytest

from specdec_lite import batch, theory
from specdec_lite.figures import batch as F
from specdec_lite.figures.part1 import pair
from specdec_lite.widgets import batch_explorer as W


def trace(fig: go.Figure, prefix: str):
    found = [t for t in fig.data if t.name and t.name.startswith(prefix)]
    assert len(found) == 1, f"expected one trace named {prefix!r}..., got {[t.name for t in fig.data]}"
    return found[0]


@pytest.mark.parametrize("M, V, quality, T", [(8, 7, 0.0, 50), (1, 3, 0.5, 10), (20, 4, 0.8, 15), (3, 2, 1.0, 5)])
def test_update_draws_exact_curves_and_monte_carlo(M, V, quality, T):
    fig = W.batch_update(M=M, V=V, quality=quality, T=T, runs=400)
    draft, target, _ = pair(V, T, quality, 10)
    curve = trace(fig, "Algorithm 4: exact")
    assert curve.x[0] == 1 and curve.x[-1] == M
    np.testing.assert_allclose(curve.y, [batch.expected_rejections_batch(draft, target, int(m)) for m in curve.x])
    tree = trace(fig, "draft tree: exact")
    np.testing.assert_allclose(tree.y, [batch.expected_rejections_tree(draft, target, int(m)) for m in tree.x])
    assert np.all(tree.y <= curve.y + 1e-12)
    assert trace(fig, "Algorithm 4 as M").y[0] == pytest.approx(batch.batch_rejection_limit(draft, target))
    assert trace(fig, "one draft").y[0] == pytest.approx(theory.expected_rejections(draft, target))
    # Monte Carlo points sit within 5 SE of the exact values at m = M.
    for name, exact in (
        ("Algorithm 4: Monte", batch.expected_rejections_batch),
        ("draft tree: Monte", batch.expected_rejections_tree),
    ):
        mc = trace(fig, name)
        assert list(mc.x) == [M]
        want = np.array([exact(draft, target, int(m)) for m in mc.x])
        se = np.asarray(mc.error_y.array) / 2
        assert np.all(np.abs(np.asarray(mc.y) - want) <= 5 * se + 1e-12)
    assert f"M = {M}:" in fig.layout.title.text


def test_update_rejects_bad_M():
    for bad in (0, W.M_MAX + 1, 2.5, True):
        with pytest.raises(ValueError, match="^M:"):
            W.batch_update(M=bad)


def test_explorer_builds_with_plain_controls():
    pytest.importorskip("ipywidgets")
    box = W.batch_explorer()
    names = {type(c).__name__ for row in box.children[:-1] for c in row.children}
    assert names <= {"IntSlider", "FloatSlider", "Dropdown"}


def test_figure_builders_hold_the_package_numbers():
    draft, target, _ = pair(5, 12, 0.0, 3)
    fig = F.rejections_vs_M_figure(draft, target, 16, tree=True)
    np.testing.assert_allclose(
        trace(fig, "Algorithm 4").y, [batch.expected_rejections_batch(draft, target, m) for m in range(1, 17)]
    )
    assert trace(fig, "limit").y[0] == pytest.approx(batch.batch_rejection_limit(draft, target))
    t = trace(fig, "draft tree")
    np.testing.assert_allclose(t.y, [batch.expected_rejections_tree(draft, target, int(m)) for m in t.x])
    fig = F.running_means_figure(draft, target, (2, 3), runs=500)
    assert trace(fig, "M = 3: Theorem 3").y[0] == pytest.approx(batch.expected_rejections_batch(draft, target, 3))
    fig = F.figure3(us=(0.8,), rs=(2.0,), V=6, M_max=6, runs=2000)
    closed = trace(fig, "u = 0.8 (closed form)")
    np.testing.assert_allclose(closed.y, [batch.batch_improvement_bernoulli(0.8, 0.5, m) for m in range(1, 7)])
    mc = trace(fig, "r = 2 (Monte Carlo, 2,000 runs)")
    want = np.array([batch.batch_improvement_uniform(2.0, int(m)) for m in mc.x])
    assert np.all(np.abs(np.asarray(mc.y) - want) <= 2.5 * np.asarray(mc.error_y.array) + 1e-12)
    slider = F.tree_vs_batch_slider((0.0, 0.5), V=4, T=8, M_max=8)
    assert len(slider.layout.sliders[0].steps) == 2 and len(slider.data) == 6


def test_draft_counts():
    assert list(F.draft_counts(5)) == [1, 2, 3, 4, 5]
    c = F.draft_counts(64)
    assert c[0] == 1 and c[-1] == 64 and np.all(np.diff(c) > 0)


def test_monte_carlo_markers_agree_with_the_exact_curves():
    draft, target, _ = pair(5, 15, 0.3, 4)
    traces = F.rejections_vs_M_traces(draft, target, [1, 2, 4, 8], tree=True, mc_Ms=(2, 8), runs=2000, seed=1)
    for tr, exact in zip(traces[-2:], (batch.expected_rejections_batch, batch.expected_rejections_tree), strict=True):
        want = np.array([exact(draft, target, int(m)) for m in tr.x])
        se = np.asarray(tr.error_y.array) / 2
        assert np.all(np.abs(np.asarray(tr.y) - want) <= 5 * se), (tr.name, tr.y, want)
