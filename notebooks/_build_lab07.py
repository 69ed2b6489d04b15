"""Write Lab 7 (lookahead, cost ratio and wall-clock) as a notebook with cleared outputs.

Run ``python notebooks/_build_lab07.py [OUT_DIR]`` (default: ``notebooks/``). The Colab badge
and the setup cell derive from the repository named once in ``_config.yml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _labkit import ROOT, header, solution, write
from nbformat.v4 import new_code_cell, new_markdown_cell

NAME = "lab07_lookahead"



def cells() -> list:
    intro = (
        "Companion of Chapter 7. A round drafts at most `K` tokens, one target call scores them, and a "
        "fully accepted round earns a bonus token. A draft token costs `c` target calls. You will simulate "
        "rounds, derive the expected tokens per call of Leviathan et al., turn it into a wall-clock "
        "speed-up, check the exact finite-K computation on a chain, and choose the best lookahead."
    )
    return [
        *header(NAME, "Lab 7 · Lookahead, cost ratio and wall-clock", intro),
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\nfrom specdec_lite import lookahead as la\n"
            "from specdec_lite.exercises.lookahead import (\n"
            "    check_best_lookahead, check_round_lengths, check_tokens_per_call, check_wallclock_speedup,\n"
            ")\n"
            "from specdec_lite.figures.lookahead import quality_pair\n"
            "from specdec_lite.stats import mean_and_se\n"
            "from specdec_lite.widgets.lookahead_explorer import lookahead_explorer"
        ),
        new_markdown_cell(
            "## 1. How many tokens does a round emit?\n\n"
            "Assume every drafted token is accepted with probability `alpha`, independently. A round stops "
            "at its first rejection (keeping the target's residual token) or after `K` acceptances (adding "
            "the bonus token).\n\n"
            "**Exercise 1.** Write `round_lengths(alpha, K, runs, rng)` returning an array with the number "
            "of tokens emitted by each of `runs` independent rounds. Hint: `rng.geometric(1 - alpha, runs)` "
            "is the index of the first rejected draft (careful at `alpha = 1`)."
        ),
        solution(
            "def round_lengths(alpha, K, runs, rng):\n"
            "    if alpha == 1:\n"
            "        return np.full(runs, K + 1)\n"
            "    first_rejection = rng.geometric(1 - alpha, runs)\n"
            "    return np.minimum(first_rejection, K + 1)"
        ),
        new_code_cell("check_round_lengths(round_lengths)"),
        new_markdown_cell(
            "**Exercise 2.** Write `tokens_per_call(alpha, K)`, the expected number of tokens of one round. "
            "Hint: the round emits more than `i` tokens exactly when the first `i` drafts are accepted "
            "(`i <= K`). Your function must work at `alpha = 1` too."
        ),
        solution("def tokens_per_call(alpha, K):\n    return sum(alpha**i for i in range(K + 1))"),
        new_code_cell("check_tokens_per_call(tokens_per_call)"),
        new_markdown_cell("Compare your formula with simulated round lengths:"),
        new_code_cell(
            "g = round_lengths(0.8, 5, 100_000, np.random.default_rng(0))\n"
            "m, se = mean_and_se(g)\n"
            "print(f'simulated {m:.4f} ± {se:.4f}; formula {tokens_per_call(0.8, 5):.4f}')"
        ),
        new_markdown_cell(
            "## 2. From tokens per call to wall-clock\n\n"
            "Time is counted in target calls: a round that drafts `K` tokens takes `K * c + 1`, and "
            "autoregressive decoding produces one token per unit of time.\n\n"
            "**Exercise 3.** Write `speedup(alpha, K, c)`, the predicted speed-up over autoregressive "
            "decoding (Leviathan et al.'s formula)."
        ),
        solution("def speedup(alpha, K, c):\n    return tokens_per_call(alpha, K) / (K * c + 1)"),
        new_code_cell("check_wallclock_speedup(speedup)"),
        new_markdown_cell(
            "**Exercise 4.** For `alpha = 0.8` and `c = 0.05`, which lookahead `K` gives the largest "
            "speed-up? Find it with your `speedup` (or with the widget below) and check it."
        ),
        solution("my_K = max(range(200), key=lambda K: speedup(0.8, K, 0.05))\nmy_K"),
        new_code_cell(
            "print(check_best_lookahead(my_K, alpha=0.8, c=0.05))\n"
            "print('closed form (Lambert W):', la.best_lookahead_iid(0.8, 0.05))"
        ),
        new_markdown_cell(
            "## 3. Exact on a chain, checked by simulation\n\n"
            "On a first-order chain the acceptances are not i.i.d., but the exact expectations are a forward "
            "pass over (last token, position in the round). Compare them with `speculative_k`."
        ),
        new_code_cell(
            "draft, target = quality_pair(0.7)  # V = 7, T = 50\n"
            "K, c = 4, 0.1\n"
            "prof = la.lookahead_profile(draft, target, K)\n"
            "res = sd.decoding.speculative_k(draft, target, K, runs=5000, rng=1)\n"
            "for name, exact, sample in [\n"
            "    ('oracle calls', prof.expected_oracle_calls, res.oracle_calls),\n"
            "    ('draft calls', prof.expected_draft_calls, res.draft_calls),\n"
            "    ('rejections', prof.expected_rejections, res.rejections),\n"
            "    (f'time (c = {c})', prof.expected_time(c), res.time(c)),\n"
            "]:\n"
            "    m, se = mean_and_se(sample)\n"
            "    print(f'{name:14s} exact {exact:8.3f}   Monte Carlo {m:8.3f} ± {se:.3f}')\n"
            "print(f'predicted speed-up {prof.speedup(c):.3f}x')"
        ),
        new_markdown_cell(
            "## 4. Explore\n\n"
            "The explorer draws the exact speed-up against `K` on the book's chain for a draft quality, "
            "with the i.i.d. formula (dotted, using the chain's mean acceptance rate) for comparison.\n\n"
            "1. Draft quality 0.7: move `c` from 0.01 to 0.5. How does the best `K` move?\n"
            "2. Find the cost ratio above which the best `K` is 0. Compare it with the `alpha` in the legend.\n"
            "3. With `c = 0` and quality 1, what is the speed-up at `K = 30`, and why is it not 50?\n"
            "4. At the default settings the exact curve lies above the dotted one for large `K`. Why? "
            "(Hint: how many tokens does the last round draft?) Set `c = 0`: what changes?"
        ),
        new_code_cell("lookahead_explorer()"),
    ]


if __name__ == "__main__":
    write(NAME, cells(), Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks")
