"""Instances a check draws while it runs, beside its public ones: known to no one before the check runs.

A function that only looks up the answers of the public instances fails on these. The generator is
seeded by the operating system each time (``secrets``), and every law has two decimals (entries
``k / 100``), so a message that prints one states it exactly.
"""

from __future__ import annotations

from secrets import randbits as _randbits  # bound now: a notebook that rebinds secrets.randbits later changes nothing

import numpy as np

from .. import _lock
from .._i18n import _
from ..chains import MarkovChain

#: How many drawn instances a check grades beside its public ones.
DRAWN = 3


def fresh() -> np.random.Generator:
    """A generator seeded by the operating system now."""
    return np.random.default_rng(_randbits(128))


def law(rng: np.random.Generator, V: int, *, zeros: int = 0, positive: bool = False) -> np.ndarray:
    """A law on ``V`` tokens with two decimals (``k / 100``), ``zeros`` of its entries forced to 0.

    With ``positive`` every entry is at least 0.01 (as in the public instances that have no zero).
    """
    weights = rng.dirichlet(np.ones(V))
    if zeros:
        weights[rng.choice(V, size=zeros, replace=False)] = 0.0
        weights /= weights.sum()
    if positive:
        return (1 + rng.multinomial(100 - V, weights)) / 100
    return rng.multinomial(100, weights) / 100


def pairs(rng: np.random.Generator, n: int = DRAWN) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` pairs ``(p, q)`` of distinct laws on 3 to 6 tokens (a zero in ``p`` now and then)."""
    out = []
    while len(out) < n:
        V = int(rng.integers(3, 7))
        p, q = law(rng, V, zeros=int(rng.integers(0, 2))), law(rng, V)
        if not np.array_equal(p, q):
            out.append((p, q))
    return out


def chain(rng: np.random.Generator, T: int, V: int) -> MarkovChain:
    """A chain of ``T`` tokens on ``V`` whose initial law and transition rows have two decimals, none 0."""
    init = law(rng, V, positive=True)
    trans = np.array([[law(rng, V, positive=True) for _v in range(V)] for _n in range(T - 1)]).reshape(T - 1, V, V)
    return MarkovChain(init, trans)


def describe_chain(c: MarkovChain) -> str:
    """``init = [...], trans = [[[...]]]`` in full (a drawn chain is small)."""
    full = {"precision": 2, "suppress_small": True, "threshold": 10_000, "max_line_width": 10_000}
    return _("init = {np_array2string_c_init_f}, trans = {np_array2string_c_trans}").format(
        np_array2string_c_init_f=np.array2string(c.init, **full),
        np_array2string_c_trans=np.array2string(c.trans, **full),
    )


_lock.make_read_only(__name__)
