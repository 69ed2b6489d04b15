"""Measurements of Chapter 8 in one import: each idea lives in its own module.

* :mod:`~specdec_lite.llm.runs`: prompts and repeated runs of the engine;
* :mod:`~specdec_lite.llm.theorem1`: Theorem 1 on models (observed rejections against summed TV);
* :mod:`~specdec_lite.llm.eps_sweep`: the quality/speed trade-off of over-acceptance;
* :mod:`~specdec_lite.llm.speed`: seconds, against autoregressive sampling and Hugging Face;
* :mod:`~specdec_lite.llm.budget`: how much to measure, its predicted seconds, and what fits a time budget;
* :mod:`~specdec_lite.llm.measure_pair`: all of them on one pair, in a time budget, written to a results file.

Each returns plain rows of numbers (means with standard errors over runs).
"""

from .._measurements import shared
from . import eps_sweep as _eps_sweep
from . import speed as _speed
from . import theorem1 as _theorem1
from .eps_sweep import EpsRow, eps_rows
from .runs import CODE_PROMPTS, TEXT_PROMPTS, default_prompts, sample_runs
from .speed import CallCosts, SpeedRow, costs_line, hf_generate, predicted_speedup, speed_summary, speed_table
from .theorem1 import Theorem1Row, theorem1_rows

# Measured once when the book builds both editions (``specdec_lite._measurements``): the Chinese run shows
# the English run's timings, and its seeded runs of the models (the same numbers) are not run again.
speed_benchmark = shared(_speed.speed_benchmark)
theorem1_check = shared(_theorem1.theorem1_check)
eps_sweep = shared(_eps_sweep.eps_sweep)

__all__ = [
    "CODE_PROMPTS",
    "CallCosts",
    "EpsRow",
    "SpeedRow",
    "TEXT_PROMPTS",
    "Theorem1Row",
    "costs_line",
    "default_prompts",
    "eps_rows",
    "eps_sweep",
    "hf_generate",
    "predicted_speedup",
    "sample_runs",
    "speed_benchmark",
    "speed_summary",
    "speed_table",
    "theorem1_check",
    "theorem1_rows",
]
