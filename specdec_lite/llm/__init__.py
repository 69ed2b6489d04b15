"""Speculative decoding with real language models (PyTorch; Hugging Face ``transformers``).

* ``engine``: ``autoregressive_generate`` and ``speculative_generate`` (KV caches,
  finite lookahead in Chapter 7's convention, over-acceptance with Decoding-OPT/UNO,
  optional stop at an end-of-sequence token) and their ``GenerationResult`` with
  per-position statistics;
* ``verify``: the token-wise rule on tensors (laws from logits, acceptance, rejection law);
* ``pairs``: ``load_pair`` (Pythia pairs from the hub, an offline pair otherwise),
  device and dtype choice; ``fallback``: training that offline pair; ``hub``: fetching
  a repository with every file checked against the hub's hash; ``integrity``: those
  checks and their named errors (safetensors only, weights that fill the model);
* ``runs``, ``theorem1``, ``eps_sweep``, ``speed``: the chapter's measurements, one idea
  each (``measure`` imports them all); ``measure_pair``: all of them on one pair, as a
  command that writes a results file (``python -m specdec_lite.llm.measure_pair``).

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
