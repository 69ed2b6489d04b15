"""Part II widgets and figures hold the right numbers for given inputs."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import tradeoff as tr
from specdec_lite.figures import part2 as figs
from specdec_lite.widgets import beat_speculative as bs
from specdec_lite.widgets import tradeoff_explorer as te


def trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    assert found, [t.name for t in fig.data]
    return found[0]


def test_beat_speculative_speculative_preset_sits_on_the_bound():
    fig = bs.beat_update("mirror images", "speculative min(1, q/p)")
    p, q = bs.instance_laws("mirror images")
    np.testing.assert_allclose(trace(fig, "P<sup>A</sup> (yours)").y, q, atol=1e-12)
    np.testing.assert_allclose(trace(fig, "b (yours)").y, sd.acceptance(p, q))
    point = trace(fig, "your algorithm")
    assert point.x[0] == pytest.approx(0.4) and point.y[0] == pytest.approx(0, abs=1e-12)
    assert "on the bound" in fig.layout.title.text


def test_beat_speculative_sliders_over_accepting_is_biased():
    p, q = bs.instance_laws("draft too confident")
    fig = bs.beat_update("draft too confident", "sliders", 0.6, 1.0, 1.0, 1.0, bs.REJECTION_CHOICES[0])
    b = np.array([0.6, 1, 1, 1])
    reject, loss = tr.pareto_point(p, q, b)
    point = trace(fig, "your algorithm")
    assert point.x[0] == pytest.approx(reject) and point.y[0] == pytest.approx(loss)
    assert reject < sd.tv(p, q) and loss > 0
    assert "rejects less than the bound, and pays" in fig.layout.title.text
    np.testing.assert_allclose(
        trace(fig, "P<sup>A</sup> (yours)").y, tr.output_law(p, b, tr.optimal_rejection_law(p, q, b))
    )


@pytest.mark.parametrize("instance", list(bs.INSTANCES))
def test_beat_speculative_unbiased_choices_never_beat_the_bound(instance):
    p, q = bs.instance_laws(instance)
    rng = np.random.default_rng(0)
    for _ in range(20):
        b = rng.random(4) * sd.acceptance(p, q)
        fig = bs.beat_update(instance, "sliders", *b, bs.REJECTION_CHOICES[0])
        point = trace(fig, "your algorithm")
        assert point.y[0] == pytest.approx(0, abs=1e-12) and point.x[0] >= sd.tv(p, q) - 1e-12


def test_beat_speculative_other_laws_and_errors():
    fig = bs.beat_update("mirror images", "speculative min(1, q/p)", rejection="target q")
    assert trace(fig, "your algorithm").y[0] > 0 and "without rejecting less" in fig.layout.title.text
    fig = bs.beat_update("mirror images", "never accept", rejection="draft p")
    assert trace(fig, "your algorithm").x[0] == pytest.approx(1)
    with pytest.raises(ValueError, match="instance"):
        bs.beat_update("nope")
    with pytest.raises(ValueError, match="accept_preset"):
        bs.beat_update(accept_preset="nope")
    with pytest.raises(ValueError, match="rejection"):
        bs.beat_update(rejection="nope")
    with pytest.raises(ValueError, match="accept"):
        bs.beat_update(b0=1.5)


def test_tradeoff_explorer_numbers():
    eps = 0.05
    fig = te.tradeoff_update(eps=eps, quality=0.5, seed=2)
    draft, target = te.explorer_pair(2, 0.5)
    for kind, name in (("opt", "OPT"), ("uno", "UNO")):
        pts = [t for t in fig.data if t.name == f"{name} at ε = {eps:g}"]
        assert len(pts) == 3
        first = tr.over_accept_point(draft.init, target.init, eps, kind)
        assert (pts[0].x[0], pts[0].y[0]) == (pytest.approx(first[0]), pytest.approx(first[1]))
        chain = sd.biased.chain_front_point(draft, target, eps, kind)
        assert (pts[1].x[0], pts[1].y[0]) == (pytest.approx(chain[0]), pytest.approx(chain[1]))
        seq = (
            sd.biased.biased_expected_rejections(draft, target, eps, kind),
            sd.biased.biased_sequence_tv(draft, target, eps, kind),
        )
        assert (pts[2].x[0], pts[2].y[0]) == (pytest.approx(seq[0]), pytest.approx(seq[1]))
    opt_pts = [t for t in fig.data if t.name == f"OPT at ε = {eps:g}"]
    assert opt_pts[1].x[0] + opt_pts[1].y[0] == pytest.approx(sd.theory.expected_rejections(draft, target))
    with pytest.raises(ValueError, match="eps"):
        te.tradeoff_update(eps=-0.1)
    with pytest.raises(ValueError, match="quality"):
        te.tradeoff_update(quality=2.0)


def test_figures():
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    fig = figs.pareto_figure(p, q, n=200, seed=1)
    d = sd.tv(p, q)
    for name in ("random (b, P)", "random b, optimal P* (Theorem 4)", "random unbiased member of F"):
        t = trace(fig, name)
        assert len(t.x) == 200 and np.all(np.asarray(t.x) + np.asarray(t.y) >= d - 1e-12)
    assert np.allclose(trace(fig, "random unbiased member of F").y, 0, atol=1e-12)
    sweep = figs.token_sweep(p, q)
    np.testing.assert_allclose(sweep["reject"] + sweep["opt"], d, atol=1e-12)
    assert np.all(sweep["uno"] >= sweep["opt"] - 1e-12)
    fig = figs.sweep_figure(sweep, d, "one token")
    assert len(fig.layout.sliders[0].steps) == len(figs.EPS_GRID)
    target = sd.MarkovChain.random(3, 4, rng=0)
    draft = sd.draft_for(target, 0.4, rng=1)
    s = figs.sequence_sweep(draft, target, (0.0, 0.1))
    assert s["opt"]["seq_tv"][0] == pytest.approx(0, abs=1e-12)
    assert s["opt"]["reject"][0] == pytest.approx(sd.theory.expected_rejections(draft, target))
    assert np.all(s["uno"]["seq_tv"] <= s["uno"]["summed_loss"] + 1e-12)
    assert "members" in figs.unbiased_members_figure(p, q, n=50).layout.yaxis.title.text


def _controls(box):
    return [c for row in box.children[:-1] for c in row.children]


def test_explorers_draw_their_update_and_redraw_on_change(monkeypatch):
    pytest.importorskip("ipywidgets")
    import specdec_lite.widgets.core as core

    shown = []
    monkeypatch.setattr(core, "show", shown.append)
    names = ("instance", "accept_preset", "rejection", "b0", "b1", "b2", "b3")
    controls = dict(zip(names, _controls(bs.beat_explorer()), strict=True))
    assert len(shown) == 1 and shown[0] == bs.beat_update(**{k: c.value for k, c in controls.items()})
    controls["b0"].value = 0.9
    assert len(shown) == 2 and shown[1] == bs.beat_update(**{k: c.value for k, c in controls.items()})
    assert shown[1] != shown[0]

    controls = dict(zip(("eps", "quality", "seed"), _controls(te.tradeoff_explorer()), strict=True))
    assert len(shown) == 3 and shown[2] == te.tradeoff_update(0.05, 0.5, 0)
    controls["quality"].value = 0.9
    assert len(shown) == 4 and shown[3] == te.tradeoff_update(controls["eps"].value, 0.9, 0)
    assert shown[3] != shown[2]
