"""What students print is bounded and cleaned by the grader: the real nbgrader, in the real sandbox.

A class of two, graded once on Lab 1 with small output limits (``LIMITS``): ``honest`` (the
master) and ``flooder`` (the master, plus cells that print far past the limits, one single
print larger than a message may be, and active content: scripts, event handlers, a
``javascript:`` link, an iframe, an object, an SVG script, in outputs and in a Markdown cell,
beside a table and a PNG). The flooder keeps every point, the grader's memory and every file
it writes stay bounded, ``report`` names the cut cells, and in Chromium the flooder's feedback
page runs none of the payloads while its table and PNG show.
"""

from __future__ import annotations

import copy
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from specdec_lite import classroom
from specdec_lite.classroom import outputs, sandbox

from . import browser_support as bs
from .grading_class import LAB, ROOT, _index, _master

pytestmark = pytest.mark.slow

#: Small limits, so that a modest print is far past them.
LIMITS = outputs.Limits(output=64 << 10, cell=256 << 10, notebook=1 << 20, message=512 << 10)
#: One print of this many bytes: refused unread (over ``LIMITS.message``).
ONE_PRINT = 96 << 20
#: Then this many writes of ``CHUNK`` bytes, each a message under the limit, every one cut.
CHUNKS, CHUNK = 200, 200_000

FLOOD = f"""import sys
print("x" * {ONE_PRINT})"""
FLOOD_CHUNKS = f"""import sys, time
for _ in range({CHUNKS}):
    sys.stdout.write("y" * {CHUNK})
    sys.stdout.flush()
    time.sleep(0.001)"""
#: Each payload would leave a mark: window.__pwned, the title, or a request for a URL holding "pwned".
PAYLOADS = r'''import struct, zlib
from IPython.display import HTML, SVG, Image, Javascript, Markdown, display
display(HTML("""<script>window.__pwned = "script"; fetch("/pwned-script")</script>
<img src="x" onerror="window.__pwned = 'onerror'; fetch('/pwned-onerror')">
<a href="javascript:window.__pwned='href';fetch('/pwned-href')">a link</a>
<iframe srcdoc="<script>parent.__pwned='iframe';fetch('/pwned-iframe')</script>"></iframe>
<object data="data:text/html,<script>parent.__pwned='object'</script>"></object>
<table><tr><td>cell A</td><td>cell B</td></tr></table>"""))
display(SVG("""<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">
<script>window.__pwned = "svg"; fetch("/pwned-svg")</script><circle r="5" onload="fetch('/pwned-svgload')"/></svg>"""))
display(Markdown("""<img src="x" onerror="window.__pwned='markdown'; fetch('/pwned-markdown')">"""))
display(Javascript("window.__pwned = 'javascript'; fetch('/pwned-javascript')"))
def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\x00" + b"".join(bytes([255 * ((x + y) % 2), 64, 128]) for x in range(8)) for y in range(8))
png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
png += _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b"")
display(Image(data=png, format="png"))'''
MARKDOWN_PAYLOAD = (
    "A note <script>window.__pwned='md-script'; fetch('/pwned-md-script')</script>"
    "<img src=\"x\" onerror=\"window.__pwned='md-img'; fetch('/pwned-md-img')\"> "
    "[a Markdown link](javascript:window.__pwned='md-link';fetch('/pwned-md-link'))"
)
STUDENTS = ("flooder", "honest")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=classroom.nbgrader_env(), capture_output=True, text=True, timeout=1200)


@functools.cache
def graded() -> dict:
    if sandbox.missing():
        pytest.fail(f"the sandbox cannot run on this machine: {sandbox.missing()}")
    course = Path(tempfile.mkdtemp(prefix="specdec-grading-outputs-")) / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)
    (course / "roster.csv").write_text(
        "id,first_name,last_name,email\n" + "".join(f"{s},{s},Student,{s}@example.org\n" for s in STUDENTS)
    )
    nbg = [sys.executable, "-m", "nbgrader"]
    out = {"course": course, "runs": {}}
    out["runs"]["generate"] = _run([*nbg, "generate_assignment", LAB, "--force"], course)
    out["runs"]["roster"] = _run([*nbg, "db", "student", "import", "roster.csv"], course)
    honest = _master()
    flooder = copy.deepcopy(honest)
    at = _index(flooder, "marginals")  # before the first exercise: every check runs after the flood
    for cell in reversed(
        [
            nbformat.v4.new_code_cell(FLOOD),
            nbformat.v4.new_code_cell(FLOOD_CHUNKS),
            nbformat.v4.new_code_cell(PAYLOADS),
            nbformat.v4.new_markdown_cell(MARKDOWN_PAYLOAD),
        ]
    ):
        flooder.cells.insert(at, cell)
    for student, nb in (("honest", honest), ("flooder", flooder)):
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
    flags = [
        f"--GradingExecute.max_output_bytes={LIMITS.output}",
        f"--GradingExecute.max_cell_output_bytes={LIMITS.cell}",
        f"--GradingExecute.max_notebook_output_bytes={LIMITS.notebook}",
        f"--GradingExecute.max_message_bytes={LIMITS.message}",
    ]
    for student in STUDENTS:
        out["runs"][f"autograde {student}"] = _run([*nbg, "autograde", LAB, f"--student={student}", *flags], course)
    out["runs"]["feedback"] = _run([*nbg, "generate_feedback", LAB], course)
    out["runs"]["report"] = _run([sys.executable, "-m", "specdec_lite.classroom", "report", LAB], course)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        out["scores"] = {s: gb.find_submission(LAB, s).code_score for s in STUDENTS}
    out["files"] = {str(p.relative_to(course)): p.stat().st_size for p in course.rglob("*") if p.is_file()}
    return out


def _record(student: str) -> dict:
    return json.loads((graded()["course"] / "autograded" / student / LAB / ".grading.json").read_text())


def test_every_command_ran():
    for name, proc in graded()["runs"].items():
        assert proc.returncode == 0, f"{name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def test_the_flooder_keeps_every_point_of_the_checks():
    scores = graded()["scores"]
    assert scores["honest"] > 0 and scores["flooder"] == scores["honest"], scores


def test_what_is_kept_is_within_the_limits_and_says_what_was_cut():
    nb = nbformat.read(graded()["course"] / "autograded" / "flooder" / LAB / f"{LAB}.ipynb", as_version=4)
    total = 0
    for cell in nb.cells:
        kept = sum(outputs.output_size(o) for o in cell.get("outputs", []))
        assert kept <= LIMITS.cell + 4096, (cell.source[:60], kept)
        total += kept
    assert total <= LIMITS.notebook + 16 * 4096
    notices = [o.text for c in nb.cells for o in c.get("outputs", []) if outputs.CUT in o.get("text", "")]
    assert len(notices) >= 2 and any("1 message over" in n for n in notices), notices
    cut = _record("flooder")["outputs"]["cut"]
    assert sum(c["refused"] for c in cut) >= 1 and sum(c["bytes"] for c in cut) >= CHUNKS * CHUNK - LIMITS.cell
    assert _record("honest")["outputs"]["cut"] == []


def test_the_grader_memory_does_not_grow_with_the_print():
    """The flood (``ONE_PRINT`` + ``CHUNKS * CHUNK`` bytes, 134 MiB) leaves the grader's peak memory within
    48 MiB of the honest student's."""
    flooder, honest = (_record(s)["grader_peak_rss_bytes"] for s in ("flooder", "honest"))
    print(f"grader peak RSS: honest {honest / 2**20:.0f} MiB, flooder {flooder / 2**20:.0f} MiB")
    assert flooder - honest < 48 << 20, (flooder, honest)


def test_every_file_written_stays_small():
    files = graded()["files"]
    print({k: v for k, v in files.items() if "flooder" in k})
    assert max(files.values()) < 4 << 20, sorted(files.items(), key=lambda kv: -kv[1])[:3]


def test_report_names_the_cut_cells():
    lines = [ln for ln in graded()["runs"]["report"].stdout.splitlines() if ln.startswith(f"{LAB}  flooder: ")]
    assert any("output cut by the grader" in ln for ln in lines), graded()["runs"]["report"].stdout
    assert not any("output cut" in ln for ln in graded()["runs"]["report"].stdout.splitlines() if "honest" in ln)


def _feedback(student: str) -> Path:
    return graded()["course"] / "feedback" / student / LAB / f"{LAB}.html"


class _Active(HTMLParser):
    """The active content of a page: scripts holding a payload, event handlers, javascript: URLs, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._script = tag == "script"
        if tag in ("iframe", "object", "embed"):
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or "javascript:" in (value or "").replace(" ", "").lower():
                self.found.append(f"{tag} {name}={value}")

    def handle_data(self, data: str) -> None:
        if self._script and "pwned" in data:
            self.found.append(f"script: {data[:80]}")

    def handle_endtag(self, tag: str) -> None:
        self._script = False


def test_the_feedback_page_carries_no_active_content():
    html = _feedback("flooder").read_text()
    parser = _Active()
    parser.feed(html)
    assert parser.found == [], parser.found
    assert "<td>cell A</td>" in html and "data:image/png;base64" in html


def test_in_chromium_no_payload_runs_and_the_table_and_plot_show(tmp_path):
    bs.require_chromium()
    bs.ensure_driver()
    page = _feedback("flooder")
    site = tmp_path / "site"
    shutil.copytree(page.parent, site)
    result = bs._run_node(bs.TOOLS / "feedback_page.mjs", site, tmp_path, "feedback", {"page": page.name}, timeout=300)
    assert result["pwned"] is None and "pwned" not in result["title"].lower(), result
    assert not [u for u in result["requests"] if "pwned" in u], result["requests"]
    assert result["dialogs"] == [] and result["scripts"] == [] and result["handlers"] == [], result
    assert result["frames"] == 0, result
    assert "cell A" in result["table"] and "cell B" in result["table"], result["table"]
    assert result["pngs"] and all(p["width"] > 0 and p["height"] > 0 for p in result["pngs"]), result["pngs"]
