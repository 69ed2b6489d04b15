"""The labs' lock: while a check runs a student's code, the package's own answer to that exercise refuses to run.

A lab asks, say, for ``tv``; its check runs the student's function with the names
``{"laws.tv", ...}`` held here. A function is declared guarded once, by its decorator::

    @_lock.guarded("laws.tv")
    def tv(p, q, *, check=True): ...

so while the name is held every route to it (``laws.tv``, ``sd.tv``, an alias bound
earlier, a method, a package function that calls it) raises :class:`WriteItYourself`,
which the check turns into feedback. Unlocked the cost is one attribute read and one
call. The held names also travel to child processes through the environment variable
``SPECDEC_LITE_LOCKED``. :data:`GUARDED` lists every guarded function by its name.

Only ``specdec_lite.exercises`` holds names (with :func:`hold`, through its checks,
which may hold only names in :data:`GUARDED`: :func:`declared`).
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from ._i18n import _

_ENV = "SPECDEC_LITE_LOCKED"

#: The names switched off right now (empty outside a check).
held: frozenset[str] = frozenset(n for n in os.environ.get(_ENV, "").split(",") if n)


_GUARDED: dict[str, Callable[..., Any]] = {}
#: Every guarded function, by the name a check holds (``{"laws.tv": laws.tv, ...}``), read-only.
GUARDED: Mapping[str, Callable[..., Any]] = types.MappingProxyType(_GUARDED)

_F = TypeVar("_F", bound=Callable[..., Any])


class WriteItYourself(RuntimeError):
    """Raised by a package function the running check has switched off."""


def refuse(name: str) -> None:
    """Raise :class:`WriteItYourself` when ``name`` is held."""
    if name in held:
        raise WriteItYourself(
            _(
                "specdec_lite's {name} is switched off while this exercise is checked: the exercise asks you to "
                "write it yourself (numpy is fine)"
            ).format(name=name)
        )


def guarded(name: str) -> Callable[[_F], _F]:
    """Declare the decorated function guarded by ``name``: it raises :class:`WriteItYourself` while ``name`` is held.

    The wrapper keeps the function's name, signature and docstring (``functools.wraps``)
    and is recorded in :data:`GUARDED`; a name may guard one function only.
    """

    def wrap(fn: _F) -> _F:
        if name in _GUARDED:
            raise ValueError(
                _("{name!r} already guards {GUARDED_name_module}.{GUARDED_name_qualname}").format(
                    name=name,
                    GUARDED_name_module=_GUARDED[name].__module__,
                    GUARDED_name_qualname=_GUARDED[name].__qualname__,
                )
            )

        @functools.wraps(fn)
        def locked(*args: Any, **kwargs: Any) -> Any:
            if held:
                refuse(name)
            return fn(*args, **kwargs)

        locked.__guarded__ = name  # type: ignore[attr-defined]
        _GUARDED[name] = locked
        return locked  # type: ignore[return-value]

    return wrap


#: Names under these prefixes are declared when their subpackage is imported (``llm`` needs torch, which
#: a check does not import for them); ``tests/test_grading_lock.py`` checks them with the others.
_DECLARED_ON_IMPORT = ("llm.",)


def declared(names: Iterable[str]) -> frozenset[str]:
    """``names`` as a set, each the name of a function in :data:`GUARDED`; a ``LookupError`` names any other."""
    names = frozenset(names)
    unknown = sorted(n for n in names - _GUARDED.keys() if not n.startswith(_DECLARED_ON_IMPORT))
    if unknown:
        raise LookupError(
            _("no function is declared @_lock.guarded({unknown_0!r}) (unknown: {unknown})").format(
                unknown_0=unknown[0], unknown=unknown
            )
        )
    return names


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
        raise AttributeError(_("{name}.{name_2} is read-only").format(name=self.__name__, name_2=name))

    def __delattr__(self, name: str) -> None:
        raise AttributeError(_("{name}.{name_2} is read-only").format(name=self.__name__, name_2=name))


def make_read_only(module_name: str) -> None:
    """Turn the imported module ``module_name`` into a :class:`ReadOnlyModule`."""
    import sys

    sys.modules[module_name].__class__ = ReadOnlyModule


make_read_only(__name__)
