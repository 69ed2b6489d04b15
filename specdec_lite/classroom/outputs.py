"""Bounds on what a graded notebook's cells may output, enforced by the grader as the outputs arrive.

A cell's outputs are student input too: a cell printing 400 MiB would make the autograded
notebook and the feedback page 400 MiB, and the grader hold it all in memory. ``OutputBudget``
(used by ``execute.GradingExecute`` on every message the kernel sends) keeps at most
``Limits.output`` bytes of one output, ``Limits.cell`` of one cell and ``Limits.notebook`` of the
whole notebook; what is over is cut (a text is shortened, a display keeps what fits) and the cell
gets a last output saying how much was cut. Messages larger than ``Limits.message`` are refused
unread by the grader's sockets (``kernel``), so no single print reaches its memory. Error
outputs and the checks' outcomes are kept past the limits (shortened), so a graded cell scores
as it would have: the notebook is still graded and its checks still count.

``SanitizeFeedback`` cleans what a feedback page shows of a student's notebook: Markdown and raw
cells, HTML and Markdown outputs keep only the tags nbconvert's own ``clean_html`` keeps (text with
emphasis, quotations and abbreviations, lists, tables, code, links to http, https and mailto addresses),
other tags are dropped (their text stays), and every other kind of output
but text, LaTeX, JSON and PNG/JPEG images (JavaScript, SVG, widget views) is removed. nbgrader's
feedback template renders Markdown cells without nbconvert's ``sanitize_html``, hence this step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import bleach
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, List, Unicode

from ..exercises.feedback import OUTCOME

MIB = 1 << 20
#: The first line of the output the grader adds to a cell whose outputs it cut (``report`` looks for it).
CUT = "[output cut by the grader:"
#: Past the limits, at most this many error outputs and outcomes of a cell are kept, each shortened to ``_SMALL``.
_KEPT_PAST = 8
_SMALL = 2048


@dataclass(frozen=True)
class Limits:
    """What the grader keeps of a notebook's outputs, in bytes."""

    output: int = 1 * MIB  #: one output (a stream's text, one display's data)
    cell: int = 4 * MIB  #: every output of one cell
    notebook: int = 16 * MIB  #: every output of the notebook
    message: int = 4 * MIB  #: one message from the kernel; a larger one is refused unread

    def describe(self) -> str:
        """The limits in words."""
        return (
            f"{_mib(self.output)} per output, {_mib(self.cell)} per cell, {_mib(self.notebook)} per notebook "
            f"(a single message over {_mib(self.message)} is refused unread)"
        )


def _mib(n: float) -> str:
    return f"{n / MIB:.3g} MiB" if n >= MIB / 10 else f"{n / 1024:.3g} KiB"


def size(value: Any) -> int:
    """Bytes of a text or a JSON value as written in the notebook (about)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sum(size(v) for v in value)
    return len(json.dumps(value, ensure_ascii=False))


def output_size(out: NotebookNode) -> int:
    """Bytes of an output's content: its text, data, error fields and metadata."""
    return sum(size(out[k]) for k in ("text", "data", "ename", "evalue", "traceback", "metadata") if out.get(k))


def _shorten(text: str, keep: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    return text if len(data) <= keep else data[: max(0, keep)].decode("utf-8", "ignore")


def _protected(out: NotebookNode) -> bool:
    """An error, or a display carrying a check's outcome: kept past the limits (shortened)."""
    return out.get("output_type") == "error" or OUTCOME in (out.get("data") or {})


def fit(out: NotebookNode, keep: int) -> int:
    """Shorten ``out`` in place to about ``keep`` bytes; the bytes cut."""
    kind = out.get("output_type")
    meta = size(out.get("metadata") or {}) if out.get("metadata") else 0
    if meta > _SMALL:  # a display's metadata is the student's too
        out["metadata"] = {}
        return meta + fit(out, keep)
    if kind == "stream":
        before = size(out.get("text", ""))
        out["text"] = _shorten(out.get("text", ""), keep)
        return before - size(out["text"])
    if kind == "error":
        cut = 0
        out["evalue"] = _shorten(str(out.get("evalue", "")), keep // 2)
        tb, kept, left = list(out.get("traceback") or []), [], keep // 2
        for line in tb:
            line = _shorten(str(line), left)
            left -= size(line)
            kept.append(line)
            if left <= 0:
                break
        cut += size(tb) - size(kept)
        out["traceback"] = kept
        return max(0, cut)
    data = out.get("data")
    if not isinstance(data, dict):
        return 0
    cut = 0
    sizes = {mime: size(value) for mime, value in data.items()}
    # the largest representations go first; the outcome and the plain text go last
    order = sorted(data, key=lambda m: (m == OUTCOME, m == "text/plain", -sizes[m]))
    total = sum(sizes.values())
    for mime in order:
        if total <= keep:
            break
        if mime == "text/plain" and isinstance(data[mime], str):
            room = max(0, keep - (total - sizes[mime]))
            data[mime] = _shorten(data[mime], room)
            cut += sizes[mime] - size(data[mime])
            total -= sizes[mime] - size(data[mime])
        elif mime != OUTCOME or sizes[mime] > _SMALL:
            cut += sizes[mime]
            total -= sizes[mime]
            del data[mime]
    if "text/plain" not in data and not data:
        data["text/plain"] = ""
    return cut


@dataclass
class CellCut:
    """What was cut of one cell's outputs."""

    cell: int  #: the cell's number (1 = first cell of the notebook)
    bytes: int = 0  #: bytes of output left out (at least: refused messages count 0)
    outputs: int = 0  #: outputs shortened or dropped
    refused: int = 0  #: messages over ``Limits.message``, refused unread


@dataclass
class OutputBudget:
    """The bytes a notebook's outputs may still take; ``take`` decides each output as it arrives."""

    limits: Limits = field(default_factory=Limits)
    used: int = 0  #: bytes kept in the notebook's cells so far
    cell_used: int = 0
    cell_kept_past: int = 0
    cuts: dict[int, CellCut] = field(default_factory=dict)

    def start_cell(self) -> None:
        self.cell_used = 0
        self.cell_kept_past = 0

    def add_cut(self, index: int, n: int, refused: int = 0) -> None:
        """Record ``n`` bytes (and ``refused`` messages) of cell ``index`` left out."""
        cut = self.cuts.setdefault(index, CellCut(index + 1))
        cut.bytes += n
        cut.outputs += 1 if n or not refused else 0
        cut.refused += refused

    def refused(self, index: int, n: int) -> None:
        """``n`` messages of cell ``index`` were refused unread."""
        if n:
            self.add_cut(index, 0, refused=n)

    def room(self) -> int:
        return max(0, min(self.limits.cell - self.cell_used, self.limits.notebook - self.used))

    def take(self, out: NotebookNode, index: int, count: bool = True) -> bool:
        """Fit ``out`` (an output of cell ``index``) to the limits in place; False: drop it. ``count``: it stays in
        the notebook (not a cell run again silently)."""
        n = output_size(out)
        keep = min(self.limits.output, self.room())
        if n > keep:
            if _protected(out) and keep < _SMALL:
                if self.cell_kept_past >= _KEPT_PAST:
                    self.add_cut(index, n)
                    return False
                self.cell_kept_past += 1
                keep = _SMALL
            elif keep < 64:
                self.add_cut(index, n)
                return False
            cut = fit(out, keep)
            self.add_cut(index, cut)
            n -= cut
        self.cell_used += n
        self.used += n if count else 0
        return True

    def take_bytes(self, n: int, index: int, count: bool = True) -> bool:
        """A message of ``n`` bytes that is no output (a display's update, a widget's state): kept if it fits."""
        if n > self.room():
            self.add_cut(index, n)
            return False
        self.cell_used += n
        self.used += n if count else 0
        return True

    def notice(self, index: int) -> NotebookNode | None:
        """The output that says what was cut of cell ``index``'s outputs, or None."""
        cut = self.cuts.get(index)
        if cut is None:
            return None
        parts = [f"{_mib(cut.bytes)} of {cut.outputs} output{'s' if cut.outputs != 1 else ''}"] if cut.outputs else []
        if cut.refused:
            parts.append(f"{cut.refused} message{'s' if cut.refused > 1 else ''} over {_mib(self.limits.message)}")
        what = " and ".join(parts)
        return NotebookNode(
            output_type="stream",
            name="stdout",
            text=f"\n{CUT} {what} left out; the limits are {self.limits.describe()}]\n",
        )

    def record(self) -> dict[str, Any]:
        """For ``.grading.json``: the limits and every cut cell."""
        return {
            "limits": self.limits.__dict__,
            "cut": [cut.__dict__ for cut in sorted(self.cuts.values(), key=lambda c: c.cell)],
        }


#: The tags a feedback page keeps of a student's HTML: those nbconvert's ``clean_html`` filter keeps.
FEEDBACK_TAGS = sorted({*bleach.ALLOWED_TAGS, "div", "pre", "code", "span", "table", "tr", "td"})


class SanitizeFeedback(SanitizeHTML):
    """nbconvert's ``SanitizeHTML`` for feedback pages: unsafe tags dropped (text kept), the tags of
    ``FEEDBACK_TAGS``, and only text, LaTeX, JSON and PNG/JPEG outputs besides sanitized HTML and Markdown."""

    tags = List(Unicode(), default_value=FEEDBACK_TAGS, help="HTML tags kept.").tag(config=True)
    strip = Bool(True, help="Drop unsafe tags (their text stays) rather than show them escaped.").tag(config=True)
    enabled = Bool(True, help="On (nbconvert's preprocessors are off unless enabled).").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int) -> tuple[NotebookNode, Any]:
        """A Markdown cell is rendered here and its HTML cleaned (links only to http, https and mailto: a
        Markdown link ``[x](javascript:...)`` is no HTML tag for the sanitizer to see in the source)."""
        if cell.cell_type == "markdown":
            cell.source = markdown_to_safe_html(cell.source)
            return cell, resources
        return super().preprocess_cell(cell, resources, index)


#: The tags a Markdown cell keeps on a feedback page (rendered first, then cleaned).
MARKDOWN_TAGS = sorted({*FEEDBACK_TAGS, "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "th", "thead", "tbody"})


def markdown_to_safe_html(source: str) -> str:
    """A Markdown cell rendered to HTML with only ``MARKDOWN_TAGS`` and safe links, as one HTML block (so that
    rendering it again as Markdown leaves it as it is)."""
    from nbconvert.filters import markdown2html

    clean = bleach.clean(
        markdown2html(source),
        tags=MARKDOWN_TAGS,
        attributes={"a": ["href", "title"], "*": ["class"]},
        protocols=["http", "https", "mailto"],
        strip=True,
    )
    body = "\n".join(line for line in clean.splitlines() if line.strip())
    return f"<div>\n{body}\n</div>"
