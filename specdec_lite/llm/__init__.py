"""Speculative decoding with real language models (PyTorch; Hugging Face ``transformers``).

* ``engine``: ``autoregressive_generate`` and ``speculative_generate`` (KV caches,
  finite lookahead, over-acceptance with Decoding-OPT/UNO) and their
  ``GenerationResult`` with per-position statistics;
* ``verify``: the token-wise rule on tensors (laws from logits, acceptance, rejection law);
* ``pairs``: ``load_pair`` (the paper's Pythia pair on a GPU, an offline pair otherwise),
  device and dtype choice; ``fallback``: training that offline pair;
* ``measure``: Theorem 1, the eps sweep and the speed benchmark for the chapter.

Importing ``specdec_lite`` does not import this subpackage (nor torch).
``transformers`` is needed only to build or load models (``pip install transformers``).
"""

from .engine import GenerationResult, autoregressive_generate, speculative_generate
from .pairs import COLAB_PAIR, PAPER_PAIR, ModelPair, load_pair, pick_device, pick_dtype

__all__ = [
    "COLAB_PAIR",
    "GenerationResult",
    "ModelPair",
    "PAPER_PAIR",
    "autoregressive_generate",
    "load_pair",
    "pick_device",
    "pick_dtype",
    "speculative_generate",
]
