"""Lab 9: bugs that real speculative decoders shipped, and the checks of their fixes; one module per section.

Each ``buggy_...`` function is a short implementation that looks right and reproduces
a bug reported in a public implementation (the lab links the report); the lab shows
its source, the student detects the bug with one of the book's tools, and fixes it.
Each ``check_...`` runs the student's fix and returns a ``Feedback``: never raising,
"not attempted yet" for the stub, and a specific message for the typical wrong fixes.

Tools the checks use, computed outside the student's code: the chi-square test of
unbiasedness against an exact law (``stats.chi_square``), Theorem 1's exact counts
(``lookahead.expected_oracle_calls_k``), the greedy-equality test (speculative
decoding at temperature 0 is the target's greedy output) and direct inspection of a
KV cache. Every call of student code goes through ``common._student``, the one place a
guard around student code would wrap.

The sections' modules: ``residual`` (1), ``proposal`` (2), ``temperature`` (3), ``acceptance`` (4),
``lookahead`` (5 and 10), ``kv_cache`` (6), ``bfloat16`` (7), ``draft_law`` (8); ``common``: what they share.
The lab imports everything from here; so do ``verifier_law`` and the tests, a few helpers of ``common``
included (``_student``, ``_guard``, ``_failure``).
"""

from __future__ import annotations

from .. import feedback as _feedback
from .acceptance import buggy_accept, check_accept, grid_acceptance
from .bfloat16 import bf16_logits, buggy_sampling_law, check_sampling_law, one_position_counts, ratio_law
from .common import ALPHA, P, Q, Z, softmax
from .common import _failure as _failure
from .common import _guard as _guard
from .common import _step_counts as _step_counts
from .common import _student as _student
from .common import _tokens_and_calls as _tokens_and_calls
from .draft_law import RACE, RACE_MAX_V, buggy_draft, check_draft_probs, verified_runs, verify_drafted
from .kv_cache import buggy_rollback, check_rollback, greedy_speculative
from .lookahead import bonus_pair, buggy_speculative_k, check_bonus, check_mystery, decode_runs, mystery_speculative_k
from .proposal import buggy_step_argmax, check_draft_sampling
from .residual import _residual_cases as _residual_cases
from .residual import buggy_residual, buggy_step_all_at_once, check_residual_guard
from .temperature import LOGITS, buggy_step_temperature, check_temperature

__all__ = [
    "ALPHA",
    "Z",
    "P",
    "Q",
    "softmax",
    "buggy_residual",
    "buggy_step_all_at_once",
    "check_residual_guard",
    "buggy_step_argmax",
    "check_draft_sampling",
    "buggy_step_temperature",
    "LOGITS",
    "check_temperature",
    "buggy_accept",
    "grid_acceptance",
    "check_accept",
    "buggy_speculative_k",
    "bonus_pair",
    "decode_runs",
    "check_bonus",
    "mystery_speculative_k",
    "check_mystery",
    "buggy_rollback",
    "greedy_speculative",
    "check_rollback",
    "buggy_sampling_law",
    "ratio_law",
    "one_position_counts",
    "bf16_logits",
    "check_sampling_law",
    "buggy_draft",
    "RACE",
    "verify_drafted",
    "verified_runs",
    "RACE_MAX_V",
    "check_draft_probs",
]

# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
