"""The book's two editions: which Chinese page translates which English page, and whether it is still in step.

Every English page ``book/X.md`` has a Chinese page ``zh/book/X.md``. A page is split into
sections at its headings (``#`` lines outside fenced blocks). Right under each heading, the
Chinese page records the fingerprint of the English section it was translated from::

    ## 马尔可夫链
    % en-sha: 3f2a9c1b0d4e

A MyST line starting with ``%`` is a comment: it is not rendered. When the English section
changes, its fingerprint changes, and :func:`differences` names the Chinese section to update.

Beside the fingerprints, what the two editions share must be the same: the front matter, the
code cells (byte for byte: both editions are computed by the same code), display formulas,
labels, directives, glued numbers, cross-references and citations.

Command line (from the repository root)::

    python tools/editions.py check              # every difference, exit status 1 if any
    python tools/editions.py stamp zh/book/X.md 3 5   # sections 3 and 5 now translate the current English
    python tools/editions.py stamp zh/book/X.md --all  # a new translation: every section
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ZH = "zh"

#: Pages of one edition only, with the reason: the Chinese edition has a page listing the labs, and a
#: terminology table.
ONLY_ZH = {"book/labs": "lists the Chinese labs", "book/terms": "the terminology table"}
#: The labs: a Chinese lab (``zh/notebooks/labNN_*.ipynb``) is made from its English lab and a translation
#: by ``tools/labs_zh.py``, which checks it; they are listed in both tables of contents, in the same order.
LABS_PREFIX = "notebooks/"

#: The directive that gives a figure made by a code cell its Chinese caption (the cell keeps the English one).
CAPTION = "zh-caption"
STAMP = re.compile(r"^% en-sha: ([0-9a-f]{12})\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})(.*)$")
_LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)
_OPTION_NAME = re.compile(r"^:(label|name):\s*(\S+)\s*$", re.M)
_ROLE = re.compile(r"\{(prf:ref|numref|ref|doc|en-doc|cite:p|cite:t|cite)\}`([^`]+)`")
_GLUE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:]+)")
_DISPLAY_MATH = re.compile(r"^\$\$\s*\n(.*?)\n\$\$\s*$", re.M | re.S)


@dataclass
class Block:
    """A fenced block: its opening line's directive name (or '' for plain code) and its full text."""

    name: str
    text: str
    start: int


@dataclass
class Section:
    """The lines from one heading (included) to the next."""

    level: int
    heading: str
    lines: list[str]
    start: int

    @property
    def stamp(self) -> str | None:
        for line in self.lines[1:3]:
            m = STAMP.match(line)
            if m:
                return m[1]
        return None

    @property
    def text(self) -> str:
        return "\n".join(line for line in self.lines if not STAMP.match(line))


@dataclass
class Page:
    front: str
    sections: list[Section]
    blocks: list[Block]
    source: str


def parse(source: str) -> Page:
    """Split a MyST page into front matter, sections (headings outside fences) and fenced blocks."""
    lines = source.splitlines()
    front_end = 0
    if lines and lines[0] == "---":
        front_end = lines.index("---", 1) + 1
    front = "\n".join(lines[:front_end])
    sections: list[Section] = []
    blocks: list[Block] = []
    fences: list[tuple[str, int, int]] = []  # (char, length, index into blocks)
    for i in range(front_end, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            char, length, rest = m[2][0], len(m[2]), m[3].strip()
            if fences and fences[-1][0] == char and length >= fences[-1][1] and not rest:
                _, _, k = fences.pop()
                blocks[k].text = "\n".join(lines[blocks[k].start : i + 1])
                if sections:
                    sections[-1].lines.append(line)
                continue
            if not (fences and fences[-1][0] in "`~"):
                name = re.match(r"\{([^}]+)\}", rest)
                blocks.append(Block(name[1] if name else "", "", i))
                fences.append((char, length, len(blocks) - 1))
                if sections:
                    sections[-1].lines.append(line)
                continue
        h = _HEADING.match(line)
        if h and not fences:
            sections.append(Section(len(h[1]), h[2], [line], i + 1))
        elif sections:
            sections[-1].lines.append(line)
    return Page(front, sections, blocks, source)


def _shown(path: Path) -> str:
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of the text, trailing spaces and end blank lines ignored."""
    norm = "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip()
    return hashlib.sha256(norm.encode()).hexdigest()[:12]


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The files of a Jupyter Book ``_toc.yml``, root first, in reading order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files += [chapter["file"]] if "file" in chapter else []
            files += [s["file"] for s in chapter.get("sections", [])]
    return [str(Path(f).with_suffix("")) for f in files]


def _code(page: Page) -> list[str]:
    return [b.text for b in page.blocks if b.name.startswith("code-cell")]


def _directives(page: Page) -> list[str]:
    return [b.name for b in page.blocks if b.name and b.name != CAPTION]


_FIGURE_NAME = re.compile(r"^\s+name:\s*(\S+)\s*$", re.M)


def figure_names(page: Page) -> list[str]:
    """The figures the page's code cells make (``mystnb: figure: name:``)."""
    return [n for b in page.blocks if b.name.startswith("code-cell") for n in _FIGURE_NAME.findall(b.text)]


_ALT = re.compile(r"^  image:\s*\n\s+alt:", re.M)


def alt_names(page: Page) -> list[str]:
    """The figures whose code cell gives their image an English alt text, which the Chinese must translate."""
    return [n for b in page.blocks if b.name.startswith("code-cell") and _ALT.search(b.text)
            for n in _FIGURE_NAME.findall(b.text)]


def caption_alts(page: Page) -> list[str]:
    """The figures whose ``zh-caption`` has an ``:alt:``."""
    return [b.text.splitlines()[0].split("}", 1)[1].strip() for b in page.blocks
            if b.name == CAPTION and re.search(r"^:alt:\s*\S", b.text, re.M)]


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
    name = _shown(zh_path)
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
        ("display formulas", _DISPLAY_MATH.findall(en.source), _DISPLAY_MATH.findall(zh.source)),
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
    if figure_names(zh) != caption_names(zh):
        out.append(
            f"{name}: every figure needs one zh-caption block after its cell, in order: figures "
            f"{figure_names(zh)}, captions {caption_names(zh)}"
        )
    if alt_names(zh) != caption_alts(zh):
        out.append(f"{name}: the figures {alt_names(zh)} have an English alt text in their cell: give each zh-caption "
                   f"an ':alt:' (now {caption_alts(zh)})")
    if Counter(_GLUE.findall(en.source)) != Counter(_GLUE.findall(zh.source)):
        a, b = Counter(_GLUE.findall(en.source)), Counter(_GLUE.findall(zh.source))
        out.append(f"{name}: glued numbers differ: only English {dict(a - b)}, only Chinese {dict(b - a)}")
    a, b = _refs(en.source), _refs(zh.source)
    if a != b:
        out.append(
            f"{name}: cross-references or citations differ: only English {sorted(a - b)}, only Chinese {sorted(b - a)}"
        )
    return out


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
        m = _FENCE.match(line)
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
        if _HEADING.match(line) or line.startswith("%") or re.match(r"^\s*:[a-z-]+:", line):
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
    name = _shown(zh_path)
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
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tools import labs_zh  # the labs: same cells, current translations (it uses fingerprint above)

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
