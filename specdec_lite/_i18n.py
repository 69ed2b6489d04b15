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
import os
import re
import tokenize
from collections.abc import Iterator
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


# --- The package's code on the Chinese pages ------------------------------------------------------------------
# A Chinese page shows package code with ``literalinclude`` (book/_ext/editions.py); its docstrings and comments
# are messages of this catalogue (the English text, a docstring as ``ast.get_docstring`` cleans it), the code
# itself is shown as written.

_INCLUDE = re.compile(r"^```\{literalinclude\} *(\S+)\n((?::[\w-]+:.*\n)*)```", re.M)


def code_texts(code: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """The docstrings and comments of Python ``code``: (start, end, English text) of each, in order."""
    tree = ast.parse(code)
    docs = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text is not None:
                docs[(node.body[0].value.lineno, node.body[0].value.col_offset)] = text
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            found.append((tok.start, tok.end, tok.string.lstrip("#").strip()))
        elif tok.type == tokenize.STRING and tok.start in docs:
            found.append((tok.start, tok.end, docs[tok.start]))
    return found


def translate_code(code: str, lang: str = "zh_CN") -> str:
    """``code`` with each docstring and comment in ``lang``; ``KeyError`` lists the texts without a translation."""
    catalogue = translations(lang)
    lines = code.splitlines(keepends=True)
    missing = []
    for (row, col), (end_row, end_col), text in reversed(code_texts(code)):
        translated = catalogue.gettext(text)
        if translated == text and lang != "en":
            missing.append(text)
        first = lines[row - 1]
        if first[col] == "#":
            new = "# " + translated
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


def extract_code_texts(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[Any]:
    """``pybabel extract`` for the Chinese pages: the docstrings and comments of the code they include."""
    for line, code in included_code(Path(fileobj.name)):
        for _start, _end, text in code_texts(code):
            yield line, None, text, []
