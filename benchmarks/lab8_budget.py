"""Lab 8's measurement cell, timed on the shapes of the CPU pair (pythia-70m drafting for pythia-410m).

The weights are random (no hub here), with the exact shapes of ``EleutherAI/pythia-70m``
and ``EleutherAI/pythia-410m``: each call costs what the real model's costs, only the
acceptance rate differs. The script runs what the lab runs,
``measure_pair(pair, budget_s=LAB_BUDGET_S)`` with the lab's thread count, and prints
the stated budget against the measured wall time, the plan and its cuts, and the
load average (other work on the machine slows every call).

    python benchmarks/lab8_budget.py                  # the lab's budget
    python benchmarks/lab8_budget.py --budget 120 --out /tmp/lab8.json
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch
import transformers

from specdec_lite.llm import measure_pair as mp
from specdec_lite.llm.fallback import stdlib_texts, train_tokenizer, training_threads
from specdec_lite.llm.pairs import ModelPair, pick_device, pick_dtype

#: Seconds the lab gives its measurement section (calibration included).
LAB_BUDGET_S = 300.0
#: (layers, hidden, heads, intermediate) of the two Pythia models; both have 50304 logits.
SHAPES = {"pythia-70m": (6, 512, 8, 2048), "pythia-410m": (24, 1024, 16, 4096)}


def pythia_shaped(name: str, seed: int) -> transformers.GPTNeoXForCausalLM:
    """A GPT-NeoX model with the configuration of ``EleutherAI/{name}`` and random weights, in eval mode."""
    layers, hidden, heads, intermediate = SHAPES[name]
    cfg = transformers.GPTNeoXConfig(
        vocab_size=50304,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        rotary_pct=0.25,
        rotary_emb_base=10000,
        max_position_embeddings=2048,
        use_parallel_residual=True,
        tie_word_embeddings=False,
        hidden_act="gelu",
        layer_norm_eps=1e-5,
    )
    torch.manual_seed(seed)
    return transformers.GPTNeoXForCausalLM(cfg).eval()


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=LAB_BUDGET_S, help="seconds (default: the lab's)")
    ap.add_argument("--threads", type=int, help="torch threads (default: the lab's, training_threads())")
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda, mps")
    ap.add_argument("--out", help="write the results file here (never under benchmarks/real_models)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    device = pick_device(args.device)
    dtype = pick_dtype(device)
    tok = train_tokenizer(stdlib_texts(200_000), 1000)
    draft, target = (
        pythia_shaped(name, seed).to(device=device, dtype=dtype)
        for name, seed in (("pythia-70m", 0), ("pythia-410m", 1))
    )
    pair = ModelPair(
        draft,
        target,
        tok,
        "pythia-70m shape (random weights)",
        "pythia-410m shape (random weights)",
        "hub/local",
        device,
        dtype,
    )
    print(f"built the pair in {time.perf_counter() - t0:.0f} s: {pair.describe()}")
    torch.set_num_threads(args.threads or training_threads())  # what the lab's first cell does
    print(f"torch threads {torch.get_num_threads()}; load average before: {load_average()}")
    t0 = time.perf_counter()
    results = mp.measure_pair(pair, budget_s=args.budget)
    wall = time.perf_counter() - t0
    print(f"load average after: {load_average()}")
    b = results["budget"]
    print(f"stated budget {args.budget:.0f} s, measured wall time {wall:.0f} s ({wall / args.budget:.0%} of it)")
    print("plan:", b["summary"])
    print(
        "calibration:",
        json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in b["calibration"].items()}),
    )
    print("sizes used:", json.dumps(results["settings"]))
    if args.out:
        print("results file:", mp.write_results(results, args.out))


if __name__ == "__main__":
    main()
