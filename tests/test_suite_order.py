"""The order the parallel suite runs in (tests/conftest.py): the heavy files first, the files that
read another worker's setup last, and pytest-xdist keeping that order."""

from __future__ import annotations

import pytest

from tests import conftest


def test_xdist_keeps_the_order_of_conftest(pytestconfig: pytest.Config) -> None:
    """Without ``--no-loadscope-reorder`` xdist hands out the files with the most tests first, whatever
    ``pytest_collection_modifyitems`` did: test_browser_figures.py then went out early, and its worker
    waited 573 s for the browser pass instead of running the other files."""
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not installed")
    assert pytestconfig.getoption("loadscopereorder") is False, "pyproject.toml's addopts lack --no-loadscope-reorder"


@pytest.mark.parametrize("entry", conftest.HEAVY_FIRST + conftest.SHARED_LAST)
def test_each_file_named_in_the_order_exists(entry: str) -> None:
    """A renamed test file would fall out of the order without a word."""
    assert (conftest.BOOK_ROOT / entry).exists(), f"tests/conftest.py names {entry}, which does not exist"
