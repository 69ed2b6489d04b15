"""The benchmark runs and reports what it promises (its speed figures are not asserted here)."""

import json

from specdec_lite import bench


def test_bench_smoke(tmp_path, monkeypatch):
    small = bench.sampler_vs_reference
    monkeypatch.setattr(bench, "sampler_vs_reference", lambda: small(V=3, T=5, runs=200, reference_runs=20))
    pass1 = bench.theorem1_pass
    monkeypatch.setattr(bench, "theorem1_pass", lambda: pass1(V=5, T=10))
    out = tmp_path / "bench.json"
    results = bench.main(["--json", str(out)])
    assert json.loads(out.read_text())["sampler"]["runs"] == 200
    assert results["sampler"]["speedup_vs_reference"] > 0 and results["theorem1"]["seconds"] > 0
