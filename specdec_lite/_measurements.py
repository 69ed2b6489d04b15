"""Measurements that both editions of the book show with the same numbers, made once.

The book's two editions run the same code cells, each in its own language (``_i18n``), so a page
that times something live (Chapter 8's speed benchmark) would time it twice and show two sets of
numbers. When :data:`ENV` is ``record:FOLDER`` a function decorated with :func:`shared` stores its
result under ``FOLDER``; when it is ``replay:FOLDER`` it returns the result stored there for the
same call (same function, same arguments), and only measures (and stores) when none is. The book's
build sets it (``book/_ext/editions.py``: the English run records, the Chinese run replays); unset,
the function just runs. Chapter 8's seeded runs of its models are shared too: they give the same
numbers in both runs, and the Chinese run does not spend their time again. A shared function returns
numbers (rows of measurements), never text in the reader's language, which the replay would not translate.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

#: ``record:FOLDER`` or ``replay:FOLDER``; unset or anything else: measure every time.
ENV = "SPECDEC_LITE_MEASUREMENTS"
F = TypeVar("F", bound=Callable[..., Any])


def _describe(value: Any) -> Any:
    """What names an argument in the key of a call: a model pair by its models, device and dtype."""
    if all(hasattr(value, name) for name in ("draft_name", "target_name", "device", "dtype")):
        return (
            "pair",
            value.draft_name,
            value.target_name,
            getattr(value, "source", ""),
            str(value.device),
            str(value.dtype),
        )
    if isinstance(value, (list, tuple)):
        return tuple(_describe(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _describe(v)) for k, v in value.items()))
    if callable(value):
        return ("callable", getattr(value, "__qualname__", type(value).__qualname__))
    return repr(value)


def call_key(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The file name of a call's stored result: the function's name and a hash of its arguments."""
    described = (fn.__module__, fn.__qualname__, _describe(args), _describe(kwargs))
    return f"{fn.__qualname__}-{hashlib.sha256(repr(described).encode()).hexdigest()[:20]}.pickle"


def mode() -> tuple[str, Path] | None:
    """``("record" | "replay", folder)`` from :data:`ENV`, or None."""
    how, _, folder = os.environ.get(ENV, "").partition(":")
    return (how, Path(folder)) if how in ("record", "replay") and folder else None


def shared(fn: F) -> F:
    """``fn`` measured once per build of the book's two editions (see the module's text)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        chosen = mode()
        if chosen is None:
            return fn(*args, **kwargs)
        how, folder = chosen
        path = folder / call_key(fn, args, kwargs)
        if how == "replay" and path.is_file():
            with path.open("rb") as stored:
                return pickle.load(stored)
        result = fn(*args, **kwargs)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(path)
        return result

    return wrapper  # type: ignore[return-value]
