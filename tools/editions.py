"""The book's two editions: which Chinese page translates which English page, and whether it is still in step.

Every English page ``book/X.md`` has a Chinese page ``zh/book/X.md``. A page is split into
sections at its headings (``#`` lines outside fenced blocks). Right under each heading, the
Chinese page records the fingerprint of the English section it was translated from::

    ## 马尔可夫链
    % en-sha: 3f2a9c1b0d4e

A MyST line starting with ``%`` is a comment: it is not rendered. When the English section
changes, its fingerprint changes, and :func:`differences` names the Chinese section to update.

Beside the fingerprints, what the two editions share must be the same: the front matter, the
code cells (the same program and options: both editions are computed by the same code; each writes its
comments in its own language), display formulas
(but for the marks of its sentence: ``.`` and the commas between its clauses in English, ``\\text{。}`` and
``\\text{，}`` in Chinese, which never ends one or a clause with ASCII punctuation, and for the words inside
``\\text{}``, which each edition writes in its language),
labels, directives, glued numbers, cross-references and citations.

Command line (from the repository root)::

    python tools/editions.py check              # every difference, exit status 1 if any
    python tools/editions.py stamp zh/book/X.md 3 5   # sections 3 and 5 now translate the current English
    python tools/editions.py stamp zh/book/X.md --all  # a new translation: every section
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repository root, for ``tools.*``
    sys.path.insert(0, str(ROOT))

from tools.myst_pages import STAMP, Page, fingerprint, parse  # noqa: E402
from tools.terms import ZH, shown, term_problems, terms  # noqa: E402, F401  (terms: the table, for readers of this module)

#: Pages of one edition only, with the reason: the Chinese edition has a page listing the labs, and a
#: terminology table.
ONLY_ZH = {"book/labs": "lists the Chinese labs", "book/terms": "the terminology table"}
#: The labs: a Chinese lab (``zh/notebooks/labNN_*.ipynb``) is made from its English lab and a translation
#: by ``tools/labs_zh.py``, which checks it; they are listed in both tables of contents, in the same order.
LABS_PREFIX = "notebooks/"

#: The directive that gives a figure made by a code cell its Chinese caption (the cell keeps the English one).
CAPTION = "zh-caption"
_LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)
_OPTION_NAME = re.compile(r"^:(label|name):\s*(\S+)\s*$", re.M)
_ROLE = re.compile(r"\{(prf:ref|numref|ref|doc|en-doc|cite:p|cite:t|cite)\}`([^`]+)`")
_GLUE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:]+)")
_DISPLAY_MATH = re.compile(r"^\$\$\s*\n(.*?)\n\$\$\s*$", re.M | re.S)
#: The mark that ends a display formula's sentence: ASCII in the English page, the full-width mark in a
#: ``\text{}`` in the Chinese one (``= q^1(x)\text{，}``); either may be followed by the ends of its environments.
FULL_WIDTH = {".": "。", ",": "，", ";": "；", ":": "："}
_CLOSING = re.compile(r"\s*((?<!\\)[.,;:]|\\text\{([。，；：])\})((?:\s*\\end\{[a-z*]+\})*)\s*$")


def closing_mark(formula: str) -> str | None:
    r"""The punctuation that ends a display formula (``.``, ``\text{。}``, ...), or None (``\,`` is a space)."""
    m = _CLOSING.search(formula)
    return m.group(1) if m else None


#: Words in a formula (``\text{oracle calls}``): each edition writes them in its own language.
_TEXT = re.compile(r"\\text\{[^{}]*\}")
#: A full-width mark in a Chinese formula: the mark of its sentence, ASCII in the English one.
_FULL_WIDTH_TEXT = re.compile(r"\s*\\text\{([。，；：])\}")


def display_key(formula: str) -> str:
    r"""A display formula as the two editions share it: its closing mark and the marks between its clauses
    (``\text{，}`` in Chinese) written in their ASCII form, the words of its ``\text{}`` left out
    (``\text{oracle calls}`` is ``\text{调用次数}`` in Chinese)."""
    ascii_of = {v: k for k, v in FULL_WIDTH.items()}
    closed = _CLOSING.sub(lambda m: f" {ascii_of.get(m.group(2), m.group(1))}{m.group(3)}", formula)
    marks = _FULL_WIDTH_TEXT.sub(lambda m: ascii_of[m.group(1)], closed)
    return _TEXT.sub(r"\\text{}", re.sub(r"\s+(?=[.,;:])", "", marks))


def ascii_closings(page: Page) -> list[str]:
    """The Chinese page's display formulas that end with ASCII punctuation (they need the full-width mark)."""
    return [f for f in _DISPLAY_MATH.findall(page.source) if closing_mark(f) in FULL_WIDTH]


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The files of a Jupyter Book ``_toc.yml``, root first, in reading order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files += [chapter["file"]] if "file" in chapter else []
            files += [s["file"] for s in chapter.get("sections", [])]
    return [str(Path(f).with_suffix("")) for f in files]


def code_key(block: str) -> str:
    """A code cell as the two editions share it: its opening line and options byte for byte, then its program
    as Python tokens without comments (each edition comments in its own language; the strings, the words a
    cell prints included, are the English ones: ``_()`` translates them when the cell runs)."""
    lines = block.splitlines(keepends=True)
    head = 1
    if len(lines) > 1 and lines[1].strip() == "---":
        head = next((i + 1 for i in range(2, len(lines)) if lines[i].strip() == "---"), len(lines))
    body = "".join(lines[head:]).removesuffix("```").rstrip("`\n")
    try:
        program = [
            (t.type, t.string)
            for t in tokenize.generate_tokens(io.StringIO(body + "\n").readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL)
        ]
    except (tokenize.TokenError, SyntaxError):
        return block
    return "".join(lines[:head]) + repr(program)


def _code(page: Page) -> list[str]:
    return [code_key(b.text) for b in page.blocks if b.name.startswith("code-cell")]


def _directives(page: Page) -> list[str]:
    return [b.name for b in page.blocks if b.name and b.name != CAPTION]


_FIGURE_NAME = re.compile(r"^\s+name:\s*(\S+)\s*$", re.M)


def figure_names(page: Page) -> list[str]:
    """The figures the page's code cells make (``mystnb: figure: name:``)."""
    return [n for b in page.blocks if b.name.startswith("code-cell") for n in _FIGURE_NAME.findall(b.text)]


_ALT = re.compile(r"^  image:\s*\n\s+alt:", re.M)


def alt_names(page: Page) -> list[str]:
    """The figures whose code cell gives their image an English alt text, which the Chinese must translate."""
    return [
        n
        for b in page.blocks
        if b.name.startswith("code-cell") and _ALT.search(b.text)
        for n in _FIGURE_NAME.findall(b.text)
    ]


def caption_alts(page: Page) -> list[str]:
    """The figures whose ``zh-caption`` has an ``:alt:``."""
    return [
        b.text.splitlines()[0].split("}", 1)[1].strip()
        for b in page.blocks
        if b.name == CAPTION and re.search(r"^:alt:\s*\S", b.text, re.M)
    ]


def caption_names(page: Page) -> list[str]:
    """The figures a Chinese page captions with ``:::{zh-caption} name``."""
    return [b.text.splitlines()[0].split("}", 1)[1].strip() for b in page.blocks if b.name == CAPTION]


def _include(page: Page, page_dir: Path) -> list[str]:
    out = []
    for b in page.blocks:
        if b.name in ("literalinclude", "include"):
            first, *rest = b.text.splitlines()
            target = first.split("}", 1)[1].strip()
            resolved = (page_dir / target).resolve().relative_to(ROOT).as_posix()
            out.append("\n".join([resolved, *rest]))
    return out


def _refs(source: str) -> set[tuple[str, str]]:
    refs = set()
    for role, body in _ROLE.findall(source):
        target = body.rsplit("<", 1)[1].rstrip(">") if body.endswith(">") and "<" in body else body
        role = "doc" if role == "en-doc" else role
        if role.startswith("cite"):
            refs |= {("cite", key.strip()) for key in target.split(",")}
            continue
        if role == "doc":
            target = target.split("/")[-1]
        refs.add((role, target))
    return refs


def differences(en_path: Path, zh_path: Path) -> list[str]:
    """Everything that makes ``zh_path`` not a translation of the current ``en_path``, in words."""
    en, zh = parse(en_path.read_text(encoding="utf-8")), parse(zh_path.read_text(encoding="utf-8"))
    name = shown(zh_path)
    out: list[str] = []
    if en.front != zh.front:
        out.append(f"{name}: front matter differs from the English page's")
    if [s.level for s in en.sections] != [s.level for s in zh.sections]:
        out.append(
            f"{name}: headings differ: English has levels {[s.level for s in en.sections]}, "
            f"Chinese {[s.level for s in zh.sections]}"
        )
    for k, (e, z) in enumerate(zip(en.sections, zh.sections, strict=False), start=1):
        want = fingerprint(e.text)
        if z.stamp is None:
            out.append(f"{name} §{k} '{z.heading}': no '% en-sha:' line under the heading")
        elif z.stamp != want:
            out.append(
                f"{name} §{k} '{z.heading}': the English section '{e.heading}' changed after it was translated "
                f"(translated from {z.stamp}, now {want}): update the Chinese, then "
                f"`python tools/editions.py stamp {name} {k}`"
            )
    checks = [
        ("code cells", _code(en), _code(zh)),
        ("directives", _directives(en), _directives(zh)),
        (
            "display formulas",
            [display_key(f) for f in _DISPLAY_MATH.findall(en.source)],
            [display_key(f) for f in _DISPLAY_MATH.findall(zh.source)],
        ),
        ("labels", _LABEL.findall(en.source), _LABEL.findall(zh.source)),
        ("label/name options", _OPTION_NAME.findall(en.source), _OPTION_NAME.findall(zh.source)),
        ("included files", _include(en, en_path.parent), _include(zh, zh_path.parent)),
    ]
    for what, a, b in checks:
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            show = (a[first] if first < len(a) else "(none)", b[first] if first < len(b) else "(none)")
            out.append(
                f"{name}: {what} differ ({len(a)} English, {len(b)} Chinese); first difference, "
                f"number {first + 1}:\n  en: {show[0][:300]!r}\n  zh: {show[1][:300]!r}"
            )
    for formula in ascii_closings(zh):
        mark = closing_mark(formula)
        out.append(
            f"{name}: a display formula ends with the ASCII {mark!r}: write \\text{{{FULL_WIDTH[mark]}}} "
            f"(the Chinese sentence's mark): {formula[-60:]!r}"
        )
    if figure_names(zh) != caption_names(zh):
        out.append(
            f"{name}: every figure needs one zh-caption block after its cell, in order: figures "
            f"{figure_names(zh)}, captions {caption_names(zh)}"
        )
    if alt_names(zh) != caption_alts(zh):
        out.append(
            f"{name}: the figures {alt_names(zh)} have an English alt text in their cell: give each zh-caption "
            f"an ':alt:' (now {caption_alts(zh)})"
        )
    if Counter(_GLUE.findall(en.source)) != Counter(_GLUE.findall(zh.source)):
        a, b = Counter(_GLUE.findall(en.source)), Counter(_GLUE.findall(zh.source))
        out.append(f"{name}: glued numbers differ: only English {dict(a - b)}, only Chinese {dict(b - a)}")
    a, b = _refs(en.source), _refs(zh.source)
    if a != b:
        out.append(
            f"{name}: cross-references or citations differ: only English {sorted(a - b)}, only Chinese {sorted(b - a)}"
        )
    return out


def page_pairs(en_toc: Path = ROOT / "_toc.yml", zh_toc: Path = ROOT / ZH / "_toc.yml") -> tuple[list, list[str]]:
    """(English, Chinese) source pairs from the two tables of contents, and the pages without a counterpart."""
    en_files = toc_files(en_toc)
    zh_files = toc_files(zh_toc) if zh_toc.is_file() else []
    problems = []
    pairs = []
    for f in en_files:
        if f.startswith(LABS_PREFIX):
            if f not in zh_files:
                problems.append(f"{f}: no Chinese lab in zh/_toc.yml")
            continue
        if f not in zh_files:
            problems.append(f"{f}: no Chinese page in zh/_toc.yml")
            continue
        pairs.append((en_toc.parent / f"{f}.md", zh_toc.parent / f"{f}.md"))
    for f in zh_files:
        if f not in en_files and f not in ONLY_ZH:
            problems.append(f"zh/{f}: no English page in _toc.yml")
    en_order = [f for f in en_files if not f.startswith(LABS_PREFIX)]
    zh_order = [f for f in zh_files if f not in ONLY_ZH and not f.startswith(LABS_PREFIX)]
    en_labs = [f for f in en_files if f.startswith(LABS_PREFIX)]
    zh_labs = [f for f in zh_files if f.startswith(LABS_PREFIX)]
    if not problems and en_labs != zh_labs:
        problems.append(f"the two tables of contents list the labs differently: {en_labs} / {zh_labs}")
    if not problems and en_order != zh_order:
        problems.append(f"the two tables of contents order the pages differently: {en_order} / {zh_order}")
    return pairs, problems


def check() -> list[str]:
    """Every difference between the editions (empty when they are in step)."""
    pairs, out = page_pairs()
    for en, zh in pairs:
        if zh.is_file():
            out += differences(en, zh) + term_problems(zh)
        else:
            out.append(f"{zh.relative_to(ROOT)}: missing")
    for page in ONLY_ZH:
        out += term_problems(ROOT / ZH / f"{page}.md")
    from tools import labs_zh  # the labs: same cells, current translations

    return out + labs_zh.check()


def stamp(zh_path: Path, which: list[int] | None) -> list[int]:
    """Record the current English fingerprint under the given headings (1-based; None: all). Returns them."""
    rel = zh_path.resolve().relative_to(ROOT / ZH)
    en = parse((ROOT / rel).read_text(encoding="utf-8"))
    lines = zh_path.read_text(encoding="utf-8").splitlines()
    zh = parse("\n".join(lines))
    if len(en.sections) != len(zh.sections):
        raise SystemExit(f"{zh_path}: {len(zh.sections)} headings, the English page has {len(en.sections)}")
    todo = range(1, len(zh.sections) + 1) if which is None else which
    for k in sorted(todo, reverse=True):
        sec = zh.sections[k - 1]
        line = f"% en-sha: {fingerprint(en.sections[k - 1].text)}"
        at = sec.start  # index of the line after the heading
        if at < len(lines) and STAMP.match(lines[at]):
            lines[at] = line
        else:
            lines.insert(at, line)
    zh_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return list(todo)


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        if len(argv) > 1:
            found = []
            for p in argv[1:]:
                zh = Path(p).resolve()
                rel = zh.relative_to(ROOT / ZH)
                if rel.with_suffix("").as_posix() not in ONLY_ZH:
                    found += differences(ROOT / rel, zh)
                found += term_problems(zh)
        else:
            found = check()
        print("\n".join(found) or "the two editions are in step")
        return 1 if found else 0
    if argv[:1] == ["stamp"] and len(argv) >= 3:
        which = None if argv[2:] == ["--all"] else [int(a) for a in argv[2:]]
        done = stamp(Path(argv[1]), which)
        print(f"{argv[1]}: stamped sections {done}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
