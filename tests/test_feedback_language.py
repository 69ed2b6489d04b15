"""The labs' feedback speaks the student's language: every message of every check exists in Chinese.

The messages are written in English in ``specdec_lite`` and wrapped in ``_()`` with named
placeholders; ``pybabel extract`` (configured in ``pyproject.toml``) lists them and the gettext
catalogue ``specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.po`` translates them. These tests
fail when a message has no translation, when a translation drops, adds or renames a placeholder
(or changes its format), when the catalogue keeps a message the source no longer has, when the
compiled ``.mo`` the package ships lags behind the ``.po``, and when a translation leaves the
terminology of ``zh/terms.yml``. A lab chooses the language in its setup cell
(``SPECDEC_LITE_LANGUAGE=zh_CN``); the last tests run checks in both languages.
"""

from __future__ import annotations

import fnmatch
import re
import string
from pathlib import Path

import numpy as np
import pytest
import tomllib
import yaml
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from specdec_lite import _i18n
from specdec_lite.exercises import NotYet
from specdec_lite.exercises.part1 import check_tv
from tools.labs_zh import DECIDED  # terms decided for this round, where zh/terms.yml may lag

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "specdec_lite" / "locale" / "zh_CN" / "LC_MESSAGES" / "specdec_lite.po"
MO = PO.with_suffix(".mo")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


#: Places where a term's English word is not the term (the verb "rounds"): left out of the terminology check.
NOT_THE_TERM = {"round": ("rounds the scaled logits",)}


def source_messages() -> dict[str, list[str]]:
    """Every message of the source, as ``pybabel extract`` with the pyproject mapping lists them (id -> files)."""
    method_map = [(m["pattern"], m["method"]) for m in PYPROJECT["tool"]["babel"]["mappings"]]
    found: dict[str, list[str]] = {}
    for filename, _lineno, message, _comments, _context in extract_from_dir(str(ROOT), method_map):
        assert isinstance(message, str), f"{filename}: plural or tuple message {message!r}"
        found.setdefault(message, []).append(filename)
    return found


def catalogue():
    with PO.open("rb") as f:
        return read_po(f)


def fields(message: str) -> list[tuple[str, str, str]]:
    """The placeholders of a ``str.format`` template: (name, conversion, format spec), sorted."""
    return sorted(
        (name, conversion or "", spec or "")
        for _text, name, spec, conversion in string.Formatter().parse(message)
        if name is not None
    )


def test_the_source_has_messages_and_names_its_placeholders():
    messages = source_messages()
    assert len(messages) > 250, len(messages)
    positional = [m for m in messages if any(name == "" or name.isdigit() for name, _c, _s in fields(m))]
    assert not positional, f"placeholders without a name: {positional}"


def test_every_message_has_its_chinese_with_the_same_placeholders():
    cat = catalogue()
    problems = []
    for message, files in source_messages().items():
        entry = cat.get(message)
        if entry is None or not entry.string or entry.fuzzy:
            problems.append(f"{files[0]}: no Chinese for {message!r}")
        elif fields(entry.string) != fields(message):
            problems.append(f"{files[0]}: {message!r} has {fields(message)}, its Chinese {fields(entry.string)}")
    assert not problems, "\n".join(problems) + "\n(see the header of the .po for the commands)"


def test_the_catalogue_holds_only_messages_of_the_source():
    source = source_messages()
    stale = [m.id for m in catalogue() if m.id and m.id not in source]
    assert not stale, f"messages the source no longer has: {stale}"


def test_the_shipped_mo_is_the_po_compiled():
    with MO.open("rb") as f:
        compiled = {m.id: m.string for m in read_mo(f) if m.id}
    assert compiled == {m.id: m.string for m in catalogue() if m.id}, "run pybabel compile (see the .po's header)"


def test_the_mo_is_package_data():
    """Colab installs the package with pip from git: the compiled catalogue must be among its package data."""
    package_data = PYPROJECT["tool"]["setuptools"]["package-data"]
    relative = MO.relative_to(ROOT / "specdec_lite").as_posix()
    assert any(fnmatch.fnmatch(relative, pattern) for pattern in package_data.get("specdec_lite", []))
    assert _i18n.translations("zh_CN").gettext("Correct.") != "Correct."


def terms() -> dict[str, str]:
    table = yaml.safe_load((ROOT / "zh" / "terms.yml").read_text(encoding="utf-8"))
    return {t["en"]: t["zh"] for t in table} | DECIDED


@pytest.mark.parametrize("en", sorted(terms()))
def test_chinese_messages_use_the_terminology(en):
    zh = terms()[en]
    pattern = re.compile(rf"\b{re.escape(en)}(s|es)?\b", re.IGNORECASE)
    missing = [
        (m.id, m.string)
        for m in catalogue()
        if m.id
        and pattern.search(m.id)
        and zh not in m.string
        and not any(phrase in m.id for phrase in NOT_THE_TERM.get(en, ()))
    ]
    assert not missing, f"{en} -> {zh}: " + "\n".join(map(repr, missing))


def test_chinese_messages_follow_the_style_of_the_chinese_edition():
    """Models named in full, mass as 概率质量, no space after full-width punctuation."""
    problems = []
    for m in catalogue():
        if not m.id:
            continue
        if re.search(r"\bthe (draft|target)\b(?! (token|call|tree|law))", m.id) and not re.search(
            "草稿模型|目标模型", m.string
        ):
            problems.append(f"the model unnamed: {m.string}")
        if re.search("(?<!概率)质量", m.string):
            problems.append(f"bare 质量: {m.string}")
        if re.search("[，。；：！？、（）] ", m.string):
            problems.append(f"space after full-width punctuation: {m.string}")
    assert not problems, "\n".join(problems)


def doubled_tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.abs(p - q).sum())


@pytest.mark.parametrize(
    ("language", "expected", "verdict"),
    [
        (None, "you returned 0.6000 instead of 0.3000: that is sum |p - q|; TV has a factor 1/2", "Not yet. For p"),
        ("zh_CN", "你返回的是 0.6000，而不是 0.3000：这是 sum |p - q|；TV 有一个因子 1/2", "还不对。对 p"),
    ],
)
def test_a_check_answers_in_the_language_of_the_lab(monkeypatch, language, expected, verdict):
    """The diagnosis of a typical mistake, with its numbers, in the language the setup cell chose."""
    if language is None:
        monkeypatch.delenv(_i18n.ENV, raising=False)
    else:
        monkeypatch.setenv(_i18n.ENV, language)
    fb = check_tv(doubled_tv)
    assert not fb.ok and expected in fb.message, fb.message
    with pytest.raises(NotYet) as raised:
        fb.assert_correct()
    assert str(raised.value).startswith(verdict), raised.value
    stub = check_tv(None).message
    assert stub.split("：" if language else ": ")[1].startswith(
        _i18n.translations(_i18n.language()).gettext("not attempted yet")
    ), stub


def test_an_unknown_language_is_english(monkeypatch):
    monkeypatch.setenv(_i18n.ENV, "fr")
    assert _i18n.language() == "en"
    assert check_tv(lambda p, q: 0.5 * float(np.abs(p - q).sum())).message.startswith("TV is half")
