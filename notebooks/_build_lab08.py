"""Write Lab 8 (speculative decoding with real language models) as a notebook with cleared outputs.

Run ``python notebooks/_build_lab08.py [OUT_DIR]`` (default: ``notebooks/``). The Colab badge
and the setup cell derive from the repository named once in ``_config.yml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _labkit import ROOT, header, solution, write
from nbformat.v4 import new_code_cell, new_markdown_cell

NAME = "lab08_real_models"



def cells() -> list:
    intro = (
        "Companion of Chapter 8. Speculative decoding on real language models: a small draft `p` proposes "
        "tokens, a large target `q` checks them in one call. In Colab choose *Runtime → Change runtime type → "
        "GPU* first: `load_pair()` then downloads the paper's Pythia models (a 1b target on a free GPU). "
        "Without a GPU it uses a small pair that specdec_lite trains on the Python standard library "
        "(once, about three minutes; then cached)."
    )
    return [
        *header(NAME, "Lab 8 · Speculative decoding with real language models", intro),
        new_code_cell(
            "import numpy as np\nimport torch\nfrom IPython.display import HTML, display\n\n"
            "from specdec_lite.exercises.real_models import check_verify_round\n"
            "from specdec_lite.figures import real_models as figs\n"
            "from specdec_lite.laws import acceptance, residual\n"
            "from specdec_lite.llm import autoregressive_generate, load_pair, speculative_generate\n"
            "from specdec_lite.llm import measure\n"
            "from specdec_lite.llm.fallback import training_threads\n"
            "from specdec_lite.plotting import show\n"
            "from specdec_lite.widgets.real_models import generation_explorer\n\n"
            "torch.set_num_threads(training_threads())\n"
            "pair = load_pair()\n"
            "prompt = measure.default_prompts(pair)[0]"
        ),
        new_markdown_cell(
            "## 1. One run, token by token\n\n"
            "`speculative_generate` returns the tokens and, for every position, whether it was drafted "
            "(else a bonus token sampled from the target), accepted or rejected, and `TV(p_n, q_n)` from the "
            "two models' logits. Green: accepted drafts; orange: drawn from the residual after a rejection; "
            "blue: bonus tokens."
        ),
        new_code_cell(
            "ids = pair.encode(prompt)\n"
            "run = speculative_generate(pair.draft, pair.target, ids, 40, lookahead=4, temperature=1.0, generator=0)\n"
            "print(f'{run.rejections} rejections; summed TV at drafted positions {run.predicted_rejections:.2f}; '\n"
            "      f'{run.oracle_calls} target calls for {len(run.tokens)} tokens')\n"
            "display(HTML(figs.annotated_html(pair.pieces(run.tokens), run)))\n"
            "greedy = autoregressive_generate(pair.target, ids, 40, temperature=0)\n"
            "fast = speculative_generate(pair.draft, pair.target, ids, 40, lookahead=4, temperature=0)\n"
            "print('greedy speculative == greedy target:', torch.equal(fast.tokens, greedy.tokens))"
        ),
        new_markdown_cell(
            "## 2. Verify one round\n\n"
            "The target's single call returns `K + 1` laws: `q[0..K-1]` at the drafted positions and `q[K]` "
            "after the last draft. Draft `i` is accepted when `u[i] < min(1, q[i, x_i] / p[i, x_i])`, left to "
            "right; the first rejected one is replaced by a draw from the residual `[q_i - p_i]_+`, and if all "
            "`K` survive a bonus token is drawn from `q[K]`.\n\n"
            "**Exercise.** Write `verify_round(p, q, drafts, u)` returning `(accepted, next_law)`: the number "
            "of drafts kept and the law of the token that ends the round. `p` has shape `(K, V)`, `q` shape "
            "`(K + 1, V)` (numpy arrays). You may use `acceptance` and `residual` from `specdec_lite.laws`."
        ),
        solution(
            "def verify_round(p, q, drafts, u):\n"
            "    K = len(drafts)\n"
            "    b = acceptance(p, q[:K])[np.arange(K), drafts]\n"
            "    accepted = 0\n"
            "    while accepted < K and u[accepted] < b[accepted]:\n"
            "        accepted += 1\n"
            "    if accepted < K:\n"
            "        return accepted, residual(p[accepted], q[accepted])\n"
            "    return K, q[K]"
        ),
        new_code_cell("check_verify_round(verify_round)"),
        new_markdown_cell(
            "## 3. Explore\n\n"
            "The explorer runs the engine once per setting and draws `TV(p_n, q_n)` at every generated "
            "position, coloured by what happened there.\n\n"
            "1. With `ε = 0`, move `K` from 1 to 8 for a few seeds. How does the number of target calls change, "
            "and the number of rejections?\n"
            "2. Raise `ε`. How far must it go before most drafted positions are accepted? Do the bars change?\n"
            "3. The title compares the rejections with the summed TV. Over many seeds, which is larger on "
            "average when `ε = 0`? When `ε = 0.3`?"
        ),
        new_code_cell("generation_explorer(pair, prompt)"),
        new_markdown_cell(
            "## 4. On a GPU: speed\n\n"
            "On a GPU the target's call costs about the same for one token as for a handful, and the draft is "
            "a few percent of it. The cell below measures tokens per second of autoregressive sampling, "
            "our speculative sampling for several `K`, and Hugging Face's assisted generation. It runs only "
            "on a GPU (on a CPU, Chapter 8 shows the measurement for the offline pair)."
        ),
        new_code_cell(
            "if pair.device.type == 'cuda':\n"
            "    rows, costs = measure.speed_benchmark(pair, measure.default_prompts(pair), max_new_tokens=64,\n"
            "                                          lookaheads=(2, 4, 6, 8), hf_lookaheads=(4,))\n"
            "    show(figs.speed_figure(rows, pair.describe()))\n"
            "    print(measure.speed_verdict(rows, costs))\n"
            "else:\n"
            "    print('No GPU here: see Chapter 8 for the CPU measurement.')"
        ),
    ]


if __name__ == "__main__":
    write(NAME, cells(), Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks")
