"""The model-shapes command: Pythia's shapes, the timing on tiny shapes through the same code, budget and skips,
the results file and its reader, and the command line's errors."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specdec_lite.llm import shape_costs as sc  # noqa: E402
from specdec_lite.llm import shapes as sh  # noqa: E402
from specdec_lite.llm.pairs import pick_dtype  # noqa: E402
from specdec_lite.llm.speed import CallCosts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
#: Three GPT-NeoX shapes small enough to time in well under a second each.
TINY = {
    "tiny-1": sh.Shape(layers=1, hidden=16, heads=2, intermediate=32, vocab=64, max_positions=64),
    "tiny-2": sh.Shape(layers=2, hidden=32, heads=2, intermediate=64, vocab=64, max_positions=64),
    "tiny-3": sh.Shape(layers=3, hidden=64, heads=4, intermediate=128, vocab=64, max_positions=64),
}
CONTEXTS = (4, 16)
#: "Non-Embedding Params" of the Pythia model cards (embeddings: 2 x 50304 x hidden, in and out).
PYTHIA_NON_EMBEDDING = {
    "pythia-70m": 18_915_328,
    "pythia-160m": 85_056_000,
    "pythia-410m": 302_311_424,
    "pythia-1b": 805_736_448,
    "pythia-2.8b": 2_517_652_480,
}


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def measured():
    """The tiny shapes timed on the CPU, planned with just enough memory for the two smaller ones."""
    free = sh.memory_needed(TINY["tiny-2"], torch.float32, CONTEXTS)
    return sh.measure_shapes(
        TINY,
        device=CPU,
        dtype=torch.float32,
        contexts=CONTEXTS,
        repeats=3,
        budget_s=120,
        free_bytes=free,
        clock="cpu",
        progress=False,
    )


def test_the_shapes_are_pythias():
    """Layers, width and heads of EleutherAI/pythia's configs; parameters as the model cards count them."""
    published = {
        "pythia-70m": (6, 512, 8),
        "pythia-160m": (12, 768, 12),
        "pythia-410m": (24, 1024, 16),
        "pythia-1b": (16, 2048, 8),
        "pythia-2.8b": (32, 2560, 32),
    }
    assert list(sh.PYTHIA_SHAPES) == list(published)
    for name, shape in sh.PYTHIA_SHAPES.items():
        assert (shape.layers, shape.hidden, shape.heads) == published[name]
        assert shape.intermediate == 4 * shape.hidden and shape.vocab == 50304 and shape.rotary_pct == 0.25
        assert shape.parameters() - 2 * shape.vocab * shape.hidden == PYTHIA_NON_EMBEDDING[name], name


@pytest.mark.slow
@pytest.mark.parametrize("shape", [TINY["tiny-3"], sh.PYTHIA_SHAPES["pythia-70m"]])
def test_parameter_count_is_the_model_transformers_builds(shape):
    with torch.device("meta"):
        model = transformers.GPTNeoXForCausalLM(shape.config())
    assert sum(p.numel() for p in model.parameters()) == shape.parameters()
    cfg = model.config
    assert cfg.use_parallel_residual and not cfg.tie_word_embeddings
    assert model.get_output_embeddings().weight.shape == (shape.vocab, shape.hidden)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_build_makes_the_weights_in_their_dtype(dtype):
    before = torch.get_default_dtype()
    model = sh.build(TINY["tiny-1"], CPU, dtype, seed=3)
    assert torch.get_default_dtype() == before
    assert {p.dtype for p in model.parameters()} == {dtype} and not model.training
    again = sh.build(TINY["tiny-1"], CPU, dtype, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True))
    assert pick_dtype(CPU) == torch.float32  # the CPU's native dtype, which the command takes by default


def test_memory_needed_counts_weights_and_caches():
    shape = TINY["tiny-2"]
    weights = shape.parameters() * 2
    cache = 2 * shape.layers * shape.hidden * (4 + 16 + 2 * 9) * 2
    assert sh.memory_needed(shape, torch.bfloat16, CONTEXTS) == weights + cache + sh.MEMORY_SLACK_BYTES


def test_admit_names_the_cause():
    assert sh.admit("m", need_bytes=10, free_bytes=None, predicted_s=None, left_s=0.0) is None
    assert sh.admit("m", need_bytes=10, free_bytes=10, predicted_s=5.0, left_s=5.0) is None
    memory = sh.admit("m", need_bytes=3 * 2**30, free_bytes=2**30, predicted_s=1.0, left_s=100.0)
    assert memory.startswith("m does not fit in memory") and "3.0 GiB" in memory and "1.0 GiB" in memory
    late = sh.admit("m", need_bytes=1, free_bytes=2**30, predicted_s=90.0, left_s=30.0)
    assert late.startswith("m does not fit in the time left") and "90 s" in late and "30 s" in late


def test_prediction_scales_every_part_by_the_parameters():
    t = sh.ModelTiming(
        build_s=1.0,
        prefill_s={4: 0.5, 16: 1.5},
        seconds={4: {1: [0.2, 0.1], 2: [0.3, 0.4]}, 16: {1: [0.5, 0.6], 2: [0.7, 0.9]}},
        total_s=7.0,
    )
    assert t.repeats == 2 and t.repetition_s() == pytest.approx(0.1 + 0.3 + 0.5 + 0.7)
    assert sh.predict_seconds(t, 100, 300, 4) == pytest.approx(3 * (1.0 + 6.0 * 5 / 3))
    assert sh.predict_seconds(t, 100, 100, 2) == pytest.approx(7.0)  # the same model again: its own wall time


def test_timing_records_every_call_and_the_ratios(measured):
    r = measured
    assert list(r["models"]) == ["tiny-1", "tiny-2"] and r["draft"] == "tiny-1"
    assert [s["model"] for s in r["skipped"]] == ["tiny-3"] and "does not fit in memory" in r["skipped"][0]["reason"]
    for name, m in r["models"].items():
        assert m["parameters"] == TINY[name].parameters() and m["shape"] == TINY[name].record()
        assert sh.MIN_REPEATS <= m["repeats"] <= 3
        assert set(m["call_s"]) == {"4", "16"} and set(m["call_s"]["4"]) == {str(n) for n in range(1, 10)}
        for L, per in m["call_s"].items():
            assert all(0 < per[n] <= m["median_call_s"][L][n] for n in per)
            for K in sh.LOOKAHEADS:
                assert m["c_K"][L][str(K)] == per[str(K + 1)] / per["1"]
    assert r["settings"]["lookaheads"] == list(range(1, 9)) and r["settings"]["contexts"] == [4, 16]
    assert r["settings"]["clock"] == "cpu" and "timed in CPU seconds" in r["label"]


def test_the_cpu_clock_is_for_one_thread_on_a_cpu():
    with pytest.raises(ValueError, match="clock: expected one of wall, cpu"):
        sh.measure_shapes(TINY, device=CPU, dtype=torch.float32, clock="gpu", progress=False)
    torch.set_num_threads(2)
    try:
        with pytest.raises(ValueError, match="here the device is cpu with 2 torch thread"):
            sh.measure_shapes(TINY, device=CPU, dtype=torch.float32, clock="cpu", progress=False)
    finally:
        torch.set_num_threads(1)


def test_the_file_is_labelled_with_device_dtype_torch_and_random_weights(measured, tmp_path):
    path = sh.write_results(measured, tmp_path)
    assert path.name == "cpu-float32.json"
    data = json.loads(path.read_text())
    assert data["kind"] == sh.KIND and data["schema"] == sh.SCHEMA
    assert data["weights"] == "random weights, shapes of tiny-1, tiny-2"
    assert data["dtype"] == "float32" and data["device"]["type"] == "cpu"
    assert data["versions"]["torch"] == torch.__version__
    label = data["label"]
    for part in ("CPU", "float32", f"torch {torch.__version__}", "random weights, shapes of tiny-1, tiny-2"):
        assert part in label, part


def test_a_budget_too_small_keeps_the_smallest_and_names_the_rest():
    r = sh.measure_shapes(
        TINY, device=CPU, dtype=torch.float32, contexts=(4,), repeats=2, budget_s=1e-3, progress=False
    )
    assert list(r["models"]) == ["tiny-1"] and r["models"]["tiny-1"]["repeats"] == sh.MIN_REPEATS
    assert [s["model"] for s in r["skipped"]] == ["tiny-2", "tiny-3"]
    assert all("does not fit in the time left" in s["reason"] for s in r["skipped"])


def test_no_memory_for_any_shape_is_an_error():
    with pytest.raises(RuntimeError, match="no model shape fits this device: tiny-1 does not fit in memory"):
        sh.measure_shapes(TINY, device=CPU, dtype=torch.float32, contexts=(4,), free_bytes=1, progress=False)


def test_the_chapters_reader_predicts_with_the_wall_clock_model(measured, tmp_path):
    sh.write_results(measured, tmp_path)
    (found,) = sc.load_shape_results(tmp_path)
    assert found["file"] == "cpu-float32.json"
    assert sc.predicted_pair(found) == ("tiny-1", "tiny-2") and sc.reference_context(found) == 16
    costs = sc.call_costs(found, "tiny-1", "tiny-2", 16)
    p, q = found["models"]["tiny-1"]["call_s"]["16"], found["models"]["tiny-2"]["call_s"]["16"]
    assert costs.c == p["1"] / q["1"] and costs.verify[8] == q["9"]
    alphas = [0.0, 0.5, 0.9, 1.0]
    curves = sc.speedup_curves(costs, alphas)
    for K, ys in curves.items():
        for a, y in zip(alphas, ys, strict=True):
            tokens = K + 1 if a == 1 else (1 - a ** (K + 1)) / (1 - a)
            assert y == pytest.approx(tokens * q["1"] / (K * p["1"] + q[str(K + 1)]), rel=1e-12)
    best = sc.best_lookaheads(curves)
    top = sc.best_speedups(curves, best)
    for i in range(len(alphas)):
        # K = 0 (no drafting, speed-up 1) competes: the best choice is never worse than autoregressive sampling
        assert top[i] == max(1.0, *(curves[K][i] for K in curves))
        assert (best[i] == 0) == all(curves[K][i] <= 1 for K in curves)
    rows = sc.cost_rows(found)
    assert len(rows) == 4 and {r["model"] for r in rows} == {"tiny-1", "tiny-2"}
    table = sc.costs_table(found)
    text = re.sub(r"<[^>]+>", "", table)
    assert "cpu-float32.json" in text and "random weights, shapes of tiny-1, tiny-2" in text
    assert "tiny-3 does not fit in memory" in text and "\\(c_{8}\\)" in table
    # each hyphenated name is one unit on the page's line, in the label and in the rows
    assert '<span class="sd-whole-unit">cpu-float32</span>.json' in table
    assert table.count('<span class="sd-whole-unit">tiny-1</span>') >= 3
    assert "tiny-2: one-token call" in sc.summary(found)


def test_the_reader_refuses_other_files(measured, tmp_path):
    assert sc.load_shape_results(tmp_path / "none") == []
    (tmp_path / "pair.json").write_text(json.dumps({**measured, "kind": "pair"}))
    with pytest.raises(ValueError, match=r"pair.json: a file of kind 'pair'"):
        sc.load_shape_results(tmp_path)
    broken = {k: v for k, v in measured.items() if k != "models"}
    (tmp_path / "pair.json").write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="not a shapes results file \\(no models\\)"):
        sc.load_shape_results(tmp_path)
    bad = json.loads(json.dumps(measured))
    bad["models"]["tiny-2"]["call_s"]["16"]["9"] = 0
    (tmp_path / "pair.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="tiny-2 lacks a positive call time for context 16"):
        sc.load_shape_results(tmp_path)
    (tmp_path / "pair.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="a JSON list, not an object"):
        sc.load_shape_results(tmp_path)
    with pytest.raises(ValueError, match="pythia-2.8b: not measured"):
        sc.call_costs(measured, "tiny-1", "pythia-2.8b", 16)
    with pytest.raises(ValueError, match="context: 5 was not measured"):
        sc.call_costs(measured, "tiny-1", "tiny-2", 5)


def test_the_predicted_speedup_figure_marks_the_best_k(measured):
    from specdec_lite.figures import real_models as figs

    costs = sc.call_costs(measured, "tiny-1", "tiny-2", 16)
    alphas = [i / 10 for i in range(11)]
    curves = sc.speedup_curves(costs, alphas)
    best = sc.best_lookaheads(curves)
    fig = figs.predicted_speedup_figure(alphas, curves, best, "LABEL")
    # the line of autoregressive sampling last, over the markers that lie on it where the best K is 0
    assert [t.name for t in fig.data] == [f"K = {K}" for K in range(1, 9)] + [
        "speed-up at the best K of this α (K = 0: no drafting)",
        "autoregressive sampling",
    ]
    speedups = list(sc.best_speedups(curves, best))
    marked = [alphas.index(x) for x in fig.data[-2].x]
    assert list(fig.data[-2].y) == [speedups[i] for i in marked]
    assert set(marked) >= {i for i, K in enumerate(best) if K}  # every α whose best K drafts is marked
    assert fig.data[-1].y == (1.0, 1.0) and fig.data[-1].line.dash == "dash"
    assert "LABEL" in fig.layout.title.text and "not a measured speed-up" in fig.layout.title.text
    changes = 1 + sum(int(best[i] != best[i - 1]) for i in range(1, len(best)))
    assert len([a for a in fig.layout.annotations if a.text.startswith("K = ")]) == changes


def test_the_predicted_speedup_figure_thins_the_rings_of_no_drafting():
    """Where the best K is 0 the rings lie side by side on the line at 1: every fifth α keeps one, and so does
    the last α before drafting pays; every α where it pays keeps its dot."""
    from specdec_lite.figures import real_models as figs

    alphas = [i / 20 for i in range(15)]
    best = [0] * 12 + [3] * 3
    curves = {3: [0.5 + a for a in alphas]}
    fig = figs.predicted_speedup_figure(alphas, curves, best, "LABEL")
    marks = fig.data[-2]
    assert [alphas.index(x) for x in marks.x] == [0, 5, 10, 11, 12, 13, 14]
    assert list(marks.marker.symbol) == ["circle-open"] * 4 + ["circle"] * 3
    assert list(marks.y) == [1.0] * 4 + [curves[3][i] for i in (12, 13, 14)]


def test_the_predicted_speedup_panels_name_each_file_and_lay_the_legend_under_the_plots(measured):
    """Figure 8.9: a panel per file headed by its machine and shapes; the legend in rows under the plots (beside
    them it needed a scroll bar); labels of close changes of the best K raised one over the other, no arrows."""
    from specdec_lite.figures import real_models as figs

    alphas = [i / 10 for i in range(11)]
    curves = sc.speedup_curves(sc.call_costs(measured, "tiny-1", "tiny-2", 16), alphas)
    panel = (sc.panel_label(measured), "tiny-1", "tiny-2", 16, curves, sc.best_lookaheads(curves))
    fig = figs.predicted_speedup_panels(alphas, [panel, panel])
    titles = [a.text for a in fig.layout.annotations if not a.text.startswith("K = ")]
    assert titles == [f"{sc.panel_label(measured)}<br>shapes tiny-1 → tiny-2, context 16"] * 2
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0
    notes = figs._best_k_labels([0.0, 0.5, 0.8, 0.84, 0.92, 1.0], [1, 1, 1, 1.1, 1.5, 2], [0, 0, 4, 7, 8, 8])
    assert [(n["text"], n["yshift"]) for n in notes] == [("K = 0", 5), ("K = 4", 5), ("K = 7", 20), ("K = 8", 35)]
    assert not any(n["showarrow"] for n in notes)


def test_committed_shapes_files_read_and_predict():
    """Chapter 8 renders every committed shapes file: each reads, names its shapes and predicts for a pair."""
    found = sc.load_shape_results()
    assert found, "no shapes results file under benchmarks/real_models/shapes"
    for r in found:
        assert r["file"] == sh.results_name(r) and r["label"] == sh.results_label(r)
        assert r["weights"] == sh.weights_label(list(r["models"])) and set(r["models"]) <= set(sh.PYTHIA_SHAPES)
        assert sc.predicted_pair(r) is not None and r["file"] in re.sub(r"<[^>]+>", "", sc.costs_table(r))


def test_bfloat16_calls_are_timed_through_the_same_code():
    model = sh.build(TINY["tiny-2"], CPU, torch.bfloat16)
    prefill, seconds = sh.time_calls(model, (4,), repeats=2)
    assert set(prefill) == {4} and all(len(v) == 2 and min(v) > 0 for v in seconds[4].values())


@pytest.mark.slow
def test_the_offline_pair_is_measured_on_the_same_device(tmp_path):
    """What the command runs after the shapes on a GPU, here on the CPU: greedy equality, then measure_pair."""
    from specdec_lite.llm import measure_pair as mp

    got = sh.measure_offline_pair(CPU, 5.0, tmp_path, progress=False)
    (written,) = mp.load_results(tmp_path)
    assert got["file"] == written["file"] == mp.results_name(written)
    assert written["greedy_equality"] == got["greedy_equality"] and len(got["greedy_equality"]) == 4
    assert all(row["equal"] and row["first_difference"] is None for row in got["greedy_equality"])  # float32
    assert "stdlib" in got["label"] and written["device"]["type"] == "cpu"


BAD_ARGS = [
    (["--models", "7b"], "unknown model '7b'"),
    (["--models", "70m,pythia-70m"], "named twice"),
    (["--budget", "-1"], "must be a number of seconds > 0"),
    (["--budget", "soon"], "must be a number of seconds > 0"),
    (["--contexts", "0"], "comma-separated integers in [1, 2039]"),
    (["--contexts", "64,5000"], "comma-separated integers in [1, 2039]"),
    (["--repeats", "1"], "must be an integer >= 2"),
    (["--dtype", "int8"], "invalid choice"),
    (["--pair", "--budget", "100", "--pair-budget", "150"], "leaves nothing of --budget 100"),
    (["--device", "meta"], "cannot run a model pair"),
    (["--clock", "cpu"], "--clock cpu needs --device cpu and --threads 1"),
    (["--clock", "cpu", "--threads", "2", "--device", "cpu"], "--clock cpu needs --device cpu and --threads 1"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_ARGS)
def test_bad_arguments_are_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        sh.parse_args(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m specdec_lite.llm.shapes: error:") and message in err


def test_defaults_follow_the_device():
    args = sh.parse_args([])
    assert args.models == tuple(sh.PYTHIA_SHAPES) and args.budget == sh.DEFAULT_BUDGET_S
    assert args.pair == (args.device.type == "cuda") and args.dtype == pick_dtype(args.device)
    assert sh.parse_args(["--device", "cpu", "--contexts", "256,32"]).contexts == (32, 256)


@pytest.mark.slow
def test_the_command_exits_2_before_any_work(tmp_path):
    cases = [["--models", "13b"]]
    if not torch.cuda.is_available():
        cases.append(["--device", "cuda"])
    for argv in cases:
        run = subprocess.run(
            [sys.executable, "-m", "specdec_lite.llm.shapes", *argv, "--out", str(tmp_path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert run.returncode == 2, run.stderr
        assert run.stderr.count("\n") == 1 and "error:" in run.stderr and run.stdout == ""
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_the_command_times_pythia_70m_and_writes_its_file(tmp_path, capsys):
    path = sh.main(
        [
            "--models",
            "70m",
            "--device",
            "cpu",
            "--contexts",
            "8",
            "--repeats",
            "2",
            "--budget",
            "120",
            "--threads",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    assert path == tmp_path / "cpu-float32.json"
    (found,) = sc.load_shape_results(tmp_path)
    assert found["weights"] == "random weights, shapes of pythia-70m" and found["pair"] is None
    m = found["models"]["pythia-70m"]
    assert m["parameters"] == 70_426_624 and math.isclose(m["weights_gib"], 70_426_624 * 4 / 2**30)
    assert found["command"].startswith("python -m specdec_lite.llm.shapes --models 70m")
    assert sc.predicted_pair(found) is None
    out = capsys.readouterr().out
    assert "pythia-70m: one-token call" in out and f"results file: {path}" in out


def test_no_drafting_competes_for_the_best_lookahead():
    """Where every lookahead predicts less than autoregressive sampling, the best choice is K = 0, at speed-up 1."""
    curves = {1: np.array([0.5, 0.9, 1.2]), 2: np.array([0.4, 1.0, 1.3]), 3: np.array([0.3, 0.8, 1.3])}
    best = sc.best_lookaheads(curves)
    assert list(best) == [0, 0, 2]  # a tie with autoregressive sampling, and between K = 2 and 3, goes to the smaller K
    assert list(sc.best_speedups(curves, best)) == [1.0, 1.0, 1.3]


def test_largest_inversion_finds_a_call_on_more_tokens_timed_cheaper():
    costs = CallCosts(draft=1.0, target=2.0, verify={1: 3.0, 2: 5.0, 3: 4.0, 4: 4.5, 5: 4.4})
    assert sc.largest_inversion(costs) == (2, 2.5, 2.0)
    monotone = CallCosts(draft=1.0, target=1.0, verify={1: 1.0, 2: 2.0, 3: 3.0})
    K, hi, lo = sc.largest_inversion(monotone)
    assert hi - lo <= 0


def test_chapter_8s_reading_of_the_committed_shapes_files_holds():
    """What Chapter 8's shapes section says of its files: CPU only (Assumption 1 fails: c_K well above 1),
    a range of acceptance rates where no lookahead beats 1 (best K = 0), and, at alpha = 0.8, two best
    lookaheads closer than the file's own timing noise (its largest inversion of c_K)."""
    alphas = np.round(np.linspace(0.0, 1.0, 51), 2)
    at = int(np.flatnonzero(alphas == 0.8)[0])
    files = [r for r in sc.load_shape_results() if sc.predicted_pair(r) is not None]
    assert files and all(r["device"]["type"] == "cpu" for r in files), (
        "a shapes file measured off a CPU is committed: rewrite the lead of Chapter 8's shapes section"
    )
    costs = sc.call_costs(files[0], *sc.predicted_pair(files[0]), sc.reference_context(files[0]))
    assert min(costs.verify[K] / costs.target for K in costs.verify) > 1.5
    curves = sc.speedup_curves(costs, alphas)
    best = sc.best_lookaheads(curves)
    top = sc.best_speedups(curves, best)
    assert best[0] == 0 and (best == 0).sum() > 1 and top[at] > 1
    runner_up = max((K for K in curves if K != best[at]), key=lambda K: curves[K][at])
    _, hi, lo = sc.largest_inversion(costs)
    assert top[at] / curves[runner_up][at] - 1 < 1 - lo / hi, "the two best lookaheads are no longer within the noise"
