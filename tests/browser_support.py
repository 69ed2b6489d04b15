"""Run the built book in Debian's headless Chromium (used by ``tests/test_browser.py``).

The book is served from ``_build/html`` on loopback by a thread running
``http.server``; ``tools/browser/check_book.mjs`` (Playwright's ``playwright-core``
from npm, driving ``/usr/bin/chromium``, never a downloaded browser) opens each page twice,
at a desktop's width and at a phone's, and runs every browser check of the suite on those
loads (the dark mode's on the first, once the reader's system has turned dark).
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
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "browser"
CACHE = TOOLS / "cdn-cache"
CHROMIUM = Path("/usr/bin/chromium")
#: The one browser pass: every page loaded at a desktop's width (light) and a phone's (dark), every check on those.
SCRIPT = TOOLS / "check_book.mjs"
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
    return SCRIPT


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


def search_book(html: Path, searches: list[tuple[str, str]], workdir: Path) -> list[dict]:
    """Run ``tools/browser/search_book.mjs``: each (search page, query) searched as a reader would; the links found."""
    ensure_driver()
    config = {"searches": [{"page": page, "query": query} for page, query in searches]}
    return _run_node(TOOLS / "search_book.mjs", html, workdir, "search", config, timeout=600)


# --- accessibility: axe-core on every page, light at a desktop's width and dark at a phone's; a keyboard walk ---
#: The WCAG 2.1 A and AA rules of axe-core (its own tag names).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The pages audited in dark mode at a desktop's width too (every page is audited light there, and dark on a phone,
#: as a phone that prefers dark brings it up): the theme's chrome, the same on every page, in each edition.
DARK_DESKTOP_PAGES = ["book/intro.html", "zh/book/intro.html"]
#: Set to a folder to keep a screenshot of every page of the browser pass there (``phone__*`` at a phone's width).
SCREENSHOTS_ENV = "SPECDEC_SCREENSHOTS"


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


def check_book(
    html: Path,
    pages: list[str],
    workdir: Path,
    *,
    screenshots: Path | None = None,
    slider_timeout_ms: int = 8000,
    draw_timeout_ms: int = 30000,
    setup_late_ms: int = 20000,
    max_tabs: int = 2500,
    concurrency: int = 2,
    timeout: int = 3300,
    dark_pages: list[str] | None = None,
) -> dict[str, dict]:
    """Run ``tools/browser/check_book.mjs`` over ``pages`` (paths relative to ``html``): each page
    loaded once in light mode at a desktop's width, where the pages of ``dark_pages`` (all when None) are
    also audited once the reader's system has turned dark (the theme's "auto" mode follows it in place),
    and once at a phone's width in a browser that prefers dark as the page comes up, where it is checked
    and audited in that dark mode.

    One entry per page, with the three reports the tests read: ``read`` (what a reader sees:
    errors, requests, math, widgets, figures drawn, sliders moved by mouse, screenshots, the
    table cells cut or hidden in ``read["tables"]``, the phone's layout and its table cells in
    ``read["phone"]``), ``axe`` (per mode: axe-core's WCAG 2.1 A/AA
    violations, each with ``where`` it is, the theme mode shown, in light mode the tab stops
    from the top in ``keyboard``, at a phone's width ``displayMath`` and ``backToTop``) and
    ``figures`` (names, descriptions, data tables, the keyboard walk through the slider
    controls in ``walk``, the themes switched in place, the page coming up dark by itself on
    the phone in ``autoDark``). Every report carries ``ms``: its stages' times.

    A figure not drawn ``draw_timeout_ms`` after the load counts as not drawn, one that
    figures.js has not set up ``setup_late_ms`` after navigation as never set up, and a
    slider move that has not changed the figure after ``slider_timeout_ms`` as no change.
    ``timeout`` (seconds) is the three former passes' limits together (600 + 1800 + 900): a loaded
    machine may be that slow.
    """
    axe = ensure_axe()
    result = _run_node(
        SCRIPT,
        html,
        workdir,
        "book",
        {
            "pages": pages,
            "screenshots": str(screenshots) if screenshots else None,
            "axe": str(axe),
            "tags": AXE_TAGS,
            "phoneWidth": PHONE_WIDTH,
            "maxMovesPerSlider": 3,
            "maxTabs": max_tabs,
            "concurrency": concurrency,
            "sliderTimeoutMs": slider_timeout_ms,
            "drawTimeoutMs": draw_timeout_ms,
            "setupLateMs": setup_late_ms,
            "darkPages": dark_pages,
        },
        timeout=timeout,
    )
    (workdir / "book-ms.json").write_text(json.dumps(stage_times(result), indent=1))
    return {r["page"]: r for r in result["pages"]}


def stage_times(result: dict) -> dict:
    """Milliseconds per page, mode and stage (and of the whole pass) of a ``check_book`` result."""
    out: dict = {"total": result["ms"]}
    for r in result["pages"]:
        out[r["page"]] = {mode: a["ms"] for mode, a in r["axe"].items()}
    return out


_PASSES: dict[str, object] = {}


def shared_pass(key: str, run: Callable[[], dict[str, dict]]) -> dict[str, dict]:
    """``run()`` once per pytest session under ``key``; its result (or its error) serves every later call.

    The browser pass over the book serves ``tests/test_browser.py`` and ``tests/test_browser_figures.py``
    alike, whichever workers run them, and so does the pass over the pages with defects.
    """
    if key not in _PASSES:
        from tests.shared_once import once  # under pytest-xdist, one run for all workers

        try:
            _PASSES[key] = once(f"browser-{key}", run)
        except Exception as e:  # noqa: BLE001 - kept and raised again for every test that reads it
            _PASSES[key] = e
    got = _PASSES[key]
    if isinstance(got, Exception):
        raise got
    return got  # type: ignore[return-value]


def require_chromium() -> None:
    """Skip a browser test where Debian's Chromium is missing; under CI, fail it instead."""
    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test: /usr/bin/chromium is missing (.ci/run installs it)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); CI installs it")


def book_pass(built_book: Path, tmp_path_factory: pytest.TempPathFactory, pages: list[str]) -> dict[str, dict]:
    """The browser pass over every page of the built book, run once per session (see ``check_book``).

    Each page is audited light at a desktop's width and dark on a phone, and the pages of ``DARK_DESKTOP_PAGES`` dark
    at a desktop's width too. Screenshots of every page are taken only on request (``SCREENSHOTS_ENV``).
    """
    require_chromium()
    shots = os.environ.get(SCREENSHOTS_ENV)
    return shared_pass(
        "book",
        lambda: check_book(
            built_book,
            pages,
            tmp_path_factory.mktemp("browser"),
            screenshots=Path(shots).resolve() if shots else None,
            dark_pages=DARK_DESKTOP_PAGES,
        ),
    )


#: The pages of ``defect_site``, and the check that each one must fail.
DEFECT_PAGES = ["broken.html", "plain.html", "a11y.html"]


def defect_site(built_book: Path, site: Path) -> Path:
    """A small site of pages with defects, for the tests that show the checks can fail.

    ``broken.html`` (the page check): a JavaScript error, an unnamed external script, a formula
    with a TeX error and one MathJax cannot find, a display formula wider than its column (and than
    a phone's page), a figure that is never drawn, a slider whose
    steps plot the same data and one whose steps change it, and three tables too narrow for a
    long code name: one in a box that hides what overflows, one in a box that scrolls, and one
    whose cell cuts its own content.
    ``plain.html`` (the figure check): a captioned slider figure as plain plotly HTML (no init
    call, no description, no table), with the figure script loaded twice and no styles; and a
    figure whose buttons set its title as a bare string, as the book's steps did (plotly.js 4
    then draws no title).
    ``a11y.html`` (the audit): a link without contrast, a toggle whose hidden label differs from
    its words, a text that fades only in dark mode, a formula in the tab order, a focusable
    control with no visible focus, a wide formula that cannot be reached by keyboard on a phone,
    and a defect in the chrome.
    """
    import plotly.graph_objects as go

    from specdec_lite.plotting import slider_figure

    site.mkdir(parents=True, exist_ok=True)
    for name in ("plotly.min.js", "sd-figures.js"):
        (site / name).write_bytes((built_book / "_static" / name).read_bytes())

    same = [go.Bar(x=[0, 1], y=[1, 2])]
    frozen = slider_figure([("a", same, None), ("b", [go.Bar(x=[0, 1], y=[1, 2])], None)], label="s")
    moving = slider_figure([("a", same, None), ("b", [go.Bar(x=[0, 1], y=[2, 1])], None)], label="s")
    body = "".join(f.to_html(full_html=False, include_plotlyjs=False) for f in (frozen, moving))
    (site / "broken.html").write_text(
        '<html><head><script src="plotly.min.js"></script>'
        '<script src="https://example.org/tracker.js"></script>'
        f'<script defer src="{CDN_ASSETS[0]["prefix"]}es5/tex-mml-chtml.js"></script></head><body>'
        '<p><span class="math">\\(\\frac{1}{\\)</span>, <span class="math">\\(x^{2}}\\)</span>, '
        '<span class="math">\\(x^2\\)</span></p>'
        '<div class="math" style="width:600px">\\[' + " + ".join(f"x_{{{i}}}" for i in range(1, 120)) + "\\]</div>"
        '<script>throw new Error("boom")</script>'
        f'<div class="plotly-graph-div" style="height:300px"></div>{body}'
        '<div style="width:300px;overflow:hidden"><table><tr><td style="white-space:nowrap">'
        "<code>specdec_lite.hidden_in_a_box_that_clips.expected_oracle_calls</code></td></tr></table></div>"
        '<div style="width:300px;overflow-x:auto"><table><tr><td style="white-space:nowrap">'
        "<code>specdec_lite.in_a_box_that_scrolls.expected_oracle_calls</code></td></tr></table></div>"
        '<table style="table-layout:fixed;width:200px"><tr><td style="white-space:nowrap;overflow:hidden">'
        "<code>specdec_lite.cut_by_its_own_cell.expected_oracle_calls</code></td></tr></table>"
        "</body></html>"
    )

    fig = slider_figure(
        [(s, [go.Scatter(x=[0, 1], y=[s, 1 - s])], {"title": f"s = {s}"}) for s in (0.2, 0.8)], label="s"
    )
    plot = fig.to_html(full_html=False, include_plotlyjs=False)
    bare = go.Figure(go.Bar(x=[0, 1], y=[1, 2]), layout={"title": {"text": "T = 1", "x": 0.3}})
    bare.update_layout(
        updatemenus=[
            {
                "type": "buttons",
                "buttons": [
                    {"label": f"T = {t}", "method": "update", "args": [{"y": [[1, t]]}, {"title": f"T = {t}"}]}
                    for t in (1, 2)
                ],
            }
        ]
    )
    plot += bare.to_html(full_html=False, include_plotlyjs=False)
    (site / "plain.html").write_text(
        '<html lang="en" data-theme="light"><head><script src="plotly.min.js"></script>'
        '<script src="sd-figures.js"></script><script src="sd-figures.js"></script></head><body><main>'
        f'<figure><div class="output">{plot}</div><figcaption><p><span class="caption-number">Figure 1 </span>'
        "A caption.</p></figcaption></figure></main></body></html>"
    )

    (site / "a11y.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><title>broken</title>"
        # as every page of the book: a phone lays it out at its own width
        "<meta name='viewport' content='width=device-width, initial-scale=1'><style>"
        "html[data-theme=dark] .fades {color: #222; background: #111}"
        ".nofocus:focus {outline: none}"
        "mjx-container[display=true] {display: block; overflow-x: auto}"
        "</style><script>"
        "var dark = matchMedia('(prefers-color-scheme: dark)');"
        "function mode() { document.documentElement.dataset.theme = dark.matches ? 'dark' : 'light'; }"
        "mode(); dark.addEventListener('change', mode);"
        "</script></head><body>"
        "<header><a href='#a' style='color:#bbb'>chrome link</a></header><main>"
        "<article class='bd-article'><h1>Broken</h1>"
        "<p><a href='#b' style='color:#aaa'>pale link</a></p>"
        "<details><summary aria-label='Toggle hidden content'>Show code cell source</summary><p>x</p></details>"
        "<p class='fades'>fades in the dark</p>"
        "<p>inline <mjx-container tabindex='0'>x</mjx-container></p>"
        "<button class='nofocus'>no focus ring</button>"
        "<div class='math'><mjx-container display='true'>"
        "<span style='display:inline-block;width:900px'>a very wide formula</span></mjx-container></div>"
        "</article></main></body></html>"
    )
    return site


def defect_pass(built_book: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The real browser pass over ``defect_site`` (short timeouts: these pages fail), run once per session."""
    require_chromium()

    def run() -> dict[str, dict]:
        work = tmp_path_factory.mktemp("defects")
        site = defect_site(built_book, work / "site")
        fast = {"slider_timeout_ms": 1500, "draw_timeout_ms": 4000, "setup_late_ms": 2000}
        return check_book(site, DEFECT_PAGES, work, screenshots=work / "shots", timeout=600, **fast)

    return shared_pass("defects", run)
