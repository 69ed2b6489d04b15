"""Pages that fit a laptop's and a phone's screen, and lab pages that say what they are.

* ``reader_pages_static/reader_pages.css`` (every page): one search box, a wider text column
  below 1400 px, printed outputs that wrap, long inline code that breaks on a phone, a phone
  header that fits, tables without an empty header row (tests/test_browser.py measures it).
* Code names in tables (HTML only): a long dotted name or test id may break after its dots,
  slashes, colons and underscores (``<wbr>``), never inside a word, and a short link or cell in a
  table ("Lab 1", "实验 1") stays on one line.
* The Notation page's tables (``sd-symbol-table``): on a phone each row reads as a block, its symbol
  above its meaning, instead of three squeezed columns.
* The Instructors page's tables (``sd-whole-code``): a code name (a check, ``--jobs 2``) never breaks; a
  table wider than a phone scrolls in its own box. In every table a value with its unit stays on one line.
* The Results page's tables (``sd-stack-table``): on a phone each row reads as a card, each cell on its own
  line after its column's header, instead of five columns scrolled sideways.
* Headings (HTML only): a name such as "Decoding-OPT" never breaks at its hyphen; a Chinese heading
  breaks between its words, never inside a term of
  ``zh/terms.yml`` ("马尔可夫链"), with zero-width spaces around the terms and after a joining particle;
  reader_pages.css sets them ``keep-all`` and, on a phone, a size that fits most of them on a line or two.
* Chinese numbers (HTML only): a word with the number after it ("练习 3.1", "定理 1") or before it ("50 次",
  "第 7 章") stays on one line and whole (``sd-whole-unit``): a line breaks before "练习 3.1", never inside
  练习 nor at the space.
* Chinese links (HTML only): no space between a Chinese word and a link whose text is Chinese on that side
  ("由命题 1.1 得").
* Inline code (HTML only): a long name or path breaks after its dots, slashes and underscores, never inside a
  word, and an option ("--compare", "--GradingExecute.measurements=full") only after its dots; a line may break
  before code that starts with "-". A date ("2026-12-06") and a key chord ("Ctrl-C") never break at the hyphen.
* Inline formulas (HTML only): a formula and the punctuation that closes it (", which", "。") or the
  bracket that opens it stay on one line (``sd-math-punct``): a line never starts with an orphaned
  comma or full stop after a formula.
* Lab pages (``notebooks/labNN_*``, the student copies, which the book does not run): a banner
  first says that the page is the student copy and how to run it, and after each cell that
  calls an explorer (``token_explorer()``, ...) a still shows what the explorer draws at its
  first settings: the explorer itself is called at build time and the figure its own update
  function drew is shown as the book's figures are (``specdec_lite.plotting.book_html``). The
  notebooks themselves are not changed.
"""

from __future__ import annotations

import contextlib
import functools
import html
import importlib
import io
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from docutils import nodes

STATIC = Path(__file__).resolve().parent / "reader_pages_static"
_LAB = re.compile(r"^notebooks/lab\d\d_\w+$")
_EXPLORER_CALL = re.compile(r"^\s*(?P<name>[a-z_]+_explorer)\((?P<args>[^()]*)\)\s*$")
#: The modules of ``specdec_lite.widgets`` that hold an explorer.
_WIDGET_MODULES = (
    "token_explorer",
    "round_explorer",
    "rejections_explorer",
    "beat_speculative",
    "tradeoff_explorer",
    "batch_explorer",
    "lookahead_explorer",
    "real_models",
)
#: Break opportunities in a code name: after its dots, slashes, colons and underscores (a word stays whole).
_BREAK_AFTER = re.compile(r"([./:_]+)")
#: A file's extension (or a dotted name's short last part): the dot before it is no place to break.
_EXTENSION = re.compile(r"[A-Za-z0-9]{1,5}(?![\w.])")
#: A link in a table this short stays on one line.
_SHORT_LINK = 14
#: A table cell this short (columns: a Chinese character counts two), of at most two words ("Lab 1", "实验 1",
#: "0.42 s"), stays on one line.
_SHORT_CELL = 8
#: A table cell that is a value, with its unit if any ("18.8 min", "30–40 min", "2.38×", "—"), stays on one line.
_VALUE = re.compile(r"^[\d—–.,×≥≤<>~+\-]+(\s?\S{1,4})?$")
#: Punctuation that closes a formula's phrase, and brackets that open one, kept on the formula's line.
_CLOSING = re.compile(r"^[,.;:!?)\]’”，。；：、！？）」』]+")
_OPENING = re.compile(r"[(\[‘“（「『]+$")

_TEXT = {
    "en": {
        "banner": (
            "<p><b>This page is the lab's student copy</b>, shown as it is handed out: nothing on it "
            "has been run, and its exercises and answers are yours to write. To run it, open it in "
            "Colab with the badge below (its first cell installs <code>specdec_lite</code>), or "
            "download it with the download button at the top of the page and open it in Jupyter "
            "with <code>specdec_lite</code> installed (<code>pip install -r requirements.txt</code> "
            "in a clone of the repository). Under each explorer a still shows what it draws at its "
            "first settings; in Colab or Jupyter its controls redraw it.</p>"
        ),
        "still": "What <code>{call}</code> draws at its first settings (a still: run the lab to move its controls).",
        "pair": " Drawn with the offline model pair shipped with <code>specdec_lite</code>.",
        "last": " Its step slider is moved to the last step, so the still shows the whole round.",
        "settings": " Its settings: {settings}.",
    },
    "zh": {
        "banner": (
            "<p><b>本页是实验的学生版</b>，按发给学生时的样子显示：页面上的代码都没有运行过，练习和回答"
            "留给你来完成。要运行它，可以用下面的徽章在 Colab 中打开（第一个单元格会安装 "
            "<code>specdec_lite</code>），也可以用页面顶部的下载按钮下载，在装好 <code>specdec_lite</code> "
            "的 Jupyter 中打开（在仓库的克隆中运行 <code>pip install -r requirements.txt</code>）。"
            "每个探索器下面有一张静态图，显示它在初始设置下画出的内容；在 Colab 或 Jupyter 中拖动控件即可重画。</p>"
        ),
        "still": "<code>{call}</code> 在初始设置下画出的图（静态图：运行实验即可拖动控件）。",
        "pair": "所用的是 <code>specdec_lite</code> 自带的离线模型对。",
        "last": "其中的步骤滑块移到了最后一步，静态图显示的是完整的一轮。",
        "settings": "图中的设置：{settings}。",
    },
}


def _lang(app: Any) -> str:
    return "zh" if str(app.config.language or "").startswith("zh") else "en"


# --- code names and short links in tables ---------------------------------------------------------
def _code_chunks(code: str, after: re.Pattern[str] = _BREAK_AFTER) -> list[str]:
    """``code`` cut after its dots, slashes, colons and underscores (``after``), where a line may break (never
    inside a version or a number: "6.31.0" stays whole; nor before a file's extension: "grades.csv")."""
    cuts = [
        m.end()
        for m in after.finditer(code)
        if not (code[m.start() - 1 : m.start()].isdigit() and code[m.end() : m.end() + 1].isdigit())
        and not (m.group() == "." and _EXTENSION.match(code, m.end()))
    ]
    return [code[a:b] for a, b in zip([0, *cuts], [*cuts, len(code)], strict=True) if code[a:b]]


def _breakable_code(text: str) -> str:
    """A table's code, breakable after its parts; short code with spaces ("tv(p, q)", "u <= b") stays whole."""
    if len(text) <= _SHORT_WORDS:
        text = text.replace(" ", "\u00a0")
    out = "<wbr>".join(html.escape(chunk) for chunk in _code_chunks(text))
    return f'<code class="docutils literal notranslate sd-table-code"><span class="pre">{out}</span></code>'


def _tables(doctree: nodes.document) -> None:
    for table in list(doctree.findall(nodes.table)):
        for lit in list(table.findall(nodes.literal)):
            text = lit.astext()
            if isinstance(lit.parent, nodes.Element):
                lit.replace_self(nodes.raw("", _breakable_code(text), format="html"))
        for ref in table.findall(nodes.reference):
            if len(ref.astext()) <= _SHORT_LINK:
                ref["classes"].append("sd-nowrap")
        for entry in table.findall(nodes.entry):  # "Lab 1" in a squeezed column: not "Lab" over "1"
            text = entry.astext().strip()
            width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
            if text and (width <= _SHORT_CELL and text.count(" ") <= 1 or _VALUE.match(text)):
                entry["classes"].append("sd-nowrap")


def _label_html(node: nodes.Node) -> str:
    """A header cell as the HTML of a card's label: its words, and its code names still code (a code name is raw
    HTML by now: _tables marks its break points)."""
    if isinstance(node, nodes.Text):
        return html.escape(node.astext(), quote=False)
    if isinstance(node, nodes.raw):
        return node.astext()
    if isinstance(node, nodes.literal):
        return f'<code class="docutils literal notranslate">{html.escape(node.astext(), quote=False)}</code>'
    if isinstance(node, nodes.math):
        return f'<span class="math notranslate nohighlight">\\({html.escape(node.astext(), quote=False)}\\)</span>'
    return "".join(_label_html(child) for child in node.children).strip()


def _stacked_tables(doctree: nodes.document) -> None:
    """The Results and Instructors pages' tables read row by row on a phone (``sd-stack-table``): each cell
    starts with its column's header (``sd-cell-label``, shown only where the table is stacked, hidden from
    screen readers, which read the header row), so a row is a card of labelled lines, not squeezed columns."""
    for table in doctree.findall(nodes.table):
        table["classes"].append("sd-stack-table")
        head = next(table.findall(nodes.thead), None)
        body = next(table.findall(nodes.tbody), None)
        if head is None or body is None:
            continue
        first = next(head.findall(nodes.row), None)
        labels = [_label_html(entry) for entry in first.findall(nodes.entry)] if first is not None else []
        for row in body.findall(nodes.row):
            for label, entry in zip(labels, [e for e in row.children if isinstance(e, nodes.entry)], strict=False):
                if not label:
                    continue
                mark = nodes.raw("", f'<span class="sd-cell-label" aria-hidden="true">{label}</span>', format="html")
                target = entry[0] if entry.children and isinstance(entry[0], nodes.paragraph) else entry
                target.insert(0, mark)


@functools.cache
def _terms() -> tuple[str, ...]:
    """The Chinese terms of ``zh/terms.yml``: words a Chinese heading never breaks inside."""
    import yaml

    entries = yaml.safe_load((Path(__file__).resolve().parents[2] / "zh" / "terms.yml").read_text(encoding="utf-8"))
    return tuple(e["zh"] for e in entries if isinstance(e, dict) and e.get("zh"))


#: The hyphen of a name such as "Decoding-OPT": a line never breaks at it (a no-break hyphen takes its place).
_NAME_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Z]{2,}\b)")


def _headings(doctree: nodes.document, chinese: bool) -> None:
    """A heading keeps a name such as "Decoding-OPT" whole, and a Chinese one breaks between its words
    (``_i18n.chinese_breaks``, with reader_pages.css's keep-all): "把解码看作马尔可夫链" over two lines of a
    phone as "把解码看作" and "马尔可夫链", not "马尔可" and "夫链"."""
    from specdec_lite._i18n import chinese_breaks

    for title in doctree.findall(nodes.title):
        for text in list(title.findall(nodes.Text)):
            broken = _NAME_HYPHEN.sub("\u2011", text.astext())
            broken = chinese_breaks(broken, _terms()) if chinese else broken
            if broken != text.astext():
                text.parent.replace(text, nodes.Text(broken))


#: A short option or name in inline code ("--json", "--GradingExecute.measurements=full", "c = 0.05"): kept on
#: one line, so a phone never breaks it after its "--" or at its "=" (each fits a phone's line).
_SHORT_CODE = 36
#: Any inline code this short stays on one line ("no submission", "specdec_lite as sd"), its spaces included: all
#: the code shorter than ``_LONG_CODE``, which gets no break points of its own.
_SHORT_WORDS = 19


def _short_code(doctree: nodes.document) -> None:
    for lit in doctree.findall(nodes.literal):
        text = lit.astext()
        if len(text) <= _SHORT_CODE and (text.startswith("-") or "=" in text) or len(text) <= _SHORT_WORDS:
            lit["classes"].append("sd-whole")


def _break_before_options(doctree: nodes.document) -> None:
    """A line may break before inline code that starts with "-" ("学生。--student …"): by Unicode's rules no
    line breaks before a hyphen-minus, so the word before the code would otherwise move down with it."""
    for lit in list(doctree.findall(nodes.literal)):
        if not (lit.astext().startswith("-") and isinstance(lit.parent, nodes.Element)):
            continue
        at = lit.parent.index(lit)
        before = lit.parent[at - 1] if at > 0 else None
        if isinstance(before, nodes.Text) and _OPENING.search(before.astext()):
            continue  # "(--nthreads 1)": never "(" alone at a line's end
        lit.parent.insert(at, nodes.raw("", "<wbr>", format="html"))


#: Inline code this long or longer, with dots, slashes or underscores, gets break points after them.
_LONG_CODE = 20
#: In the text a name breaks between its parts ("sd.theory." over "expected_oracle_calls"), never after a part
#: shorter than this ("sd.", "zh/"), and inside a part ("expected_" over "oracle_calls") only if it is longer
#: than ``_LONG_PART``.
_SHORT_PART = 4
_LONG_PART = 22
_PATH_BREAK = re.compile(r"([./:]+)")


def _merge_short(parts: list[str]) -> list[str]:
    """A first or last part shorter than ``_SHORT_PART`` joined to its neighbour."""
    while len(parts) > 1 and len(parts[0]) < _SHORT_PART:
        parts[0:2] = [parts[0] + parts[1]]
    while len(parts) > 1 and len(parts[-1]) < _SHORT_PART:
        parts[-2:] = [parts[-2] + parts[-1]]
    return parts


def _prose_chunks(code: str) -> list[str]:
    """``code``'s break points in the text: after its dots, slashes and colons, a short first or last part kept
    with its neighbour; after the underscores of a part still long, likewise."""
    parts = _merge_short(_code_chunks(code, _PATH_BREAK))
    return [c for part in parts for c in (_merge_short(_code_chunks(part)) if len(part) > _LONG_PART else [part])]


def _prose_code(doctree: nodes.document) -> None:
    """Inline code in the text (tables have ``_tables``): a long name or path breaks between its parts
    (``_prose_chunks``), never inside a word ("…/lab03_rejections/" over "lab03_rejections.ipynb", not "l" over
    "ab03…"), and it starts on the line where the text leaves it instead of leaving that line half empty;
    an option or assignment breaks only there too ("--GradingExecute." over "measurements=full", never "--"
    over "compare" nor at its "=")."""
    for lit in list(doctree.findall(nodes.literal)):
        text = lit.astext()
        if not isinstance(lit.parent, nodes.Element):
            continue
        options = " " in text.strip() and re.search(r"(^|\s)-", text)
        if not (options or len(text) >= _LONG_CODE and _BREAK_AFTER.search(text)):
            continue
        tokens = []
        parts = re.split(r"(\s+)", text)
        for k, token in enumerate(parts):
            if not token or token.isspace():
                # never a word of one or two characters at a line's start ("--jobs" over "2", "x" over "= K"); after
                # one a line may break ("Copy of" over "lab03_rejections.ipynb", "x =" over '"all"')
                tiny = k + 1 < len(parts) and 0 < len(parts[k + 1]) <= 2
                tokens.append("\u00a0" if tiny and token else html.escape(token))
                continue
            chunks = _prose_chunks(token)
            if "-" in token or "=" in token:  # each chunk whole: no break after a hyphen or at "="
                tokens.append("<wbr>".join(f'<span class="pre sd-whole-token">{html.escape(c)}</span>' for c in chunks))
            else:
                tokens.append(f'<span class="pre">{"<wbr>".join(html.escape(c) for c in chunks)}</span>')
        kept = [c for c in lit["classes"] if c != "sd-whole"]
        classes = " ".join(["docutils", "literal", "notranslate", "sd-prose-code", *kept])
        # parent.replace, not replace_self: that would copy the classes onto the raw node, in a span of their own
        lit.parent.replace(lit, nodes.raw("", f'<code class="{classes}">{"".join(tokens)}</code>', format="html"))


_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
#: A number as the text writes it: "3", "3.1", "3.1–3.5" (a word joiner may follow the dash), "1(b)".
_NUMBER = "\\d(?:[\\d.,:\u2013\u2060]*\\d)?(?:\\([a-z]\\))?"
#: The Chinese words that name a numbered thing ("练习 3.1", "第 7 章", "图 3.2").
_NAMED = (
    "练习",
    "定理",
    "实验",
    "算法",
    "命题",
    "推论",
    "注记",
    "假设",
    "定义",
    "引理",
    "附录",
    "位置",
    "状态",
    "第",
    "图",
    "表",
)
#: Two-character words that follow a number and are kept whole with it ("7 状态", "5 分钟").
_AFTER_WORDS = ("状态", "分钟", "词元", "位置")
#: A number with the word that names it before it, or the first character of the word after it: "练习 3.1",
#: "第 7 章", "50 次" (a no-break space or a space between them); never a piece of a name ("int16 存储"). Only
#: a word of ``_NAMED`` is taken whole before a number: any other word keeps its own line breaks.
_AFTER = f"(?:{'|'.join(_AFTER_WORDS)}|[{_CJK}])"
_NUMBER_UNIT = re.compile(
    f"(?P<word>(?:{'|'.join(_NAMED)})[ \u00a0])?(?<![A-Za-z\\d_.,]){_NUMBER}(?![A-Za-z_])(?P<after>[ \u00a0]{_AFTER})?"
)
#: A date ("2026-12-06"), a key chord ("Ctrl-C") or a name such as "SHA-256", never broken at its hyphen; a numbered
#: thing ("Theorem 1(a)", "Exercise 3.4"), never broken before its number.
_NAMED_EN = "Theorem|Lemma|Corollary|Proposition|Algorithm|Definition|Assumption|Remark|Exercise|Figure|Chapter|Lab"
#: A name whose hyphen joins a number or capitals ("SHA-256", "pythia-410m", "Decoding-OPT", "TensorRT-LLM").
_HYPHEN_NAME = r"\b[A-Za-z0-9]+(?:-(?:[A-Z]{2,}|\d)[A-Za-z0-9]*)+\b"
_ASCII_HYPHEN_NAME = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+(?![A-Za-z0-9_-])")
#: A repository's name, "owner/name", with a hyphen in it ("vllm-project/vllm", "jaymody/speculative-sampling").
_REPOSITORY = re.compile(r"(?<![\w./-])[\w.-]*-[\w.-]*/[\w.-]+(?![\w/-])|(?<![\w./-])[\w.-]+/[\w.-]*-[\w.-]*(?![\w/-])")
_WHOLE_UNIT = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:Ctrl|Alt|Shift|Cmd)-\w\b|\b(?:{_NAMED_EN})[ \u00a0]{_NUMBER}(?![\w.]*\w)"
    rf"|{_HYPHEN_NAME}"
)
#: Nodes whose text is code, a formula or markup, never prose.
_NOT_PROSE = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.comment)


def _chinese_numbers(doctree: nodes.document) -> None:
    """Each Chinese word with its number (``_NUMBER_UNIT``) in one ``sd-whole-unit`` span, which never wraps."""
    _whole_units(doctree, _NUMBER_UNIT, lambda m: bool(m["word"] or m["after"]))


#: A formula this short ("1", "m \\le k", "n_0") names a count or a place: it stays with its measure word.
_SHORT_MATH = 10
_HAN_AFTER = re.compile(f"^[ \u00a0]+(?=[{_CJK}])")
_ORDINAL_BEFORE = re.compile("第[ \u00a0]*$")


def _chinese_math_numbers(doctree: nodes.document) -> None:
    """A short formula or a computed number with the Chinese word around it: "第 $m \\le k$ 阶段", "持有 $1$ 个",
    "{glue} 个位置" never break between them: a computed number is text, and a no-break space holds it to its word;
    a formula is a box a browser may break beside, so the formula, the ordinal 第 before it and the character after
    it go in one ``sd-whole-unit`` span."""
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.inline)))):
        parent = node.parent
        if isinstance(node, nodes.inline):
            if "pasted-text" not in node["classes"] or not node.astext()[-1:].isdigit():
                continue
        elif len(node.astext().strip()) > _SHORT_MATH:
            continue
        if not isinstance(parent, nodes.Element):
            continue
        at = parent.index(node)
        after = parent[at + 1] if at + 1 < len(parent) else None
        before = parent[at - 1] if at else None
        word_after = isinstance(after, nodes.Text) and _HAN_AFTER.match(after.astext())
        ordinal = isinstance(before, nodes.Text) and _ORDINAL_BEFORE.search(before.astext())
        if isinstance(node, nodes.inline):
            if word_after:
                parent[at + 1] = nodes.Text(_HAN_AFTER.sub("\u00a0", after.astext()))
            continue
        if not (word_after or ordinal):
            continue
        unit = nodes.inline(classes=["sd-whole-unit"])
        if ordinal:
            parent[at - 1] = nodes.Text(before.astext()[: ordinal.start()])
            unit += nodes.Text("第\u00a0")
        if word_after:
            rest = _HAN_AFTER.sub("", after.astext())
            parent[at + 1] = nodes.Text(rest[1:])
        parent.remove(node)
        unit += node
        if word_after:
            unit += nodes.Text("\u00a0" + rest[0])
        parent.insert(at, unit)


def _whole_units(
    doctree: nodes.document, pattern: re.Pattern[str], keep: Any = bool, inside: type[nodes.Node] = nodes.Node
) -> None:
    """Each match of ``pattern`` in the text (for which ``keep(match)``; only in an ``inside`` node) in one
    ``sd-whole-unit`` span, which never wraps."""
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or any(isinstance(n, _NOT_PROSE) for n in _ancestors(parent)):
            continue
        if not any(isinstance(n, inside) for n in _ancestors(parent)):
            continue
        source, parts, at = text.astext(), [], 0
        for m in pattern.finditer(source):
            if not keep(m):
                continue
            parts += [nodes.Text(source[at : m.start()]), nodes.inline("", m[0], classes=["sd-whole-unit"])]
            at = m.end()
        if parts:  # by identity: docutils compares Text nodes by their text
            index = next(i for i, child in enumerate(parent.children) if child is text)
            parent[index : index + 1] = [p for p in [*parts, nodes.Text(source[at:])] if p.astext()]


def _openings_into_units(doctree: nodes.document) -> None:
    """An opening bracket right before a never-wrapping unit goes into it: no line ends with "（" or "("."""
    for unit in list(doctree.findall(nodes.inline)):
        parent = unit.parent
        if "sd-whole-unit" not in unit["classes"] or not isinstance(parent, nodes.Element):
            continue
        at = next(i for i, child in enumerate(parent.children) if child is unit)
        before = parent[at - 1] if at else None
        opening = _OPENING.search(before.astext()) if isinstance(before, nodes.Text) else None
        if opening:
            parent[at - 1] = nodes.Text(before.astext()[: opening.start()])
            unit.insert(0, nodes.Text(opening.group()))


def _chinese_link_spaces(doctree: nodes.document) -> None:
    """No space between a Chinese word and a link whose text begins (or, after it, ends) with a Chinese character:
    "由命题 1.1 得", not "由 命题 1.1 得". The space beside a Latin word or a number stays ("定理 1 给出")."""
    cjk = re.compile(f"[{_CJK}]")
    for ref in list(doctree.findall(nodes.reference)):
        parent, text = ref.parent, ref.astext()
        if parent is None or not text:
            continue
        at = parent.index(ref)
        before = parent[at - 1] if at > 0 else None
        if isinstance(before, nodes.Text) and cjk.match(text[0]) and re.search(f"[{_CJK}] $", before.astext()):
            parent[at - 1] = nodes.Text(before.astext()[:-1])
        after = parent[at + 1] if at + 1 < len(parent) else None
        if isinstance(after, nodes.Text) and cjk.match(text[-1]) and re.match(f" [{_CJK}]", after.astext()):
            parent[at + 1] = nodes.Text(after.astext()[1:])


def _ancestors(node: nodes.Node | None) -> Any:
    while node is not None:
        yield node
        node = node.parent


#: A word joined to a one-letter formula by a hyphen ("top-$k$", "$m$-th"): never broken at the hyphen.
_HYPHEN_BEFORE = re.compile(r"[A-Za-z0-9/(]*[A-Za-z]-$")
_HYPHEN_AFTER = re.compile(r"^-[A-Za-z]+[),.;:]*")
_RUN_AFTER = re.compile(r"^[A-Za-z0-9/),.;:-]*")
_SHORT_SYMBOL = 4


def _hyphenated_math(doctree: nodes.document) -> None:
    """ "top-$k$/top-$p$", "min-$p$", "$m$-th": the words, the formulas and the punctuation between them in one
    ``sd-whole-unit`` span (a browser would break after the hyphen, beside the formula's box)."""

    def short(node: nodes.Node | None) -> bool:
        if isinstance(node, nodes.inline) and "sd-whole-unit" in node["classes"] and node.children:
            node = node[0]  # a formula already kept with its Chinese measure word
        return isinstance(node, nodes.math) and len(node.astext().strip()) <= _SHORT_SYMBOL

    for math in list(doctree.findall(nodes.math)):
        if not short(math) or not isinstance(math.parent, nodes.Element):
            continue
        if "sd-whole-unit" in math.parent["classes"]:  # already kept with its Chinese measure word
            if math.parent.index(math) != 0:
                continue
            math = math.parent
        parent = math.parent
        if any(isinstance(a, nodes.inline) and "sd-whole-unit" in a["classes"] for a in _ancestors(parent)):
            continue  # already inside a unit ("top-k/top-p")
        at = parent.index(math)
        before = parent[at - 1] if at else None
        after = parent[at + 1] if at + 1 < len(parent) else None
        head = _HYPHEN_BEFORE.search(before.astext()) if isinstance(before, nodes.Text) else None
        tail = _HYPHEN_AFTER.match(after.astext()) if isinstance(after, nodes.Text) else None
        if not (head or tail):
            continue
        unit = nodes.inline(classes=["sd-whole-unit"])
        if head:
            parent[at - 1] = nodes.Text(before.astext()[: head.start()])
            unit += nodes.Text(head.group())
        del parent[at]
        unit += math
        while at < len(parent) and isinstance(parent[at], nodes.Text):  # "/top-" $p$, then "," or "-th"
            text = parent[at].astext()
            run = _RUN_AFTER.match(text).group()
            if not run:
                break
            parent[at] = nodes.Text(text[len(run) :])
            unit += nodes.Text(run)
            follows = parent[at + 1] if at + 1 < len(parent) else None
            if run != text or not run.endswith("-") or not short(follows):
                break
            del parent[at : at + 2]  # by position: docutils compares Text nodes by their text
            unit += follows
        parent.insert(at, unit)


def _math_punctuation(doctree: nodes.document) -> None:
    """Wrap each inline formula with its closing punctuation and opening bracket in one ``sd-math-punct``."""
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None or isinstance(parent, nodes.inline) and "sd-math-punct" in parent["classes"]:
            continue
        at = parent.index(math)
        after = parent[at + 1] if at + 1 < len(parent) else None
        before = parent[at - 1] if at > 0 else None
        close = _CLOSING.match(after.astext()) if isinstance(after, nodes.Text) else None
        open_ = _OPENING.search(before.astext()) if isinstance(before, nodes.Text) else None
        if not close and not open_:
            continue
        # by position: docutils compares Text nodes by their text, so two equal ones (". If ") are one to index()
        group = nodes.inline(classes=["sd-math-punct"])
        if close:
            parent[at + 1] = nodes.Text(after.astext()[close.end() :])
        if open_:
            parent[at - 1] = nodes.Text(before.astext()[: open_.start()])
            group += nodes.Text(open_.group())
        group += math
        if close:
            group += nodes.Text(close.group())
        parent[at] = group


# --- lab pages ------------------------------------------------------------------------------------
def _explorer(name: str) -> Any:
    for module in _WIDGET_MODULES:
        mod = importlib.import_module(f"specdec_lite.widgets.{module}")
        if callable(getattr(mod, name, None)):
            return getattr(mod, name)
    raise LookupError(f"no explorer named {name} in specdec_lite.widgets")


def _to_last_step(box: Any) -> bool:
    """Move an explorer's step slider (the round explorer's ``step``) to its last step; whether it had one."""
    import ipywidgets as w

    from specdec_lite._i18n import _

    todo = [box]
    while todo:
        widget = todo.pop()
        todo.extend(getattr(widget, "children", ()))
        if isinstance(widget, w.IntSlider) and widget.description == _("step"):
            widget.value = widget.max
            return True
    return False


def explorer_settings(box: Any, sep: str = ", ") -> str:
    """The settings an explorer's controls show, in the page's language ("draft quality = 0.5, V = 5"): each
    labelled slider, menu or switch with its value (a menu's label, not its key)."""
    import ipywidgets as w

    out, todo = [], [box]
    while todo:
        widget = todo.pop(0)
        todo.extend(getattr(widget, "children", ()))
        kinds = (w.IntSlider, w.FloatSlider, w.FloatLogSlider, w.Dropdown, w.ToggleButtons, w.RadioButtons, w.IntText)
        label = str(getattr(widget, "description", "") or "").rstrip(":：").strip()
        if not isinstance(widget, kinds) or not label:
            continue
        value = widget.label if isinstance(widget, w.Dropdown | w.ToggleButtons | w.RadioButtons) else widget.value
        out.append(f"{label} = {value:g}" if isinstance(value, float) else f"{label} = {value}")
    return sep.join(out)


def explorer_still(name: str, language: str = "en") -> tuple[str, bool, bool, str]:
    """HTML of what explorer ``name`` draws when a lab calls it, whether it used the offline pair, whether
    its step slider was moved to the last step (the round explorer's still shows the whole round, not its
    first step, where the score, test and output rows are still empty), and the settings its controls show.

    The explorer is called as the lab calls it (no arguments; Lab 8's ``generation_explorer``
    gets the offline pair shipped with the package and that pair's first prompt, as the lab's
    ``load_pair()`` does without a hub). The figure its update function draws is caught where
    ``widgets.core.explorer`` shows it; an explorer that draws HTML into its last widget (the round
    explorer) gives that HTML.
    """
    from specdec_lite import _i18n
    from specdec_lite.plotting import book_html
    from specdec_lite.widgets import core

    shown: list[Any] = []
    real_show = core.show
    before = os.environ.get(_i18n.ENV)
    os.environ[_i18n.ENV] = "zh_CN" if language == "zh" else "en"
    core.show = shown.append
    try:
        kwargs: dict[str, Any] = {}
        offline = name == "generation_explorer"
        if offline:
            from specdec_lite.llm import load_pair

            with contextlib.redirect_stderr(io.StringIO()):
                kwargs["pair"] = load_pair(hub=False, verbose=False, progress=False)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            box = _explorer(name)(**kwargs)  # quiet: clear_output's and the model loader's lines
            stepped = _to_last_step(box)
            settings = explorer_settings(box, "，" if language == "zh" else ", ")
    finally:
        core.show = real_show
        if before is None:
            os.environ.pop(_i18n.ENV, None)
        else:
            os.environ[_i18n.ENV] = before
    if shown:
        return book_html(shown[-1]), offline, stepped, settings
    value = getattr(box.children[-1], "value", None)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name}() drew neither a figure nor HTML")
    return value, offline, stepped, settings


def _cell_source(cell: nodes.Element) -> str:
    for block in cell.findall(nodes.literal_block):
        return block.astext()
    return ""


def _lab_page(app: Any, doctree: nodes.document) -> None:
    text = _TEXT[_lang(app)]
    sections = list(doctree.findall(nodes.section))
    if sections:
        title = sections[0].next_node(nodes.title)
        at = sections[0].index(title) + 1 if title is not None and title.parent is sections[0] else 0
        banner = nodes.raw("", f'<div class="sd-lab-banner" role="note">{text["banner"]}</div>', format="html")
        sections[0].insert(at, banner)
    cache: dict[str, tuple[str, bool, bool, str]] = app.env.__dict__.setdefault("_sd_explorer_stills", {})
    for cell in list(doctree.findall(nodes.container)):
        if "cell" not in cell.get("classes", []):
            continue
        match = _EXPLORER_CALL.match(_cell_source(cell))
        if not match:
            continue
        key = f"{match['name']}:{_lang(app)}"
        if key not in cache:
            cache[key] = explorer_still(match["name"], _lang(app))
        body, offline, stepped, settings = cache[key]
        call = html.escape(f"{match['name']}({match['args']})")
        note = text["still"].format(call=call) + (text["pair"] if offline else "") + (text["last"] if stepped else "")
        if settings:
            note += text["settings"].format(settings=html.escape(settings))
        still = nodes.raw(
            "", f'<div class="sd-explorer-still"><p class="sd-still-note">{note}</p>{body}</div>', format="html"
        )
        cell.parent.insert(cell.parent.index(cell) + 1, still)


def _resolved(app: Any, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    _tables(doctree)
    if docname.endswith("notation"):  # its tables of symbols: one row over two lines on a phone
        for table in doctree.findall(nodes.table):
            table["classes"].append("sd-symbol-table")
    if docname.endswith("book/instructors"):  # its tables of labs and timings: each code name whole
        for table in doctree.findall(nodes.table):
            table["classes"].append("sd-whole-code")
    if docname.endswith(("book/results", "book/instructors")):  # tables of results, timings: a card per row on a phone
        _stacked_tables(doctree)
    if _lang(app) == "zh":
        _chinese_math_numbers(doctree)
    _hyphenated_math(doctree)
    _math_punctuation(doctree)
    _short_code(doctree)
    _break_before_options(doctree)
    _prose_code(doctree)
    _whole_units(doctree, _WHOLE_UNIT)
    # a link's text with hyphens is a name ("vllm-project/vllm", "ml-explore"): never broken at a hyphen
    _whole_units(doctree, _ASCII_HYPHEN_NAME, lambda m: True, inside=nodes.reference)
    _whole_units(doctree, _REPOSITORY)
    if _lang(app) == "zh":
        _chinese_link_spaces(doctree)
        _chinese_numbers(doctree)
        _whole_units(doctree, _ASCII_HYPHEN_NAME)  # in Chinese text every such word is a name ("ml-explore")
    _openings_into_units(doctree)
    _headings(doctree, chinese=_lang(app) == "zh")
    if _LAB.match(docname):
        _lab_page(app, doctree)


def _add_static(app: Any) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _add_static)
    app.connect("doctree-resolved", _resolved)
    app.add_css_file("reader_pages.css", priority=910)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
