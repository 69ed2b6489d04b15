"""One command measures a draft/target pair on a device and writes a results file.

    python -m specdec_lite.llm.measure_pair                       # load_pair()'s choice, here
    python -m specdec_lite.llm.measure_pair --draft EleutherAI/pythia-70m \\
        --target EleutherAI/pythia-410m --device cuda               # any pair, any device
    python -m specdec_lite.llm.measure_pair --quick               # fewer runs (a few minutes on a CPU)

The results file (JSON, under ``benchmarks/real_models/`` unless ``--out`` says
otherwise, named after the device and the pair) records the device, the weights'
dtype, the pair, the measured call costs ``c`` and ``c_K``, the acceptance rate
``alpha``, Theorem 1 observed against predicted, the speed-up over autoregressive
sampling and over Hugging Face's assisted generation for several ``K``, and the
eps sweep. Chapter 8 renders every results file committed in the repository.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import math
import os
import platform
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..stats import mean_and_se
from .eps_sweep import EpsRow, eps_sweep
from .pairs import ModelPair, load_named_pair, load_pair
from .runs import default_prompts, progress_bar, sample_runs
from .speed import SpeedRow, speed_benchmark, speed_summary
from .theorem1 import Theorem1Row, theorem1_rows

#: Version of the results file's layout.
SCHEMA = 1
#: Where results files live, relative to the repository root.
RESULTS_DIR = Path("benchmarks") / "real_models"


@dataclass(frozen=True)
class MeasureSettings:
    """How much to measure: runs, tokens and lookaheads of each part."""

    lookaheads: tuple[int, ...] = (1, 2, 4, 6, 8)
    hf_lookaheads: tuple[int, ...] = (2, 4, 8)
    speed_tokens: int = 48
    speed_repeats: int = 2
    theorem1_runs: int = 20
    theorem1_tokens: int = 32
    theorem1_lookahead: int = 4
    eps_values: tuple[float, ...] = (0.0, 0.003, 0.01, 0.03, 0.1)
    eps_runs: int = 4
    eps_tokens: int = 32
    eps_lookahead: int = 4
    prompts: int = 4
    temperature: float = 1.0
    seed: int = 0


#: Fewer runs and lookaheads: a few minutes for the offline pair on a CPU.
QUICK = MeasureSettings(lookaheads=(1, 2, 4, 6), hf_lookaheads=(2, 4), speed_tokens=32, theorem1_runs=10,
                        eps_values=(0.0, 0.01, 0.1), eps_runs=3)


def device_info(device: torch.device) -> dict[str, Any]:
    """The device in words: its type and name (the GPU's model and compute capability, or the CPU's)."""
    info: dict[str, Any] = {"type": device.type, "torch_threads": torch.get_num_threads(),
                            "cpu_cores": os.cpu_count()}
    try:  # other work on the machine while it measured (1-minute load average, at the start)
        info["load_average"] = round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover - no load average on this platform
        pass
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(name=torch.cuda.get_device_name(device), capability=list(torch.cuda.get_device_capability(device)),
                    memory_gib=round(props.total_memory / 2**30, 1))
    else:
        info["name"] = _cpu_name()
    return info


def _cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _plain(value: Any) -> Any:
    """JSON-ready: NaN and inf become None, numpy scalars Python numbers, tuples lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _row(obj: Any) -> dict[str, Any]:
    return _plain(dataclasses.asdict(obj))


def measure_pair(pair: ModelPair, settings: MeasureSettings = MeasureSettings(), *,
                 prompts: Sequence[str] | None = None, progress: bool = True) -> dict[str, Any]:
    """Measure ``pair`` (speed, Theorem 1, the eps sweep) and return the results file's content."""
    s = settings
    prompts = list(prompts if prompts is not None else default_prompts(pair))[: s.prompts]
    models = {"draft": pair.draft, "target": pair.target}
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device_info(pair.device),
        "dtype": str(pair.dtype).removeprefix("torch."),
        "pair": {"draft": pair.draft_name, "target": pair.target_name, "source": pair.source,
                 "label": pair.describe(),
                 "parameters": {r: sum(p.numel() for p in m.parameters()) for r, m in models.items()},
                 "layers": {r: getattr(m.config, "num_hidden_layers", None) for r, m in models.items()}},
        "training": _training_record(pair),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "transformers": _transformers_version()},
        "settings": _plain(dataclasses.asdict(s)),
        "prompts": prompts,
    }
    stages = progress_bar(["speed", "Theorem 1", "eps sweep"], 3, "measuring the pair", progress)
    for stage in stages:
        if stage == "speed":
            rows, costs = speed_benchmark(pair, prompts, max_new_tokens=s.speed_tokens, lookaheads=s.lookaheads,
                                          hf_lookaheads=s.hf_lookaheads, repeats=s.speed_repeats,
                                          temperature=s.temperature, seed=s.seed, progress=progress)
            out["call_costs"] = _plain({"draft_s": costs.draft, "target_s": costs.target, "c": costs.c,
                                        "verify_s": costs.verify,
                                        "c_K": {K: t / costs.target for K, t in costs.verify.items()}})
            out["speed"] = {"rows": [_row(r) for r in rows], "summary": speed_summary(rows, costs)}
        elif stage == "Theorem 1":
            res = sample_runs(pair, prompts, runs=s.theorem1_runs, max_new_tokens=s.theorem1_tokens,
                              lookahead=s.theorem1_lookahead, temperature=s.temperature, seed=s.seed + 1,
                              progress=progress, desc="Theorem 1 runs")
            flat = [r for per_prompt in res for r in per_prompt]
            drafted = sum(int(r.drafted.sum()) for r in flat)
            rejections = sum(r.rejections for r in flat)
            predicted = sum(r.predicted_rejections for r in flat)
            diff = np.array([r.rejections - r.predicted_rejections for r in flat])
            mean, se = mean_and_se(diff)
            out["acceptance"] = {"alpha": 1 - rejections / drafted, "alpha_predicted": 1 - predicted / drafted,
                                 "drafted_positions": drafted, "lookahead": s.theorem1_lookahead}
            out["theorem1"] = _plain({
                "rows": [{**_row(r), "z": r.z} for r in theorem1_rows(prompts, res)],
                "pooled": {"runs": len(flat), "observed": rejections / len(flat), "predicted": predicted / len(flat),
                           "difference": mean, "difference_se": se, "z": mean / se if se > 0 else None},
            })
        else:
            sweep = eps_sweep(pair, prompts, s.eps_values, runs=s.eps_runs, max_new_tokens=s.eps_tokens,
                              lookahead=s.eps_lookahead, temperature=s.temperature, seed=s.seed + 2, progress=progress)
            out["eps_sweep"] = {"rows": [_row(r) for r in sweep]}
    out["acceptance"]["by_lookahead"] = {
        str(r["lookahead"]): r["acceptance_rate"] for r in out["speed"]["rows"] if r["method"] == "speculative"
    }
    return _plain(out)


def _training_record(pair: ModelPair) -> dict[str, Any] | None:
    """For the offline pair: steps trained, final losses and held-out mean TV (its ``meta.json``); else None."""
    if pair.source != "fallback" or "held_out" not in pair.info:
        return None
    roles = {r: {k: pair.info[r][k] for k in ("steps", "seconds", "final_loss", "objective")}
             for r in ("draft", "target")}
    return {**roles, "held_out": pair.info["held_out"], "recipe": pair.info.get("recipe")}


def _transformers_version() -> str:
    from ._hf import require_transformers

    return require_transformers().__version__


def results_name(results: dict[str, Any]) -> str:
    """File name of a results file: device type, then the pair (``cpu-stdlib-1x64-to-stdlib-12x128.json``)."""
    pair = results["pair"]

    def slug(name: str) -> str:
        name = re.sub(r"\(.*?\)", "", name.split("/")[-1])
        return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-").lower()

    return f"{results['device']['type']}-{slug(pair['draft'])}-to-{slug(pair['target'])}.json"


def write_results(results: dict[str, Any], out: str | Path = RESULTS_DIR) -> Path:
    """Write ``results`` to ``out`` (a ``.json`` file, or a folder for ``results_name``); returns the path."""
    path = Path(out)
    if path.suffix != ".json":
        path = path / results_name(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
    return path


def repository_results_dir() -> Path:
    """``benchmarks/real_models`` of the repository this package was imported from."""
    return Path(__file__).resolve().parents[2] / RESULTS_DIR


def load_results(folder: str | Path | None = None) -> list[dict[str, Any]]:
    """Every results file in ``folder`` (default: the repository's), sorted by name, each with its ``file``."""
    root = Path(folder) if folder is not None else repository_results_dir()
    found = []
    for path in sorted(root.glob("*.json")) if root.is_dir() else []:
        data = json.loads(path.read_text())
        if data.get("schema") != SCHEMA:
            raise ValueError(f"{path}: results file of schema {data.get('schema')!r}, this code reads {SCHEMA}")
        found.append({**data, "file": path.name})
    return found


def result_rows(results: dict[str, Any]) -> tuple[list[Theorem1Row], list[SpeedRow], list[EpsRow]]:
    """A results file's rows as the dataclasses the chapter's figures take (None read back as NaN)."""

    def build(cls: type, row: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: (math.nan if v is None else v) for k, v in row.items() if k in names})

    return ([build(Theorem1Row, r) for r in results["theorem1"]["rows"]],
            [build(SpeedRow, r) for r in results["speed"]["rows"]],
            [build(EpsRow, r) for r in results["eps_sweep"]["rows"]])


def results_label(results: dict[str, Any]) -> str:
    """The line that names a results file's device and pair, for every table and figure made from it."""
    d = results["device"]
    if d["type"] == "cuda":
        where = f"{d['name']}, compute capability {'.'.join(map(str, d['capability']))}"
    else:
        load = f", load average {d['load_average']:g} on {d['cpu_cores']} cores" if "load_average" in d else ""
        where = f"CPU ({d['name']}, {d['torch_threads']} thread(s){load})"
    return (f"{where}; {results['dtype']}; draft {results['pair']['draft']} → target {results['pair']['target']}; "
            f"measured {results['created'][:10]}")


def results_table(results: dict[str, Any]) -> str:
    """The headline numbers of a results file as an HTML table (call costs, alpha, Theorem 1, speed-ups)."""
    import html

    c, a, t1 = results["call_costs"], results["acceptance"], results["theorem1"]["pooled"]
    rows = results["speed"]["rows"]
    ar = next(r for r in rows if r["method"] == "autoregressive")
    hf = {r["lookahead"]: r for r in rows if r["method"] == "HF assisted"}

    def num(x: Any, fmt: str) -> str:
        return "n/a" if x is None else format(x, fmt)

    cells = [
        ("one draft call / one target call", f"{1e3 * c['draft_s']:.2f} ms / {1e3 * c['target_s']:.2f} ms"),
        ("cost ratio c", num(c["c"], ".3f")),
        ("verification cost c_K (K: value)", ", ".join(f"{k}: {v:.2f}" for k, v in c["c_K"].items())),
        (f"acceptance rate α (K = {a['lookahead']}), observed / 1 − mean TV",
         f"{num(a['alpha'], '.3f')} / {num(a['alpha_predicted'], '.3f')}"),
        (f"Theorem 1, rejections per run ({t1['runs']} runs)",
         f"observed {t1['observed']:.2f}, predicted {t1['predicted']:.2f}, "
         f"difference {t1['difference']:+.2f} ± {t1['difference_se']:.2f} (z = {num(t1['z'], '+.2f')})"),
        ("our autoregressive sampling", f"{ar['tokens_per_second']:.1f} tokens/s"),
    ]
    for r in rows:
        if r["method"] == "speculative":
            K = r["lookahead"]
            vs_hf = (f"; {r['tokens_per_second'] / hf[K]['tokens_per_second']:.2f}× HF assisted at this K"
                     if K in hf else "")
            cells.append((f"speculative, K = {K}", f"{r['speedup']:.2f}× autoregressive (predicted "
                          f"{num(r['predicted_speedup'], '.2f')}×){vs_hf}"))
    for K, r in sorted(hf.items()):
        cells.append((f"HF assisted generation, K = {K}", f"{r['speedup']:.2f}× our autoregressive sampling"))
    body = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in cells)
    return (f"<p><b>{html.escape(results['file'] if 'file' in results else results_name(results))}</b>: "
            f"{html.escape(results_label(results))}</p><table>{body}</table>")


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v.strip())


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(",") if v.strip())


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m specdec_lite.llm.measure_pair", description=__doc__.split("\n")[0])
    ap.add_argument("--draft", help="draft model: hub name or local folder (with --target; default: load_pair())")
    ap.add_argument("--target", help="target model: hub name or local folder")
    ap.add_argument("--tokenizer", help="tokenizer: hub name or local folder (default: the target's)")
    ap.add_argument("--device", help="cpu, cuda, cuda:1, mps (default: the best there is)")
    ap.add_argument("--dtype", help="weights' dtype, e.g. float16 (default: by hardware)")
    ap.add_argument("--out", default=str(RESULTS_DIR), help="folder (or .json file) for the results file")
    ap.add_argument("--quick", action="store_true", help="fewer runs and lookaheads")
    ap.add_argument("--lookaheads", type=_ints, help="K values of the speed measurement, e.g. 1,2,4,8")
    ap.add_argument("--hf-lookaheads", type=_ints, help="K values of Hugging Face's assisted generation")
    ap.add_argument("--eps", type=_floats, help="eps values of the sweep, e.g. 0,0.01,0.1")
    ap.add_argument("--runs", type=int, help="runs per prompt of Theorem 1 (the eps sweep takes a fifth, at least 2)")
    ap.add_argument("--tokens", type=int, help="new tokens per run, in every part")
    ap.add_argument("--prompts", type=int, help="how many of the default prompts to use")
    ap.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bars")
    args = ap.parse_args(argv)
    if (args.draft is None) != (args.target is None):
        ap.error("--draft and --target: give both or neither")
    return args


def settings_from(args: argparse.Namespace) -> MeasureSettings:
    """The settings the command line asks for (``--quick``, then each override)."""
    s = QUICK if args.quick else MeasureSettings()
    changes: dict[str, Any] = {"seed": args.seed}
    if args.lookaheads:
        changes["lookaheads"] = args.lookaheads
    if args.hf_lookaheads is not None:
        changes["hf_lookaheads"] = args.hf_lookaheads
    if args.eps:
        changes["eps_values"] = args.eps
    if args.runs:
        changes.update(theorem1_runs=args.runs, eps_runs=max(2, args.runs // 5))
    if args.tokens:
        changes.update(speed_tokens=args.tokens, theorem1_tokens=args.tokens, eps_tokens=args.tokens)
    if args.prompts:
        changes["prompts"] = args.prompts
    return dataclasses.replace(s, **changes)


def main(argv: Sequence[str] | None = None) -> Path:
    """Run the command: load the pair, measure it, write the results file and print where."""
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    settings = settings_from(args)
    if args.draft is not None:
        pair = load_named_pair(args.draft, args.target, tokenizer_name=args.tokenizer, device=args.device,
                               dtype=args.dtype)
        print(f"Model pair: {pair.describe()}")
    else:
        pair = load_pair(device=args.device, dtype=args.dtype, progress=not args.no_progress)
    results = measure_pair(pair, settings, progress=not args.no_progress)
    results["command"] = "python -m specdec_lite.llm.measure_pair " + " ".join(
        sys.argv[1:] if argv is None else list(argv))
    path = write_results(results, args.out)
    print(results["speed"]["summary"])
    print(f"results file: {path}")
    return path


if __name__ == "__main__":
    main()
