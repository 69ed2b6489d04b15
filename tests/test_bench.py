"""The benchmark runs every section and reports what it promises (speed figures are never asserted)."""

import json
import re

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import bench
from specdec_lite.bench import engines, report, sections, timing
from specdec_lite.bench.sections import SECTIONS, widget_updates


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "results.json"
    results = bench.main(["--mode", "tiny", "--json", str(out)])
    return results, out


def test_json_round_trips(tiny):
    results, out = tiny
    assert json.loads(out.read_text()) == results
    assert results["schema"] == bench.SCHEMA and results["mode"] == "tiny"
    m = results["machine"]
    assert m["cores"] >= 1 and m["python"] and m["numpy"] == np.__version__


def test_every_section_ran_and_only_the_real_models_may_be_skipped(tiny):
    results, _ = tiny
    assert list(results["sections"]) == [s.name for s in SECTIONS]
    for name, sec in results["sections"].items():
        if name == "llm":
            # tiny mode never loads models, and says so; the section itself is tested on a tiny pair below
            assert "not installed" in sec["skipped"] or sec["skipped"] == bench.SIZES["tiny"].llm["off"]
            continue
        assert "skipped" not in sec, (name, sec.get("skipped"))
        assert sec["elapsed_s"] > 0 and sec["title"] == next(s.title for s in SECTIONS if s.name == name)


def test_sampler_section_structure(tiny):
    sec = tiny[0]["sections"]["samplers"]
    assert set(sec["engines"]) == {e.name for e in engines.CHAIN_ENGINES}
    spec = sec["engines"]["speculative"]
    assert spec["runs"] == bench.SIZES["tiny"].runs and spec["reference"] == "specdec_lite.reference:speculative"
    for r in sec["engines"].values():
        assert r["vectorised_s"] > 0 and r["uniforms"] > 0 and r["floor_multiple"] > 0
        assert (r["reference"] is None) == ("speedup_vs_reference" not in r)
        assert r["reference"] is not None or r["note"]


def test_scaling_sections_fit_exponents(tiny):
    results, _ = tiny
    sizes = bench.SIZES["tiny"]
    scaled = results["sections"]["sampler_scaling"]["engines"]
    assert set(scaled) == {e.name for e in engines.CHAIN_ENGINES}
    for eng in scaled.values():
        assert eng["axes"]["runs"]["x"] == list(map(float, sizes.scale_runs))
        assert np.isfinite(eng["axes"]["T"]["fit_all"]["exponent"])
    th = results["sections"]["theory_scaling"]
    axes = th["cases"]["theorem1"]["axes"]
    assert set(axes) == {"T", "V"} and axes["V"]["expected_exponent"] == 2.0
    assert axes["T"]["exponent_check"] in ("consistent", "not consistent") and "T·V²" in th["theorem1_summary"]
    assert th["theorem1_pass"]["seconds"] > 0


def test_memory_and_widget_sections(tiny):
    results, _ = tiny
    mem = results["sections"]["memory"]
    assert len(mem["tracemalloc_unchunked_bytes"]) == len(bench.SIZES["tiny"].memory_runs)
    assert mem["per_engine"]["speculative"]["bytes_per_run"] > 0
    found, notes = widget_updates()
    assert set(results["sections"]["widgets"]["updates"]) == set(found)
    assert all(key.split(":")[1].endswith("update") for key in found)


def test_targets_cover_every_section(tiny):
    results, _ = tiny
    sections = {t["section"] for t in results["targets"]}
    assert {"samplers", "theory_scaling", "memory", "llm"} <= sections
    for t in results["targets"]:
        assert t["met"] in (True, False, None) and t["target"] and t["measured"]


def test_targets_judge_synthetic_results():
    fake = {
        "sections": {
            "samplers": {
                "engines": {
                    "fast": {
                        "V": 7,
                        "T": 50,
                        "runs": 10,
                        "reference": "x",
                        "speedup_vs_reference": 60.0,
                        "floor_multiple": 6.0,
                    }
                }
            }
        }
    }
    (speed, floor) = bench.targets(fake)
    assert speed["met"] is True and floor["met"] is False


def test_count_uniforms_is_exact():
    assert timing.count_uniforms(lambda g: g.random(1234)) == 1234
    draft, target = engines.pair(4, 6)
    seen = []
    n = timing.count_uniforms(lambda g: seen.append(sd.decoding.speculative(draft, target, 300, rng=g)))
    # two uniforms per run and position, one more per rejection (the residual draw)
    assert n == 2 * 300 * 6 + seen[0].rejections.sum()


def test_fit_exponent_recovers_a_power_law():
    x = np.array([10, 20, 40, 80.0])
    assert timing.fit_exponent(x, 3 * x**2)["exponent"] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="x"):
        timing.fit_exponent([1.0], [1.0])


def test_every_widget_update_is_timed():
    """The explicit list of updates covers every ``*_update`` the explorers define (none is forgotten)."""
    import importlib
    import inspect
    import pkgutil

    from specdec_lite import widgets

    found, notes = widget_updates()
    defined = set()
    for info in pkgutil.iter_modules(widgets.__path__):
        mod = importlib.import_module(f"specdec_lite.widgets.{info.name}")
        defined |= {
            f"{mod.__name__}:{n}"
            for n, fn in inspect.getmembers(mod, inspect.isfunction)
            if fn.__module__ == mod.__name__ and n.endswith("_update")
        }
    assert defined == set(found) | set(notes)


def test_bad_mode_and_section_are_refused():
    with pytest.raises(ValueError, match="mode"):
        bench.run("huge")
    with pytest.raises(ValueError, match="only"):
        bench.run("tiny", only=["nonsense"])


def test_report_renders_the_results(tiny):
    results, out = tiny
    assert report.load(out) == results
    md = str(report.scaling_table(results))
    assert md.startswith("|") and "Theorem 1" in md
    assert "speculative" in str(report.samplers_table(results))
    assert "<table" in report.samplers_table(results)._repr_html_()
    assert "uniforms" in report.floor_explanation(results)
    assert any("token-steps per second" in h for h in report.headlines(results))
    shown = json.dumps(report.measurements(results))
    assert '"targets"' not in shown and '"exponent_check"' not in shown and '"theory_scaling"' in shown
    assert all(s.startswith("**") for s in report.growth_sentences(results))
    for fig in report.figures(results).values():
        assert len(fig.data) >= 1


class _CharTokenizer:
    """Enough of a tokenizer for the benchmark: characters to ids modulo the vocabulary."""

    eos_token_id = 0

    def __init__(self, vocab):
        self.vocab = vocab

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [1 + ord(c) % (self.vocab - 1) for c in text]}

    def decode(self, ids):
        return " ".join(map(str, ids))


def test_llm_section_on_a_tiny_pair():
    """The real-model section's structure, on two tiny random GPT-NeoX models (no training, no hub)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from specdec_lite.bench.llm import llm_section
    from specdec_lite.llm.pairs import ModelPair

    def neox(layers, seed):
        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=16,
            hidden_size=16,
            num_hidden_layers=layers,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=128,
        )
        return transformers.GPTNeoXForCausalLM(cfg).eval()

    pair = ModelPair(
        neox(1, 0), neox(2, 1), _CharTokenizer(16), "tiny-1", "tiny-2", "test", torch.device("cpu"), torch.float32
    )
    threads = torch.get_num_threads()
    out = llm_section(bench.SIZES["tiny"], lambda _: None, pair=pair)
    assert torch.get_num_threads() == threads and out["torch_threads"] == 1
    assert 0 <= out["acceptance_rate"] <= 1 and out["achieved_speedup"] > 0 and out["predicted_speedup"] > 0
    assert out["fraction_of_predicted"] == pytest.approx(out["achieved_speedup"] / out["predicted_speedup"])
    assert {"autoregressive", "speculative", "HF autoregressive", "HF assisted"} == {r["method"] for r in out["rows"]}
    assert out["hf_assisted_over_hf_autoregressive"] > 0 and out["costs"]["c"] > 0
    assert out["widget"]["median_s"] > 0 or out["widget"]["skipped"]
    (target,) = [t for t in bench.targets({"sections": {"llm": out}}) if t["section"] == "llm"]
    assert target["met"] == (out["fraction_of_predicted"] >= 0.8)
    assert len(report.llm_rows_table({"sections": {"llm": out}}).rows) == len(out["rows"])
    assert "achieved / predicted" in str(report.llm_table({"sections": {"llm": out}}))


def test_growth_sentences_state_a_law_only_where_the_fit_supports_it():
    def case(seconds, exponent):
        fit = {
            "x": [1.0, 2.0, 4.0, 8.0],
            "seconds": seconds,
            "expected_exponent": 2.0,
            "base": {"T": 10},
            "fit_tail": {"exponent": exponent, "points": 2},
            "exponent_check": sections._exponent_check(exponent, 2.0),
        }
        return {"sections": {"theory_scaling": {"cases": {"c": {"title": "Theorem 1", "axes": {"V": fit}}}}}}

    law = report.growth_sentences(case([0.01, 0.02, 0.04, 0.16], 2.1))[0]
    assert "grows like V², as the loops predict (fitted exponent 2.10)" in law
    short = report.growth_sentences(case([1e-4, 2e-4, 4e-4, 3e-3], 2.9))[0]
    assert "says nothing about how the cost grows" in short and "grows like" not in short
    faster = report.growth_sentences(case([0.01, 0.02, 0.04, 0.3], 2.9))[0]
    assert "faster than the V² of the loops" in faster


def test_every_name_of_the_committed_results_has_its_display_name():
    """The names ``benchmarks/results.json`` keys are shown through ``report``'s N_ tables (translated in the Chinese
    edition); a renamed engine, case, method or note there would be shown untranslated, so each must still match."""
    results = report.load()["sections"]
    for key, e in results["samplers"]["engines"].items():
        assert report.ENGINE_NAMES[key] == key
        if "note" in e:
            assert report.ENGINE_NOTES[key] == e["note"], key
    for key, c in results["theory_scaling"]["cases"].items():
        assert report.CASE_NAMES[key] == key and report.CASE_TITLES[key] == c["title"], key
    for key, note in results["widgets"].get("notes", {}).items():
        assert report.WIDGET_NOTES[key] == note
    for row in results["llm"].get("rows", []):
        assert report.METHOD_NAMES[row["method"]] == row["method"]
    patterns = [_template_pattern(t) for t in report.SUMMARY_TEMPLATES]
    for key in results["llm"].get("summary", {}):
        assert any(re.fullmatch(p, key) for p in patterns), key
    if "pair" in results["llm"]:
        assert any(re.fullmatch(p, results["llm"]["pair"]) for p in patterns[-2:])


def _template_pattern(template):
    parts = re.split(r"\{(\w+)\}", template)
    return "".join(re.escape(p) if i % 2 == 0 else ".+" for i, p in enumerate(parts))


@pytest.mark.parametrize("ys", [(0.03, 0.07), (0.052, 0.058), (0.02, 0.3), (0.12, 0.19), (1.0, 5000.0), (25.0, 400.0)])
def test_a_log_axis_of_the_performance_page_shows_at_least_two_labels(ys):
    """A log axis with one label gives no scale: at least two labelled ticks, each inside the axis's range."""
    import math

    import plotly.graph_objects as go

    from specdec_lite.bench.report import _decades

    fig = go.Figure(go.Scatter(x=[1, 2], y=list(ys)))
    fig.update_yaxes(type="log")
    _decades(fig)
    axis = fig.layout.yaxis
    if axis.dtick == 1:  # whole decades: two of them within the data
        assert sum(min(ys) <= 10.0**k <= max(ys) for k in range(-5, 6)) >= 2
    else:
        lo, hi = axis.range
        assert len(axis.tickvals) >= 2 and all(lo <= math.log10(t) <= hi for t in axis.tickvals)
        # neighbours at least a factor of 2.5 apart where the data allow it: "100" and "200" ran together on a phone
        if max(ys) / min(ys) >= 10:
            assert min(b / a for a, b in zip(axis.tickvals, axis.tickvals[1:], strict=False)) >= 2.5, axis.tickvals
        assert lo <= math.log10(min(ys)) and math.log10(max(ys)) <= hi


def test_a_table_of_names_and_values_has_no_empty_header_row():
    """The machine table (header ["", ""]): each name heads its row (``th scope="row"``); a table with a header
    keeps it."""
    pairs = report.table(["", ""], [["CPU", "AMD <EPYC>"], ["memory", "23.5 GiB"]])._repr_html_()
    assert "<thead>" not in pairs and pairs.count('<th scope="row">') == 2 and "AMD &lt;EPYC&gt;" in pairs
    headed = report.table(["engine", "time"], [["speculative", "37.5 ms"]])._repr_html_()
    assert "<thead><tr><th>engine</th><th>time</th></tr></thead>" in headed and "<td>speculative</td>" in headed
    # a code name may break after its underscores (a phone's column), nowhere else
    named = report.table(["case"], [["定理 3：expected_rejections_batch"]])._repr_html_()
    assert "<td>定理 3：expected_<wbr>rejections_<wbr>batch</td>" in named
