"""The language of the labs' feedback: English, or Chinese in the Chinese labs.

Every message a check gives is written in English in the source, wrapped in ``_()``,
with named placeholders (``_("you returned {got:.4f}").format(got=...)``); the Chinese
messages live in the gettext catalogue ``specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.po``
(compiled to the ``.mo`` next to it, shipped with the package). ``pybabel extract``
(configured in ``pyproject.toml``) lists the messages; ``tests/test_feedback_language.py``
fails when one lacks its translation or a translation changes a placeholder.

A lab chooses its language in its setup cell: the Chinese labs set the environment
variable ``SPECDEC_LITE_LANGUAGE=zh_CN`` (:data:`ENV`); any other value, or none, is English.
The language is read when a message is made, so a check answers in the language set last.
"""

from __future__ import annotations

import ast
import functools
import gettext
import io
import itertools
import os
import re
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

#: The environment variable a lab's setup cell sets to choose the language of the feedback.
ENV = "SPECDEC_LITE_LANGUAGE"

#: The gettext domain and the folder of the catalogues (``<LOCALE_DIR>/zh_CN/LC_MESSAGES/<DOMAIN>.mo``).
DOMAIN = "specdec_lite"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

#: The languages the feedback speaks; the first is the source language.
LANGUAGES = ("en", "zh_CN")


def language() -> str:
    """The language of messages made now: ``zh_CN`` when :data:`ENV` says so (``zh``, ``zh-CN`` too), else ``en``."""
    wanted = os.environ.get(ENV, "").strip().replace("-", "_")
    return "zh_CN" if wanted.lower() in ("zh", "zh_cn", "zh_hans") else "en"


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of ``lang`` (English: the messages as written)."""
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, str(LOCALE_DIR), languages=[lang])


def _(message: str) -> str:
    """``message`` in the current language (:func:`language`)."""
    return translations(language()).gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it now (translated where it is used)."""
    return message


def extract_myst(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[Any]:
    """``pybabel extract`` for the book's MyST pages: the messages of their code cells (the lines the pages print).

    Named in ``pyproject.toml``'s ``[tool.babel]`` mappings as ``specdec_lite._i18n:extract_myst``. The prose and
    the cells' options (``:tags:``) become blank lines, so that a message keeps its line number in the page.
    """
    from babel.messages.extract import extract_python

    lines, inside = [], False
    for line in fileobj.read().decode("utf-8").splitlines(keepends=True):
        if not inside and line.startswith("```{code-cell}"):
            inside, line = True, "\n"
        elif inside and line.rstrip() == "```":
            inside, line = False, "\n"
        elif not inside or line.startswith(":"):
            line = "\n"
        lines.append(line)
    yield from extract_python(io.BytesIO("".join(lines).encode("utf-8")), keywords, comment_tags, options)


def display_width(text: str) -> int:
    """Columns ``text`` takes on screen: a wide or full-width character (Chinese, "；") counts twice."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_CJK_CHAR = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
#: Particles that join two Chinese words ("马尔可夫链上的精确前向递推", "解码与草稿树"): a line may break after one.
PARTICLES = "的与和或及"


def chinese_breaks(text: str, words: Sequence[str] = ()) -> str:
    """``text`` with a zero-width space where a Chinese line may break inside a run that has no space or
    punctuation: around each of ``words`` (terms, never split themselves) and after a joining particle
    (:data:`PARTICLES`), each only between two Chinese characters and where it leaves no piece of one
    character ("推测解码|是无偏的", not "无偏" over "的"). Set with ``word-break: keep-all``, a Chinese title or
    header then breaks between its words ("马尔可夫链", not "马尔可" over "夫链")."""
    inside, edges = set(), set()
    for word in sorted(words, key=len, reverse=True):
        for m in re.finditer(re.escape(word), text):
            if any(i in inside for i in range(m.start(), m.end() + 1)):
                continue  # overlaps a longer term
            inside.update(range(m.start() + 1, m.end()))
            edges.update((m.start(), m.end()))
    edges.update(i + 1 for i, ch in enumerate(text) if ch in PARTICLES)
    cuts: list[int] = []
    for i in sorted(edges - inside):
        if not (0 < i < len(text) and _CJK_CHAR.match(text[i - 1]) and _CJK_CHAR.match(text[i])):
            continue
        start = i
        while start > 0 and _CJK_CHAR.match(text[start - 1]):
            start -= 1
        end = i
        while end < len(text) and _CJK_CHAR.match(text[end]):
            end += 1
        # never a piece of one character ("无偏" over "的"): two or more on each side within the run
        if i - max(start, cuts[-1] if cuts else 0) >= 2 and end - i >= 2:
            cuts.append(i)
    return "".join(
        text[a:b] + ("\u200b" if b in cuts else "") for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)
    )


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float, digits: int = 1, *, up: bool = False) -> str:
    """``x`` as a reader writes it, ``3.0 × 10⁻³`` (``digits`` decimals), with no-break spaces: unlike
    ``3.0e-03`` no line breaks inside it, at its hyphen or elsewhere. ``up``: rounded up, for a bound
    ("at most 6.3 × 10⁻⁵" of 6.2004 × 10⁻⁵ stays true)."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    if up and float(f"{mantissa}e{exponent}") < x:
        step = 10.0 ** (int(exponent) - digits)
        mantissa, exponent = f"{(float(mantissa) * 10.0 ** int(exponent) + step):.{digits}e}".split("e")
    return f"{mantissa}\u00a0×\u00a010{str(int(exponent)).translate(_SUPERSCRIPT)}"


# --- Code on the Chinese pages ---------------------------------------------------------------------------------
# A Chinese page shows package code with ``literalinclude`` and runs the English page's code cells
# (book/_ext/editions.py). The package code's docstrings and comments are messages of this catalogue (the English
# text, a docstring as ``ast.get_docstring`` cleans it), the code itself is shown as written. A code cell shows
# its docstrings and the literals of its ``_()`` calls in Chinese (its comments are written in Chinese): the
# shown cell prints what the page shows, as gettext gives a message it lacks back unchanged.

_INCLUDE = re.compile(r"^```\{literalinclude\} *(\S+)\n((?::[\w-]+:.*\n)*)```", re.M)
_CELL = re.compile(r"^```\{code-cell\}.*\n(?:---\n(?:.*\n)*?---\n)?((?::.*\n)*)((?:.*\n)*?)```", re.M)
_CHINESE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
Text = tuple[tuple[int, int], tuple[int, int], str, str]


def code_texts(code: str, comments: bool = True, calls: bool = False) -> list[Text]:
    """The texts of Python ``code``: (start, end, English text, kind) of each, in order.

    The kinds: ``docstring``; ``comment`` (when ``comments``); ``call``, the string of a ``_()`` or ``N_()``
    call whose one argument is a literal (when ``calls``; the span of its strings, as Python concatenates them).
    """
    tree = ast.parse(code)
    docs = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text is not None:
                docs[(node.body[0].value.lineno, node.body[0].value.col_offset)] = text
    found = []
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    program = [tok for tok in tokens if tok.type not in (tokenize.COMMENT, tokenize.NL)]
    for tok in tokens:
        if tok.type == tokenize.COMMENT and comments:
            found.append((tok.start, tok.end, tok.string.lstrip("#").strip(), "comment"))
        elif tok.type == tokenize.STRING and tok.start in docs:
            found.append((tok.start, tok.end, docs[tok.start], "docstring"))
    for i, tok in enumerate(program[:-2] if calls else ()):
        after = program[i + 2 :]
        strings = list(itertools.takewhile(lambda t: t.type == tokenize.STRING, after))
        if (
            tok.string in ("_", "N_")
            and (i == 0 or program[i - 1].string != ".")
            and program[i + 1].string == "("
            and strings
            and after[len(strings)].string == ")"
            and not any("f" in t.string.split(t.string[-1])[0].lower() for t in strings)
        ):
            text = ast.literal_eval(" ".join(t.string for t in strings))
            found.append((strings[0].start, strings[-1].end, text, "call"))
    return sorted(found)


def _literal(text: str, like: str) -> str:
    """``text`` as a Python string literal with the quotes and prefix (but ``r``) of the literal ``like``."""
    prefix = like[: len(like) - len(like.lstrip("rRuU"))]
    rest = like[len(prefix) :]
    quotes = rest[:3] if rest[:3] in ('"""', "'''") else rest[0]
    body = text.replace("\\", "\\\\").replace(quotes[0], "\\" + quotes[0])
    if len(quotes) == 1:
        body = body.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    new = prefix.strip("rR") + quotes + body + quotes
    assert ast.literal_eval(new) == text, new
    return new


def _pieces(text: str, lengths: list[int]) -> list[str]:
    """``text`` cut into as many pieces as ``lengths`` has, of about their shares, after a break if one is near."""
    cuts, total, done = [0], sum(lengths) or 1, 0
    for length in lengths[:-1]:
        done += length
        cut = max(cuts[-1], round(len(text) * done / total))
        window = range(max(cuts[-1], cut - 16), min(len(text) - 1, cut + 16))
        # after punctuation, else after a space
        breaks = {i + 1: text[i] == " " for i in window if text[i] in "\n，。；：、" or text[i] == " " != text[i + 1]}
        cut = min(breaks, key=lambda i: (breaks[i], abs(i - cut)), default=cut)
        while text.count("{", 0, cut) > text.count("}", 0, cut):  # not inside a placeholder
            cut += 1
        cuts.append(cut)
    return [text[a:b] for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True)]


def translate_code(code: str, lang: str = "zh_CN", cell: bool = False) -> str:
    """``code`` with each docstring and comment in ``lang``; ``KeyError`` lists the texts without a translation.

    ``cell``: the code of a page's code cell, with its docstrings and the strings of its ``_()`` calls in
    ``lang``, and its comments as written; a text already in Chinese is kept.
    """
    catalogue = translations(lang)
    lines = code.splitlines(keepends=True)
    missing = []
    for (row, col), (end_row, end_col), text, kind in reversed(code_texts(code, comments=not cell, calls=cell)):
        if cell and _CHINESE.search(text):
            continue
        translated = catalogue.gettext(text)
        if translated == text and lang != "en":
            missing.append(text)
        first = lines[row - 1]
        if kind == "comment":
            new = "# " + translated
        elif kind == "call":  # each string of the call keeps its place, quotes and prefix
            span = "".join(lines[row - 1 : end_row])[col : len("".join(lines[row - 1 : end_row - 1])) + end_col]
            tokens = tokenize.generate_tokens(io.StringIO(f"({span})").readline)
            strings = [t for t in tokens if t.type == tokenize.STRING]
            parts = re.split("|".join(re.escape(t.string) for t in strings), span)
            pieces = _pieces(translated, [len(ast.literal_eval(t.string)) for t in strings])
            new = parts[0] + "".join(
                _literal(p, t.string) + rest for p, t, rest in zip(pieces, strings, parts[1:], strict=True)
            )
        else:  # the docstring keeps its prefix and quotes; its lines are indented as the opening quotes
            literal = first[col:]
            prefix = literal[: len(literal) - len(literal.lstrip("rRuU"))]
            quotes = literal[len(prefix) : len(prefix) + 3]
            indent = " " * col
            body = "\n".join((indent + line).rstrip() if i else line for i, line in enumerate(translated.split("\n")))
            new = prefix + quotes + body + ("\n" + indent if "\n" in translated else "") + quotes
        lines[row - 1 : end_row] = [first[:col] + new + lines[end_row - 1][end_col:]]
    if missing:
        raise KeyError(missing[::-1])
    return "".join(lines)


def included_code(page: Path) -> list[tuple[int, str]]:
    """(line, code) of each ``literalinclude`` of a MyST page: the code Sphinx shows, with the directive's options."""
    from types import SimpleNamespace

    from sphinx.directives.code import LiteralIncludeReader

    text = page.read_text(encoding="utf-8")
    found = []
    for match in _INCLUDE.finditer(text):
        options = dict(re.findall(r"^:([\w-]+): *(.*)$", match[2], re.M))
        options.pop("language", None)
        reader = LiteralIncludeReader(str(page.parent / match[1]), options, SimpleNamespace(source_encoding="utf-8"))
        found.append((text.count("\n", 0, match.start()) + 1, reader.read()[0]))
    return found


def code_cells(page: Path) -> list[tuple[int, str]]:
    """(line, code) of each code cell of a MyST page (its options left out)."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, match.start(2)) + 1, match[2]) for match in _CELL.finditer(text)]


def extract_code_texts(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[Any]:
    """``pybabel extract`` for the Chinese pages: the docstrings and comments of the code they include, and the
    docstrings of their code cells written in English (the cells' ``_()`` messages come from the English pages)."""
    page = Path(fileobj.name)
    for line, code in included_code(page):
        for _start, _end, text, _kind in code_texts(code):
            yield line, None, text, []
    for line, code in code_cells(page):
        for (row, _col), _end, text, _kind in code_texts(code, comments=False):
            if not _CHINESE.search(text):
                yield line + row - 1, None, text, []
