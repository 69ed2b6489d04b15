"""The one command that measures a pair and writes a results file, on a tiny local pair (seconds)."""

import json
import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from specdec_lite.figures import real_models as figs  # noqa: E402
from specdec_lite.llm import measure_pair as mp  # noqa: E402
from specdec_lite.llm.fallback import stdlib_texts, train_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def tiny_pair_dirs(tmp_path_factory):
    """A draft and a target in local folders, the target's holding a small BPE tokenizer."""
    root = tmp_path_factory.mktemp("measure_pair")
    tok = train_tokenizer(stdlib_texts(20_000), 300)
    for name, layers, seed in (("draft", 1, 0), ("target", 2, 1)):
        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=layers,
                                         num_attention_heads=2, intermediate_size=32, max_position_embeddings=128)
        transformers.GPTNeoXForCausalLM(cfg).save_pretrained(root / name)
    tok.save_pretrained(root / "target")
    return root


@pytest.fixture(scope="module")
def written(tiny_pair_dirs):
    before = torch.get_num_threads()
    out = tiny_pair_dirs / "results"
    path = mp.main(["--draft", str(tiny_pair_dirs / "draft"), "--target", str(tiny_pair_dirs / "target"),
                    "--device", "cpu", "--out", str(out), "--runs", "3", "--tokens", "5", "--prompts", "2",
                    "--lookaheads", "1,2", "--hf-lookaheads", "2", "--eps", "0,0.2", "--threads", "1",
                    "--no-progress"])
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
    assert math.isclose(t1["pooled"]["difference"], t1["pooled"]["observed"] - t1["pooled"]["predicted"],
                        abs_tol=1e-9)
    # Rejections per run, observed, are whole numbers averaged over 6 runs.
    assert math.isclose(6 * t1["pooled"]["observed"], round(6 * t1["pooled"]["observed"]), abs_tol=1e-9)
    methods = [(row["method"], row["lookahead"]) for row in r["speed"]["rows"]]
    assert methods == [("autoregressive", 0), ("speculative", 1), ("speculative", 2), ("HF autoregressive", 0),
                       ("HF assisted", 2)]
    assert r["speed"]["rows"][0]["speedup"] == 1.0 and "Best lookahead K" in r["speed"]["summary"]
    sweep = r["eps_sweep"]["rows"]
    assert [(row["eps"], row["rejection_law"]) for row in sweep] == [(0.0, "opt"), (0.0, "uno"), (0.2, "opt"),
                                                                     (0.2, "uno")]
    assert abs(sweep[0]["loss"]) < 1e-5  # Decoding-OPT at eps = 0 is unbiased


def test_results_read_back_into_the_chapters_rows_and_figures(written):
    path, _ = written
    (r,) = mp.load_results(path.parent)
    assert r["file"] == path.name
    t1, speed, sweep = mp.result_rows(r)
    assert [row.runs for row in t1] == [3, 3] and speed[1].method == "speculative" and len(sweep) == 4
    assert math.isnan(speed[0].predicted_speedup)  # null in the file, NaN again
    label = mp.results_label(r)
    assert label.startswith("CPU (") and "float32" in label and "draft " in label
    assert label in figs.theorem1_figure(t1, label).layout.title.text
    assert figs.speed_figure(speed, label).data[0].y == tuple(row.speedup for row in speed if row.method ==
                                                              "speculative")
    table = mp.results_table(r)
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


def test_command_line_errors():
    with pytest.raises(SystemExit):
        mp.parse_args(["--draft", "x"])
    s = mp.settings_from(mp.parse_args(["--quick", "--runs", "10", "--tokens", "7"]))
    assert s.theorem1_runs == 10 and s.eps_runs == 2 and s.speed_tokens == s.eps_tokens == 7
    assert s.lookaheads == mp.QUICK.lookaheads
