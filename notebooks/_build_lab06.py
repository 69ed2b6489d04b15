"""Write Lab 6 (batch speculative decoding and the draft tree) as a notebook with cleared outputs.

Run ``python notebooks/_build_lab06.py [OUT_DIR]`` (default: ``notebooks/``). The Colab badge
and the setup cell derive from the repository named once in ``_config.yml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _labkit import ROOT, header, solution, write
from nbformat.v4 import new_code_cell, new_markdown_cell

NAME = "lab06_batch"



def cells() -> list:
    intro = (
        "Companion of Chapter 6. A round drafts `M` sequences and one target call scores them all. "
        "Algorithm 4 uses the batch at the round's first position only (the residual cascade), then the "
        "chosen draft continues alone. You will compute the batch improvement of one token, write "
        "Theorem 3's forward pass, count the survivors of the draft tree, and compare both algorithms."
    )
    return [
        *header(NAME, "Lab 6 · Batch speculative decoding and the draft tree", intro),
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\nfrom specdec_lite import batch\n"
            "from specdec_lite.exercises.batch import (\n"
            "    check_batch_improvement, check_expected_rejections_batch, check_tree_survivors,\n"
            ")\n"
            "from specdec_lite.figures.part1 import pair\n"
            "from specdec_lite.stats import mean_and_se\n"
            "from specdec_lite.widgets.batch_explorer import batch_explorer"
        ),
        new_markdown_cell(
            "## 1. One token: the residual cascade\n\n"
            "With `M` candidates from `p`, try candidate `m` against `q^m` (`q^1 = q`, "
            "`q^{m+1} = [q^m - p]_+`). All `M` fail with probability `r_1 ... r_M`, `r_m = TV(q^m, p)`. "
            "Here are the laws and the chance of reaching each stage for a small example."
        ),
        new_code_cell(
            "p = np.array([0.6, 0.3, 0.1])\nq = np.array([0.2, 0.3, 0.5])\n"
            "reach, laws = batch.residual_cascade(p, q, 4)\n"
            "for m in range(5):\n"
            "    print(f'stage {m + 1}: q^{m + 1} = {np.round(laws[m], 3)}, reached with probability {reach[m]:.4f}')"
        ),
        new_markdown_cell(
            "**Exercise 1.** Write `batch_improvement(p, q, M)` returning "
            "`TV(q, p) - r_1 ... r_M` (use `sd.tv` and `sd.residual`)."
        ),
        solution(
            "def batch_improvement(p, q, M):\n"
            "    prod, qm = 1.0, q\n"
            "    for _ in range(M):\n"
            "        prod *= sd.tv(qm, p)\n"
            "        qm = sd.residual(p, qm)\n"
            "    return sd.tv(q, p) - prod"
        ),
        new_code_cell("check_batch_improvement(batch_improvement)"),
        new_markdown_cell(
            "The batch sampler on a one-token chain (`T = 1`) gives a Monte Carlo estimate of the same "
            "number: `TV - P(reject)`."
        ),
        new_code_cell(
            "none = np.empty((0, 3, 3))\n"
            "draft1, target1 = sd.MarkovChain(p, none), sd.MarkovChain(q, none)\n"
            "for M in (1, 2, 4):\n"
            "    rejected = sd.decoding.batch_speculative(draft1, target1, M, runs=20_000, rng=M).rejected[:, 0]\n"
            "    m, se = mean_and_se(sd.tv(p, q) - rejected)\n"
            "    print(f'M = {M}: exact {batch_improvement(p, q, M):.4f}, Monte Carlo {m:.4f} ± {se:.4f}')"
        ),
        new_markdown_cell(
            "## 2. Theorem 3 on a chain\n\n"
            "A position starts a round when it is the first or follows a rejection; there it rejects with "
            "`r_1 ... r_M`, elsewhere with `TV(p_n, q_n)`. For a first-order chain carry "
            "`f[x] = P(x_n = x, R_n = 1)` next to the target's marginal `mu[n]`.\n\n"
            "**Exercise 2.** Write `expected_rejections_batch(draft, target, M)`. Hints: "
            "`draft.laws()` and `target.laws()` are `(T, V, V)` (row `u` = law after token `u`; at `n = 0` "
            "every row is the first token's law, use row 0); `batch.residual_cascade(p, q, M)` works on "
            "stacks of laws."
        ),
        solution(
            "def expected_rejections_batch(draft, target, M):\n"
            "    p, q = draft.laws(), target.laws()\n"
            "    reach, laws = batch.residual_cascade(p, q, M)\n"
            "    rho, g = reach[-1], reach[-1][..., None] * laws[-1]  # round start: reject, and where to\n"
            "    tv, h = sd.tv(p, q), np.maximum(q - p, 0)  # inside a round\n"
            "    mu = target.marginals()\n"
            "    total, f = rho[0, 0], g[0, 0]  # position 1 starts a round\n"
            "    for n in range(1, target.T):\n"
            "        rest = mu[n - 1] - f\n"
            "        total += rest @ tv[n] + f @ rho[n]\n"
            "        f = rest @ h[n] + f @ g[n]\n"
            "    return total"
        ),
        new_code_cell("check_expected_rejections_batch(expected_rejections_batch)"),
        new_code_cell(
            "draft, target, _ = pair(7, 50, 0.0, 10)  # the chapter's two random chains\n"
            "for M in (1, 4, 16):\n"
            "    res = sd.decoding.batch_speculative(draft, target, M, runs=3000, rng=M)\n"
            "    m, se = mean_and_se(res.rejections)\n"
            "    print(f'M = {M:2d}: Theorem 3 {expected_rejections_batch(draft, target, M):.3f}, '\n"
            "          f'Monte Carlo {m:.3f} ± {se:.3f}')\n"
            "print(f'Proposition 1 limit: {sd.theory.batch_rejection_limit(draft, target):.3f}')"
        ),
        new_markdown_cell(
            "## 3. The draft tree\n\n"
            "The tree keeps every draft whose tokens so far equal the accepted ones. Suppose a position has "
            "`k` alive drafts and the cascade accepts candidate `m` with token `x`.\n\n"
            "**Exercise 3.** Write `expected_survivors(k, m, p_x)`: the expected number of drafts alive at "
            "the next position, where `p_x` is the draft's probability of `x`. (Which candidates can show "
            "`x`? Can a rejected candidate?)"
        ),
        solution("def expected_survivors(k, m, p_x):\n    return 1 + (k - m) * p_x"),
        new_code_cell("check_tree_survivors(expected_survivors)"),
        new_code_cell(
            "for M in (1, 4, 16, 64):\n"
            "    b = sd.theory.expected_rejections_batch(draft, target, M)\n"
            "    t = sd.theory.expected_rejections_tree(draft, target, M)\n"
            "    print(f'M = {M:2d}: Algorithm 4 {b:6.3f}   draft tree {t:6.3f}')\n"
            "res = sd.decoding.tree_speculative(draft, target, 16, runs=3000, rng=0)\n"
            "print('tree, M = 16, Monte Carlo: {:.3f} ± {:.3f}'.format(*mean_and_se(res.rejections)))"
        ),
        new_markdown_cell(
            "## 4. Explore\n\n"
            "The explorer draws the exact rejections of both algorithms for 1 to `M` drafts, Proposition 1's "
            "floor and Theorem 1's single-draft value, with Monte Carlo points of both samplers at `M` drafts.\n\n"
            "1. At the defaults, slide `M` to 64. How far above its floor is Algorithm 4 still?\n"
            "2. From which `M` is the tree below Algorithm 4's floor?\n"
            "3. Raise the draft quality. Do the two curves move closer or further apart? Why?\n"
            "4. Set `T = 1`. Why do the two algorithms now agree for every `M`?"
        ),
        new_code_cell("batch_explorer()"),
    ]


if __name__ == "__main__":
    write(NAME, cells(), Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks")
