"""Write the Part II labs on optimality and the trade-off (lab04, lab05) with cleared outputs.

Run ``python notebooks/_build_part2.py [OUT_DIR]`` (default: ``notebooks/``). The Colab badge
and the setup cell derive from the repository named once in ``_config.yml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _labkit import ROOT, header, solution, write
from nbformat.v4 import new_code_cell, new_markdown_cell


def lab04() -> list:
    return header(
        "lab04_optimality",
        "Lab 4 · No unbiased rule rejects less",
        "Companion of Chapter 4. You will write Corollary 1's rejection law, build an unbiased rule with a "
        "prescribed rejection probability, and try (and fail) to beat speculative decoding with a widget.",
    ) + [
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\n"
            "from specdec_lite import optimality, tradeoff\n"
            "from specdec_lite.exercises.part2 import check_unbiased_member, check_unbiased_rejection_law\n"
            "from specdec_lite.widgets.beat_speculative import beat_explorer, instance_laws"
        ),
        new_markdown_cell(
            "## 1. The only unbiased rejection law\n\n"
            "At one position an algorithm keeps a drafted token $x \\sim p$ with probability $b(x)$ and "
            "otherwise samples from $\\mathcal P$, so it writes $x$ with probability "
            "$b(x)p(x) + r\\,\\mathcal P(x)$, $r = \\sum_y (1 - b(y))p(y)$.\n\n"
            "**Exercise 1.** For a rule with $b \\le \\min(1, q/p)$, write `unbiased_law(p, q, b)`, the "
            "rejection law that makes the output exactly $q$ (Corollary 1)."
        ),
        solution("def unbiased_law(p, q, b):\n    return (q - b * p) / ((1 - b) * p).sum()"),
        new_code_cell("check_unbiased_rejection_law(unbiased_law)"),
        new_markdown_cell(
            "## 2. Rejecting more, on purpose\n\n"
            "**Exercise 2.** On the instance *mirror images*, build an unbiased rule `(b, P)` that rejects "
            "with probability exactly 0.5. (Speculative decoding rejects with probability "
            "$\\mathrm{TV}(p, q) = 0.4$; Theorem 2 says you cannot go below.)"
        ),
        new_code_cell("p, q = instance_laws('mirror images')\nprint('p =', p, ' q =', q, ' TV =', sd.tv(p, q))"),
        solution(
            "b = sd.acceptance(p, q).copy()\n"
            "b[0] = 0.0          # token 0 has p = 0.4: lowering b from 0.25 to 0 adds 0.4 * 0.25 = 0.1\n"
            "P = unbiased_law(p, q, b)"
        ),
        new_code_cell("check_unbiased_member(p, q, b, P, target_reject=0.5)"),
        new_markdown_cell(
            "## 3. Random unbiased rules never beat the bound\n\n"
            "`optimality.random_unbiased_member` draws rules by Corollary 1. Compare their rejection "
            "probabilities with $\\mathrm{TV}(p, q)$."
        ),
        new_code_cell(
            "many_p, many_q = np.tile(p, (10_000, 1)), np.tile(q, (10_000, 1))\n"
            "b_many, P_many = optimality.random_unbiased_member(many_p, many_q, rng=0)\n"
            "reject = tradeoff.reject_probability(p, b_many)\n"
            "print('all unbiased:', optimality.is_unbiased(p, q, b_many, P_many).all())\n"
            "print(f'smallest rejection probability {reject.min():.4f} vs TV(p, q) = {sd.tv(p, q):.4f}')"
        ),
        new_markdown_cell(
            "## 4. Try to beat speculative decoding\n\n"
            "Pick an instance, a rule `b` (the four sliders, or a preset) and a rejection law. The right "
            "panel places your algorithm in the (rejection probability, bias) plane; the dashed line is the "
            "bound $\\mathrm{TV}(p, q)$.\n\n"
            "1. With the best law for `b`, can you find any point left of the dashed line with bias 0?\n"
            "2. On *draft too confident*, move `b(x=0)` from 0 to 1. Where does the point cross the bound, "
            "and how fast does the bias grow after that?\n"
            "3. Choose the rule *speculative* and the law *target q*. Which side of the bound is the point, "
            "and what is wrong with it?\n"
            "4. On *draft misses a token*, what happens to the output law if you pick the law *draft p*?"
        ),
        new_code_cell("beat_explorer()"),
    ]


def lab05() -> list:
    return header(
        "lab05_tradeoff",
        "Lab 5 · Trading quality for speed",
        "Companion of Chapter 5. You will write the quality loss of an acceptance rule, an optimal "
        "rejection law and over-acceptance, then sweep the margin ε and compare Decoding-OPT with "
        "Decoding-UNO from one token to whole sequences.",
    ) + [
        new_code_cell(
            "import numpy as np\n\nimport specdec_lite as sd\n"
            "from specdec_lite import biased, tradeoff\n"
            "from specdec_lite.stats import mean_and_se\n"
            "from specdec_lite.exercises.part2 import check_optimal_rejection_law, check_over_accept, "
            "check_tv_loss\n"
            "from specdec_lite.widgets.tradeoff_explorer import tradeoff_explorer"
        ),
        new_markdown_cell(
            "## 1. The loss of a rule\n\n"
            "**Exercise 1.** Write `tv_loss(p, q, b)` $= \\mathrm{Loss}^*_{\\mathrm{TV}}(b)$, the smallest "
            "TV to the target any rejection law can reach with the rule `b` (Theorem 4)."
        ),
        solution("def tv_loss(p, q, b):\n    return np.maximum(b * p - q, 0).sum()"),
        new_code_cell("check_tv_loss(tv_loss)"),
        new_markdown_cell(
            "**Exercise 2.** Write `optimal_law(p, q, b)`, a rejection law that attains the loss. Any "
            "optimal law is accepted: the check tests the characterisation of Theorem 4."
        ),
        solution("def optimal_law(p, q, b):\n    A = np.maximum(q - b * p, 0)\n    return A / A.sum()"),
        new_code_cell("check_optimal_rejection_law(optimal_law)"),
        new_markdown_cell(
            "## 2. Over-acceptance\n\n"
            "**Exercise 3.** Write `over_accept(p, q, eps)`, the rule $b(x) = \\min(1, (q(x) + "
            "\\varepsilon)/p(x))$."
        ),
        solution(
            "def over_accept(p, q, eps):\n"
            "    with np.errstate(divide='ignore', invalid='ignore'):\n"
            "        return np.minimum(1.0, (q + eps) / p)"
        ),
        new_code_cell("check_over_accept(over_accept)"),
        new_markdown_cell(
            "Theorem 5 in numbers: for each ε, the rejection probability plus the loss of Decoding-OPT is "
            "$\\mathrm{TV}(p, q)$; Decoding-UNO's loss is larger."
        ),
        new_code_cell(
            "p = np.array([0.45, 0.30, 0.15, 0.10])\nq = np.array([0.20, 0.25, 0.25, 0.30])\n"
            "for eps in (0.0, 0.05, 0.1, 0.2, 0.3):\n"
            "    r, opt = tradeoff.over_accept_point(p, q, eps, 'opt')\n"
            "    _, uno = tradeoff.over_accept_point(p, q, eps, 'uno')\n"
            "    print(f'eps={eps:<4}  reject={r:.3f}  loss OPT={opt:.3f} (sum {r + opt:.3f})  loss UNO={uno:.3f}')"
        ),
        new_markdown_cell(
            "## 3. On a chain, by simulation\n\n"
            "`decoding.biased_speculative` runs over-acceptance on a chain. Its output is again a Markov chain "
            "(`biased.biased_output_chain`), so the expected rejections have an exact value to compare with."
        ),
        new_code_cell(
            "target = sd.MarkovChain.random(5, 30, rng=1, concentration=0.5)\n"
            "draft = sd.draft_for(target, 0.5, rng=2, concentration=0.5)\n"
            "for kind in ('opt', 'uno'):\n"
            "    res = sd.decoding.biased_speculative(draft, target, 0.05, kind, runs=10_000, rng=3)\n"
            "    m, se = mean_and_se(res.rejections)\n"
            "    print(f'{kind}: {m:.2f} ± {se:.2f} rejections; exact '\n"
            "          f'{biased.biased_expected_rejections(draft, target, 0.05, kind):.2f}')\n"
            "print('speculative decoding:', round(sd.theory.expected_rejections(draft, target), 2))"
        ),
        new_markdown_cell(
            "## 4. Explore\n\n"
            "The explorer shows OPT and UNO at margin ε on three levels: the first token (Theorem 5), the "
            "sum over positions weighted by the target's prefixes, and whole sequences (exact, 4096 of them).\n\n"
            "1. At the smallest ε, how far apart are OPT and UNO in each panel? Why is UNO biased even "
            "there?\n"
            "2. Increase ε until UNO's summed loss is within 0.01 of OPT's. How many rejections are left?\n"
            "3. Compare the sequence-level TV with the summed per-position loss. Which is larger, and why "
            "can the first never exceed 1?\n"
            "4. Set the draft quality to 1. What happens, and why?"
        ),
        new_code_cell("tradeoff_explorer()"),
    ]


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks"
    write("lab04_optimality", lab04(), out)
    write("lab05_tradeoff", lab05(), out)
