"""Shared test settings.

Statistical tests use fixed seeds and a stated false-alarm rate: a goodness-of-fit
test fails when its p-value is below ``ALPHA``, and a Monte Carlo mean fails when
it is more than ``Z`` standard errors from the exact value (two-sided false-alarm
rate about 6e-7 under the normal approximation).

The suite runs in parallel (pytest-xdist, ``--dist loadfile``: each test file runs whole on
one worker, so a module's fixture is set up once). Tests that drive Chromium, nbgrader, a
Jupyter kernel, the book build or model training are marked ``slow``; ``pytest -m "not slow"``
is the inner loop (every theorem's exact and Monte Carlo check, every unit test).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ALPHA = 1e-3
Z = 5.0

BOOK_ROOT = Path(__file__).resolve().parents[1]
#: Point this at an existing ``_build/html`` to test a book built beforehand instead.
PREBUILT_BOOK_ENV = "SPECDEC_BUILT_BOOK"
#: At most this many workers: each imports torch and may start a kernel or a browser.
MAX_WORKERS = 4

#: Test files whose work is heavy: scheduled first, so that no worker is left with a long file at the end.
#: While the first worker builds the book on one core (about 110 s), the second runs files that keep a core busy;
#: the adversarial class, whose grader mostly waits on a looping student, comes after them, when the browser pass
#: can use the core it leaves (in that order before, the machine was half idle for 65 s).
HEAVY_FIRST = [
    "tests/test_browser.py",
    "tests/test_classroom.py",
    "notebooks/source/lab08_real_models",
    # both PDFs (about 130 s of CPU after the site's build, whose execution cache and doctrees they reuse): started
    # here, once the first worker has built the site, they run during its browser pass rather than after it
    "tests/test_pdf.py",
    "tests/test_classroom_adversarial.py",
    "tests/test_grading_sandbox.py",
    "tests/test_grading_outputs.py",  # a class of two graded, then a feedback page in Chromium (about 90 s)
    "tests/test_colab.py",
    "tests/test_llm_integrity.py",
    # files that mostly wait (a kernel's channels, Chromium's search): better during the browser pass than after it,
    # when they left a core idle
    "tests/test_classroom_kernel.py",
    "tests/test_grading_two_languages.py",
    "tests/test_editions.py",
    "tests/test_llm_command_lines.py",
    "tests/test_llm_vocab.py",
    "tests/test_llm.py",
    "tests/test_lab09.py",
    "notebooks/source/lab09_bugs",
    "tests/test_llm_hub.py",
    "tests/test_classroom_collect.py",
    "tests/test_llm_shapes.py",
]
#: Files that read a setup another file's worker starts (``tests/shared_once.py``): scheduled last, so that their
#: worker does the other files' work meanwhile instead of waiting on the lock (it waited 380 s for the browser pass).
SHARED_LAST = ["tests/test_browser_figures.py", "tests/test_grading_scores.py", "tests/test_grading_parallel.py"]
#: Whole files that are slow (their other tests are few and cheap, or share a slow fixture).
SLOW_FILES = {
    "test_browser.py",
    "test_browser_figures.py",
    "test_classroom_adversarial.py",
    "test_classroom_kernel.py",
    "test_grading_parallel.py",
}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def _heaviness(item: pytest.Item) -> int:
    path = Path(str(item.path)).resolve().relative_to(BOOK_ROOT).as_posix()
    for rank, prefix in enumerate(HEAVY_FIRST):
        if path.startswith(prefix):
            return rank
    return len(HEAVY_FIRST) + 1 if path in SHARED_LAST else len(HEAVY_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        nbval = type(item).__module__.startswith("nbval")
        if nbval or item.path.name in SLOW_FILES or "built_book" in getattr(item, "fixturenames", ()):
            item.add_marker(slow)
    items.sort(key=_heaviness)  # stable: the order within a file is kept


# --- The built book, shared by every test that reads it (built once per pytest run). ---


def _build_book(out: Path) -> Path:
    jb = shutil.which("jupyter-book") or f"{sys.executable} -m jupyter_book"
    cmd = f"{jb} build {BOOK_ROOT} --path-output {out} -W -n --keep-going"
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if proc.returncode != 0:
        (out / "build-failed.txt").write_text(f"book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return out / "_build" / "html"


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """``_build/html`` of the whole book, built with warnings as errors, once for all workers."""
    from tests.shared_once import once

    prebuilt = os.environ.get(PREBUILT_BOOK_ENV)
    if prebuilt:
        return Path(prebuilt)
    html = once("book", lambda: _build_book(tmp_path_factory.mktemp("book")))
    failed = html.parents[1] / "build-failed.txt"
    assert not failed.is_file(), failed.read_text()
    return html
