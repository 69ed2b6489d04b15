"""The one command that measures a pair and writes a results file, on a tiny local pair (seconds)."""

import json
import math
import re

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from specdec_lite.figures import real_models as figs  # noqa: E402
from specdec_lite.llm import measure  # noqa: E402
from specdec_lite.llm import measure_pair as mp  # noqa: E402
from specdec_lite.llm.fallback import stdlib_texts, train_tokenizer  # noqa: E402
from specdec_lite.llm.pairs import load_named_pair  # noqa: E402


@pytest.fixture(scope="module")
def tiny_pair_dirs(tmp_path_factory):
    """A draft and a target in local folders, the target's holding a small BPE tokenizer."""
    root = tmp_path_factory.mktemp("measure_pair")
    tok = train_tokenizer(stdlib_texts(20_000), 300)
    for name, layers, seed in (("draft", 1, 0), ("target", 2, 1)):
        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=len(tok),
            hidden_size=16,
            num_hidden_layers=layers,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=128,
        )
        transformers.GPTNeoXForCausalLM(cfg).save_pretrained(root / name)
    tok.save_pretrained(root / "target")
    return root


@pytest.fixture(scope="module")
def tiny_pair(tiny_pair_dirs):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_named_pair(tiny_pair_dirs / "draft", tiny_pair_dirs / "target", device="cpu")
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def written(tiny_pair_dirs):
    before = torch.get_num_threads()
    out = tiny_pair_dirs / "results"
    path = mp.main(
        [
            "--draft",
            str(tiny_pair_dirs / "draft"),
            "--target",
            str(tiny_pair_dirs / "target"),
            "--device",
            "cpu",
            "--out",
            str(out),
            "--runs",
            "3",
            "--tokens",
            "5",
            "--prompts",
            "2",
            "--lookaheads",
            "1,2",
            "--hf-lookaheads",
            "2",
            "--eps",
            "0,0.2",
            "--threads",
            "1",
            "--no-progress",
        ]
    )
    torch.set_num_threads(before)
    return path, json.loads(path.read_text())


def test_results_file_holds_every_measurement(written):
    path, r = written
    assert path.name == "cpu-draft-to-target.json" and r["schema"] == mp.SCHEMA
    assert r["device"]["type"] == "cpu" and r["device"]["name"] and r["dtype"] == "float32"
    assert r["pair"]["draft"].endswith("draft") and r["pair"]["layers"] == {"draft": 1, "target": 2}
    assert r["command"].startswith("python -m specdec_lite.llm.measure_pair --draft")
    c = r["call_costs"]
    assert c["draft_s"] > 0 and c["target_s"] > 0 and math.isclose(c["c"], c["draft_s"] / c["target_s"])
    assert set(c["verify_s"]) == set(c["c_K"]) == {"1", "2"}
    assert math.isclose(c["c_K"]["2"], c["verify_s"]["2"] / c["target_s"])
    a = r["acceptance"]
    assert 0 <= a["alpha"] <= 1 and 0 <= a["alpha_predicted"] <= 1 and set(a["by_lookahead"]) == {"1", "2"}
    t1 = r["theorem1"]
    assert len(t1["rows"]) == 2 and t1["pooled"]["runs"] == 6
    assert math.isclose(t1["pooled"]["difference"], t1["pooled"]["observed"] - t1["pooled"]["predicted"], abs_tol=1e-9)
    # Rejections per run, observed, are whole numbers averaged over 6 runs.
    assert math.isclose(6 * t1["pooled"]["observed"], round(6 * t1["pooled"]["observed"]), abs_tol=1e-9)
    methods = [(row["method"], row["lookahead"]) for row in r["speed"]["rows"]]
    assert methods == [
        ("autoregressive", 0),
        ("speculative", 1),
        ("speculative", 2),
        ("HF autoregressive", 0),
        ("HF assisted", 2),
    ]
    assert r["speed"]["rows"][0]["speedup"] == 1.0 and "Best lookahead K" in r["speed"]["summary"]
    sweep = r["eps_sweep"]["rows"]
    assert [(row["eps"], row["rejection_law"]) for row in sweep] == [
        (0.0, "opt"),
        (0.0, "uno"),
        (0.2, "opt"),
        (0.2, "uno"),
    ]
    assert abs(sweep[0]["loss"]) < 1e-5  # Decoding-OPT at eps = 0 is unbiased
    budget = r["budget"]  # the command's default budget, ample for this pair: nothing cut
    assert budget["budget_s"] == mp.DEFAULT_BUDGET_S and budget["fits"] and budget["cuts"] == []
    assert budget["requested"] == r["settings"] and r["settings"]["theorem1_runs"] == 3
    assert (
        set(budget["predicted_s"])
        == set(budget["actual_s"])
        == {"calibration", "speed", "theorem1", "eps_sweep", "total"}
    )
    assert set(budget["first_predicted_s"]) == {"spent", "speed", "theorem1", "eps_sweep", "total"}
    assert budget["predicted_s"]["total"] <= mp.DEFAULT_BUDGET_S
    assert all(v > 0 for v in budget["actual_s"].values())
    cal = budget["calibration"]
    assert set(cal["verify"]) == {"1", "4"} and 0 <= cal["alpha"] <= 1 and cal["target"] > 0  # K = 1 .. 4


def test_results_read_back_into_the_chapters_rows_and_figures(written):
    path, _ = written
    (r,) = mp.load_results(path.parent)
    assert r["file"] == path.name
    t1, speed, sweep = mp.result_rows(r)
    assert [row.runs for row in t1] == [3, 3] and speed[1].method == "speculative" and len(sweep) == 4
    assert math.isnan(speed[0].predicted_speedup)  # null in the file, NaN again
    label = mp.results_label(r)
    assert label.startswith("CPU (") and "float32" in label and "draft " in label
    assert label in figs.theorem1_figure(t1, label).layout.title.text.replace("<br>", " ").replace(
        "\xa0", " "
    )  # wrapped
    assert figs.speed_figure(speed, label).data[0].y == tuple(
        row.speedup for row in speed if row.method == "speculative"
    )
    table = re.sub(r"<[^>]+>", "", mp.results_table(r))
    assert path.name in table and "speculative, K = 2" in table and "HF assisted generation, K = 2" in table
    bad = path.parent / "old.json"
    bad.write_text(json.dumps({"schema": 0}))
    with pytest.raises(ValueError, match="schema 0"):
        mp.load_results(path.parent)
    bad.unlink()


def test_committed_results_files_render():
    """Every results file in the repository (Chapter 8 renders them all) is complete and names its device."""
    found = mp.load_results()
    assert found, "no results file under benchmarks/real_models"
    for r in found:
        assert r["file"] == mp.results_name(r)
        assert r["device"]["type"] in mp.results_label(r).lower() or r["device"]["name"] in mp.results_label(r)
        mp.results_table(r)
        mp.result_rows(r)


def test_the_results_figures_stack_one_panel_per_file_with_each_files_points():
    """Figures 8.6–8.8: each stacks one panel per results file under its title, and each panel draws that
    file's own points (the per-file figure's traces, on that panel's axes)."""
    from specdec_lite.figures import real_models as figs

    found = mp.load_results()
    rows = [mp.result_rows(r) for r in found] * 2  # two panels even when one file is committed
    titles = [f"file {i}" for i in range(len(rows))]
    results = figs.results_figures(rows, titles)
    assert set(results) == set(figs.RESULTS_TITLES)
    single = {"theorem1": figs.theorem1_figure, "speed": figs.speed_figure, "tradeoff": figs.tradeoff_figure}
    for key, fig in results.items():
        assert fig.layout.title.text.startswith(figs.RESULTS_TITLES[key])
        assert [a.text for a in fig.layout.annotations if a.text in titles] == titles
        i = ("theorem1", "speed", "tradeoff").index(key)
        for n, file_rows in enumerate(rows, start=1):
            own = single[key](file_rows[i], titles[n - 1]).data
            axis = "x" if n == 1 else f"x{n}"
            drawn = [t for t in fig.data if t.xaxis == axis]
            assert [list(t.x) for t in drawn] == [list(t.x) for t in own]
            assert [list(t.y) for t in drawn] == [list(t.y) for t in own]
    with pytest.raises(ValueError, match="one per results file"):
        figs.results_figures(rows, titles[:1])


def test_a_small_budget_cuts_in_order_and_records_the_plan(tiny_pair, recwarn):
    budget_s = 2.0
    r = mp.measure_pair(tiny_pair, budget_s=budget_s, progress=False)
    b, s = r["budget"], r["settings"]
    if b["fits"]:
        assert b["first_predicted_s"]["total"] <= budget_s and b["summary"].startswith("budget 2 s: speed repeats 2→1")
    else:  # a very slow machine: the smallest plan, said loudly before it starts
        assert b["summary"].startswith("budget 2 s is too small")
    # Planned again after each stage at the pace so far; a plan over the budget (the machine slowed down) is a warning.
    over = not b["fits"] or not all(p["fits"] for p in b["replans"])
    assert bool([w for w in recwarn if "too small" in str(w.message)]) == over
    assert b["budget_s"] == budget_s
    assert b["requested"] == {
        **mp.FULL.__dict__,
        "lookaheads": [1, 2, 4, 6, 8],
        "hf_lookaheads": [2, 4, 8],
        "eps_values": [0.0, 0.003, 0.01, 0.03, 0.1],
    }
    assert b["cuts"][0] == {"knob": "speed_repeats", "from": 2, "to": 1}  # the first cut of the ladder
    for cut in b["cuts"]:  # each cut is what the file measured with
        if cut["knob"] in s:
            assert s[cut["knob"]] == cut["to"]
    assert (
        r["theorem1"]["pooled"]["runs"] == s["prompts"] * s["theorem1_runs"] == len(r["prompts"]) * s["theorem1_runs"]
    )
    assert len(r["eps_sweep"]["rows"]) == 2 * len(s["eps_values"])
    assert [row["lookahead"] for row in r["speed"]["rows"] if row["method"] == "speculative"] == s["lookaheads"]
    assert all(b["actual_s"][k] > 0 for k in ("calibration", "speed", "theorem1", "eps_sweep"))
    assert [p["after"] for p in b["replans"]] == ["speed", "theorem1"] and all(p["pace"] > 0 for p in b["replans"])
    assert set(b["replans"][-1]["predicted_s"]) == {"spent", "eps_sweep", "total"}  # what was left to measure
    assert b["replans"][-1]["predicted_s"]["spent"] > b["actual_s"]["calibration"] + b["actual_s"]["speed"]
    assert all(p["predicted_s"]["total"] <= budget_s for p in b["replans"] if p["fits"])  # spent + what is left
    assert math.isclose(b["actual_s"]["total"], sum(v for k, v in b["actual_s"].items() if k != "total"))
    assert mp.outcome(r).startswith("measured in ") and "Theorem 1" in mp.outcome(r)


def test_measure_pair_checks_its_arguments_before_measuring(tiny_pair):
    with pytest.raises(ValueError, match="prompts: expected a list of strings, got one string"):
        mp.measure_pair(tiny_pair, prompts="w1 w2", progress=False)
    with pytest.raises(ValueError, match="prompts"):
        mp.measure_pair(tiny_pair, prompts=["w1", ""], progress=False)
    for bad in (0, -5, True, math.nan):
        with pytest.raises(ValueError, match="budget_s"):
            mp.measure_pair(tiny_pair, budget_s=bad, progress=False)
    with pytest.raises(ValueError, match="settings"):
        mp.measure_pair(tiny_pair, {"runs": 2}, progress=False)
    with pytest.raises(ValueError, match="lookaheads"):
        mp.MeasureSettings(lookaheads=())
    prompts = ["def f(", "import "]
    for eps in ([0.0, -0.1], [True], [math.inf], []):
        with pytest.raises(ValueError, match="eps_values"):
            measure.eps_sweep(tiny_pair, prompts, eps, runs=2, max_new_tokens=2, progress=False)
    with pytest.raises(ValueError, match="eps"):
        measure.sample_runs(tiny_pair, prompts, runs=2, max_new_tokens=2, lookahead=2, eps=True, progress=False)
    with pytest.raises(ValueError, match="temperature"):
        measure.sample_runs(tiny_pair, prompts, runs=2, max_new_tokens=2, lookahead=2, temperature=True, progress=False)
    with pytest.raises(ValueError, match="lookaheads"):
        measure.speed_benchmark(tiny_pair, prompts, max_new_tokens=2, lookaheads=(), progress=False)
    costs = measure.CallCosts(draft=0.1, target=1.0, verify={1: 1.1, 2: 1.2})
    with pytest.raises(ValueError, match="K: no verification cost measured for K = 3"):
        measure.predicted_speedup(0.5, 3, costs)
    with pytest.raises(ValueError, match="alpha"):
        measure.predicted_speedup(True, 2, costs)


def test_a_file_that_is_not_json_is_named(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json: not a results file"):
        mp.load_results(tmp_path)
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="broken.json: not a results file"):
        mp.load_results(tmp_path)


def test_command_line_errors(capsys, tmp_path):
    with pytest.raises(SystemExit):
        mp.parse_args(["--draft", "x"])
    s = mp.settings_from(mp.parse_args(["--quick", "--runs", "10", "--tokens", "7"]))
    assert s.theorem1_runs == 10 and s.eps_runs == 2 and s.speed_tokens == s.eps_tokens == 7
    assert s.lookaheads == mp.QUICK.lookaheads
    assert mp.parse_args([]).budget == mp.DEFAULT_BUDGET_S and mp.parse_args(["--budget", "0"]).budget is None
    assert mp.parse_args(["--budget", "90"]).budget == 90.0
    assert mp.settings_from(mp.parse_args(["--hf-lookaheads", ""])).hf_lookaheads == ()  # no Hugging Face
    for argv, flag in (
        (["--tokens", "0"], "--tokens"),
        (["--runs", "0"], "--runs"),
        (["--runs", "1"], "--runs"),
        (["--prompts", "0"], "--prompts"),
        (["--lookaheads", ""], "--lookaheads"),
        (["--lookaheads", "1,0"], "--lookaheads"),
        (["--lookaheads", "2,2"], "--lookaheads"),
        (["--eps=0,-0.1"], "--eps"),
        (["--eps", "x"], "--eps"),
        (["--budget", "-1"], "--budget"),
        (["--budget", "nan"], "--budget"),
        (["--threads", "0"], "--threads"),
    ):
        with pytest.raises(SystemExit):
            mp.parse_args(argv)
        assert f"argument {flag}" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # before any pair is loaded or any file written
        mp.main(["--eps=0,-0.1", "--out", str(tmp_path)])
    assert not list(tmp_path.iterdir())


def test_a_padded_pair_is_measured_without_hugging_faces_assisted_generation(tiny_pair_dirs, capsys):
    """A draft with more logits than the target (a padded table): our engine measures it, Hugging Face's refuses it."""
    torch.manual_seed(2)
    padded = tiny_pair_dirs / "padded-draft"
    cfg = transformers.GPTNeoXConfig(
        vocab_size=320,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    transformers.GPTNeoXForCausalLM(cfg).save_pretrained(padded)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pair = load_named_pair(padded, tiny_pair_dirs / "target", device="cpu")
        settings = mp.MeasureSettings(
            lookaheads=(1, 2),
            hf_lookaheads=(2,),
            speed_tokens=4,
            speed_repeats=1,
            theorem1_runs=2,
            theorem1_tokens=4,
            eps_values=(0.0,),
            eps_runs=2,
            eps_tokens=4,
            prompts=1,
        )
        r = mp.measure_pair(pair, settings, progress=True)
    finally:
        torch.set_num_threads(before)
    assert "refuses a pair whose numbers of logits differ (draft 320, target" in capsys.readouterr().out
    assert {row["method"] for row in r["speed"]["rows"]} == {"autoregressive", "speculative"}
    assert r["settings"]["hf_lookaheads"] == [] and r["theorem1"]["pooled"]["runs"] == 2


def test_the_measure_a_pair_workflow_runs_this_command():
    """The manual workflow's command parses with this command line, and its results file is kept as an artifact."""
    import shlex
    from pathlib import Path

    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((Path(__file__).resolve().parents[1] / ".github/workflows/measure-pair.yml").read_text())
    inputs = flow[True]["workflow_dispatch"]["inputs"]  # YAML reads the key `on` as True
    steps = {s.get("name", s.get("uses", "")): s for s in flow["jobs"]["measure"]["steps"]}
    env = {k: v.replace("${{ inputs.", "").replace(" }}", "") for k, v in steps["Measure"]["env"].items()}
    command = steps["Measure"]["run"]
    for var, name in env.items():
        command = command.replace(f'"${var}"', shlex.quote(str(inputs[name]["default"])))
    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "specdec_lite.llm.measure_pair"]
    args = mp.parse_args(words[3:])
    assert (args.draft, args.target, args.device) == ("EleutherAI/pythia-70m", "EleutherAI/pythia-410m", "cpu")
    assert args.budget > 0 and args.out == "measured/"
    upload = next(s for s in steps.values() if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "measured/*.json" and upload["with"]["if-no-files-found"] == "error"


def test_a_graded_notebooks_measurement_runs_its_smallest_plan(tiny_pair, monkeypatch, recwarn, capsys):
    """With ``budget.GRADED_VARIABLE`` set (the grader sets it in a graded kernel: no score depends on a
    measurement), ``measure_pair`` measures its smallest plan whatever the budget, says so in one line and warns of
    nothing; without it, the budget is the one given."""
    from specdec_lite.classroom.execute import GRADED_VARIABLE
    from specdec_lite.llm import budget

    assert budget.GRADED_VARIABLE == GRADED_VARIABLE  # the grader's copy of the name (it does not import torch)
    settings = mp.MeasureSettings(
        lookaheads=(1, 2, 4),
        hf_lookaheads=(),
        speed_tokens=6,
        theorem1_runs=3,
        theorem1_tokens=6,
        eps_values=(0.0, 0.1, 0.2),
        eps_runs=3,
        eps_tokens=6,
        prompts=2,
    )
    monkeypatch.setenv(GRADED_VARIABLE, "1")
    assert budget.graded()
    r = mp.measure_pair(tiny_pair, settings, budget_s=300)
    assert r["budget"]["budget_s"] == budget.GRADED_BUDGET_S and not r["budget"]["fits"]
    floors = budget.plan_measurement(settings, budget.Calibration(1.0, 1.0, {1: 1.0, 4: 1.0}, 0.5), 1e-9).settings
    assert r["settings"]["prompts"] == floors.prompts == 1 and r["settings"]["lookaheads"] == list(floors.lookaheads)
    assert r["settings"]["theorem1_runs"] == floors.theorem1_runs == 2
    assert "smallest plan" in capsys.readouterr().out
    assert not [w for w in recwarn if "too small" in str(w.message)]
    monkeypatch.delenv(GRADED_VARIABLE)
    assert not budget.graded()
