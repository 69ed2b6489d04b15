"""The labs as a student meets them in Colab.

* The repository is named once, in ``_config.yml``: the launch buttons, every lab's
  "Open in Colab" badge and setup cell, and the README's pip line derive from it.
* The setup cell installs specdec_lite only when it is missing, enables Colab's widget
  manager only in Colab, and the package asks for nothing Colab would have to replace.
* A fresh Colab-like start (``tests/colab_support.py``): a new venv without
  specdec_lite and with ipywidgets 7.7.1; the setup cell of Lab 1's student copy (what
  the badge opens, nbgrader metadata included) installs the package from the local
  checkout (``SPECDEC_LITE_SOURCE``) without touching the index; the copy then runs up
  to its first exercise, each graded check answers "Not yet", and its explorer draws.
  The same copy under ipywidgets 8 is run by ``tests/test_classroom.py``.
* Every explorer builds and redraws when its controls move, under ipywidgets 7.7
  (Colab) and 8 (this environment).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.requirements import Requirement

from specdec_lite import classroom
from tests import colab_support as cs

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")
BRANCH = CONFIG["repository"]["branch"]
COLAB = CONFIG["launch_buttons"]["colab_url"].rstrip("/")
LABS = sorted((ROOT / "notebooks").glob("lab[0-9][0-9]_*.ipynb"))
MASTERS = classroom.masters(ROOT / "notebooks")

SETUP_CELL = """# Setup: installs specdec_lite when it is missing (e.g. in Colab); does nothing otherwise.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("specdec_lite") is None:
    source = os.environ.get("SPECDEC_LITE_SOURCE", "git+{repo}")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], check=True)
if "google.colab" in sys.modules:
    from google.colab import output
    output.enable_custom_widget_manager()"""


def setup_cell() -> str:
    return SETUP_CELL.format(repo=REPO_URL)


def badge_url(lab: Path) -> str:
    """The Colab address of a lab, as the book's launch button builds it."""
    owner_repo = re.fullmatch(r"https://github\.com/([^/]+/[^/]+)", REPO_URL)
    assert owner_repo, f"repository.url must be a GitHub repository, got {REPO_URL}"
    path = "/".join(p for p in [CONFIG["repository"].get("path_to_book", ""), "notebooks", lab.name] if p)
    return f"{COLAB}/github/{owner_repo[1]}/blob/{BRANCH}/{path}"


def read(lab: Path):
    return nbformat.read(lab, as_version=4)


def test_config_names_the_repository_once():
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", REPO_URL)
    assert COLAB == "https://colab.research.google.com"
    assert CONFIG["html"]["use_download_button"] is True
    text = (ROOT / "_config.yml").read_text()
    assert text.count(REPO_URL) == 1, "name the repository once in _config.yml (repository.url)"


def test_readme_pip_line_uses_the_repository():
    readme = (ROOT / "README.md").read_text()
    urls = set(re.findall(r"git\+(https://github\.com/[\w.-]+/[\w.-]+)", readme))
    assert urls == {REPO_URL}, f"README installs from {urls}, _config.yml names {REPO_URL}"


#: The Chinese labs (zh/notebooks): the same setup cell, plus the line that makes the checks answer in Chinese.
ZH_LABS = sorted((ROOT / "zh" / "notebooks").glob("lab[0-9][0-9]_*.ipynb"))
ZH_MASTERS = classroom.masters(ROOT / "zh" / "notebooks")


@pytest.mark.parametrize("lab", LABS + MASTERS + ZH_LABS + ZH_MASTERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_badge_and_setup_cell_derive_from_config(lab):
    """Student copies and masters alike, in both languages: the badge opens the student copy, never a master."""
    from tools.labs_zh import SETUP_LINE, program_problems

    nb = read(lab)
    first, setup = nb.cells[0], nb.cells[1]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "first cell: the lab's title"
    zh = lab.is_relative_to(ROOT / "zh")
    student = ROOT / "notebooks" / lab.name
    url = badge_url(student).replace("/blob/main/notebooks/", "/blob/main/zh/notebooks/") if zh else badge_url(student)
    badge = f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"
    assert badge in first.source, f"the first cell needs the badge\n{badge}"
    assert setup.cell_type == "code", "the second cell is the setup cell"
    if zh:  # the English setup cell with its comment in Chinese (the same program), and the language line
        assert setup.source.endswith("\n" + SETUP_LINE), "the Chinese setup cell ends with the language line"
        assert not program_problems(setup_cell(), setup.source[: -len(SETUP_LINE) - 1]), (
            "the second cell is the setup cell"
        )
    else:
        assert setup.source.strip() == setup_cell(), "the second cell is the setup cell"
    others = [c.source for c in nb.cells[2:] if c.cell_type == "code"]
    assert not any("pip install" in s for s in others), "only the setup cell installs anything"


def test_package_asks_for_nothing_colab_must_replace():
    """Base dependencies: no torch/transformers (Colab has its own), lower bounds only."""
    import tomllib

    deps = [Requirement(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    names = {d.name.lower() for d in deps}
    assert not names & {"torch", "transformers", "tensorflow", "jax"}, names
    for d in deps:
        assert all(s.operator == ">=" for s in d.specifier), f"{d}: only lower bounds, so pip keeps Colab's version"
    # Colab's versions (ipywidgets 7.7.1 is its default) satisfy every bound.
    colab = {"numpy": "1.26.4", "scipy": "1.13.1", "plotly": "5.24.1", "ipywidgets": "7.7.1", "tqdm": "4.66.5"}
    for d in deps:
        if d.name.lower() in colab:
            assert d.specifier.contains(colab[d.name.lower()]), f"{d} would replace Colab's {colab[d.name.lower()]}"


def _run_setup(tmp_path: Path, *, in_colab: bool) -> subprocess.CompletedProcess:
    """Run the setup cell where specdec_lite is importable, with a fake google.colab."""
    fake = tmp_path / "fake"
    (fake / "google" / "colab").mkdir(parents=True)
    (fake / "google" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "__init__.py").write_text("")
    marker = tmp_path / "widget-manager-enabled"
    (fake / "google" / "colab" / "output.py").write_text(
        f"def enable_custom_widget_manager():\n    open({str(marker)!r}, 'w').close()\n"
    )
    code = ("import google.colab\n" if in_colab else "") + setup_cell()
    env = {"PYTHONPATH": str(fake), "SPECDEC_LITE_SOURCE": str(tmp_path / "no-such-source"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    return proc, marker.exists()


def test_setup_cell_installs_nothing_when_the_package_is_there(tmp_path):
    proc, enabled = _run_setup(tmp_path, in_colab=False)
    assert proc.returncode == 0, proc.stderr  # pip from a missing source would have failed
    assert not enabled, "the widget manager is Colab's: do not touch it elsewhere"


def test_setup_cell_enables_colab_widgets_in_colab(tmp_path):
    proc, enabled = _run_setup(tmp_path, in_colab=True)
    assert proc.returncode == 0, proc.stderr
    assert enabled


@pytest.fixture(scope="module")
def colab(tmp_path_factory) -> cs.ColabLike:
    env = cs.ColabLike(tmp_path_factory.mktemp("colab"))
    env.pip_install(*cs.COLAB_IPYWIDGETS)
    return env


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _text(cell) -> str:
    parts = []
    for out in cell.outputs:
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


@pytest.mark.slow
def test_fresh_colab_start_runs_the_student_copy_of_lab01(colab, tmp_path):
    (lab,) = [lab for lab in LABS if lab.name.startswith("lab01_")]
    before = colab.own_packages()
    assert "specdec_lite" not in before
    nb = read(lab)
    assert any(_nbgrader(c).get("grade") for c in nb.cells), "the copy carries nbgrader's metadata"
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "import ipywidgets, specdec_lite\nprint('ENV', ipywidgets.__version__, specdec_lite.__file__)"
        )
    )
    # The feedback's Chinese catalogue comes with a pip install (package data), as the Chinese labs need it.
    zh_probe = "os.environ['SPECDEC_LITE_LANGUAGE'] = 'zh_CN'\nprint('ZH', check_tv(None))"
    nb.cells.append(nbformat.v4.new_code_cell(zh_probe))
    colab.run(nb, tmp_path / "colab-home", allow_errors=True)
    assert "ZH 还不对。" in _text(nb.cells[-1]) and "尚未作答" in _text(nb.cells[-1]), nb.cells[-1].outputs
    env_line = _text(nb.cells[-2])
    assert "ENV 7.7.1" in env_line, env_line
    assert str(colab.site) in env_line, f"specdec_lite must come from the venv's own install: {env_line}"
    assert colab.own_packages() - before == {"specdec_lite"}, "the setup cell installed something Colab has"
    errors = {
        i: o for i, c in enumerate(nb.cells) if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    }
    first = next(i for i, c in enumerate(nb.cells) if _nbgrader(c).get("solution") and c.cell_type == "code")
    i0 = min(errors)
    assert i0 in (first, first + 1) and "NotImplementedError" in errors[i0].ename + errors[i0].evalue, errors[i0]
    graded = [i for i, c in enumerate(nb.cells) if _nbgrader(c).get("grade") and c.cell_type == "code"]
    assert graded and all(errors[i].ename == "NotYet" for i in graded), {i: errors.get(i) for i in graded}
    (explorer,) = [c for c in nb.cells if c.cell_type == "code" and c.source.strip() == "token_explorer()"]
    assert not [o for o in explorer.outputs if o.output_type == "error"], "the explorer runs on a student copy"
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in explorer.outputs)


def _probe(run) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(setup_cell()), nbformat.v4.new_code_cell(cs.EXPLORER_PROBE)]
    return cs.probe_result(run(nb))


def _assert_explorers_work(report: dict) -> None:
    assert report["explorers"], "no *_explorer() found in specdec_lite.widgets"
    for name, e in report["explorers"].items():
        assert e["box"] == "VBox" and e["output"] in ("Output", "HTML"), f"{name}: explorer layout {e}"
        assert e["initial_draws"] == 1, f"{name}: the figure is drawn once when the explorer is built"
        moved = [m for m in e["moves"] if not m.get("skipped")]
        assert moved, f"{name}: no control could be moved"
        assert all(m["redrawn"] for m in moved), f"{name}: a control did not redraw the figure: {moved}"
        assert any(m["changed"] for m in moved), f"{name}: no control changes the figure: {moved}"


@pytest.mark.slow
def test_explorers_work_with_ipywidgets_7(colab, tmp_path):
    report = _probe(lambda nb: colab.run(nb, tmp_path))
    assert report["ipywidgets"] == "7.7.1"
    _assert_explorers_work(report)


@pytest.mark.slow
def test_explorers_work_with_ipywidgets_8(tmp_path):
    from nbclient import NotebookClient

    def run(nb):
        resources = {"metadata": {"path": str(tmp_path)}}
        NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources).execute()
        return nb

    report = _probe(run)
    assert report["ipywidgets"].startswith("8.")
    _assert_explorers_work(report)


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_every_lab_explorer_is_probed(lab):
    """The explorers a lab builds are ``*_explorer()`` functions of specdec_lite.widgets."""
    nb = read(lab)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    used = set(re.findall(r"\b(\w+_explorer)\(", code))
    imported = set(re.findall(r"from specdec_lite\.widgets\.\w+ import ([\w, ]+)", code))
    names = {n.strip() for group in imported for n in group.split(",")}
    assert used, f"{lab.name}: no widget explorer (call a specdec_lite.widgets *_explorer())"
    assert used <= names, f"{lab.name}: explorers {used - names} do not come from specdec_lite.widgets"


def test_explorer_assertions_catch_dead_controls():
    """The probe's verdicts can fail: a control that does not redraw, or nothing that changes."""
    good = {"box": "VBox", "output": "Output", "initial_draws": 1, "moves": [{"redrawn": True, "changed": True}]}
    _assert_explorers_work({"explorers": {"x": good}})
    dead = dict(good, moves=[{"redrawn": True, "changed": True}, {"redrawn": False, "changed": False}])
    inert = dict(good, moves=[{"redrawn": True, "changed": False}])
    for broken in (dead, inert, dict(good, initial_draws=0), dict(good, output="Label")):
        with pytest.raises(AssertionError):
            _assert_explorers_work({"explorers": {"x": broken}})
    with pytest.raises(AssertionError):
        _assert_explorers_work({"explorers": {}})
