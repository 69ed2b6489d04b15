"""Run the built book in Debian's headless Chromium (used by ``tests/test_browser.py``).

The book is served from ``_build/html`` on loopback by a thread running
``http.server``; ``tools/browser/check_pages.mjs`` (Playwright's ``playwright-core``
from npm, driving ``/usr/bin/chromium``, never a downloaded browser) opens each page.
Online readers fetch a few assets from CDNs. ``CDN_ASSETS`` names every one of them
with the npm package (and exact version) it comes from: the browser's requests for
them are answered from local copies fetched with ``npm pack``, and any other request
that leaves the machine is blocked and fails the test.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "browser"
CACHE = TOOLS / "cdn-cache"
CHROMIUM = Path("/usr/bin/chromium")
#: A phone's viewport width in CSS pixels (iPhone 12 to 15); pages are also checked at this width.
PHONE_WIDTH = 390

#: Every external asset a page of the book may load, and where its local copy comes from.
#: ``prefix`` entries map a CDN folder onto the package's folder (MathJax and the widget
#: manager load fonts and components relative to their own address).
CDN_ASSETS: list[dict[str, str]] = [
    # Sphinx's default MathJax 3 (``sphinx.ext.mathjax.MATHJAX_URL``); 3.2.2 is the last 3.x.
    {"prefix": "https://cdn.jsdelivr.net/npm/mathjax@3/", "npm": "mathjax@3.2.2", "path": ""},
    # The Jupyter widget manager for widgets embedded in executed pages (``nb_ipywidgets_js`` in _config.yml).
    {
        "prefix": "https://cdn.jsdelivr.net/npm/requirejs@2.3.4/",
        "npm": "requirejs@2.3.4",
        "path": "",
    },
    {
        "prefix": "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@1.0.6/",
        "npm": "@jupyter-widgets/html-manager@1.0.6",
        "path": "",
    },
    # The "Open in Colab" badge image inside each lab's first cell. It is Google's image, not a
    # package: the local copy is a stand-in drawn here (a page without it still reads "Open in Colab").
    {"url": "https://colab.research.google.com/assets/colab-badge.svg", "file": "colab-badge.svg"},
]


def chromium_available() -> bool:
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


def _npm(*args: str, cwd: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to fetch playwright-core and the CDN assets (Debian: apt-get install npm)")
    proc = subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"npm {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def ensure_driver() -> Path:
    """Install ``playwright-core`` (pinned in tools/browser/package-lock.json) once."""
    lock = json.loads((TOOLS / "package-lock.json").read_text())
    want = lock["packages"]["node_modules/playwright-core"]["version"]
    installed = TOOLS / "node_modules" / "playwright-core" / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != want:
        _npm("ci", "--no-audit", "--no-fund", "--ignore-scripts", cwd=TOOLS)
    return TOOLS / "check_pages.mjs"


def _unpacked(spec: str) -> Path:
    """The files of npm package ``spec`` (name@exact-version), fetched with ``npm pack`` once."""
    dest = CACHE / spec.replace("/", "__")
    if (dest / "package.json").is_file():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz_dir = CACHE / "_packs"
    tgz_dir.mkdir(exist_ok=True)
    _npm("pack", spec, "--pack-destination", str(tgz_dir), "--silent", cwd=CACHE)
    name, version = spec.rsplit("@", 1)
    tgz = tgz_dir / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(tgz) as tar:
        tar.extractall(tmp, filter="data")
    (tmp / "package").rename(dest)
    shutil.rmtree(tmp)
    return dest


def local_assets() -> list[dict[str, str]]:
    """``CDN_ASSETS`` resolved to files on this machine (fetching what is missing)."""
    out = []
    for a in CDN_ASSETS:
        if "npm" in a:
            out.append({"prefix": a["prefix"], "dir": str(_unpacked(a["npm"]) / a["path"])})
        else:
            out.append({"url": a["url"], "file": str(TOOLS / a["file"])})
    return out


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) from a thread; yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _run_node(script: Path, html: Path, workdir: Path, name: str, config: dict, timeout: int) -> object:
    """Serve ``html``, run ``node script`` on ``config`` (plus the shared keys), return its JSON result."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is needed to drive Chromium (Debian: apt-get install nodejs)")
    with serve(html) as base:
        config = {
            "baseUrl": base,
            "assets": local_assets(),
            "chromium": str(CHROMIUM),
            "result": str(workdir / f"{name}-result.json"),
            **config,
        }
        (workdir / f"{name}-config.json").write_text(json.dumps(config, indent=1))
        proc = subprocess.run(
            [node, str(script), str(workdir / f"{name}-config.json")], capture_output=True, text=True, timeout=timeout
        )
    if proc.returncode != 0:
        raise RuntimeError(f"the {name} run failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return json.loads(Path(config["result"]).read_text())


def check_pages(
    html: Path,
    pages: list[str],
    screenshots: Path,
    workdir: Path,
    *,
    slider_timeout_ms: int = 8000,
    draw_timeout_ms: int = 20000,
    phone_width: int | None = PHONE_WIDTH,
) -> dict[str, dict]:
    """Open each page (path relative to ``html``) in Chromium; one report per page.

    A figure not drawn ``draw_timeout_ms`` after the page loaded counts as not drawn, and
    a slider move that has not changed the figure after ``slider_timeout_ms`` as no change.
    With ``phone_width`` each page is opened a second time in a phone's viewport of that
    many CSS pixels, and the report's ``phone`` entry measures its layout.
    """
    script = ensure_driver()
    report = _run_node(
        script,
        html,
        workdir,
        "browser",
        {
            "pages": pages,
            "screenshots": str(screenshots),
            "maxMovesPerSlider": 3,
            "phoneWidth": phone_width,
            "concurrency": 2,
            "sliderTimeoutMs": slider_timeout_ms,
            "drawTimeoutMs": draw_timeout_ms,
        },
        timeout=600,
    )
    return {r["page"]: r for r in report}


# --- accessibility: axe-core on every page, light and dark, a keyboard walk and a phone's width ---
AXE_SCRIPT = TOOLS / "axe_pages.mjs"
#: The WCAG 2.1 A and AA rules of axe-core (its own tag names).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Each page is audited in the theme's two colour modes, and in light mode at a phone's width.
AXE_MODES = ["light", "dark", "phone"]


def ensure_axe() -> Path:
    """``axe.min.js`` of the ``axe-core`` pinned in tools/browser/package-lock.json (installed once)."""
    ensure_driver()
    lock = json.loads((TOOLS / "package-lock.json").read_text())
    want = lock["packages"]["node_modules/axe-core"]["version"]
    installed = TOOLS / "node_modules" / "axe-core" / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != want:
        _npm("ci", "--no-audit", "--no-fund", "--ignore-scripts", cwd=TOOLS)
    return TOOLS / "node_modules" / "axe-core" / "axe.min.js"


def axe_version() -> str:
    """The version of axe-core the audit runs (from the lock file)."""
    return json.loads((TOOLS / "package-lock.json").read_text())["packages"]["node_modules/axe-core"]["version"]


def audit_pages(
    html: Path, pages: list[str], workdir: Path, *, modes: list[str] = AXE_MODES, max_tab_stops: int = 600
) -> list[dict]:
    """Audit each page (path relative to ``html``) in each of ``modes``; one report per page and mode.

    A report holds axe-core's WCAG 2.1 A/AA violations (``axe.nodes``, each with ``where``: the
    book's ``content``, the ``theme``'s chrome or a ``plot``'s internals), the theme mode the page
    showed, in light mode the page's tab stops from the top (``keyboard``), and at a phone's width
    the overflow of each display formula (``displayMath``).
    """
    axe = ensure_axe()
    return _run_node(
        AXE_SCRIPT,
        html,
        workdir,
        "axe",
        {
            "pages": pages,
            "modes": modes,
            "axe": str(axe),
            "tags": AXE_TAGS,
            "phoneWidth": PHONE_WIDTH,
            "maxTabStops": max_tab_stops,
            "concurrency": 2,
            "drawTimeoutMs": 20000,
        },
        timeout=1800,
    )


def check_figures(
    html: Path,
    pages: list[str],
    workdir: Path,
    *,
    slider_timeout_ms: int = 8000,
    draw_timeout_ms: int = 30000,
    max_tabs: int = 2500,
) -> dict[str, dict]:
    """Open each page in Chromium and report on its figures as ``tools/browser/check_figures.mjs``
    sees them (script loads, names, descriptions, data tables, a keyboard-only walk through
    the page's slider controls, dark and light themes); one report per page."""
    ensure_driver()
    script = TOOLS / "check_figures.mjs"
    report = _run_node(
        script,
        html,
        workdir,
        "figures",
        {
            "pages": pages,
            "concurrency": 2,
            "sliderTimeoutMs": slider_timeout_ms,
            "drawTimeoutMs": draw_timeout_ms,
            "maxTabs": max_tabs,
        },
        timeout=900,
    )
    return {r["page"]: r for r in report}
