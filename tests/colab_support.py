"""A Colab-like Python for the tests: a fresh virtual environment without specdec_lite.

Colab starts with numpy, scipy, plotly, ipykernel, torch... and ipywidgets 7.7.1, but
without specdec_lite. We mimic that cheaply: a new venv whose ``.pth`` file puts this
machine's site-packages on ``sys.path`` as plain folders. Python does not run the
``.pth`` files inside such folders, so the editable install of specdec_lite (a ``.pth``
hook) is invisible, while the installed libraries stay importable. ipywidgets 7.7.1 is
installed into the venv itself, shadowing version 8. The kernel runs from a folder
without the checkout, so ``import specdec_lite`` fails until the lab's setup cell
installs it from ``SPECDEC_LITE_SOURCE`` (a copy of the local checkout), with pip
forbidden to use the index: any dependency it would have to fetch fails the install.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Colab's default widgets (with what they need, e.g. the classic notebook package, as in Colab).
COLAB_IPYWIDGETS = ["ipywidgets==7.7.1"]
KERNEL = "colab-sim"


def copy_checkout(dest: Path) -> Path:
    """The files pip needs to install the package from this checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ["pyproject.toml", "README.md"]:
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "specdec_lite", dest / "specdec_lite", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


class ColabLike:
    """A fresh venv (see the module docstring) and a Jupyter kernel that runs in it."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True)
        self.python = self.venv / "bin" / "python"
        self.site = Path(
            subprocess.run(
                [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        (self.site / "_colab_preinstalled.pth").write_text("\n".join(site.getsitepackages()) + "\n")
        self.source = copy_checkout(base / "checkout")
        self.kernels = base / "jupyter"
        spec = self.kernels / "kernels" / KERNEL
        spec.mkdir(parents=True)
        env = {
            "SPECDEC_LITE_SOURCE": str(self.source),
            "PIP_NO_INDEX": "1",  # nothing may be downloaded: Colab already has every dependency
            "PIP_NO_BUILD_ISOLATION": "0",  # build with the setuptools at hand (pip reads 0 as "off")
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PYTHONPATH": "",  # Colab has no checkout on its path, even when the tests run with one
        }
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "Colab-like",
                    "language": "python",
                    "env": env,
                }
            )
        )

    def pip_install(self, *requirements: str) -> None:
        proc = subprocess.run(
            [str(self.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"pip install {requirements} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")

    def own_packages(self) -> set[str]:
        """Distributions installed in the venv itself (not the ones seen through the .pth)."""
        return {p.name.split("-")[0].lower() for p in self.site.glob("*.dist-info")}

    def run(self, nb: Any, workdir: Path, timeout: int = 300, allow_errors: bool = False) -> Any:
        """Execute notebook ``nb`` in this environment's kernel, from ``workdir``."""
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
        from nbclient import NotebookClient

        ksm = KernelSpecManager(kernel_dirs=[str(self.kernels / "kernels")])
        km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=ksm)
        workdir.mkdir(parents=True, exist_ok=True)
        client = NotebookClient(
            nb, km=km, timeout=timeout, allow_errors=allow_errors, resources={"metadata": {"path": str(workdir)}}
        )
        client.execute()
        return nb


#: Run inside a kernel: build every ``*_explorer()`` of ``specdec_lite.widgets``, move each of
#: its controls, and record whether the figure was redrawn and changed. Prints one JSON line.
#: A plotly explorer draws through ``core.show`` into an ``Output``; an explorer whose picture
#: is an ``HTML`` widget (an SVG) draws by setting its value.
EXPLORER_PROBE = r"""
import importlib, json, pkgutil
import ipywidgets
import specdec_lite.widgets as W
import specdec_lite.widgets.core as core

shown = []
core.show = shown.append  # the explorers draw through core.show: record the figures instead

def snapshot(drawn):
    return drawn if isinstance(drawn, str) else drawn.to_json()

def other_value(c):
    if hasattr(c, "options") and c.options:
        values = [o[1] if isinstance(o, tuple) else o for o in c.options]
        return next((v for v in values if v != c.value), None)
    if isinstance(c.value, bool):
        return not c.value
    if hasattr(c, "base"):  # FloatLogSlider: min, max and step are exponents
        up = c.value * c.base**c.step
        return up if up <= c.base**c.max else c.value / c.base**c.step
    if hasattr(c, "min") and hasattr(c, "max"):  # one step, as a reader's first nudge (and cheap)
        step = getattr(c, "step", None) or (c.max - c.min) / 10
        up = c.value + step
        return up if up <= c.max else c.value - step
    return None

report = {"ipywidgets": ipywidgets.__version__, "explorers": {}}
for info in pkgutil.iter_modules(W.__path__):
    mod = importlib.import_module(f"specdec_lite.widgets.{info.name}")
    for name, fn in sorted(vars(mod).items()):
        if not (name.endswith("_explorer") and callable(fn) and getattr(fn, "__module__", "") == mod.__name__):
            continue
        shown.clear()
        box = fn()
        rows, out = box.children[:-1], box.children[-1]
        if isinstance(out, ipywidgets.HTML):
            if out.value:
                shown.append(out.value)
            out.observe(lambda change: shown.append(change["new"]), names="value")
        controls = [c for row in rows for c in row.children]
        entry = {"box": type(box).__name__, "output": type(out).__name__, "initial_draws": len(shown), "moves": []}
        for c in controls:
            new = other_value(c)
            if new is None:
                entry["moves"].append({"control": type(c).__name__, "skipped": True})
                continue
            before, n = snapshot(shown[-1]) if shown else None, len(shown)
            c.value = new
            entry["moves"].append({
                "control": f"{type(c).__name__}({getattr(c, 'description', '')})",
                "redrawn": len(shown) > n,
                "changed": bool(shown) and snapshot(shown[-1]) != before,
            })
        report["explorers"][f"{info.name}.{name}"] = entry
print("PROBE" + json.dumps(report))
"""


def probe_result(nb: Any) -> dict:
    """The JSON the probe cell printed (it is the notebook's last cell)."""
    for out in nb.cells[-1].outputs:
        if out.get("output_type") == "stream" and "PROBE" in out.get("text", ""):
            return json.loads(out["text"].split("PROBE", 1)[1])
    raise AssertionError(f"the probe printed nothing: {nb.cells[-1].outputs}")
