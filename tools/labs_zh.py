"""The Chinese labs: each is its English lab with the Markdown translated, made by this script.

A Chinese lab is the same assignment as its English lab: the same cells (ids, code, nbgrader
metadata, grade ids, points, checks and hidden tests, byte for byte), with each Markdown cell
translated. Its master ``zh/notebooks/source/<lab>/<lab>.ipynb`` (and the MyST twin ``<lab>.md``)
is generated from the English master ``notebooks/source/<lab>/<lab>.ipynb`` and the translation
file ``zh/notebooks/translations/<lab>.yml``, which holds one entry per Markdown cell, by cell id::

    lab01-03:
      en-sha: 3f2a9c1b0d4e   # the fingerprint of the English cell translated (tools/editions.py's)
      zh: |-
        ## 1. 一条链及其边缘分布
        ...

The one code difference is a last line of the setup cell, :data:`SETUP_LINE`, which makes the
checks answer in Chinese (``specdec_lite._i18n``). The student copies ``zh/notebooks/<lab>.ipynb``
are released by ``python -m specdec_lite.classroom release`` like the English ones (``zh/notebooks``
is an nbgrader course directory with the English course's configuration).

Command line (from the repository root)::

    python tools/labs_zh.py build [lab ...]        # write the Chinese masters (then release)
    python tools/labs_zh.py check                  # every difference, exit status 1 if any
    python tools/labs_zh.py stamp <lab> <cell-id> ...   # these translations now follow the current English
    python tools/labs_zh.py template <lab>         # start a translation file (English text to translate)
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite._i18n import ENV  # noqa: E402
from tools.editions import fingerprint  # noqa: E402

EN_COURSE = ROOT / "notebooks"
ZH_COURSE = ROOT / "zh" / "notebooks"
TRANSLATIONS = ZH_COURSE / "translations"

#: The line the Chinese labs add at the end of the setup cell: the checks then answer in Chinese.
SETUP_LINE = f'os.environ["{ENV}"] = "zh_CN"  # 检查用中文给出反馈'

_CJK = re.compile("[\u4e00-\u9fff]")

#: The Colab badge of a lab's first cell, and the address it opens.
_BADGE = re.compile(r"\[!\[Open in Colab\]\(([^)]+)\)\]\((https://colab\.research\.google\.com/github/[^)]+)\)")


def labs() -> list[str]:
    """The English labs, by name (``lab01_markov_chains``, ...)."""
    return sorted(p.stem for p in (EN_COURSE / "source").glob("*/*.ipynb") if p.stem == p.parent.name)


def translated() -> list[str]:
    """The labs that have a translation file."""
    return sorted(p.stem for p in TRANSLATIONS.glob("lab*.yml"))


def english(lab: str) -> nbformat.NotebookNode:
    return nbformat.read(EN_COURSE / "source" / lab / f"{lab}.ipynb", as_version=4)


def translation(lab: str) -> dict[str, dict]:
    # BaseLoader: every value a string (a fingerprint of digits only stays a string)
    return yaml.load((TRANSLATIONS / f"{lab}.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader) or {}


def colab_url(course_path: str) -> str:
    """The Colab address of a notebook of the repository (``zh/notebooks/lab01_markov_chains.ipynb``)."""
    en_first = english(labs()[0]).cells[0].source
    prefix = _BADGE.search(en_first)[2].rsplit("/notebooks/", 1)[0]  # .../blob/main
    return f"{prefix}/{course_path}"


def chinese(lab: str) -> tuple[nbformat.NotebookNode, list[str]]:
    """The Chinese master of ``lab`` and what is wrong with its translation (missing, stale, extra entries)."""
    nb = copy.deepcopy(english(lab))
    words = translation(lab)
    problems = []
    markdown_ids = set()
    for i, cell in enumerate(nb.cells):
        if i == 1:
            cell.source = cell.source.rstrip("\n") + "\n" + SETUP_LINE
        if cell.cell_type != "markdown":
            continue
        markdown_ids.add(cell.id)
        entry = words.get(cell.id)
        if not entry or not str(entry.get("zh", "")).strip():
            problems.append(f"{lab} {cell.id}: no Chinese for this Markdown cell")
            continue
        if not _CJK.search(str(entry["zh"])):
            problems.append(f"{lab} {cell.id}: not translated yet (no Chinese in the entry)")
        if entry.get("en-sha") != fingerprint(cell.source):
            problems.append(
                f"{lab} {cell.id}: the English cell changed after it was translated (en-sha {entry.get('en-sha')}, "
                f"now {fingerprint(cell.source)}): update the Chinese, then python tools/labs_zh.py stamp {lab} "
                f"{cell.id}"
            )
        cell.source = str(entry["zh"]).rstrip("\n")
    for extra in sorted(set(words) - markdown_ids):
        problems.append(f"{lab} {extra}: a translation for no Markdown cell of the English master")
    return nb, problems


def files(lab: str) -> tuple[dict[Path, str], list[str]]:
    """The Chinese master's two files (``.ipynb`` and its MyST twin) as text, and the translation's problems."""
    import jupytext

    nb, problems = chinese(lab)
    folder = ZH_COURSE / "source" / lab
    ipynb = nbformat.writes(nb) + "\n"
    md = jupytext.writes(jupytext.reads(ipynb, fmt="ipynb"), fmt="md:myst")
    return {folder / f"{lab}.ipynb": ipynb, folder / f"{lab}.md": md}, problems


def structure(en: nbformat.NotebookNode, zh: nbformat.NotebookNode, released: bool = False) -> list[str]:
    """What differs between two versions of one lab beyond the translated Markdown and the setup line.

    Cell ids, kinds, code (the setup cell save its last line), nbgrader metadata (grade ids, points, locks;
    in ``released`` copies a graded Markdown answer's checksum follows its text) and notebook metadata.
    """
    out = []
    if [(c.id, c.cell_type) for c in en.cells] != [(c.id, c.cell_type) for c in zh.cells]:
        return ["the cells differ (ids or kinds)"]
    if en.metadata != zh.metadata:
        out.append("the notebook metadata differ")
    for i, (a, b) in enumerate(zip(en.cells, zh.cells, strict=True)):
        meta_a, meta_b = copy.deepcopy(dict(a.metadata)), copy.deepcopy(dict(b.metadata))
        if released and a.cell_type == "markdown":
            for m in (meta_a, meta_b):
                m.get("nbgrader", {}).pop("checksum", None)
        if meta_a != meta_b:
            out.append(f"cell {a.id}: the metadata differ")
        if a.cell_type == "code":
            want = a.source.rstrip("\n") + "\n" + SETUP_LINE if i == 1 else a.source
            if b.source != want:
                out.append(f"cell {a.id}: the code differs")
        elif "### BEGIN SOLUTION" in a.source and not released:
            if b.source.count("### BEGIN SOLUTION") != 1 or b.source.count("### END SOLUTION") != 1:
                out.append(f"cell {a.id}: the model answer must keep one BEGIN/END SOLUTION region")
    return out


#: What nbgrader writes in place of a model answer in the Chinese student copies (``zh/notebooks/nbgrader_config.py``).
ANSWER_STUB = "在这里写下你的回答"

_SOLUTION = re.compile(r"### BEGIN SOLUTION.*?### END SOLUTION", re.S)


def released_text(master_text: str) -> str:
    """A Markdown cell as the Chinese student copy shows it: the model answer replaced by :data:`ANSWER_STUB`."""
    return _SOLUTION.sub(ANSWER_STUB, master_text)


def check() -> list[str]:
    """Every problem of the Chinese labs (empty when they follow the English ones)."""
    out = []
    missing = sorted(set(labs()) - set(translated()))
    out += [f"{lab}: no Chinese lab (zh/notebooks/translations/{lab}.yml)" for lab in missing]
    for lab in translated():
        if lab not in labs():
            out.append(f"{lab}: a translation of no English lab")
            continue
        written, problems = files(lab)
        out += problems
        for path, text in written.items():
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                out.append(f"{path.relative_to(ROOT)}: not what the translation makes: python tools/labs_zh.py build")
        out += term_problems(ZH_COURSE / "source" / lab / f"{lab}.md")
        zh_master = nbformat.reads(written[ZH_COURSE / "source" / lab / f"{lab}.ipynb"], as_version=4)
        out += [f"{lab} master: {p}" for p in structure(english(lab), zh_master)]
        badge = _BADGE.search(zh_master.cells[0].source)
        if not badge or badge[2] != colab_url(f"zh/notebooks/{lab}.ipynb"):
            out.append(f"{lab}: the first cell's Colab badge must open {colab_url(f'zh/notebooks/{lab}.ipynb')}")
        copy_en, copy_zh = EN_COURSE / f"{lab}.ipynb", ZH_COURSE / f"{lab}.ipynb"
        if not copy_zh.is_file():
            out.append(f"{copy_zh.relative_to(ROOT)}: missing: python -m specdec_lite.classroom release")
        else:
            en_copy, zh_copy = (nbformat.read(p, as_version=4) for p in (copy_en, copy_zh))
            out += [f"{lab} student copy: {p}" for p in structure(en_copy, zh_copy, released=True)]
            from nbgrader.utils import compute_checksum

            for master_cell, cell in zip(zh_master.cells, zh_copy.cells, strict=False):
                checksum = cell.metadata.get("nbgrader", {}).get("checksum")
                if checksum is not None and compute_checksum(cell) != checksum:
                    out.append(f"{lab} student copy, cell {cell.id}: its nbgrader checksum is not its text's")
                if cell.cell_type == "markdown" and cell.source != released_text(master_cell.source):
                    out.append(
                        f"{lab} student copy, cell {cell.id}: not its master's text: python -m "
                        "specdec_lite.classroom release"
                    )
    return out


#: Terms decided for this round where ``zh/terms.yml`` may still list the earlier choice (the table is being
#: updated to them); the labs use these. Once the table says the same, this changes nothing.
DECIDED = {"bonus token": "额外词元", "wall-clock": "墙钟时间", "rejection law": "拒绝后分布"}


def term_problems(path: Path) -> list[str]:
    """``tools/editions.py``'s terminology check of a Chinese master, less what :data:`DECIDED` overrides."""
    from tools.editions import term_problems as problems

    return [p for p in problems(path) if not any(f"'{zh}' for {en}:" in p for en, zh in DECIDED.items())]


def build(names: list[str]) -> list[str]:
    """Write the Chinese masters of ``names`` (all translated labs when empty); their problems."""
    problems = []
    for lab in names or translated():
        written, found = files(lab)
        problems += found
        for path, text in written.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return problems


def stamp(lab: str, ids: list[str]) -> None:
    """Record the current English fingerprint of the cells ``ids`` (``--all``: every cell) in the translation."""
    path = TRANSLATIONS / f"{lab}.yml"
    text = path.read_text(encoding="utf-8")
    cells = {c.id: c for c in english(lab).cells if c.cell_type == "markdown"}
    for cid in cells if ids == ["--all"] else ids:
        pattern = re.compile(rf"^({re.escape(cid)}:\n  en-sha: )([0-9a-f]*)$", re.M)
        if not pattern.search(text):
            raise SystemExit(f"{path}: no entry {cid} with an en-sha line")
        text = pattern.sub(lambda m, c=cid: m[1] + fingerprint(cells[c].source), text)
    path.write_text(text, encoding="utf-8")


def template(lab: str) -> Path:
    """Start ``translations/<lab>.yml``: each Markdown cell's English, stamped, to be replaced by its Chinese."""
    path = TRANSLATIONS / f"{lab}.yml"
    if path.exists():
        raise SystemExit(f"{path} exists")
    lines = [f"# {lab} 的中文：每个 Markdown 单元一项（以单元 id 为键），en-sha 是所译英文单元的指纹。"]
    for cell in english(lab).cells:
        if cell.cell_type == "markdown":
            body = "\n".join(("    " + ln).rstrip() for ln in cell.source.splitlines())
            lines += [f"{cell.id}:", f"  en-sha: {fingerprint(cell.source)}", "  zh: |-", body]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        problems = build(argv[1:])
        print("\n".join(problems) or "written")
        return 1 if problems else 0
    if argv[:1] == ["check"]:
        found = check()
        print("\n".join(found) or "the Chinese labs follow the English ones")
        return 1 if found else 0
    if argv[:1] == ["stamp"] and len(argv) >= 3:
        stamp(argv[1], argv[2:])
        return 0
    if argv[:1] == ["template"] and len(argv) == 2:
        print(template(argv[1]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
