"""The book in two languages: the English edition at the site's root, the Chinese one under ``zh/``.

* Every page's header links to the same page in the other edition (``edition-switch.html``, an
  ``<a>`` with ``hreflang`` and ``lang``, styled by ``editions_static/editions.css``), and its
  ``<head>`` names it as an alternate (a lab to its Chinese lab, ``zh/notebooks/labNN_*``). A page
  of one edition only links to the other edition's closest page: the Chinese page that lists the
  labs to the first English lab, the Chinese terminology table to the English glossary.
* ``{en-doc}`text <../notebooks/lab01_markov_chains>``` (Chinese pages) links to an English page;
  the target is written as the English page would write it.
* ``:::{zh-caption} fig-name`` (Chinese pages) gives a figure made by a code cell its Chinese
  caption. The code cell keeps its English caption in its metadata: the cell is identical in both
  editions.
* Each edition executes its code cells in its own language: the build sets ``SPECDEC_LITE_LANGUAGE``
  (``specdec_lite._i18n``) for its kernels, ``zh_CN`` in the Chinese build and ``en`` in the English
  one, so every figure, printed line and glued sentence of a Chinese page comes from a Chinese run.
  Each edition has its own jupyter-cache (jupyter-cache hashes code and metadata, not the language);
  a file in the cache names its language, and a cache of the other language is emptied.
  Chapter 8's live timings (and its seeded runs of the models) are made once: the English run records
  them, the Chinese run replays them (``SPECDEC_LITE_MEASUREMENTS``, ``specdec_lite._measurements``), so
  both editions show the same numbers.
* Chrome in Chinese: sphinx-togglebutton's hints, sphinx-proof's "Proof." and index, the theme's search box,
  the messages Sphinx's and the theme's Chinese catalogues lack (:data:`CHROME_ZH`) and the labels
  the theme's templates write in English (:data:`LABELS_ZH`, in the written pages).
* Chinese search: jieba (which Sphinx's Chinese index uses) gets the terms of ``zh/terms.yml`` as
  words, and ``editions_static/zh_search.js`` cuts a query's Chinese into the index's words.
* Chinese emphasis: CommonMark opens and closes ``**`` only at "flanking" delimiter runs, which fail
  next to full-width punctuation (``**平均是对前缀取的，**而不是`` shows its asterisks). On Chinese
  pages the MyST parser gets :func:`cjk_emphasis_plugin`, the CJK-friendly rule for ``*`` runs.
* Package code on a Chinese page: ``literalinclude`` shows its docstrings and comments in Chinese, from the
  package's gettext catalogue (``specdec_lite._i18n.translate_code``); the code is shown as written, and a text
  the catalogue lacks stops the build. A code cell shows its docstrings and the strings of its ``_()`` calls in
  Chinese (its comments are written in Chinese), and runs as written: the English page's program.
* When the English HTML build ends, it builds ``zh/`` (same warning flags) with its own
  jupyter-cache, and copies it into ``zh/`` of its output: ``jupyter-book build .`` builds both.
  ``SPECDEC_BOOK_EDITIONS=en`` skips the Chinese build (a quicker build while writing English).
"""

from __future__ import annotations

import functools
import gettext
import importlib
import os
import posixpath
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.directives.code import LiteralInclude as _LiteralInclude
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ZH_DIR = ROOT / "zh"
#: Pages of one edition only, and where their switch leads in the other edition.
EN_ONLY_TARGET = "book/labs"  # an English page without a Chinese twin -> the Chinese list of labs
ZH_ONLY = {"book/labs": "notebooks/lab01_markov_chains", "book/terms": "book/glossary"}


def _is_zh(app: Any) -> bool:
    return str(app.config.language or "").lower().startswith("zh")


def _counterpart(app: Any, docname: str) -> tuple[str, str, str, str]:
    """(href, text, lang, hreflang) of the link from ``docname`` to the other edition."""
    up = "../" * docname.count("/")
    if _is_zh(app):
        target = ZH_ONLY.get(docname, docname)
        return f"../{up}{target}.html", "English", "en", "en"
    here = any((ZH_DIR / f"{docname}{suffix}").is_file() for suffix in (".md", ".ipynb"))
    target = docname if here else EN_ONLY_TARGET
    return f"{up}zh/{target}.html", "中文", "zh-CN", "zh-CN"


#: MyST-NB's toggles of hidden cells (``Show code cell {type}``), in Chinese.
TOGGLES_ZH = {
    f"{verb} code cell {kind}": f"{zh_verb}{zh_kind}"
    for verb, zh_verb in (("Show", "显示"), ("Hide", "隐藏"))
    for kind, zh_kind in (("source", "代码"), ("outputs", "输出"), ("output", "输出"), ("content", "代码和输出"))
}


#: Chrome that Sphinx, the theme and the extensions write in English on a Chinese page: messages that
#: Sphinx's and the themes' Chinese catalogues lack (gettext msgids, as their templates write them).
CHROME_ZH = {
    "Link to this heading": "链接到此标题",
    "Link to this term": "链接到此术语",
    "Link to this image": "链接到此图片",
    "Link to this table": "链接到此表格",
    "Link to this code": "链接到此代码",
    "Link to this definition": "链接到此定义",
    "© Copyright %(copyright)s.": "© 版权所有 %(copyright)s。",
    "Color mode": "颜色模式",
    "Light": "浅色",
    "Dark": "深色",
    "System Settings": "跟随系统",
}
#: Labels the themes' templates write in English with no message to translate (attribute, English, Chinese).
LABELS_ZH = (
    ("title", "Toggle primary sidebar", "切换主侧边栏"),
    ("title", "Toggle secondary sidebar", "切换次侧边栏"),
    ("aria-label", "Main", "主导航"),
    ("aria-label", "Page", "本页"),
)
#: Settings of the extensions that hold their English text (sphinx-togglebutton's hints, the search box).
SETTINGS_ZH = {"togglebutton_hint": "点击显示", "togglebutton_hint_hide": "点击隐藏"}
SEARCH_BAR_ZH = "搜索本书……"
#: The title of sphinx-proof's index of results (its own page, and a chapter of the PDF).
PROOF_INDEX_ZH = "定理与定义索引"
#: How sphinx-proof opens a proof ("Proof. " before its first line), and the Chinese for it.
PROOF_LEAD, PROOF_LEAD_ZH = "Proof. ", "证明："


class ChromeMessages(gettext.NullTranslations):
    """The last fallback of Sphinx's ``sphinx`` catalogue on Chinese pages: :data:`CHROME_ZH`."""

    def __init__(self, messages: dict[str, str]) -> None:
        super().__init__()
        self.messages = messages

    def gettext(self, message: str) -> str:
        return self.messages.get(message) or super().gettext(message)


def _zh_chrome(app: Any, config: Any) -> None:
    """The Chinese build's chrome (the English build keeps the extensions' defaults)."""
    if not _is_zh(app):
        return
    for name, value in SETTINGS_ZH.items():
        setattr(config, name, value)
    config.html_theme_options = {**(config.html_theme_options or {}), "search_bar_text": SEARCH_BAR_ZH}
    translator = getattr(app, "translator", None)
    if translator is not None:
        translator.add_fallback(ChromeMessages(CHROME_ZH))
    from sphinx_proof.domain import ProofIndex

    ProofIndex.localname = PROOF_INDEX_ZH  # a class attribute, in English: this process builds the Chinese edition


def translate_labels(html: str) -> str:
    """A written Chinese page with the themes' English labels of :data:`LABELS_ZH` in Chinese."""
    for attribute, english, chinese in LABELS_ZH:
        html = html.replace(f' {attribute}="{english}"', f' {attribute}="{chinese}"')
    return html


def _zh_written_pages(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html" or not _is_zh(app):
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = translate_labels(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def translate_proofs(doctree: nodes.document) -> int:
    """A Chinese page's proofs open with "证明：" where sphinx-proof wrote "Proof. "; returns how many."""
    from sphinx_proof.nodes import proof_node

    done = 0
    for proof in doctree.findall(proof_node):
        first = next(proof.findall(nodes.paragraph), None)
        lead = first[0] if first is not None and first.children else None
        if isinstance(lead, nodes.Text) and str(lead).startswith(PROOF_LEAD):
            first.replace(lead, nodes.Text(PROOF_LEAD_ZH + str(lead)[len(PROOF_LEAD) :].lstrip()))
            done += 1
    return done


def translate_toggles(body: str) -> str:
    """A Chinese page's body with MyST-NB's English toggle prompts in Chinese."""
    prompt = re.compile(r">((?:Show|Hide) code cell (?:source|outputs|output|content))<")
    return prompt.sub(lambda m: f">{TOGGLES_ZH[m[1]]}<", body)


def _page_context(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if doctree is None and pagename not in app.env.all_docs:
        return
    if _is_zh(app) and "body" in context:
        context["body"] = join_cjk_html(translate_toggles(context["body"]))
    href, text, lang, hreflang = _counterpart(app, pagename)
    context["edition_switch"] = {"href": href, "text": text, "lang": lang, "hreflang": hreflang}
    context["metatags"] = context.get("metatags", "") + (
        f'\n    <link rel="alternate" hreflang="{hreflang}" href="{href}" />'
    )


class EnglishDoc:
    """The role ``{en-doc}`text <target>```: a link from a Chinese page to an English page."""

    def __call__(self, name, rawtext, text, lineno, inliner, options=None, content=None):  # noqa: ANN001
        env = inliner.document.settings.env
        if "<" not in text or not text.endswith(">"):
            msg = inliner.reporter.error(f"en-doc needs 'text <target>': {text!r}", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        label, target = text[:-1].rsplit("<", 1)
        doc = posixpath.normpath(posixpath.join(posixpath.dirname(env.docname), target.strip()))
        if not (ROOT / f"{doc}.ipynb").is_file() and not (ROOT / f"{doc}.md").is_file():
            msg = inliner.reporter.error(f"en-doc: no English page {doc}", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        href = "../" * (env.docname.count("/") + 1) + f"{doc}.html"
        node = nodes.reference(rawtext, label.strip(), refuri=href, hreflang="en")
        node["classes"].append("en-doc")
        return [node], []


class TermsTable(Directive):
    """``{zh-terms}``: the terms of ``zh/terms.yml`` as a table (English, Chinese, variants not used);
    ``{zh-terms} phrases``: its recurring phrases (English, the one Chinese wording, wordings not used)."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        import yaml

        rows = yaml.safe_load((ZH_DIR / "terms.yml").read_text(encoding="utf-8"))
        self.state.document.settings.env.note_dependency(str(ZH_DIR / "terms.yml"))
        phrases = self.arguments[:1] == ["phrases"]
        head = ["English", "中文", "不用的说法" if phrases else "不用的译法"]
        body = [
            [t["en"], t["zh"], "、".join(t.get("avoid", [])) or "—"] for t in rows if bool(t.get("phrase")) == phrases
        ]
        table, group = nodes.table(), nodes.tgroup(cols=3)
        table += group
        group.extend(nodes.colspec(colwidth=w) for w in (3, 2, 3))
        thead, tbody = nodes.thead(), nodes.tbody()
        for container, lines in ((thead, [head]), (tbody, body)):
            for cells in lines:
                row = nodes.row()
                for cell in cells:
                    entry = nodes.entry()
                    entry += nodes.paragraph(text=cell)
                    row += entry
                container += row
        group += thead
        group += tbody
        return [table]


class zh_caption(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """The Chinese caption of a figure, until it replaces the English one."""


class ZhCaption(Directive):
    """``:::{zh-caption} fig-name`` with the caption as content and ``:alt:`` for the image's text alternative."""

    required_arguments = 1
    has_content = True
    option_spec = {"alt": lambda text: " ".join(text.split())}

    def run(self) -> list[nodes.Node]:
        node = zh_caption(figure=self.arguments[0], alt=self.options.get("alt"))
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class LiteralInclude(_LiteralInclude):
    """``literalinclude``; on a Chinese page, the included code's docstrings and comments in Chinese."""

    def run(self) -> list[nodes.Node]:
        result = super().run()
        if not _is_zh(self.env.app):
            return result
        for block in (n for node in result for n in node.findall(nodes.literal_block)):
            translate_block(block, f"{self.env.docname}: literalinclude {self.arguments[0]}")
        return result


def translate_block(block: nodes.literal_block, where: str, cell: bool = False) -> None:
    """The code of ``block`` in Chinese (``specdec_lite._i18n.translate_code``); a text without it stops the build."""
    from specdec_lite._i18n import translate_code

    try:
        code = translate_code(block.astext(), cell=cell)
    except KeyError as missing:
        raise ExtensionError(f"{where}: no Chinese in specdec_lite's catalogue for {missing.args[0]}") from None
    block.rawsource = code
    block.children = [nodes.Text(code)]


def translate_cells(app: Any, doctree: nodes.document) -> None:
    """A Chinese page's code cells show their docstrings and the strings of their ``_()`` calls in Chinese.

    The cells run as written (the English page's program); the shown code prints the same, as gettext gives a
    message it lacks back unchanged. A cell in IPython's syntax (a magic) is shown as written.
    """
    inputs = (n for n in doctree.findall(nodes.container) if n.get("nb_element") == "cell_code_source")
    for source in list(inputs):
        for block in source.findall(nodes.literal_block):
            try:
                translate_block(block, f"{app.env.docname}: the code cell at line {source.line}", cell=True)
            except SyntaxError:
                continue


_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"


_HTML_BREAK = re.compile(f"(?<=[{_CJK}])((?:<[^<>]*>)*)[ \\t]*\\n[ \\t]*((?:<[^<>]*>)*)(?=[{_CJK}])")
#: Full-width punctuation, with the curly quotes Chinese text uses (they are ambiguous-width characters).
FULL_WIDTH_PUNCT = (
    "\u3001-\u3011\u3014-\u301f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u2018\u2019\u201c\u201d"
)
_INLINE_END = r"(?:</(?:strong|em|a|span|code)>)*"
# a break after full-width punctuation, whatever follows (a formula, Latin text, a link), and one before it
_PUNCT_BREAK = re.compile(f"(?<=[{FULL_WIDTH_PUNCT}])({_INLINE_END})[ \\t]*\\n[ \\t]*")
_BREAK_PUNCT = re.compile(f"([^\\s>]|</span>|</a>|</em>)[ \\t]*\\n[ \\t]*(?=(?:<(?:strong|em)>)?[{FULL_WIDTH_PUNCT}])")
_LITERAL_HTML = re.compile(r"(<(pre|script|style|textarea)\b.*?</\2>)", re.S)


def join_cjk_html(body: str) -> str:
    """A page body with the source line breaks between two Chinese characters removed, across inline
    tags too (``的分布，\\n<strong>预测``), and those after or before full-width punctuation whatever is on
    the other side (``，\\n<span class="math">``): a break shows as a space. Code, scripts and styles keep theirs."""
    parts = _LITERAL_HTML.split(body)
    out = []
    for i, part in enumerate(parts):
        # split() with two groups yields: text, whole literal, its tag name, text, ...
        if i % 3 == 0:
            part = _HTML_BREAK.sub(r"\1\2", part)
            out.append(_BREAK_PUNCT.sub(r"\1", _PUNCT_BREAK.sub(r"\1", part)))
        elif i % 3 == 1:
            out.append(part)
    return "".join(out)


# --- Chinese emphasis -----------------------------------------------------------------------------
# CommonMark (spec 0.31.2, "left-flanking delimiter run") lets ``**`` close only when the character inside
# is not punctuation or the one outside is white space or punctuation: ``**自动规则。**审核`` stays literal
# (commonmark/commonmark-spec#650 lists the Chinese cases). The rule below is the one of tats-u's
# markdown-it-cjk-friendly plugin (github.com/tats-u/markdown-cjk-friendly, packages/markdown-it-cjk-friendly/
# src/index.ts, its ``scanDelims``): for ``*`` runs, a run next to a CJK character (East Asian Width wide,
# full-width or half-width, emoji excepted) may both open and close; everything else is CommonMark's rule.
# Simplified here: no variation selectors, and ambiguous-width characters (“ ” ‘ ’) count as not CJK, as that
# plugin counts them unless a variation selector follows. markdown-it-py, unlike markdown-it, creates its
# inline state class directly, so the plugin replaces the ``emphasis`` rule rather than the state class.


def is_cjk(char: str) -> bool:
    """A wide, full-width or half-width character (Chinese, Japanese, Korean and their punctuation)."""
    code = ord(char)
    if code < 0x1100 or 0x1F000 <= code <= 0x1FAFF:  # below Hangul Jamo; emoji
        return False
    return unicodedata.east_asian_width(char) in ("W", "F", "H")


def scan_cjk_delims(state: Any, start: int, can_split_word: bool) -> Any:
    """``StateInline.scanDelims`` with the CJK-friendly flanking rule for ``*`` (``_`` keeps CommonMark's)."""
    from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace
    from markdown_it.rules_inline.state_inline import Scanned

    if not can_split_word:
        return state.scanDelims(start, can_split_word)
    src, end, marker = state.src, state.posMax, state.src[start]
    pos = start
    while pos < end and src[pos] == marker:
        pos += 1
    last = src[start - 1] if start > 0 else " "  # the line's ends count as white space
    after = src[pos] if pos < end else " "
    last_space, next_space = isWhiteSpace(ord(last)), isWhiteSpace(ord(after))
    if last_space or next_space:
        return Scanned(not next_space, not last_space, pos - start)
    last_punct = isMdAsciiPunct(ord(last)) or isPunctChar(last)
    next_punct = isMdAsciiPunct(ord(after)) or isPunctChar(after)
    cjk = is_cjk(last) or is_cjk(after)
    return Scanned(last_punct or cjk or not next_punct, next_punct or cjk or not last_punct, pos - start)


def _cjk_emphasis(state: Any, silent: bool) -> bool:
    """markdown-it-py's ``emphasis`` tokenizer with :func:`scan_cjk_delims` in place of ``scanDelims``."""
    from markdown_it.rules_inline.state_inline import Delimiter

    marker = state.src[state.pos]
    if silent or marker not in ("_", "*"):
        return False
    scanned = scan_cjk_delims(state, state.pos, marker == "*")
    for _ in range(scanned.length):
        token = state.push("text", "", 0)
        token.content = marker
        state.delimiters.append(
            Delimiter(ord(marker), scanned.length, len(state.tokens) - 1, -1, scanned.can_open, scanned.can_close)
        )
    state.pos += scanned.length
    return True


def cjk_emphasis_plugin(md: Any) -> None:
    """A markdown-it-py plugin: ``*`` and ``**`` next to Chinese punctuation open and close emphasis."""
    md.inline.ruler.at("emphasis", _cjk_emphasis)


#: Where MyST and MyST-NB call ``create_md_parser`` (each imported the name): the Chinese build wraps them all.
MD_PARSER_USERS = (
    "myst_parser.parsers.mdit",
    "myst_parser.parsers.sphinx_",
    "myst_parser.parsers.docutils_",
    "myst_nb.sphinx_",
    "myst_nb.docutils_",
    "myst_nb.core.render",
    "myst_nb.core.read",
)


def use_cjk_emphasis() -> list[str]:
    """Give every MyST parser of this process :func:`cjk_emphasis_plugin`; returns the modules changed.

    myst-parser 3 has no setting for markdown-it plugins, so its ``create_md_parser`` is wrapped.
    """
    from myst_parser.parsers import mdit

    original = getattr(mdit.create_md_parser, "__wrapped__", mdit.create_md_parser)

    @functools.wraps(original)
    def create_md_parser(config: Any, renderer: Any) -> Any:
        return original(config, renderer).use(cjk_emphasis_plugin)

    changed = []
    for name in MD_PARSER_USERS:
        module = importlib.import_module(name)
        if getattr(module, "create_md_parser", None) is original:
            module.create_md_parser = create_md_parser
            changed.append(name)
    return changed


def _zh_emphasis(app: Any, config: Any) -> None:
    if _is_zh(app):
        use_cjk_emphasis()


def _doctree_read(app: Any, doctree: nodes.document) -> None:
    _apply_captions(app, doctree)
    if _is_zh(app):
        translate_proofs(doctree)
        translate_cells(app, doctree)


def _apply_captions(app: Any, doctree: nodes.document) -> None:
    figures = {name: fig for fig in doctree.findall(nodes.figure) for name in fig["names"]}
    for node in list(doctree.findall(zh_caption)):
        fig = figures.get(nodes.fully_normalize_name(node["figure"]))  # docutils keeps names in lower case
        caption = next(iter(fig.findall(nodes.caption)), None) if fig is not None else None
        if caption is None:
            raise ExtensionError(f"{app.env.docname}: zh-caption for {node['figure']}, which is no captioned figure")
        paragraphs = list(node.findall(nodes.paragraph))
        if len(paragraphs) != 1:
            raise ExtensionError(f"{app.env.docname}: the zh-caption of {node['figure']} must be one paragraph")
        caption.children = []
        caption.extend(paragraphs[0].children)
        if node["alt"]:
            images = list(fig.findall(nodes.image))
            if not images:
                raise ExtensionError(f"{app.env.docname}: zh-caption gives {node['figure']} an alt but no image")
            for image in images:
                image["alt"] = node["alt"]
        node.parent.remove(node)


#: The variables that choose the language of the package's messages and share live timings (see the module's text).
LANGUAGE_ENV = "SPECDEC_LITE_LANGUAGE"
MEASUREMENTS_ENV = "SPECDEC_LITE_MEASUREMENTS"
#: The file in an execution cache that names the language its outputs were made in.
CACHE_LANGUAGE_FILE = "specdec-language.txt"


def _execution_language(app: Any, config: Any) -> None:
    """This edition's kernels make their messages in its language; the English run records live timings.

    MyST-NB starts its kernels from this process, so they inherit its environment. The Chinese build
    replays the English build's timings when the English build set the folder (it passes its
    environment to the Chinese build) or ``tools/pdf.py`` did.
    """
    zh = _is_zh(app)
    os.environ[LANGUAGE_ENV] = "zh_CN" if zh else "en"
    folder = os.environ.get(MEASUREMENTS_ENV, "").partition(":")[2]
    if not zh:
        folder = str(Path(app.outdir).resolve().parent / "measurements")
    if folder:
        os.environ[MEASUREMENTS_ENV] = ("replay:" if zh else "record:") + folder


#: The file in an execution cache that names the package its outputs were made with (``package_digest``).
CACHE_PACKAGE_FILE = "specdec-package.txt"
#: What the pages' outputs depend on besides their own code: the package (its code, catalogues and data) and
#: the committed measurements the pages read. MyST-NB's cache is keyed on a page's code cells only.
CACHE_INPUTS = (("specdec_lite", "**/*"), ("benchmarks", "*.json"))


def package_digest(root: Path = ROOT) -> str:
    """SHA-256 over the names and bytes of the files in ``CACHE_INPUTS`` (compiled ``.pyc`` files left out)."""
    import hashlib

    digest = hashlib.sha256()
    for folder, pattern in CACHE_INPUTS:
        for path in sorted((root / folder).glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _own_cache(app: Any) -> None:
    """The execution cache holds this edition's language and this package's outputs only: any other is emptied.

    A cache of another language (or none said), or made with other package files (or none said), is emptied,
    so a page whose code is unchanged still runs again when the package it calls has changed.
    """
    cache = Path(app.env.mystnb_config.execution_cache_path)
    language = "zh_CN" if _is_zh(app) else "en"
    if cache.is_symlink():  # the Chinese build once linked the English cache
        cache.unlink()
    marker, made_with = cache / CACHE_LANGUAGE_FILE, cache / CACHE_PACKAGE_FILE
    said = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
    package = made_with.read_text(encoding="utf-8").strip() if made_with.is_file() else None
    digest = package_digest()
    # an English cache from before the caches said their language was made in English
    why = None
    if said != language and (said is not None or language != "en"):
        why = f"its outputs are in {said or 'an unsaid language'}"
    elif package != digest:
        why = "its outputs were made with other package files" if package else "it does not say its package files"
    if why and cache.is_dir() and any(p.name not in (CACHE_LANGUAGE_FILE, CACHE_PACKAGE_FILE) for p in cache.iterdir()):
        logger.info(f"emptying the execution cache {cache}: {why}")
        shutil.rmtree(cache)
    cache.mkdir(parents=True, exist_ok=True)
    marker.write_text(language + "\n", encoding="utf-8")
    made_with.write_text(digest + "\n", encoding="utf-8")


def _pages_of_another_package(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """Every page is read (and run) again when the package files differ from those of the last read.

    Sphinx reads again only the pages whose own source changed; a page whose code is unchanged would keep
    the outputs, figures and glued numbers of the package it last ran with, emptied cache or not.
    """
    digest = package_digest()
    if getattr(env, "specdec_package_digest", None) == digest:
        return []
    env.specdec_package_digest = digest
    return sorted(set(env.found_docs) - set(added) - set(changed) - set(removed))


def _zh_build(app: Any, exception: Exception | None) -> None:
    """After the English HTML, build the Chinese edition into ``<outdir>/zh`` with the same flags."""
    if exception is not None or app.builder.name != "html" or _is_zh(app) or not (ZH_DIR / "_config.yml").is_file():
        return
    if os.environ.get("SPECDEC_BOOK_EDITIONS", "").strip().lower() == "en":
        logger.warning("SPECDEC_BOOK_EDITIONS=en: the Chinese edition is not built", type="editions")
        return
    outdir = Path(app.outdir)
    work = outdir.parent / "zh"  # its execution cache: <work>/_build/.jupyter_cache
    # Sphinx turns -W --keep-going into keep_going with warningiserror off.
    flags = ["-W", "--keep-going"] if app.keep_going else ["-W"] if app.warningiserror else []
    if app.config.nitpicky:
        flags.append("-n")
    main = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"  # jupyter_book has no __main__
    cmd = [sys.executable, "-c", main, "build", str(ZH_DIR), "--path-output", str(work), *flags]
    logger.info("building the Chinese edition: " + " ".join(cmd))
    env = {**os.environ, LANGUAGE_ENV: "zh_CN"}
    if os.environ.get(MEASUREMENTS_ENV):  # the timings the English run recorded
        env[MEASUREMENTS_ENV] = "replay:" + os.environ[MEASUREMENTS_ENV].partition(":")[2]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise ExtensionError(
            f"the Chinese edition (zh/) failed to build:\n{proc.stdout[-8000:]}\n{proc.stderr[-4000:]}"
        )
    shutil.rmtree(outdir / "zh", ignore_errors=True)
    shutil.copytree(work / "_build" / "html", outdir / "zh")


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _add_switch)
    app.connect("config-inited", _zh_emphasis)
    app.connect("config-inited", _execution_language)
    app.connect("config-inited", _zh_chrome, priority=400)  # before sphinx-togglebutton writes its hints (500)
    app.connect("builder-inited", _own_cache, priority=600)  # after MyST-NB set the cache's path (500)
    app.connect("env-get-outdated", _pages_of_another_package)
    app.add_css_file("editions.css", priority=900)
    app.add_role("en-doc", EnglishDoc())
    app.add_node(zh_caption)
    app.add_directive("zh-caption", ZhCaption)
    app.add_directive("zh-terms", TermsTable)
    app.add_directive("literalinclude", LiteralInclude, override=True)
    app.connect("doctree-read", _doctree_read)
    app.connect("html-page-context", _page_context)
    app.connect("builder-inited", _search_dictionary)
    app.connect("build-finished", _zh_written_pages)
    app.connect("build-finished", _zh_build, priority=900)  # after the other extensions fix the pages
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _search_dictionary(app: Any) -> None:
    """Chinese edition: jieba keeps each term of ``zh/terms.yml`` whole in the search index (and its parts)."""
    if not _is_zh(app):
        return
    import yaml

    terms = yaml.safe_load((ZH_DIR / "terms.yml").read_text(encoding="utf-8"))
    words = sorted({t["zh"].replace(" ", "") for t in terms if re.search(f"[{_CJK}]", t["zh"]) and not t.get("phrase")})
    path = Path(app.doctreedir) / "jieba-terms.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w} 100000 n\n" for w in words), encoding="utf-8")
    app.config.html_search_options = {**(app.config.html_search_options or {}), "dict": str(path)}
    app.add_js_file("zh_search.js", priority=200)


def _add_switch(app: Any, config: Any) -> None:
    config.templates_path = [*config.templates_path, str(HERE / "editions_templates")]
    config.html_static_path = [*config.html_static_path, str(HERE / "editions_static")]
    options = config.html_theme_options
    end = list(options.get("article_header_end") or ["article-header-buttons.html"])
    if "edition-switch.html" not in end:
        end.insert(0, "edition-switch.html")
    options["article_header_end"] = end
