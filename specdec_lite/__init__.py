"""specdec_lite: the code of the book *The Theory of Speculative Decoding*.

Every formula and algorithm the chapters use lives here once:

* ``laws``: ``tv``, ``residual``, ``acceptance``, ``check_law``;
* ``chains``: ``MarkovChain`` and ``draft_for``;
* ``theory``: exact quantities (Theorem 1 and onwards);
* ``decoding``: vectorised samplers; ``reference``: the readable per-run loop.

Notation follows the paper: ``p`` is the draft, ``q`` the target.
"""

from . import decoding, reference, theory
from .chains import MarkovChain, draft_for
from .decoding import DecodeResult
from .laws import acceptance, check_law, residual, tv

__version__ = "0.1.0"

__all__ = [
    "DecodeResult",
    "MarkovChain",
    "acceptance",
    "check_law",
    "decoding",
    "draft_for",
    "reference",
    "residual",
    "theory",
    "tv",
]
