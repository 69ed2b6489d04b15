"""The code is ruff clean (rules in pyproject.toml)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_clean():
    proc = subprocess.run(["ruff", "check", "specdec_lite", "tests", "book"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _would_reformat(output: str) -> list[str]:
    """The files in ``ruff format --check --output-format concise`` output (``path:line:col: unformatted: ...``)."""
    return sorted({line.split(":", 1)[0] for line in output.splitlines() if ": unformatted:" in line})


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_format_clean():
    """``ruff format`` would change no file (the notebooks are left as written: pyproject.toml, [tool.ruff.format])."""
    proc = subprocess.run(
        ["ruff", "format", "--check", "--output-format", "concise", "."], cwd=ROOT, capture_output=True, text=True
    )
    files = _would_reformat(proc.stdout)
    assert proc.returncode == 0, f"run `ruff format` (these {len(files)} files would change):\n" + "\n".join(
        files or [proc.stdout + proc.stderr]
    )
