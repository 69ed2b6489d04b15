"""Chapter 8 and Lab 8 helpers: the verification check, the figures, the explorer, the offline pair.

The offline pair is trained here on a tiny budget (a few seconds) into a temporary
cache, then loaded back through ``from_pretrained`` as the book does.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from specdec_lite.exercises.real_models import _cases, check_verify_round, verify_round
from specdec_lite.figure_data import data_tables
from specdec_lite.figures import real_models as figs
from specdec_lite.laws import residual


def test_reference_verify_round_is_right():
    for _, p, q, drafts, u in _cases():
        n, law = verify_round(p, q, drafts, u)
        b = np.minimum(1, q[np.arange(len(drafts)), drafts] / p[np.arange(len(drafts)), drafts])
        assert n == next((i for i in range(len(drafts)) if u[i] >= b[i]), len(drafts))
        assert np.isclose(law.sum(), 1)


def _student(kind):
    def fn(p, q, drafts, u):
        K = len(drafts)
        b = np.minimum(1, q[np.arange(K), drafts] / p[np.arange(K), drafts])
        if kind == "count_all":
            return int((u < b).sum()), q[K]
        if kind == "p_over_q":
            b = np.minimum(1, p[np.arange(K), drafts] / q[np.arange(K), drafts])
        n = int(np.cumprod(u < b).sum())
        if n == K:
            return n, (q[K - 1] if kind == "bonus_off_by_one" else q[K])
        if kind == "uno":
            return n, q[n]
        if kind == "no_positive_part":
            d = q[n] - p[n]
            return n, d / d.sum()
        if kind == "unnormalised":
            return n, np.maximum(q[n] - p[n], 0)
        if kind == "no_guard":
            pos = np.maximum(q[n] - p[n], 0)
            return n, pos / pos.sum() if pos.sum() > 0 else np.full_like(pos, np.nan)
        if kind == "crash":
            raise NotImplementedError
        return n, residual(p[n], q[n])

    return fn


@pytest.mark.parametrize(
    ("kind", "phrase"),
    [
        ("count_all", "first rejection"),
        ("p_over_q", "p/q"),
        ("bonus_off_by_one", "q[K], not q[K-1]"),
        ("uno", "Decoding-UNO"),
        ("no_positive_part", "negative entries"),
        ("unnormalised", "not normalised"),
        ("crash", "NotImplementedError"),
    ],
)
def test_check_verify_round_explains_typical_mistakes(kind, phrase):
    fb = check_verify_round(_student(kind))
    assert not fb.ok and phrase in fb.message, fb.message
    assert "Not yet." in str(fb)


def test_check_verify_round_accepts_a_right_answer():
    assert check_verify_round(_student("right")).ok
    assert "write it yourself" in check_verify_round(verify_round).message  # the reference is switched off


def fake_result():
    return SimpleNamespace(
        drafted=np.array([True, True, True, False, True]),
        accepted=np.array([True, True, False, False, True]),
        tv=np.array([0.1, 0.2, 0.7, np.nan, 0.3]),
        rejections=1,
        predicted_rejections=1.0,
        oracle_calls=2,
    )


def test_generation_figure_holds_the_runs_data():
    fig = figs.generation_figure(fake_result(), "PAIR", tokens=["a", "b", "c", "d", "e"])
    by = {t.name: t for t in fig.data}
    assert list(by["accepted"].x) == [1, 2, 5] and np.allclose(by["accepted"].y, [0.1, 0.2, 0.3])
    assert list(by["rejected"].x) == [3] and np.allclose(by["rejected"].y, [0.7])
    # a bonus token was never drafted: no TV in its bar (none drawn) or its table, a star on the axis instead
    bonus = next(t for t in fig.data if t.name.startswith("bonus"))
    assert list(bonus.x) == [4] and np.isnan(bonus.y).all() and bonus.meta["columns"]["token"] == ["'d'"]
    assert [a.text for a in fig.layout.annotations] == ["★"] and "no TV" in fig.layout.annotations[0].hovertext
    assert all(t.width == 0.8 for t in fig.data) and fig.layout.yaxis.range[1] < 1
    assert "PAIR" in fig.layout.title.text and "rejections: 1," in fig.layout.title.text
    # Over-acceptance: the summed TV (1.3) and the rule's expected rejections (1.0) are told apart.
    assert "Σ TV at drafted positions = 1.30 (expected rejections under this rule 1.00)" in fig.layout.title.text
    html = figs.annotated_html(["a", "<b>", "c", "d", "e"], fake_result())
    assert html.count("<span") == 5 + 3 and "&lt;b&gt;" in html
    # Kinds differ by class (line style in token_output.css), not by colour alone; the legend names each.
    assert html.count('class="sdl-tok sdl-tok-accepted"') == 3 + 1
    assert html.count('class="sdl-tok sdl-tok-rejected"') == 1 + 1
    assert all(text in html for text in figs.TOKEN_KINDS.values()) and "border-bottom" in figs.token_css()
    with pytest.raises(ValueError, match="pieces"):
        figs.annotated_html(["a"], fake_result())


def test_measurement_figures_carry_the_pair_label():
    t1 = [SimpleNamespace(prompt="x", observed=3.0, observed_se=0.2, predicted=2.9, predicted_se=0.1)]
    fig = figs.theorem1_figure(t1, "PAIR")
    assert "PAIR" in fig.layout.title.text and list(fig.data[1].x) == [2.9] and list(fig.data[1].y) == [3.0]
    assert list(fig.data[1].text) == ["1"] and list(fig.data[1].customdata) == ["'x'"]
    # prompts numbered on the plot, neighbours along x labelled on alternate sides, off the diagonal
    assert figs._alternate_sides([3.94, 5.0, 3.93, 2.0]) == [
        "top left",
        "bottom right",
        "bottom right",
        "top left",
    ]
    rows = [
        SimpleNamespace(eps=e, rejection_law=law, reject_prob=0.3 - e, loss=e / 2, loglik=-2 - e, loglik_se=0.1)
        for e in (0.0, 0.1)
        for law in ("opt", "uno")
    ]
    assert np.allclose([list(t.x) for t in figs.tradeoff_figure(rows, "PAIR").data], [[0.3, 0.2], [0.3, 0.2]])
    loglik = figs.loglik_figure(rows, "PAIR")
    assert np.allclose(loglik.data[0].y, [-2.0, -2.1])
    # the measured ε evenly spaced and ticked with their values; the laws' points side by side at each (their
    # error bars apart), the table giving the true ε
    assert np.allclose(loglik.data[0].x, [-0.08, 0.92]) and np.allclose(loglik.data[1].x, [0.08, 1.08])
    assert list(loglik.layout.xaxis.tickvals) == [0, 1] and list(loglik.layout.xaxis.ticktext) == ["0", "0.1"]
    assert all(list(t.meta["x"]) == [0.0, 0.1] for t in loglik.data)
    assert '<th scope="row">0.1</th>' in data_tables(loglik) and "0.92" not in data_tables(loglik)
    speed = [
        SimpleNamespace(method="speculative", lookahead=k, speedup=s, predicted_speedup=s + 0.1)
        for k, s in ((1, 1.2), (2, 1.5))
    ]
    speed += [
        SimpleNamespace(method="HF assisted", lookahead=2, speedup=1.1),
        SimpleNamespace(method="HF autoregressive", lookahead=0, speedup=0.9),
    ]
    fig = figs.speed_figure(speed, "PAIR")
    assert list(fig.data[0].y) == [1.2, 1.5] and list(fig.data[2].y) == [1.1]
    assert list(fig.layout.xaxis.tickvals) == [1, 2], "a tick at each lookahead measured, none between them"
    assert figs.training_figure({"target": [3.0, 2.0]}, "PAIR").data[0].y == (3.0, 2.0)


# --- the offline pair on a tiny budget ---------------------------------------------------


@pytest.fixture(scope="module")
def tiny_fallback(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from specdec_lite.llm.fallback import FallbackRecipe, ModelShape
    from specdec_lite.llm.pairs import load_fallback_pair

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    recipe = FallbackRecipe(
        corpus_bytes=40_000,
        vocab_size=300,
        seq_len=32,
        batch_size=4,
        draft=ModelShape(1, 16, 2),
        target=ModelShape(2, 32, 2),
        draft_steps=4,
        target_steps=6,
    )
    cache = tmp_path_factory.mktemp("specdec_cache")
    pair = load_fallback_pair(recipe, cache_dir=cache, progress=False)
    yield pair, recipe, cache
    torch.set_num_threads(threads)


def test_fallback_pair_trains_saves_and_loads(tiny_fallback):
    import torch

    from specdec_lite.llm.fallback import read_meta
    from specdec_lite.llm.pairs import load_fallback_pair

    pair, recipe, cache = tiny_fallback
    assert pair.source == "fallback" and "standard library" in pair.describe()
    meta = read_meta(pair.info["folder"])
    assert meta["target"]["steps"] == 6 and meta["draft"]["steps"] == 4
    assert meta["draft"]["objective"].startswith("distillation")
    assert np.isfinite(meta["target"]["losses"]).all() and meta["vocab_size"] <= 300
    assert 0 <= meta["held_out"]["mean_tv"] <= 1
    ids = pair.encode("def f(x):\n    return x")
    assert pair.decode(ids) == "def f(x):\n    return x"  # byte-level BPE round trip
    # Cached: a second load trains nothing and gives the same weights.
    again = load_fallback_pair(recipe, cache_dir=cache, progress=False)
    assert again.info["folder"] == pair.info["folder"]
    with torch.inference_mode():
        a = pair.target(input_ids=ids[None]).logits
        b = again.target(input_ids=ids[None]).logits
    torch.testing.assert_close(a, b)
    assert len(list(cache.iterdir())) == 1  # no half-written training folder left behind


def test_load_pair_prints_which_pair(tiny_fallback, capsys, monkeypatch):
    from specdec_lite.llm import load_pair, pairs

    monkeypatch.setattr(pairs, "hub_reachable", lambda timeout=3.0: False)
    pair, recipe, cache = tiny_fallback
    loaded = load_pair(fallback=recipe, cache_dir=cache, device="cpu", progress=False)
    out = capsys.readouterr().out
    assert out.startswith("Model pair: offline pair") and "hub is unreachable" in out
    assert loaded.info["folder"] == pair.info["folder"]


def test_measurements_and_explorer_on_the_tiny_pair(tiny_fallback):
    from specdec_lite.llm import measure
    from specdec_lite.widgets.real_models import generation_update

    pair, _, _ = tiny_fallback
    prompts = ["def f(", "import "]
    rows = measure.theorem1_check(pair, prompts, runs=3, max_new_tokens=6, lookahead=2, progress=False)
    assert [r.prompt for r in rows] == prompts and all(r.runs == 3 for r in rows)
    sweep = measure.eps_sweep(pair, prompts, [0.0, 0.3], runs=2, max_new_tokens=6, progress=False)
    assert [(r.eps, r.rejection_law) for r in sweep] == [(0.0, "opt"), (0.0, "uno"), (0.3, "opt"), (0.3, "uno")]
    assert abs(sweep[0].loss) < 1e-5 and all(r.loss_uno >= r.loss_opt - 1e-6 for r in sweep)
    speed, costs = measure.speed_benchmark(
        pair, prompts[:1], max_new_tokens=6, lookaheads=(2,), hf_lookaheads=(2,), progress=False
    )
    assert [r.method for r in speed] == ["autoregressive", "speculative", "HF autoregressive", "HF assisted"]
    assert speed[0].speedup == 1.0 and all(r.tokens_per_second > 0 for r in speed) and costs.c > 0
    assert "Best lookahead K = 2" in measure.speed_summary(speed, costs)
    fig = generation_update(pair, "def f(", max_new_tokens=8)(K=2, eps=0.0, seed=1)
    assert sum(len(t.x) for t in fig.data) == 8 and pair.describe() in fig.layout.title.text.replace(
        "<br>", " "
    ).replace("\xa0", " ")
    with pytest.raises(ValueError, match="prompts"):
        measure.theorem1_check(pair, "def f(", runs=3)
    with pytest.raises(ValueError, match="runs"):
        measure.theorem1_check(pair, prompts, runs=1)


def test_automatic_choice_of_pair(monkeypatch, capsys):
    """On a GPU: Pythia pairs by memory, the offline pair when the hub fails or is switched off."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from specdec_lite.llm import pairs

    asked = []
    fallback = pairs.ModelPair(None, None, None, "d", "t", "fallback", torch.device("cpu"), torch.float32)

    def hub(draft, target, **kwargs):
        asked.append((draft, target))
        raise OSError("no internet")

    monkeypatch.setattr(pairs, "pick_device", lambda device=None: torch.device("cuda"))
    monkeypatch.setattr(pairs, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(pairs, "load_named_pair", hub)
    monkeypatch.setattr(pairs, "load_fallback_pair", lambda *a, **k: fallback)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: SimpleNamespace(total_memory=16 * 2**30))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    assert pairs.load_pair() is fallback
    assert asked == [pairs.COLAB_PAIR] and "could not load EleutherAI/pythia-1b" in capsys.readouterr().out
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: SimpleNamespace(total_memory=80 * 2**30))
    pairs.load_pair(verbose=False)
    assert asked[-1] == pairs.PAPER_PAIR
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pairs.load_pair()
    assert len(asked) == 2 and "HF_HUB_OFFLINE is set" in capsys.readouterr().out
