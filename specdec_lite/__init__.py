"""specdec_lite: the code of the book *The Theory of Speculative Decoding*.

Every formula and algorithm the chapters use lives here once. Notation follows the
paper: ``p`` is the draft, ``q`` the target. Where to find what:

=========================  ===========================================================
``primitives``             the bottom floor: ``DecodeResult``, ``sample_rows``,
                           ``cumulative``, Algorithm 1's ``verify_step``, ``check_int``
``laws``                   ``tv``, ``residual`` (guarded), ``law_split``, ``acceptance``,
                           ``over_accept``, ``rejection_law``, ``check_law``, ``check_pair``
                           (numpy arrays and torch tensors alike)
``chains``                 ``MarkovChain`` (the book's model of an LM), ``draft_for``,
                           ``sequence_law``, ``seeded_pair``, ``one_token``
``theory``                 exact quantities: Theorem 1 (``expected_rejections``) and the
                           re-exported results of the later chapters
``decoding``               vectorised samplers: ``speculative`` (Algorithm 1) and the
                           re-exported batch, biased and finite-lookahead samplers
``reference``              Algorithm 1 for one run, as readable as the book states it
``optimality``             Theorem 2 and Corollary 1: the class F and its lower bound
``tradeoff``, ``biased``   Theorems 4-5 (one token) and biased decoding on chains
``batch``                  Algorithm 4, Theorem 3, Proposition 1 and the draft tree
``lookahead``              finite lookahead K, a draft that costs c, wall-clock
``llm``                    real Hugging Face models (needs torch and transformers)
``stats``                  standard errors and the chi-square goodness of fit
``figures``, ``widgets``   the book's figures and the labs' explorers
``exercises``              the labs' ``check_...`` functions
``bench``, ``classroom``   ``python -m specdec_lite.bench`` and ``... .classroom release``
=========================  ===========================================================

Imports flow one way: ``primitives``, ``_rng`` and ``laws`` at the bottom, ``chains``
above them, one module per chapter above that, ``theory`` and ``decoding`` (façades
nothing in the package imports) on top of the chapters, then figures, widgets,
exercises, llm and bench.
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
