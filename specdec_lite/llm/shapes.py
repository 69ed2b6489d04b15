"""The paper's model shapes timed on this device, with random weights and no network.

    python -m specdec_lite.llm.shapes                          # every shape here, in 480 s
    python -m specdec_lite.llm.shapes --models 70m,160m,410m --budget 240
    python -m specdec_lite.llm.shapes --device cuda --no-pair  # the shapes only

What a call costs depends on the model's shape and the device, not on its weights.
For each shape of :data:`PYTHIA_SHAPES` the command builds a GPT-NeoX model with
random weights, in the dtype the device computes natively (``pairs.pick_dtype``),
fills one KV cache per context length ``L`` with ``L`` random tokens, and times
calls on ``n`` new tokens after it: ``n = 1`` (one autoregressive step) and
``n = K + 1`` for ``K = 1..8`` (the verification call of a round). Each kind of
call is repeated, the kinds taking turns, and its fastest repetition is kept
(``--clock cpu``, on a CPU with one torch thread, times the process's CPU seconds
instead of the wall clock, which other programs on a shared machine inflate). The
results file records those seconds and, per context length, the ratios
``c_K = ((K+1)-token call) / (one-token call)`` of each model and
``c = (draft's one-token call) / (target's one-token call)`` with the smallest
model measured as the draft (:mod:`specdec_lite.llm.shape_costs` reads them back).

Models are measured smallest first. Before a model is built, its memory
(parameters x bytes per weight, plus its KV caches) is compared with what the
device has free, and its seconds are predicted from the last model measured,
scaled by the parameter counts; a model that fits in neither is skipped, and the
file names it and says why. The smallest model is always measured: the others are
predicted from it. Each model gets a share of the time left in proportion to its
parameters and stops repeating once it is spent. On a GPU (or with ``--pair``) the
shipped offline pair is then measured on the same device by
``measure_pair.measure_pair`` in the time left, after a check of greedy equality
at temperature 0 (in bfloat16 two nearly tied logits can make a verification call
and a one-token call pick different argmaxes).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import re
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .._i18n import _
from ..primitives import check_int, check_real
from . import _hf
from .pairs import WEIGHT_DTYPES, pick_device, pick_dtype
from .runs import progress_bar
from .shape_costs import KIND, LOOKAHEADS, RESULTS_DIR, SCHEMA, results_label, summary

#: The command's time budget in seconds (8 minutes on one GPU, the offline pair included).
DEFAULT_BUDGET_S = 480.0
#: Seconds of the budget kept for the offline pair when it is measured.
DEFAULT_PAIR_BUDGET_S = 150.0
#: Context lengths (tokens already in the KV cache) of the timed calls.
DEFAULT_CONTEXTS = (64, 256, 1024)
#: Repetitions of every kind of call: at most the default (``--repeats``), at least ``MIN_REPEATS``.
DEFAULT_REPEATS = 10
MIN_REPEATS = 2
#: How calls are timed: wall-clock seconds, or (on a CPU, with one torch thread) the process's CPU seconds,
#: which other programs on a shared machine do not inflate.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
#: Memory kept free beyond a model's weights and caches (activations, logits, the allocator's slack).
MEMORY_SLACK_BYTES = 512 * 2**20


@dataclass(frozen=True)
class Shape:
    """A GPT-NeoX shape: layers, width, heads, MLP width, logits; rotary on a quarter of each head, untied output."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int = 50304
    rotary_pct: float = 0.25
    max_positions: int = 2048

    def parameters(self) -> int:
        """Parameter count: per layer QKV, output projection, MLP and two layer norms; a final norm; in/out embeddings.

        ``layers (4 h^2 + 4 h + 2 h i + i + h + 4 h) + 2 h + 2 V h`` with ``h`` the width, ``i`` the MLP width;
        the tests check it against the model transformers builds and against Pythia's published counts.
        """
        h, i = self.hidden, self.intermediate
        per_layer = (3 * h * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h) + 4 * h
        return self.layers * per_layer + 2 * h + 2 * self.vocab * h

    def config(self) -> Any:
        """The ``GPTNeoXConfig`` of this shape (Pythia's: parallel residual, GELU, untied embeddings)."""
        tf = _hf.require_transformers()
        return tf.GPTNeoXConfig(
            vocab_size=self.vocab,
            hidden_size=self.hidden,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            intermediate_size=self.intermediate,
            rotary_pct=self.rotary_pct,
            rotary_emb_base=10000,
            max_position_embeddings=self.max_positions,
            use_parallel_residual=True,
            tie_word_embeddings=False,
            hidden_act="gelu",
            layer_norm_eps=1e-5,
        )

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# The Pythia suite's shapes (Biderman et al. 2023), from EleutherAI/pythia's training configs
# models/70M/pythia-70m.yml, models/160M/pythia-160m.yml, models/410M/pythia-410m.yml,
# models/1B/pythia-1b.yml and models/2.8B/pythia-2.8b.yml: "num-layers", "hidden-size",
# "num-attention-heads", "rotary-pct": 0.25, "max-position-embeddings": 2048, "no-weight-tying"
# and "gpt-j-residual" (the parallel residual). GPT-NeoX's MLP is 4 x hidden wide, and the
# released checkpoints pad the tokenizer's vocabulary to 50304 logits. The model cards'
# "Non-Embedding Params" (18,915,328 / 85,056,000 / 302,311,424 / 805,736,448 / 2,517,652,480)
# are checked against Shape.parameters() in tests/test_llm_shapes.py.
PYTHIA_SHAPES: dict[str, Shape] = {
    "pythia-70m": Shape(layers=6, hidden=512, heads=8, intermediate=2048),
    "pythia-160m": Shape(layers=12, hidden=768, heads=12, intermediate=3072),
    "pythia-410m": Shape(layers=24, hidden=1024, heads=16, intermediate=4096),
    "pythia-1b": Shape(layers=16, hidden=2048, heads=8, intermediate=8192),
    "pythia-2.8b": Shape(layers=32, hidden=2560, heads=32, intermediate=10240),
}


def weights_label(names: Sequence[str]) -> str:
    """The label every shapes file and figure carries: the weights are random, only the shapes are real."""
    return "random weights, shapes of " + ", ".join(names)


def dtype_bytes(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def memory_needed(shape: Shape, dtype: torch.dtype, contexts: Sequence[int]) -> int:
    """Bytes a measurement of ``shape`` holds: the weights, one KV cache per context length, and some slack."""
    size = dtype_bytes(dtype)
    cached = sum(contexts) + len(contexts) * (LOOKAHEADS[-1] + 1)
    return shape.parameters() * size + 2 * shape.layers * shape.hidden * cached * size + MEMORY_SLACK_BYTES


def free_memory(device: torch.device) -> int | None:
    """Bytes free on ``device``: the GPU's free memory, or the machine's available memory (None if unknown)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def build(shape: Shape, device: torch.device, dtype: torch.dtype, seed: int = 0) -> Any:
    """A ``GPTNeoXForCausalLM`` of ``shape`` with random weights, made on ``device`` in ``dtype``, in eval mode."""
    tf = _hf.require_transformers()
    torch.manual_seed(seed)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # the weights are made in their dtype: no float32 copy of a large model
    try:
        with torch.device(device):
            model = tf.GPTNeoXForCausalLM(shape.config())
    finally:
        torch.set_default_dtype(default)
    return model.to(device=device, dtype=dtype).eval()


def _sync(device: torch.device) -> Callable[[], None]:
    syncs = {"cuda": torch.cuda.synchronize, "mps": getattr(getattr(torch, "mps", None), "synchronize", None)}
    return syncs.get(device.type) or (lambda: None)


Seconds = dict[int, dict[int, list[float]]]  # context -> new tokens -> the seconds of each repetition


@dataclass
class ModelTiming:
    """What one model's measurement recorded: its calls' seconds per context and number of new tokens."""

    build_s: float
    prefill_s: dict[int, float]
    seconds: Seconds
    total_s: float = 0.0

    @property
    def repeats(self) -> int:
        return min(len(v) for per in self.seconds.values() for v in per.values())

    def fastest(self) -> dict[int, dict[int, float]]:
        return {L: {n: min(v) for n, v in per.items()} for L, per in self.seconds.items()}

    def repetition_s(self) -> float:
        """Seconds of one repetition of every kind of call (the fastest of each)."""
        return sum(sum(per.values()) for per in self.fastest().values())


def time_calls(
    model: Any,
    contexts: Sequence[int],
    *,
    repeats: int,
    deadline: float | None = None,
    seed: int = 0,
    on_repetition: Callable[[], None] | None = None,
    clock: str = "wall",
) -> tuple[dict[int, float], Seconds]:
    """Seconds of calls on ``n`` new tokens after ``L`` cached ones, for every ``L`` in ``contexts``.

    ``n`` is 1 and ``K + 1`` for each ``K`` of :data:`LOOKAHEADS`. One KV cache per
    ``L`` is filled with random tokens (its seconds are returned too); every call is
    cropped back out of it, so each repetition sees the same ``L``. One untimed
    repetition warms up, then up to ``repeats`` timed ones, every kind once per
    repetition; after ``MIN_REPEATS`` of them, passing ``deadline`` (a
    ``time.perf_counter()`` value) stops it. ``clock``: a key of :data:`CLOCKS`.
    """
    now = CLOCKS[clock]
    device = _hf.model_device(model)
    sync = _sync(device)
    gen = torch.Generator().manual_seed(seed)
    vocab = _hf.input_vocab_size(model)
    sizes = (1, *(K + 1 for K in LOOKAHEADS))
    new = torch.randint(vocab, (sizes[-1],), generator=gen).to(device)
    caches, prefill = {}, {}
    with torch.inference_mode():
        for L in contexts:
            ids = torch.randint(vocab, (L,), generator=gen).to(device)
            caches[L] = _hf.new_cache(model)
            sync()
            t0 = now()
            _hf.forward(model, ids, caches[L])
            sync()
            prefill[L] = now() - t0

        def call(L: int, n: int) -> float:
            sync()
            t0 = now()
            _hf.forward(model, new[:n], caches[L])
            sync()
            t = now() - t0
            _hf.crop(caches[L], n)
            return t

        for L in contexts:  # warm-up
            for n in sizes:
                call(L, n)
        seconds: Seconds = {L: {n: [] for n in sizes} for L in contexts}
        for rep in range(repeats):
            for L in contexts:
                for n in sizes:
                    seconds[L][n].append(call(L, n))
            if on_repetition is not None:
                on_repetition()
            if deadline is not None and rep + 1 >= MIN_REPEATS and time.perf_counter() > deadline:
                break
    return prefill, seconds


def predict_seconds(last: ModelTiming, last_params: int, params: int, repeats: int) -> float:
    """Wall-clock seconds a model of ``params`` parameters is predicted to take, from the last model measured.

    Its building, then the rest of its wall time (caches, warm-up, repetitions) per
    warm-up-plus-repetitions, times ``1 + repeats``; all scaled by the ratio of
    parameter counts (calls of larger models cost more per parameter only where
    fixed costs dominate, so this errs on the long side). Wall time, whatever the
    clock of the calls: the budget is in wall-clock seconds.
    """
    scale = params / last_params
    return scale * (last.build_s + (last.total_s - last.build_s) * (1 + repeats) / (1 + last.repeats))


def admit(
    name: str, *, need_bytes: int, free_bytes: int | None, predicted_s: float | None, left_s: float
) -> str | None:
    """Why the model ``name`` is skipped (it fits neither the free memory nor the time left), or None."""
    if free_bytes is not None and need_bytes > free_bytes:
        return (
            f"{name} does not fit in memory: it needs about {need_bytes / 2**30:.1f} GiB, "
            f"{free_bytes / 2**30:.1f} GiB are free"
        )
    if predicted_s is not None and predicted_s > left_s:
        return (
            f"{name} does not fit in the time left: predicted {predicted_s:.0f} s at least, {max(left_s, 0):.0f} s left"
        )
    return None


def cost_ratios(fastest: Mapping[int, Mapping[int, float]]) -> dict[int, dict[int, float]]:
    """``c_K`` per context: the ``(K+1)``-token call over the one-token call of the same model."""
    return {L: {K: per[K + 1] / per[1] for K in LOOKAHEADS} for L, per in fastest.items()}


def measure_shapes(
    shapes: Mapping[str, Shape],
    *,
    device: torch.device,
    dtype: torch.dtype,
    contexts: Sequence[int] = DEFAULT_CONTEXTS,
    repeats: int = DEFAULT_REPEATS,
    budget_s: float = DEFAULT_BUDGET_S,
    seed: int = 0,
    free_bytes: int | None = None,
    clock: str = "wall",
    progress: bool = True,
) -> dict[str, Any]:
    """Time every shape in ``shapes`` (smallest first) on ``device`` within ``budget_s``; the results file's content.

    ``free_bytes``: the memory to plan with (default: what ``free_memory`` finds before each model).
    ``clock="cpu"`` times the calls in the process's CPU seconds (a CPU and one torch thread only); the
    budget is always in wall-clock seconds.
    """
    if clock not in CLOCKS:
        raise ValueError(
            _("clock: expected one of {join_CLOCKS}, got {clock!r}").format(join_CLOCKS=", ".join(CLOCKS), clock=clock)
        )
    if clock == "cpu" and (device.type != "cpu" or torch.get_num_threads() != 1):
        raise ValueError(
            _(
                "clock: 'cpu' times one thread's work on a CPU; here the device is {device_type} "
                "with {torch_get_num_threads} torch thread(s) (use --threads 1)"
            ).format(device_type=device.type, torch_get_num_threads=torch.get_num_threads())
        )
    _hf.require_transformers().GPTNeoXForCausalLM  # noqa: B018 - import the model's code before the clock starts
    start = time.perf_counter()
    order = sorted(shapes, key=lambda k: shapes[k].parameters())
    bar = progress_bar(
        None,
        budget_s,
        "model shapes",
        progress,
        bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s of the budget [{elapsed}<{remaining}]",
    )
    shown = [0.0]

    def tick() -> None:
        now = time.perf_counter() - start
        bar.update(min(now, budget_s) - shown[0])
        shown[0] = min(now, budget_s)

    models: dict[str, Any] = {}
    skipped: list[dict[str, str]] = []
    predicted: dict[str, float] = {}
    last: tuple[ModelTiming, int] | None = None
    for i, name in enumerate(order):
        shape = shapes[name]
        params = shape.parameters()
        left = budget_s - (time.perf_counter() - start)
        guess = None if last is None else predict_seconds(*last, params, MIN_REPEATS)
        free = free_bytes if free_bytes is not None else free_memory(device)
        why = admit(
            name, need_bytes=memory_needed(shape, dtype, contexts), free_bytes=free, predicted_s=guess, left_s=left
        )
        if why is not None:
            skipped.append({"model": name, "reason": why})
            bar.write(_("skipped: {why}").format(why=why))
            continue
        share = left * params / sum(shapes[k].parameters() for k in order[i:])
        if last is not None:
            predicted[name] = predict_seconds(*last, params, repeats)
        bar.set_description(f"model shapes ({name})")
        t0 = time.perf_counter()
        model = build(shape, device, dtype, seed=seed + i)
        built = time.perf_counter() - t0
        tick()
        prefill, seconds = time_calls(
            model, contexts, repeats=repeats, deadline=t0 + share, seed=seed, on_repetition=tick, clock=clock
        )
        timing = ModelTiming(built, prefill, seconds, time.perf_counter() - t0)
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
        models[name] = _model_record(name, shape, dtype, timing, predicted.get(name))
        last = (timing, params)
        tick()
    bar.close()
    if not models:
        raise RuntimeError("no model shape fits this device: " + "; ".join(s["reason"] for s in skipped))
    out = {
        "schema": SCHEMA,
        "kind": KIND,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "weights": weights_label(list(models)),
        "device": _device_info(device),
        "dtype": str(dtype).removeprefix("torch."),
        "versions": _versions(),
        "settings": {
            "contexts": list(contexts),
            "lookaheads": list(LOOKAHEADS),
            "repeats": repeats,
            "seed": seed,
            "budget_s": budget_s,
            "clock": clock,
        },
        "draft": next(iter(models)),
        "models": models,
        "skipped": skipped,
        "seconds": time.perf_counter() - start,
    }
    out["label"] = results_label(out)
    return out


def _model_record(
    name: str, shape: Shape, dtype: torch.dtype, t: ModelTiming, predicted_s: float | None
) -> dict[str, Any]:
    fastest = t.fastest()
    return {
        "shape": shape.record(),
        "parameters": shape.parameters(),
        "weights_gib": shape.parameters() * dtype_bytes(dtype) / 2**30,
        "build_s": t.build_s,
        "prefill_s": {str(L): s for L, s in t.prefill_s.items()},
        "repeats": t.repeats,
        "call_s": {str(L): {str(n): s for n, s in per.items()} for L, per in fastest.items()},
        "median_call_s": {
            str(L): {str(n): float(torch.tensor(v).median()) for n, v in per.items()} for L, per in t.seconds.items()
        },
        "c_K": {str(L): {str(K): r for K, r in per.items()} for L, per in cost_ratios(fastest).items()},
        "predicted_s": predicted_s,
        "actual_s": t.total_s,
    }


def _device_info(device: torch.device) -> dict[str, Any]:
    from .measure_pair import device_info

    return device_info(device)


def _versions() -> dict[str, str]:
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": _hf.require_transformers().__version__,
    }


def results_name(results: Mapping[str, Any]) -> str:
    """``cpu-float32.json``; on a GPU its name too (``cuda-nvidia-h200-bfloat16.json``)."""
    d = results["device"]
    where = d["type"] if d["type"] != "cuda" else f"cuda-{d['name']}"
    return re.sub(r"[^a-z0-9.]+", "-", f"{where}-{results['dtype']}".lower()).strip("-") + ".json"


def write_results(results: Mapping[str, Any], out: str | Path = RESULTS_DIR) -> Path:
    """Write ``results`` to ``out`` (a ``.json`` file, or a folder for ``results_name``); returns the path."""
    import json

    path = Path(out)
    if path.suffix != ".json":
        path = path / results_name(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
    return path


def greedy_check(pair: Any, prompts: Sequence[str], *, tokens: int = 48, lookahead: int = 4) -> list[dict[str, Any]]:
    """Per prompt: does speculative decoding at temperature 0 give the target's greedy output; where do they part?"""
    from .engine import autoregressive_generate, speculative_generate

    rows = []
    for prompt in prompts:
        ids = pair.encode(prompt)
        greedy = autoregressive_generate(pair.target, ids, tokens, temperature=0).tokens
        fast = speculative_generate(pair.draft, pair.target, ids, tokens, lookahead=lookahead, temperature=0).tokens
        differ = (greedy != fast).nonzero()
        rows.append(
            {
                "prompt": prompt,
                "equal": bool(len(differ) == 0),
                "first_difference": None if len(differ) == 0 else int(differ[0, 0]),
            }
        )
    return rows


def measure_offline_pair(
    device: torch.device, budget_s: float, out: str | Path, *, progress: bool = True
) -> dict[str, Any]:
    """The shipped pair on ``device``: greedy equality, then ``measure_pair``'s full measurement in ``budget_s``."""
    from . import measure_pair as mp
    from .pairs import load_pair
    from .runs import default_prompts

    pair = load_pair(hub=False, device=device, progress=progress)
    greedy = greedy_check(pair, default_prompts(pair))
    results = mp.measure_pair(pair, mp.FULL, budget_s=budget_s, progress=progress)
    results["command"] = "python -m specdec_lite.llm.shapes (the shipped pair, on the device of the shapes)"
    results["greedy_equality"] = greedy
    path = mp.write_results(results, out)
    return {
        "file": path.name,
        "label": pair.describe(),
        "greedy_equality": greedy,
        "plan": results["budget"]["summary"],
    }


# --- the command line ---------------------------------------------------------------------


def _models(text: str) -> tuple[str, ...]:
    names = []
    for item in (v.strip() for v in text.split(",")):
        name = item if item.startswith("pythia-") else f"pythia-{item}"
        if name not in PYTHIA_SHAPES:
            raise argparse.ArgumentTypeError(
                _("unknown model {item!r}; known: {join_PYTHIA_SHAPES} (with or without 'pythia-')").format(
                    item=item, join_PYTHIA_SHAPES=", ".join(PYTHIA_SHAPES)
                )
            )
        names.append(name)
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(_("a model is named twice in {text!r}").format(text=text))
    return tuple(names)


def _contexts(text: str) -> tuple[int, ...]:
    top = min(s.max_positions for s in PYTHIA_SHAPES.values()) - LOOKAHEADS[-1] - 1
    try:
        values = tuple(check_int(int(v), "context", high=top) for v in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            _("must be comma-separated integers in [1, {top}], got {text!r} ({str_err_split_1_1})").format(
                top=top, text=text, str_err_split_1_1=str(err).split(": ", 1)[-1]
            )
        ) from None
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(_("a context length is given twice in {text!r}").format(text=text))
    return tuple(sorted(values))


def _seconds(text: str) -> float:
    try:
        return check_real(float(text), "seconds", low=0.0, open_low=True)
    except ValueError:
        raise argparse.ArgumentTypeError(_("must be a number of seconds > 0, got {text!r}").format(text=text)) from None


def _count(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return check_int(int(text), "value", low=low)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("must be an integer >= {low}, got {text!r}").format(low=low, text=text)
            ) from None

    return parse


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line on stderr (no usage block above it); exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, checked before any work: a bad argument is one line on stderr and exit status 2."""
    ap = _Parser(prog="python -m specdec_lite.llm.shapes", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--models",
        type=_models,
        default=tuple(PYTHIA_SHAPES),
        help=_("shapes to time (default: all of {join_PYTHIA_SHAPES})").format(
            join_PYTHIA_SHAPES=", ".join(PYTHIA_SHAPES)
        ),
    )
    ap.add_argument("--device", help=_("cpu, cuda, cuda:1, mps (default: the best there is)"))
    ap.add_argument("--dtype", choices=list(WEIGHT_DTYPES), help=_("weights' dtype (default: the device's native one)"))
    ap.add_argument(
        "--budget",
        type=_seconds,
        default=DEFAULT_BUDGET_S,
        metavar="SECONDS",
        help=_("time budget, offline pair included (default {DEFAULT_BUDGET_S:g})").format(
            DEFAULT_BUDGET_S=DEFAULT_BUDGET_S
        ),
    )
    ap.add_argument(
        "--contexts",
        type=_contexts,
        default=DEFAULT_CONTEXTS,
        help=_("tokens in the KV cache before each call (default {join_map_str_DEFAULT_CONTEXTS})").format(
            join_map_str_DEFAULT_CONTEXTS=",".join(map(str, DEFAULT_CONTEXTS))
        ),
    )
    ap.add_argument(
        "--repeats",
        type=_count(MIN_REPEATS),
        default=DEFAULT_REPEATS,
        help=_("most repetitions of each call (default {DEFAULT_REPEATS})").format(DEFAULT_REPEATS=DEFAULT_REPEATS),
    )
    ap.add_argument(
        "--pair",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=_("also measure the shipped offline pair on the device (default: on a GPU)"),
    )
    ap.add_argument(
        "--pair-budget",
        type=_seconds,
        default=DEFAULT_PAIR_BUDGET_S,
        metavar="SECONDS",
        help=_("seconds of the budget kept for the pair (default {DEFAULT_PAIR_BUDGET_S:g})").format(
            DEFAULT_PAIR_BUDGET_S=DEFAULT_PAIR_BUDGET_S
        ),
    )
    ap.add_argument("--out", default=str(RESULTS_DIR), help=_("folder (or .json file) for the shapes results file"))
    ap.add_argument("--pair-out", default=str(RESULTS_DIR.parent), help=_("folder for the pair's results file"))
    ap.add_argument("--threads", type=_count(1), help=_("torch intra-op threads (default: torch's)"))
    ap.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="wall",
        help=_(
            "time calls in wall-clock seconds (default) or, on a CPU with --threads 1, in the "
            "process's CPU seconds (steady on a shared machine)"
        ),
    )
    ap.add_argument("--seed", type=_count(0), default=0)
    ap.add_argument("--no-progress", action="store_true", help=_("no progress bar"))
    args = ap.parse_args(argv)
    try:
        args.device = pick_device(args.device)
        args.dtype = pick_dtype(args.device, args.dtype)
    except (ValueError, RuntimeError) as err:
        ap.error(str(err).splitlines()[0])
    if args.clock == "cpu" and (args.device.type != "cpu" or args.threads != 1):
        ap.error(_("--clock cpu needs --device cpu and --threads 1 (it counts one thread's CPU seconds)"))
    if args.pair is None:
        args.pair = args.device.type == "cuda"
    if args.pair and args.pair_budget >= args.budget:
        ap.error(
            _("--pair-budget {args_pair_budget:g} leaves nothing of --budget {args_budget:g} for the shapes").format(
                args_pair_budget=args.pair_budget, args_budget=args.budget
            )
        )
    return args


def main(argv: Sequence[str] | None = None) -> Path:
    """Run the command: time the shapes, then (on a GPU) the offline pair; write the results file, print where."""
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    shapes = {name: PYTHIA_SHAPES[name] for name in args.models}
    budget = args.budget - (args.pair_budget if args.pair else 0.0)
    start = time.perf_counter()
    results = measure_shapes(
        shapes,
        device=args.device,
        dtype=args.dtype,
        contexts=args.contexts,
        repeats=args.repeats,
        budget_s=budget,
        seed=args.seed,
        clock=args.clock,
        progress=not args.no_progress,
    )
    results["command"] = "python -m specdec_lite.llm.shapes " + " ".join(sys.argv[1:] if argv is None else argv)
    for skip in results["skipped"]:
        print(_("skipped: {skip_reason}").format(skip_reason=skip["reason"]))
    results["pair"] = None
    if args.pair:
        left = args.budget - (time.perf_counter() - start)
        if left < 30:
            warnings.warn(
                _("{left:.0f} s left of the budget: the offline pair is not measured").format(left=left), stacklevel=2
            )
        else:
            results["pair"] = measure_offline_pair(args.device, left, args.pair_out, progress=not args.no_progress)
            print(
                _("offline pair: {results_pair_file} ({results_pair_plan})").format(
                    results_pair_file=results["pair"]["file"], results_pair_plan=results["pair"]["plan"]
                )
            )
    results["total_s"] = time.perf_counter() - start
    path = write_results(results, args.out)
    print(summary(results))
    print(_("results file: {path}").format(path=path))
    return path


if __name__ == "__main__":
    main()
