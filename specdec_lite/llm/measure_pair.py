"""One command measures a draft/target pair on a device, in a time budget, and writes a results file.

    python -m specdec_lite.llm.measure_pair                       # load_pair()'s choice, here, in 600 s
    python -m specdec_lite.llm.measure_pair --draft EleutherAI/pythia-70m \\
        --target EleutherAI/pythia-410m --device cuda --budget 300  # any pair, any device, any budget
    python -m specdec_lite.llm.measure_pair --budget 0            # no budget: the full settings, however long

A measurement first times a few calls (``calibrate``), predicts each stage's
seconds from the calls it makes, and cuts the settings to fit the budget
(``budget.plan_measurement``, in the order of ``budget.CUTS``); it says in one line
what it cut before it starts, and shows one progress bar in predicted seconds
with the time left. After each stage the stages left are planned again at the
pace measured so far. The settings (``--runs``, ``--tokens``, ``--quick``, ...) are
the most it measures; the budget only ever cuts them.

The results file (JSON, under ``benchmarks/real_models/`` unless ``--out`` says
otherwise, named after the device and the pair) records the device, the weights'
dtype, the pair, the measured call costs ``c`` and ``c_K``, the acceptance rate
``alpha``, Theorem 1 observed against predicted, the speed-up over autoregressive
sampling and over Hugging Face's assisted generation for several ``K``, the eps
sweep, and the budget: the calibration, the plan, the cuts, and the predicted and
actual seconds of each stage. Chapter 8 renders every results file committed in
the repository.
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
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._files import writable_file, writable_folder
from .._i18n import N_, _
from ..primitives import check_int, check_real
from ..stats import mean_and_se
from ._hf import context_length, vocab_size
from .budget import (
    GRADED_BUDGET_S,
    MAX_SEED,
    QUICK,
    Calibration,
    MeasureSettings,
    Plan,
    check_distinct_ints,
    graded,
    knob_changes,
    plan_measurement,
    seconds,
    stage_seconds,
)
from .engine import GenerationResult, autoregressive_generate, speculative_generate
from .eps_sweep import EpsRow, eps_sweep
from .pairs import ModelPair, check_model_name, display_name, load_named_pair, load_pair, pick_device, pick_dtype
from .runs import OnRun, check_prompts, default_prompts, progress_bar, sample_runs
from .speed import SpeedRow, hf_generate, speed_benchmark, speed_summary
from .theorem1 import Theorem1Row, theorem1_rows

#: Version of the results file's layout.
SCHEMA = 1
#: Where results files live, relative to the repository root.
RESULTS_DIR = Path("benchmarks") / "real_models"
#: The command's budget in seconds unless ``--budget`` says otherwise.
DEFAULT_BUDGET_S = 600.0
#: New tokens of each calibration run (at least the largest K + 1).
CALIBRATION_TOKENS = 8
#: The stages of a results file's ``budget`` record, in words.
STAGE_NAMES = {
    "calibration": N_("calibration"),
    "speed": N_("speed"),
    "theorem1": N_("Theorem 1"),
    "eps_sweep": N_("eps sweep"),
}
#: The full measurement (the sizes of Chapter 8's own cells).
FULL = MeasureSettings()


def device_info(device: torch.device) -> dict[str, Any]:
    """The device in words: its type and name (the GPU's model and compute capability, or the CPU's)."""
    info: dict[str, Any] = {"type": device.type, "torch_threads": torch.get_num_threads(), "cpu_cores": os.cpu_count()}
    try:  # other work on the machine while it measured (1-minute load average, at the start)
        info["load_average"] = round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover - no load average on this platform
        pass
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(
            name=torch.cuda.get_device_name(device),
            capability=list(torch.cuda.get_device_capability(device)),
            memory_gib=round(props.total_memory / 2**30, 1),
        )
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


def calibrate(
    pair: ModelPair, prompt: str, settings: MeasureSettings, *, tokens: int = CALIBRATION_TOKENS, progress: bool = True
) -> Calibration:
    """Time a few short runs on ``prompt``, from which every run's seconds are predicted.

    A two-token warm-up (first calls pay one-off costs), one autoregressive run, one
    speculative run at the smallest and one at the largest ``K`` the settings use
    (verification costs in between are interpolated), and one run of Hugging Face's
    ``generate`` when the settings compare with it; each of ``max(tokens, K + 1)``
    tokens. Per call: ``target`` = the autoregressive run's target seconds over its
    target calls, ``verify[K]`` = the same for the speculative run at ``K``, ``draft``
    = draft seconds over draft calls; ``alpha`` = accepted over drafted positions.
    """
    s = settings
    ids = pair.encode(prompt)
    Ks = s.all_lookaheads
    n = max(tokens, Ks[-1] + 1)
    gen = torch.Generator(device=pair.device).manual_seed(s.seed)
    bar = progress_bar(None, 3 + (Ks[0] != Ks[-1]) + bool(s.hf_lookaheads), _("timing calls"), progress)
    start = time.perf_counter()

    def spec(K: int, m: int) -> GenerationResult:
        r = speculative_generate(pair.draft, pair.target, ids, m, lookahead=K, temperature=s.temperature, generator=gen)
        bar.update()
        return r

    spec(1, 2)
    ar = autoregressive_generate(pair.target, ids, n, temperature=s.temperature, generator=gen)
    bar.update()
    runs = {K: spec(K, n) for K in dict.fromkeys((Ks[0], Ks[-1]))}
    hf_ratio = 1.0
    if s.hf_lookaheads:
        hf_ratio = hf_generate(pair, ids, n, temperature=s.temperature, seed=s.seed)[1] / ar.wall_time
        bar.update()
    bar.close()
    rs = list(runs.values())
    return Calibration(
        target=ar.target_seconds / ar.oracle_calls,
        draft=sum(r.draft_seconds for r in rs) / sum(r.draft_calls for r in rs),
        verify={K: r.target_seconds / r.oracle_calls for K, r in runs.items()},
        alpha=sum(int(r.accepted.sum()) for r in rs) / sum(int(r.drafted.sum()) for r in rs),
        ar_overhead=max(0.0, ar.wall_time - ar.target_seconds) / len(ar.tokens),
        round_overhead=max(0.0, sum(r.wall_time - r.target_seconds - r.draft_seconds for r in rs))
        / sum(r.oracle_calls for r in rs),
        hf_ratio=hf_ratio,
        seconds=time.perf_counter() - start,
    )


def check_context(pair: ModelPair, prompts: Sequence[str], settings: MeasureSettings) -> None:
    """Every run's prompt, new tokens and lookahead fit both models' context, else a ``ValueError`` saying how many
    tokens would."""
    longest = max(len(pair.encode(p)) for p in prompts)
    need = max(settings.speed_tokens, settings.theorem1_tokens, settings.eps_tokens, CALIBRATION_TOKENS)
    spare = max(settings.all_lookaheads) + 1  # a verification call reads up to K + 1 positions past the text
    for role, model in (("draft", pair.draft), ("target", pair.target)):
        n = context_length(model)
        if n is not None and longest + need + spare > n:
            message = {
                "draft": _(
                    "tokens: {need} new tokens after a prompt of {longest} tokens (and K + 1 = {spare} positions of "
                    "lookahead) exceed the draft's context of {n} positions; ask for at most {most} (--tokens)"
                ),
                "target": _(
                    "tokens: {need} new tokens after a prompt of {longest} tokens (and K + 1 = {spare} positions of "
                    "lookahead) exceed the target's context of {n} positions; ask for at most {most} (--tokens)"
                ),
            }[role]
            raise ValueError(
                message.format(need=need, longest=longest, spare=spare, n=n, most=max(0, n - longest - spare))
            )


def measure_pair(
    pair: ModelPair,
    settings: MeasureSettings = FULL,
    *,
    budget_s: float | None = None,
    prompts: Sequence[str] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Measure ``pair`` (speed, Theorem 1, the eps sweep) in ``budget_s`` seconds; return the results file's content.

    ``settings`` are the most to measure: a few timed calls (:func:`calibrate`)
    predict each stage's seconds, and ``budget.plan_measurement`` cuts the settings
    until the prediction, calibration included, fits ``budget_s`` (``None``: no
    budget, the settings as given). After each stage the remaining stages are
    planned again, at the pace measured so far (other work on the machine slows
    every call). Each plan that changes the sizes is said in one line before it
    runs; when even the smallest plan exceeds the budget a warning says so, and the
    smallest plan is measured. ``progress``: those lines, one bar in predicted
    seconds with the time left, and a last line with the actual seconds.
    """
    if not isinstance(settings, MeasureSettings):
        raise ValueError(
            _("settings: expected MeasureSettings, got {type_name}").format(type_name=type(settings).__name__)
        )
    if budget_s is not None:
        budget_s = check_real(budget_s, "budget_s", low=0.0, open_low=True)
    prompts = check_prompts(prompts if prompts is not None else default_prompts(pair))[: settings.prompts]
    check_context(pair, prompts, settings)
    if settings.hf_lookaheads and vocab_size(pair.draft) != vocab_size(pair.target):
        if progress:
            print(
                _(
                    "Hugging Face's assisted generation refuses a pair whose numbers of logits differ (draft "
                    "{draft}, target {target}): measured without it"
                ).format(draft=vocab_size(pair.draft), target=vocab_size(pair.target))
            )
        settings = dataclasses.replace(settings, hf_lookaheads=())
    requested = dataclasses.replace(settings, prompts=len(prompts))
    smallest = graded()  # a graded notebook: no score depends on this, so its smallest plan (budget.graded)
    budget_s = GRADED_BUDGET_S if smallest else budget_s
    calibration = calibrate(pair, prompts[0], requested, progress=progress)
    first = plan = plan_measurement(requested, calibration, budget_s)
    if smallest and progress:
        print(_("Graded notebook: no score depends on this measurement, so the grader runs its smallest plan."))
    elif not plan.fits:
        warnings.warn(_("{plan}; measuring it anyway").format(plan=plan.summary()), stacklevel=2)
    elif progress:
        print(plan.summary())
    prompts = prompts[: plan.settings.prompts]
    out = _header(pair, plan.settings, prompts)
    bar = progress_bar(
        None,
        sum(plan.stages.values()) * (1 + 1e-9),
        _("measuring"),
        progress,
        bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} " + _("predicted s") + " [{elapsed}<{remaining}]",
    )
    pace = 1.0

    def on_run(method: str, K: int, tokens: int) -> None:
        bar.update(pace * calibration.run_seconds(method, K, tokens))

    actual: dict[str, float] = {}
    predicted: dict[str, float] = {}
    replans = []
    for stage, measure in (("speed", _speed), ("theorem1", _theorem1), ("eps_sweep", _eps_sweep)):
        if actual and budget_s is not None:
            pace, again = _replan(requested, plan, calibration, actual, budget_s)
            replans.append({"after": list(actual)[-1], "pace": pace, **again.record()})
            when = _("after {stage}, at {pace:.2f}x the predicted seconds").format(
                stage=_(STAGE_NAMES[list(actual)[-1]]), pace=pace
            )
            line = _again(plan, again, when)
            if line and progress:
                bar.write(line)
            plan = again
            bar.total = bar.n + sum(plan.stages.values()) * (1 + 1e-9)
        bar.set_description(_("measuring ({stage})").format(stage=_(STAGE_NAMES[stage])))
        predicted[stage] = plan.stages[stage]
        t0 = time.perf_counter()
        out.update(measure(pair, prompts, plan.settings, on_run))
        actual[stage] = time.perf_counter() - t0
    bar.close()
    out["settings"] = _plain(dataclasses.asdict(plan.settings))
    out["acceptance"]["by_lookahead"] = {
        str(r["lookahead"]): r["acceptance_rate"] for r in out["speed"]["rows"] if r["method"] == "speculative"
    }
    out["budget"] = {
        **first.record(),
        "cuts": [{"knob": c.knob, "from": c.before, "to": c.after} for c in plan.cuts],
        "replans": [{k: r[k] for k in ("after", "pace", "fits", "summary", "predicted_s")} for r in replans],
        "first_predicted_s": first.record()["predicted_s"],
        "predicted_s": {
            "calibration": calibration.seconds,
            **predicted,
            "total": calibration.seconds + sum(predicted.values()),
        },
        "actual_s": {"calibration": calibration.seconds, **actual, "total": calibration.seconds + sum(actual.values())},
    }
    if progress:
        print(outcome(out))
    return _plain(out)


def _replan(
    requested: MeasureSettings, plan: Plan, calibration: Calibration, actual: dict[str, float], budget_s: float
) -> tuple[float, Plan]:
    """The stages left, planned again at the pace so far: actual over predicted seconds of the stages done."""
    done = list(actual)
    pace = sum(actual.values()) / sum(stage_seconds(plan.settings, calibration, done).values())
    spent = calibration.seconds + sum(actual.values())
    return pace, plan_measurement(requested, calibration.scaled(pace, spent), budget_s, done=done, used=plan.settings)


def _again(before: Plan, plan: Plan, when: str) -> str:
    """What a new plan changes, in one line (empty if nothing); a warning when it newly exceeds the budget."""
    changes = _(", ").join(map(str, knob_changes(before.settings, plan.settings)))
    if not plan.fits and before.fits:
        warnings.warn(
            _(
                "{when}: budget {budget} is too small for what is left: the smallest plan "
                "({changes}) is predicted at {total}; measuring it anyway"
            ).format(
                when=when, budget=seconds(plan.budget_s), changes=changes or _("no change"), total=seconds(plan.total_s)
            ),
            stacklevel=3,
        )
    if not changes:
        return ""
    return _("{when}: {changes}; predicted {total}").format(when=when, changes=changes, total=seconds(plan.total_s))


def outcome(results: dict[str, Any]) -> str:
    """A results file's seconds in one line: actual against the first plan and the budget, and stage by stage
    against the prediction in force when the stage started."""
    b = results["budget"]
    act, pred = b["actual_s"], b["predicted_s"]
    budget = _("no budget") if b["budget_s"] is None else _("budget {budget}").format(budget=seconds(b["budget_s"]))
    stages = _(", ").join(
        _("{stage} {actual} (predicted {predicted})").format(
            stage=_(STAGE_NAMES[k]), actual=seconds(act[k]), predicted=seconds(pred[k])
        )
        for k in STAGE_NAMES
        if k != "calibration"
    )
    return _("measured in {total} (planned {planned}, {budget}; calibration {calibration}): {stages}").format(
        total=seconds(act["total"]),
        planned=seconds(b["first_predicted_s"]["total"]),
        budget=budget,
        calibration=seconds(act["calibration"]),
        stages=stages,
    )


def _header(pair: ModelPair, s: MeasureSettings, prompts: list[str]) -> dict[str, Any]:
    """What a results file says about the measurement before any number: when, where, which pair, which sizes."""
    models = {"draft": pair.draft, "target": pair.target}
    return {
        "schema": SCHEMA,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device_info(pair.device),
        "dtype": str(pair.dtype).removeprefix("torch."),
        "pair": {
            "draft": pair.draft_name,
            "target": pair.target_name,
            "source": pair.source,
            "label": pair.describe(),
            "parameters": {r: sum(p.numel() for p in m.parameters()) for r, m in models.items()},
            "layers": {r: getattr(m.config, "num_hidden_layers", None) for r, m in models.items()},
        },
        "training": _training_record(pair),
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "transformers": _transformers_version(),
        },
        "settings": _plain(dataclasses.asdict(s)),
        "prompts": prompts,
    }


def _speed(pair: ModelPair, prompts: list[str], s: MeasureSettings, on_run: OnRun) -> dict[str, Any]:
    rows, costs = speed_benchmark(
        pair,
        prompts,
        max_new_tokens=s.speed_tokens,
        lookaheads=s.lookaheads,
        hf=bool(s.hf_lookaheads),
        hf_lookaheads=s.hf_lookaheads,
        repeats=s.speed_repeats,
        temperature=s.temperature,
        seed=s.seed,
        progress=False,
        on_run=on_run,
    )
    c_K = {K: t / costs.target for K, t in costs.verify.items()}
    return {
        "call_costs": _plain(
            {"draft_s": costs.draft, "target_s": costs.target, "c": costs.c, "verify_s": costs.verify, "c_K": c_K}
        ),
        "speed": {"rows": [_row(r) for r in rows], "summary": speed_summary(rows, costs)},
    }


def _theorem1(pair: ModelPair, prompts: list[str], s: MeasureSettings, on_run: OnRun) -> dict[str, Any]:
    res = sample_runs(
        pair,
        prompts,
        runs=s.theorem1_runs,
        max_new_tokens=s.theorem1_tokens,
        lookahead=s.theorem1_lookahead,
        temperature=s.temperature,
        seed=s.seed + 1,
        progress=False,
        on_run=on_run,
    )
    flat = [r for per_prompt in res for r in per_prompt]
    drafted = sum(int(r.drafted.sum()) for r in flat)
    rejections = sum(r.rejections for r in flat)
    predicted = sum(r.predicted_rejections for r in flat)
    mean, se = mean_and_se(np.array([r.rejections - r.predicted_rejections for r in flat]))
    return {
        "acceptance": {
            "alpha": 1 - rejections / drafted,
            "alpha_predicted": 1 - predicted / drafted,
            "drafted_positions": drafted,
            "lookahead": s.theorem1_lookahead,
        },
        "theorem1": _plain(
            {
                "rows": [{**_row(r), "z": r.z} for r in theorem1_rows(prompts, res)],
                "pooled": {
                    "runs": len(flat),
                    "observed": rejections / len(flat),
                    "predicted": predicted / len(flat),
                    "difference": mean,
                    "difference_se": se,
                    "z": mean / se if se > 0 else None,
                },
            }
        ),
    }


def _eps_sweep(pair: ModelPair, prompts: list[str], s: MeasureSettings, on_run: OnRun) -> dict[str, Any]:
    sweep = eps_sweep(
        pair,
        prompts,
        s.eps_values,
        runs=s.eps_runs,
        max_new_tokens=s.eps_tokens,
        lookahead=s.eps_lookahead,
        temperature=s.temperature,
        seed=s.seed + 2,
        progress=False,
        on_run=on_run,
    )
    return {"eps_sweep": {"rows": [_row(r) for r in sweep]}}


def _training_record(pair: ModelPair) -> dict[str, Any] | None:
    """For the offline pair: steps trained, final losses and held-out mean TV (its ``meta.json``); else None."""
    if pair.source != "fallback" or "held_out" not in pair.info:
        return None
    roles = {
        r: {k: pair.info[r][k] for k in ("steps", "seconds", "final_loss", "objective")} for r in ("draft", "target")
    }
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
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(
                _("{path}: not a results file (not valid JSON: {err})").format(path=path, err=err)
            ) from None
        if not isinstance(data, dict):
            raise ValueError(
                _("{path}: not a results file (a JSON {type_data_name}, not an object)").format(
                    path=path, type_data_name=type(data).__name__
                )
            )
        if data.get("schema") != SCHEMA:
            raise ValueError(
                _("{path}: results file of schema {data_get_schema!r}, this code reads {SCHEMA}").format(
                    path=path, data_get_schema=data.get("schema"), SCHEMA=SCHEMA
                )
            )
        found.append({**data, "file": path.name})
    return found


def result_rows(results: dict[str, Any]) -> tuple[list[Theorem1Row], list[SpeedRow], list[EpsRow]]:
    """A results file's rows as the dataclasses the chapter's figures take (None read back as NaN)."""

    def build(cls: type, row: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: (math.nan if v is None else v) for k, v in row.items() if k in names})

    return (
        [build(Theorem1Row, r) for r in results["theorem1"]["rows"]],
        [build(SpeedRow, r) for r in results["speed"]["rows"]],
        [build(EpsRow, r) for r in results["eps_sweep"]["rows"]],
    )


def results_label(results: dict[str, Any]) -> str:
    """The line that names a results file's device and pair, for every table and figure made from it."""
    d = results["device"]
    if d["type"] == "cuda":
        where = _("{name}, compute capability {capability}").format(
            name=d["name"], capability=".".join(map(str, d["capability"]))
        )
    else:
        load = (
            _(", load average {load:g} on {cores} cores").format(load=d["load_average"], cores=d["cpu_cores"])
            if "load_average" in d
            else ""
        )
        from .shape_costs import threads_text

        where = _("CPU ({name}, {threads}{load})").format(
            name=d["name"], threads=threads_text(d["torch_threads"]), load=load
        )
    return _("{where}; {dtype}; draft {draft} → target {target}; measured {date}").format(
        where=where,
        dtype=results["dtype"],
        draft=display_name(results["pair"]["draft"]),
        target=display_name(results["pair"]["target"]),
        date=results["created"][:10],
    )


def results_panel_title(results: dict[str, Any]) -> str:
    """A short line naming a results file's device, dtype and pair: the title of its panel in a figure that shows
    every results file (Chapter 8), where the whole ``results_label`` (the machine's load, the models' sizes,
    the date) would fill the panel's top. The whole label heads the file's table (``results_table``)."""
    from .pairs import _SIZE

    d = results["device"]
    device = d["name"] if d["type"] == "cuda" else _("CPU ({name})").format(name=d["name"])
    return _("{device}, {dtype}: {draft} → {target}").format(
        device=device,
        dtype=results["dtype"],
        draft=_SIZE.split(results["pair"]["draft"])[0],
        target=_SIZE.split(results["pair"]["target"])[0],
    )


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
        (_("one draft call / one target call"), f"{1e3 * c['draft_s']:.2f} ms / {1e3 * c['target_s']:.2f} ms"),
        (_("cost ratio c"), num(c["c"], ".3f")),
        (_("verification cost c_K (K: value)"), ", ".join(f"{k}: {v:.2f}" for k, v in c["c_K"].items())),
        (
            _("acceptance rate α (K = {K}), observed / 1 − mean TV").format(K=a["lookahead"]),
            f"{num(a['alpha'], '.3f')} / {num(a['alpha_predicted'], '.3f')}",
        ),
        (
            _("Theorem 1, rejections per run ({runs} runs)").format(runs=t1["runs"]),
            _(
                "observed {observed:.2f}, predicted {predicted:.2f}, difference {difference:+.2f} ± {se:.2f} (z = {z})"
            ).format(
                observed=t1["observed"],
                predicted=t1["predicted"],
                difference=t1["difference"],
                se=t1["difference_se"],
                z=num(t1["z"], "+.2f"),
            ),
        ),
        (_("our autoregressive sampling"), _("{tps:.1f} tokens/s").format(tps=ar["tokens_per_second"])),
    ]
    for r in rows:
        if r["method"] == "speculative":
            K = r["lookahead"]
            vs_hf = (
                _("; {ratio:.2f}× HF assisted at this K").format(
                    ratio=r["tokens_per_second"] / hf[K]["tokens_per_second"]
                )
                if K in hf
                else ""
            )
            cells.append(
                (
                    _("speculative, K = {K}").format(K=K),
                    _("{speedup:.2f}× autoregressive (predicted {predicted}×)").format(
                        speedup=r["speedup"], predicted=num(r["predicted_speedup"], ".2f")
                    )
                    + vs_hf,
                )
            )
    for K, r in sorted(hf.items()):
        cells.append(
            (
                _("HF assisted generation, K = {K}").format(K=K),
                _("{speedup:.2f}× our autoregressive sampling").format(speedup=r["speedup"]),
            )
        )
    # c_K is typeset by MathJax on the book's page (its "math" class), as c with a subscript
    c_k = '<span class="math notranslate nohighlight">\\(c_K\\)</span>'
    body = "".join(f"<tr><td>{html.escape(k).replace('c_K', c_k)}</td><td>{html.escape(v)}</td></tr>" for k, v in cells)
    from .shape_costs import whole_names_html

    return (
        f"<p><b>{whole_names_html(results['file'] if 'file' in results else results_name(results))}</b>: "
        f"{whole_names_html(results_label(results))}</p>"
        f'<div class="sd-output-table" tabindex="0"><table>{body}</table></div>'
    )


def _arg(convert: Any, what: str, *, detail: bool = False) -> Any:
    """An argparse type: ``convert(text)``; a ``ValueError`` becomes argparse's error naming the flag.

    With ``detail`` the error also quotes ``convert``'s message (which value of a list is wrong).
    """

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as err:
            why = f" ({str(err).split(': ', 1)[-1]})" if detail else ""
            raise argparse.ArgumentTypeError(
                _("must be {what}, got {text!r}{why}").format(what=what, text=text, why=why)
            ) from None

    parse.__name__ = what
    return parse


def _list(text: str, item: Any) -> tuple[Any, ...]:
    return tuple(item(v) for v in text.split(",") if v.strip())


def _lookaheads(empty: bool) -> Any:
    what = _("a comma-separated list of integers >= 1") + (_(" (empty: none)") if empty else "")
    return _arg(lambda t: check_distinct_ints(_list(t, int), "value", empty=empty), what, detail=True)


def _count(low: int) -> Any:
    return _arg(lambda t: check_int(int(t), "value", low=low), _("an integer >= {low}").format(low=low))


def _eps(text: str) -> tuple[float, ...]:
    values = tuple(check_real(e, "eps", low=0.0) for e in _list(text, float))
    if not values:
        raise ValueError(_("no value"))
    return values


def _budget(text: str) -> float | None:
    value = check_real(float(text), "budget", low=0.0)
    return None if value == 0 else value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m specdec_lite.llm.measure_pair", description=__doc__.split("\n")[0])
    ap.add_argument("--draft", help=_("draft model: hub name or local folder (with --target; default: load_pair())"))
    ap.add_argument("--target", help=_("target model: hub name or local folder"))
    ap.add_argument("--tokenizer", help=_("tokenizer: hub name or local folder (default: the target's)"))
    ap.add_argument("--device", help=_("cpu, cuda, cuda:1, mps (default: the best there is)"))
    ap.add_argument("--dtype", help=_("weights' dtype, e.g. float16 (default: by hardware)"))
    ap.add_argument("--out", default=str(RESULTS_DIR), help=_("folder (or .json file) for the results file"))
    ap.add_argument(
        "--budget",
        type=_arg(_budget, "seconds >= 0"),
        default=DEFAULT_BUDGET_S,
        metavar="SECONDS",
        help=_(
            "time budget, calibration included (default {DEFAULT_BUDGET_S:g}; 0: no budget, the settings as given)"
        ).format(DEFAULT_BUDGET_S=DEFAULT_BUDGET_S),
    )
    ap.add_argument("--quick", action="store_true", help=_("fewer runs and lookaheads"))
    ap.add_argument("--lookaheads", type=_lookaheads(False), help=_("K values of the speed measurement, e.g. 1,2,4,8"))
    ap.add_argument(
        "--hf-lookaheads",
        type=_lookaheads(True),
        help=_("K values of Hugging Face's assisted generation (empty: no Hugging Face comparison)"),
    )
    ap.add_argument(
        "--eps",
        type=_arg(_eps, _("a comma-separated list of numbers >= 0"), detail=True),
        help=_("eps values of the sweep, e.g. 0,0.01,0.1"),
    )
    ap.add_argument(
        "--runs", type=_count(2), help=_("runs per prompt of Theorem 1 (the eps sweep takes a fifth, at least 2)")
    )
    ap.add_argument("--tokens", type=_count(1), help=_("new tokens per run, in every part"))
    ap.add_argument("--prompts", type=_count(1), help=_("how many of the default prompts to use"))
    ap.add_argument("--threads", type=_count(1), help=_("torch intra-op threads (default: torch's)"))
    ap.add_argument(
        "--seed",
        type=_arg(lambda t: check_int(int(t), "value", low=0, high=MAX_SEED), _("an integer in [0, 2**63 - 1]")),
        default=0,
    )
    ap.add_argument("--no-progress", action="store_true", help=_("no tqdm progress bars"))
    args = ap.parse_args(argv)
    if (args.draft is None) != (args.target is None):
        ap.error(_("--draft and --target: give both or neither"))
    try:  # everything that can be checked before a model is loaded
        dev = pick_device(args.device) if args.device is not None else torch.device("cpu")
    except (ValueError, RuntimeError) as err:
        ap.error(f"--{err}")
    try:
        if args.dtype is not None:
            pick_dtype(dev, args.dtype)
    except ValueError as err:
        ap.error(f"--{err}")
    try:
        for flag, name in (("draft", args.draft), ("target", args.target), ("tokenizer", args.tokenizer)):
            if name is not None:
                check_model_name(name, f"--{flag}", needs="" if flag == "tokenizer" else "config.json")
        args.settings = settings_from(args)
        check_writable(args.out, "--out")
    except (ValueError, RuntimeError, OSError) as err:
        ap.error(str(err))
    args.parser = ap
    return args


def check_writable(out: str | Path, arg: str) -> None:
    """``out`` (a folder, or a ``.json`` file) can take a results file: checked before the measuring."""
    if Path(out).suffix == ".json":
        writable_file(out, arg)
    else:
        writable_folder(out, arg)


def settings_from(args: argparse.Namespace) -> MeasureSettings:
    """The settings the command line asks for (``--quick``, then each override): the most the budget may keep."""
    s = QUICK if args.quick else FULL
    changes: dict[str, Any] = {"seed": args.seed}
    if args.lookaheads is not None:
        changes["lookaheads"] = args.lookaheads
    if args.hf_lookaheads is not None:
        changes["hf_lookaheads"] = args.hf_lookaheads
    if args.eps is not None:
        changes["eps_values"] = args.eps
    if args.runs is not None:
        changes.update(theorem1_runs=args.runs, eps_runs=max(2, args.runs // 5))
    if args.tokens is not None:
        changes.update(speed_tokens=args.tokens, theorem1_tokens=args.tokens, eps_tokens=args.tokens)
    if args.prompts is not None:
        changes["prompts"] = args.prompts
    return dataclasses.replace(s, **changes)


def main(argv: Sequence[str] | None = None) -> Path:
    """Run the command: load the pair, measure it, write the results file and print where.

    A bad argument, a model that cannot be loaded or a request the pair's context cannot hold is one line
    naming it, and exit status 2, before anything is measured.
    """
    args = parse_args(argv)  # before anything is loaded: bad settings fail at once
    settings = args.settings
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    try:
        if args.draft is not None:
            pair = load_named_pair(
                args.draft, args.target, tokenizer_name=args.tokenizer, device=args.device, dtype=args.dtype
            )
            print(_("Model pair: {pair}").format(pair=pair.describe()))
        else:
            pair = load_pair(device=args.device, dtype=args.dtype, progress=not args.no_progress)
        check_context(pair, default_prompts(pair)[: settings.prompts], settings)
    except (OSError, ValueError) as err:
        args.parser.error(f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
    results = measure_pair(pair, settings, budget_s=args.budget, progress=not args.no_progress)
    results["command"] = "python -m specdec_lite.llm.measure_pair " + " ".join(
        sys.argv[1:] if argv is None else list(argv)
    )
    path = write_results(results, args.out)
    print(results["speed"]["summary"])
    if args.no_progress:
        print(results["budget"]["summary"])
        print(outcome(results))
    print(_("results file: {path}").format(path=path))
    return path


if __name__ == "__main__":
    main()
