"""Shared test settings.

Statistical tests use fixed seeds and a stated false-alarm rate: a goodness-of-fit
test fails when its p-value is below ``ALPHA``, and a Monte Carlo mean fails when
it is more than ``Z`` standard errors from the exact value (two-sided false-alarm
rate about 6e-7 under the normal approximation).
"""

ALPHA = 1e-3
Z = 5.0


# --- The built book, shared by every test that reads it (built once per pytest run). ---
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

BOOK_ROOT = Path(__file__).resolve().parents[1]
#: Point this at an existing ``_build/html`` to test a book built beforehand instead.
PREBUILT_BOOK_ENV = "SPECDEC_BUILT_BOOK"


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """``_build/html`` of the whole book, built with warnings as errors."""
    prebuilt = os.environ.get(PREBUILT_BOOK_ENV)
    if prebuilt:
        return Path(prebuilt)
    out = tmp_path_factory.mktemp("book")
    jb = shutil.which("jupyter-book") or f"{sys.executable} -m jupyter_book"
    cmd = f"{jb} build {BOOK_ROOT} --path-output {out} -W -n --keep-going"
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    return out / "_build" / "html"
