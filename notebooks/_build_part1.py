"""Write the Part I labs (lab01-lab03) as notebooks with cleared outputs.

Run ``python notebooks/_build_part1.py [OUT_DIR]`` (default: ``notebooks/``). The Colab badge
and the setup cell derive from the repository named once in ``_config.yml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _labkit import ROOT, header, solution, write
from nbformat.v4 import new_code_cell, new_markdown_cell


def lab01() -> list:
    return header(
        "lab01_markov_chains",
        "Lab 1 · Decoding as a Markov chain",
        "Companion of Chapter 1. You will compute the marginal laws of a chain, count the oracle calls "
        "of autoregressive decoding, write the total variation distance, and explore it with a widget.",
    ) + [
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\n"
            "from specdec_lite.exercises.part1 import check_marginals, check_tv\n"
            "from specdec_lite.widgets.token_explorer import token_explorer"
        ),
        new_markdown_cell(
            "## 1. A chain and its marginals\n\n"
            "A `MarkovChain` holds the law of the first token (`init`, shape `(V,)`) and one transition "
            "matrix per later position (`trans`, shape `(T-1, V, V)`); row `u` of `trans[n]` is the law of "
            "the next token after token `u`."
        ),
        new_code_cell(
            "target = sd.MarkovChain.random(V=4, T=6, rng=0)\n"
            "print(target)\nprint(target.init)\nprint(target.trans[0].round(3))"
        ),
        new_markdown_cell(
            "**Exercise 1.** Write `marginals(chain)`, returning the `(T, V)` array whose row `n` is the law "
            "of token `n` (counting from 0). Hint: the marginal is a *row* vector; one step of the chain "
            "multiplies it by a transition matrix."
        ),
        solution(
            "def marginals(chain):\n"
            "    mu = [chain.init]\n"
            "    for P in chain.trans:\n"
            "        mu.append(mu[-1] @ P)\n"
            "    return np.array(mu)"
        ),
        new_code_cell("check_marginals(marginals)"),
        new_markdown_cell(
            "## 2. Autoregressive decoding costs T oracle calls\n\n"
            "The package's sampler runs many independent runs at once. Compare the frequencies of the last "
            "token with your marginals, and look at the oracle calls."
        ),
        new_code_cell(
            "res = sd.decoding.autoregressive(target, runs=20_000, rng=1)\n"
            "print('observed law of the last token:', np.bincount(res.tokens[:, -1], minlength=target.V) / res.runs)\n"
            "print('exact marginal                :', marginals(target)[-1].round(3))\n"
            "print('oracle calls per run          :', set(res.oracle_calls.tolist()))"
        ),
        new_markdown_cell(
            "## 3. Total variation\n\n"
            "**Exercise 2.** Write `tv(p, q)` $= \\tfrac12 \\sum_x |p(x) - q(x)|$ for two laws given as "
            "NumPy arrays."
        ),
        solution("def tv(p, q):\n    return 0.5 * np.abs(p - q).sum()"),
        new_code_cell("check_tv(tv)"),
        new_markdown_cell(
            "## 4. Explore\n\n"
            "The explorer draws a draft `p` and a target `q` on a few tokens (the draft is `quality * q + "
            "(1 - quality) * other`). Questions:\n\n"
            "1. With the preset *disjoint supports*, at which quality does the TV drop below 0.5? Does it "
            "depend on the number of tokens?\n"
            "2. With any preset, how does the TV change when you move the quality from 0 to 1 (look at the "
            "title)? Compare with Exercise 2 of Chapter 1.\n"
            "3. The lower panels belong to Chapter 2: which tokens have acceptance probability 1?"
        ),
        new_code_cell("token_explorer()"),
    ]


def lab02() -> list:
    return header(
        "lab02_unbiased",
        "Lab 2 · Speculative decoding is unbiased",
        "Companion of Chapter 2. You will write the acceptance probability, the residual law and one "
        "speculative step, and watch the output follow the target.",
    ) + [
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\n"
            "from specdec_lite.exercises.part1 import check_acceptance, check_residual, check_speculative_step\n"
            "from specdec_lite.widgets.token_explorer import token_explorer"
        ),
        new_markdown_cell(
            "## 1. Acceptance\n\n"
            "**Exercise 1.** Write `acceptance(p, q)`, the array of acceptance probabilities "
            "$\\min(1, q(x)/p(x))$. (Where $p(x) = 0$ the token is never proposed: any finite value is fine.)"
        ),
        solution(
            "def acceptance(p, q):\n"
            "    with np.errstate(divide='ignore', invalid='ignore'):\n"
            "        return np.where(p > 0, np.minimum(1.0, q / p), 1.0)"
        ),
        new_code_cell("check_acceptance(acceptance)"),
        new_markdown_cell(
            "## 2. The residual\n\n"
            "**Exercise 2.** Write `residual(p, q)`, the law $[q - p]_+ \\propto \\max(q - p, 0)$. "
            "When $p = q$ the positive part has no mass: return `q` in that case (Chapter 2 explains why "
            "that is correct)."
        ),
        solution(
            "def residual(p, q):\n"
            "    pos = np.maximum(q - p, 0.0)\n"
            "    mass = pos.sum()\n"
            "    return pos / mass if mass > 0 else q"
        ),
        new_code_cell("check_residual(residual)"),
        new_markdown_cell(
            "## 3. One speculative step\n\n"
            "**Exercise 3.** Write `speculative_step(p, q, rng)` returning `(token, rejected)`: draw a token "
            "from the draft `p`, accept it with probability $\\min(1, q/p)$, otherwise draw from the residual. "
            "The check runs it 10,000 times and compares the output with `q` (chi-square test) and the "
            "rejection rate with $\\mathrm{TV}(p, q)$."
        ),
        solution(
            "def speculative_step(p, q, rng):\n"
            "    x = rng.choice(len(p), p=p)\n"
            "    if rng.random() < acceptance(p, q)[x]:\n"
            "        return x, False\n"
            "    return rng.choice(len(q), p=residual(p, q)), True"
        ),
        new_code_cell("check_speculative_step(speculative_step)"),
        new_markdown_cell(
            "## 4. Whole sequences\n\n"
            "The package's vectorised sampler runs Algorithm 1 on chains. On a small chain we can list all "
            "$V^T$ sequences and test the output against the target's exact law, and against the draft's."
        ),
        new_code_cell(
            "target = sd.MarkovChain.random(V=3, T=4, rng=1)\n"
            "draft = sd.draft_for(target, quality=0.3, rng=2)\n"
            "res = sd.decoding.speculative(draft, target, runs=20_000, rng=3)\n"
            "counts = np.bincount(sd.stats.sequence_index(res.tokens, 3), minlength=3**4)\n"
            "print('p-value against q:', sd.stats.chi_square(counts, sd.theory.sequence_law(target)).pvalue)\n"
            "print('p-value against p:', sd.stats.chi_square(counts, sd.theory.sequence_law(draft)).pvalue)"
        ),
        new_markdown_cell(
            "## 5. Explore\n\n"
            "1. Choose *disjoint supports* and quality 0. What are the acceptance probabilities and the "
            "residual? Does the histogram still match `q`?\n"
            "2. Raise the quality: which tokens keep acceptance probability 1, and why?\n"
            "3. With few runs (say 200), how often does a bar leave its ±2 SE error bar? With 20,000?"
        ),
        new_code_cell("token_explorer()"),
    ]


def lab03() -> list:
    return header(
        "lab03_rejections",
        "Lab 3 · Counting rejections",
        "Companion of Chapter 3. You will compute the expected number of rejections of a small example "
        "with Theorem 1(b), turn it into a speed-up, and watch Monte Carlo converge to it.",
    ) + [
        new_code_cell(
            "import specdec_lite as sd\n"
            "from specdec_lite.exercises.part1 import check_expected_rejections_two_state, check_speedup, "
            "two_state_pair\n"
            "from specdec_lite.stats import mean_and_se\n"
            "from specdec_lite.widgets.rejections_explorer import rejections_explorer"
        ),
        new_markdown_cell(
            "## 1. Theorem 1(b) by hand\n\n"
            "The example of Chapter 3, Exercise 1: two states, $T = 3$ tokens."
        ),
        new_code_cell(
            "draft, target = two_state_pair()\n"
            "print('q_1 =', target.init, '  p_1 =', draft.init)\n"
            "print('Q =', target.trans[0].tolist(), '  P =', draft.trans[0].tolist())"
        ),
        new_markdown_cell(
            "**Exercise 1.** Compute $\\mathbb E[N_{\\mathrm{rej}}] = \\sum_n \\mathbb E_{x_{n-1} \\sim q}"
            "[\\mathrm{TV}(p_n, q_n)(\\cdot \\mid x_{n-1})]$ with NumPy, using only `sd.tv`, `.laws()` and "
            "`.marginals()` (not `sd.theory`)."
        ),
        solution(
            "tvs = sd.tv(draft.laws(), target.laws())  # (T, V): TV of the law after each previous token\n"
            "mu = target.marginals()                   # (T, V): the target's marginals\n"
            "answer = tvs[0, 0] + (mu[:-1] * tvs[1:]).sum()\n"
            "answer"
        ),
        new_code_cell("check_expected_rejections_two_state(answer)"),
        new_markdown_cell(
            "**Exercise 2.** Turn it into a speed-up over autoregressive decoding (which makes $T$ oracle "
            "calls). The check accepts both conventions of Chapter 3 and tells you which one you used."
        ),
        solution("speedup = target.T / answer\nspeedup"),
        new_code_cell("check_speedup(speedup)"),
        new_markdown_cell("## 2. Against simulation"),
        new_code_cell(
            "res = sd.decoding.speculative(draft, target, runs=50_000, rng=0)\n"
            "m, se = mean_and_se(res.rejections)\n"
            "print(f'Monte Carlo {m:.4f} ± {se:.4f} (1 SE) vs exact {answer:.4f}')"
        ),
        new_markdown_cell(
            "## 3. Explore\n\n"
            "The explorer runs the paper's experiment on a random target with `V` states and `T` tokens "
            "(draft quality 0: an unrelated random chain).\n\n"
            "1. Multiply the number of runs by 4: what happens to the width of the ±2 SE band?\n"
            "2. Set the quality to 1: what happens to the rejections and to the two speed-ups in the title?\n"
            "3. Find the quality at which the speed-up $T / \\mathbb E[\\text{calls}]$ reaches 5 "
            "(V = 7, T = 50, seed 10).\n"
            "4. Keep the quality fixed and double `T`: how does $\\mathbb E[N_{\\mathrm{rej}}]$ change?"
        ),
        new_code_cell("rejections_explorer()"),
    ]


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks"
    write("lab01_markov_chains", lab01(), out)
    write("lab02_unbiased", lab02(), out)
    write("lab03_rejections", lab03(), out)
