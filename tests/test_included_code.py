"""The code a Chinese page shows speaks Chinese and is the same program.

``book/_ext/editions.py`` replaces each docstring and comment of the package code a page includes
(``literalinclude``), and each docstring and ``_()`` string of its code cells, with its translation from the
package's catalogue (``specdec_lite._i18n.translate_code``); a text without one stops the Chinese build.
"""

from __future__ import annotations

import io
import string
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
CELLS = [
    pytest.param(code, id=f"{page.parent.name}/{page.stem}:{line}")
    for page in sorted((ROOT / "zh").glob("*/*.md"))
    for line, code in _i18n.code_cells(page)
]


def program(code: str) -> list[tuple[int, str]]:
    """The tokens of ``code`` less its comments and line breaks, each docstring as one placeholder."""
    docstrings = {start for start, _end, _text, _kind in _i18n.code_texts(code)}
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
    english = [text for _start, _end, text, _kind in _i18n.code_texts(translated) if not _i18n._CHINESE.search(text)]
    assert not english, english


def test_a_text_without_its_translation_is_named():
    with pytest.raises(KeyError, match="a comment the catalogue lacks"):
        _i18n.translate_code("x = 1  # a comment the catalogue lacks\n")


def shown(code: str) -> list[tuple[int, str]]:
    """The tokens of a code cell, each docstring and each string of a ``_()`` call as a placeholder."""
    texts = {start: end for start, end, _text, _kind in _i18n.code_texts(code, comments=False, calls=True)}
    tokens, end = [], None
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if end is not None and tok.start <= end:  # a string or break inside a replaced text
            continue
        end = texts.get(tok.start)
        tokens.append((tok.type, "<text>" if end else tok.string))
    return tokens


def cell_texts(code: str) -> list[str]:
    """The docstrings and ``_()`` strings of a code cell."""
    return [text for _start, _end, text, _kind in _i18n.code_texts(code, comments=False, calls=True)]


def test_the_chinese_pages_show_code_cells_with_texts_to_translate():
    assert len(CELLS) >= 100
    english = [text for param in CELLS for text in cell_texts(param.values[0]) if not _i18n._CHINESE.search(text)]
    assert len(english) >= 70, len(english)


@pytest.mark.parametrize("code", CELLS)
def test_code_cells_speak_chinese_and_are_the_same_program(code):
    translated = _i18n.translate_code(code, cell=True)  # KeyError: a docstring or _() string without its Chinese
    assert shown(translated) == shown(code)
    catalogue = _i18n.translations("zh_CN")
    chinese = [text if _i18n._CHINESE.search(text) else catalogue.gettext(text) for text in cell_texts(code)]
    assert cell_texts(translated) == chinese
    assert all(_i18n._CHINESE.search(text) for text in chinese), chinese


def test_a_cell_shows_its_strings_in_chinese_with_their_placeholders():
    code = (
        "def context_free(law, T):\n"
        '    """A chain whose every position has the same law, whatever the previous token."""\n\n\n'
        "print(_(\"law of x_1: {law}\").format(law=1), _('oracle calls per run: {calls}'))\n"
        'print(_("one draft (Theorem 1): {thm1:.2f} rejections\\nM = 64 drafts: {at64:.2f}\\n"\n'
        '        "floor of Proposition 1: {limit:.2f}"))\n'
        "# a comment, shown as written\n"
    )
    translated = _i18n.translate_code(code, cell=True)
    assert '"""每个位置都服从同一分布的链，与前一个词元无关。"""' in translated
    assert '_("x_1 的分布：{law}")' in translated
    assert "_('每次运行的预言机调用次数：{calls}')" in translated
    assert "# a comment, shown as written" in translated
    assert shown(translated) == shown(code)
    calls = [text for _s, _e, text, kind in _i18n.code_texts(translated, calls=True) if kind == "call"]
    fields = [sorted(name for _text, name, _spec, _conversion in string.Formatter().parse(c) if name) for c in calls]
    assert fields == [["law"], ["calls"], ["at64", "limit", "thm1"]]
    assert calls[-1] == "一份草稿（定理 1）：{thm1:.2f} 次拒绝\nM = 64 份草稿：{at64:.2f}\n命题 1 的下限：{limit:.2f}"


def test_a_cell_text_without_its_translation_is_named():
    with pytest.raises(KeyError, match="a message the catalogue lacks"):
        _i18n.translate_code('print(_("a message the catalogue lacks: {x}"))  # 注释\n', cell=True)
    with pytest.raises(KeyError, match="A docstring the catalogue lacks"):
        _i18n.translate_code('def f():\n    """A docstring the catalogue lacks."""\n', cell=True)
    assert _i18n.translate_code('print(_("已是中文：{x}"), _(name), _(f"{x}"))\n', cell=True).startswith(
        'print(_("已是'
    )


def test_the_chinese_build_shows_a_cell_in_chinese_and_names_a_missing_text():
    import sys
    from types import SimpleNamespace

    from docutils import nodes
    from sphinx.errors import ExtensionError

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import editions as ext

    def page(code):
        doctree = nodes.document(None, None)
        doctree += nodes.container("", nodes.literal_block(code, code), nb_element="cell_code_source")
        return doctree

    app = SimpleNamespace(env=SimpleNamespace(docname="book/ch01_markov_chains"))
    shown = page('print(_("law of x_1: {law}").format(law=1))  # 中文注释\n')
    ext.translate_cells(app, shown)
    assert shown.astext() == 'print(_("x_1 的分布：{law}").format(law=1))  # 中文注释\n'
    with pytest.raises(ExtensionError, match="book/ch01_markov_chains: .*'no such message'"):
        ext.translate_cells(app, page('print(_("no such message"))\n'))
