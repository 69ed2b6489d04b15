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

import functools
import gettext
import io
import os
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
