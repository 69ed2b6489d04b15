"""The labs' lock: while a check runs a student's code, the package's own answer to that exercise refuses to run.

A lab asks, say, for ``tv``; its check runs the student's function with the names
``{"tv", ...}`` held here. Each guarded public function starts with the line
``if _lock.held: _lock.refuse("tv")``, so while the name is held every route to it
(``laws.tv``, ``sd.tv``, an alias bound earlier, a method, a package function that
calls it) raises :class:`WriteItYourself`, which the check turns into feedback.
Unlocked the cost is one attribute read. The held names also travel to child
processes through the environment variable ``SPECDEC_LITE_LOCKED``.

Only ``specdec_lite.exercises`` holds names (with :func:`hold`); the rest of the
package only calls :func:`refuse`.
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_ENV = "SPECDEC_LITE_LOCKED"

#: The names switched off right now (empty outside a check).
held: frozenset[str] = frozenset(n for n in os.environ.get(_ENV, "").split(",") if n)


class WriteItYourself(RuntimeError):
    """Raised by a package function the running check has switched off."""


def refuse(name: str) -> None:
    """Raise :class:`WriteItYourself` when ``name`` is held."""
    if name in held:
        raise WriteItYourself(
            f"specdec_lite's {name} is switched off while this exercise is checked: the exercise asks you to "
            "write it yourself (numpy is fine)"
        )


@contextmanager
def hold(names: Iterable[str]) -> Iterator[frozenset[str]]:
    """Hold ``names`` (on top of those already held) for the ``with`` block; yields the held set."""
    before, env_before = held, os.environ.get(_ENV)
    now = frozenset(before | set(names))
    globals()["held"] = now
    os.environ[_ENV] = ",".join(sorted(now))
    try:
        yield now
    finally:
        globals()["held"] = before
        if env_before is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = env_before


class ReadOnlyModule(types.ModuleType):
    """A module whose attributes cannot be reassigned or deleted from outside (``mod.x = ...`` raises)."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{self.__name__}.{name} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{self.__name__}.{name} is read-only")


def make_read_only(module_name: str) -> None:
    """Turn the imported module ``module_name`` into a :class:`ReadOnlyModule`."""
    import sys

    sys.modules[module_name].__class__ = ReadOnlyModule


make_read_only(__name__)
