"""The terminology table ``zh/terms.yml`` and its check of a Chinese page: one term per concept.

A term's variants (``avoid``) must not appear in the running text, its first use carries the English
in parentheses, 草稿模型（draft model）, and a recurring phrase opens every section it is fixed under.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tools.myst_pages import FENCE, HEADING, parse

ROOT = Path(__file__).resolve().parents[1]
ZH = "zh"


def shown(path: Path) -> str:
    """A path as a problem names it: from the repository root when inside it."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def terms() -> list[dict]:
    """The terminology table ``zh/terms.yml``: one Chinese term per English concept.

    Each entry: ``en``, ``zh``, ``avoid`` (variants the book does not use), ``allow`` (other words that contain a
    variant and are right, e.g. 奖励模型 for "reward model" beside the variant 奖励 of "bonus token"), ``explain:
    false`` (no English needed at first use) and ``phrase: true`` (a recurring wording rather than a term; with
    ``under: <heading>``, every section of that heading contains it).
    """
    return yaml.safe_load((ROOT / ZH / "terms.yml").read_text(encoding="utf-8"))


_INLINE_LITERAL = re.compile(r"\$[^$\n]+\$|``?[^`\n]+``?|<[^<>\n]*>")


def prose(source: str, glossary: bool = True) -> str:
    """The running text of a page: no front matter, headings, code, formulas, options, comments or link targets.

    ``glossary=False`` leaves out the entries of a ``{glossary}`` block too: each entry pairs its Chinese term
    line with the English term line, so the English of every term it defines is there by construction.
    """
    page = parse(source)
    keep: list[str] = []
    literal = 0
    in_math = False
    for line in source.splitlines()[len(page.front.splitlines()) :]:
        m = FENCE.match(line)
        if m:
            rest = m[3].strip()
            is_literal = m[2][0] in "`~" and not rest.startswith(
                ("{prf:", "{exercise", "{solution", "{admonition", "{note", "{important", "{glossary", "{figure")
            )
            if literal:
                literal = 0 if m[2][0] in "`~" and not rest else literal
                continue
            if (is_literal or (not glossary and rest.startswith("{glossary"))) and rest:
                literal = 1
            continue
        if literal:
            continue
        bare = line.strip()
        if in_math:
            in_math = not bare.endswith("$$")
            continue
        if bare.startswith("$$"):
            in_math = not (len(bare) > 2 and bare.endswith("$$"))  # a one-line formula opens nothing
            continue
        if HEADING.match(line) or line.startswith("%") or re.match(r"^\s*:[a-z-]+:", line):
            continue
        keep.append(line)
    return _INLINE_LITERAL.sub(" ", "\n".join(keep))


_CJK_BREAK = re.compile(r"(?<=[^\x00-\x7f])[ \t]*\n[ \t]*(?=[^\x00-\x7f])")


def joined(text: str) -> str:
    """Text with the line breaks between two non-ASCII characters removed (the build joins them too)."""
    return _CJK_BREAK.sub("", text)


def variants_in(text: str, term: dict) -> list[str]:
    """The variants of ``term`` in ``text``, once its own term and its ``allow`` words are taken out."""
    text = joined(text)
    for word in sorted([term["zh"], *term.get("allow", [])], key=len, reverse=True):
        text = text.replace(word, "\0")
    return [variant for variant in term.get("avoid", []) if variant in text]


def term_problems(zh_path: Path) -> list[str]:
    """Variants the table avoids, terms whose first use on the page lacks the English in parentheses, and
    recurring phrases missing from the sections that must carry them."""
    source = zh_path.read_text(encoding="utf-8")
    text, first_use_text = prose(source), prose(source, glossary=False)
    name = shown(zh_path)
    out = []
    for term in terms():
        for variant in variants_in(text, term):
            out.append(f"{name}: '{variant}' for {term['en']}: the book writes '{term['zh']}'")
        if term.get("under"):
            for k, sec in enumerate(parse(source).sections, 1):
                if sec.heading == term["under"] and term["zh"] not in joined(prose(sec.text)):
                    out.append(f"{name} §{k} '{sec.heading}': it opens with the fixed phrase '{term['zh']}'")
        if term.get("explain", not term.get("phrase")) and term["zh"] != term["en"]:
            at = first_use_text.find(term["zh"])
            if at >= 0:
                after = first_use_text[at + len(term["zh"]) : at + len(term["en"]) + len(term["zh"]) + 8].lower()
                # the English may follow the closing emphasis: **草稿模型**（draft model）
                if not re.match(r"[*_]{0,3}[（(]\s*" + re.escape(term["en"].lower()), after):
                    line = first_use_text[:at].count("\n") + 1
                    out.append(
                        f"{name}: first use of '{term['zh']}' (prose line {line}) needs the English after "
                        f"it: {term['zh']}（{term['en']}）"
                    )
    return out
