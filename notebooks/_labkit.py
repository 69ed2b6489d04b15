"""What every lab generator shares: the Colab badge, the setup cell, solution cells, writing.

The repository is named once, in ``_config.yml``; the badge and the setup cell derive
from it. Generators run as scripts (``python notebooks/_build_part1.py [OUT_DIR]``), so
this module is importable from the script's folder.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
REPO_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"].rstrip("/")

SETUP = f"""# Setup: installs specdec_lite when it is missing (e.g. in Colab); does nothing otherwise.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("specdec_lite") is None:
    source = os.environ.get("SPECDEC_LITE_SOURCE", "git+{REPO_URL}")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], check=True)
if "google.colab" in sys.modules:
    from google.colab import output
    output.enable_custom_widget_manager()"""


def colab_badge(name: str) -> str:
    """Markdown for the "Open in Colab" badge of ``notebooks/<name>.ipynb``."""
    colab = REPO_URL.replace("https://github.com/", "https://colab.research.google.com/github/")
    return (
        "[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab}/blob/main/notebooks/{name}.ipynb)"
    )


def header(name: str, title: str, intro: str) -> list:
    """Title, badge and introduction, then the setup cell."""
    return [new_markdown_cell(f"# {title}\n\n{colab_badge(name)}\n\n{intro}"), new_code_cell(SETUP)]


def solution(source: str):
    """A cell the student rewrites; it holds the working solution so the lab runs end to end."""
    return new_code_cell(source, metadata={"tags": ["solution"]})


def write(name: str, cells: list, out: Path) -> None:
    """Write ``out/<name>.ipynb`` with cleared outputs and stable cell ids (regenerating is diff-free)."""
    for i, cell in enumerate(cells):
        cell["id"] = f"{name[:5]}-{i:02d}"
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(nb)
    nbformat.write(nb, Path(out) / f"{name}.ipynb")
