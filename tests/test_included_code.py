"""The package code a Chinese page includes (``literalinclude``) speaks Chinese and is the same program.

``book/_ext/editions.py`` replaces each docstring and comment of the included code with its translation from the
package's catalogue (``specdec_lite._i18n.translate_code``); a text without one stops the Chinese build.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from specdec_lite import _i18n

ROOT = Path(__file__).resolve().parents[1]
INCLUDED = [
    pytest.param(code, id=f"{page.stem}:{line}")
    for page in sorted((ROOT / "zh" / "book").glob("*.md"))
    for line, code in _i18n.included_code(page)
]


def program(code: str) -> list[tuple[int, str]]:
    """The tokens of ``code`` less its comments and line breaks, each docstring as one placeholder."""
    docstrings = {start for start, _end, _text in _i18n.code_texts(code)}
    return [
        (tok.type, "<docstring>" if tok.start in docstrings else tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type not in (tokenize.COMMENT, tokenize.NL)
    ]


def test_the_chinese_pages_include_package_code():
    assert len(INCLUDED) >= 5


@pytest.mark.parametrize("code", INCLUDED)
def test_included_code_speaks_chinese_and_is_the_same_program(code):
    translated = _i18n.translate_code(code)  # KeyError: a docstring or comment without its Chinese
    assert program(translated) == program(code)
    english = [text for _start, _end, text in _i18n.code_texts(translated) if not re.search("[\u4e00-\u9fff]", text)]
    assert not english, english


def test_a_text_without_its_translation_is_named():
    with pytest.raises(KeyError, match="a comment the catalogue lacks"):
        _i18n.translate_code("x = 1  # a comment the catalogue lacks\n")
