"""MyST pages: front matter, sections (from one heading to the next) and fenced blocks; fingerprints.

A section's fingerprint is the first 12 hex digits of the SHA-256 of its text; a Chinese section
records, right under its heading, the fingerprint of the English section it translates::

    ## 马尔可夫链
    % en-sha: 3f2a9c1b0d4e
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

STAMP = re.compile(r"^% en-sha: ([0-9a-f]{12})\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})(.*)$")


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
        m = FENCE.match(line)
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
        h = HEADING.match(line)
        if h and not fences:
            sections.append(Section(len(h[1]), h[2], [line], i + 1))
        elif sections:
            sections[-1].lines.append(line)
    return Page(front, sections, blocks, source)


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of the text, trailing spaces and end blank lines ignored."""
    norm = "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip()
    return hashlib.sha256(norm.encode()).hexdigest()[:12]
