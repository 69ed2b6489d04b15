"""Expensive setup run once per test session, even when several pytest-xdist workers ask for it.

``once(name, make)`` calls ``make()`` in the first worker that asks and keeps its (pickled)
result under a lock in a folder of this test run (xdist's ``PYTEST_XDIST_TESTRUNUID``); the
other workers wait for it and read the same result. Without xdist it simply calls ``make()``.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def once(name: str, make: Callable[[], T]) -> T:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return make()
    from filelock import FileLock

    folder = Path(tempfile.gettempdir()) / f"specdec-tests-{run}"
    folder.mkdir(exist_ok=True)
    kept = folder / f"{name}.pickle"
    with FileLock(str(folder / f"{name}.lock")):
        if kept.is_file():
            return pickle.loads(kept.read_bytes())
        result = make()
        kept.write_bytes(pickle.dumps(result))
        return result
