"""The Chinese labs: each is its English lab with the Markdown translated, made by this script.

A Chinese lab is the same assignment as its English lab: the same cells (ids, nbgrader metadata,
grade ids, points, checks and hidden tests), the same program, with each Markdown cell translated
and the comments and printed strings of the code cells in Chinese. Its master
``zh/notebooks/source/<lab>/<lab>.ipynb`` (and the MyST twin ``<lab>.md``) is generated from the
English master ``notebooks/source/<lab>/<lab>.ipynb`` and the translation file
``zh/notebooks/translations/<lab>.yml``, which holds one entry per Markdown cell and one per code
cell that has English text (comments, printed strings), by cell id::

    lab01-03:
      en-sha: 3f2a9c1b0d4e   # the fingerprint of the English cell translated (tools/myst_pages.py)
      zh: |-
        ## 1. 一条链及其边缘分布
        ...
    lab01-09:
      en-sha: 5d0c81e2a7b4
      code: |-
        res = sd.decoding.autoregressive(target, runs=20_000, rng=1)
        print('最后一个词元的观测分布：', ...)

A translated code cell must be the English program (:func:`program_problems`): the same Python once
comments are dropped and string constants blanked, the nbgrader markers (``### BEGIN SOLUTION``...)
unchanged, and a string may change only where it is shown (an argument of ``print``, a docstring, a
label in a literal), never where the program reads it (a key, an argument of another call, a
comparison), so grading cannot differ. The setup cell also gets a last line, :data:`SETUP_LINE`,
which makes the checks answer in Chinese (``specdec_lite._i18n``). The student copies ``zh/notebooks/<lab>.ipynb``
are released by ``python -m specdec_lite.classroom release`` like the English ones (``zh/notebooks``
is an nbgrader course directory with the English course's configuration).

Command line (from the repository root)::

    python tools/labs_zh.py build [lab ...]        # write the Chinese masters (then release)
    python tools/labs_zh.py check                  # every difference, exit status 1 if any
    python tools/labs_zh.py stamp <lab> <cell-id> ...   # these translations now follow the current English
    python tools/labs_zh.py template <lab>         # start a translation file (English text to translate)
"""

from __future__ import annotations

import ast
import copy
import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_lite._i18n import ENV  # noqa: E402
from tools import terms  # noqa: E402
from tools.myst_pages import fingerprint  # noqa: E402

EN_COURSE = ROOT / "notebooks"
ZH_COURSE = ROOT / "zh" / "notebooks"
TRANSLATIONS = ZH_COURSE / "translations"

#: The line the Chinese labs add at the end of the setup cell: the checks then answer in Chinese.
SETUP_LINE = f'os.environ["{ENV}"] = "zh_CN"  # 检查函数用中文给出反馈'

_CJK = re.compile("[\u4e00-\u9fff]")

#: The Colab badge of a lab's first cell, and the address it opens.
_BADGE = re.compile(r"\[!\[Open in Colab\]\(([^)]+)\)\]\((https://colab\.research\.google\.com/github/[^)]+)\)")


#: nbgrader's markers: comments a translation keeps as they are (nbgrader finds the regions by them).
_MARKER = re.compile(r"^\s*###\s*(BEGIN|END)\s+(SOLUTION|HIDDEN TESTS)\s*$", re.M)

#: The prefix and opening quote of a string token (``f'``, ``'''``, ``"``...): what a blanked string keeps.
_OPENING = re.compile(r"^[A-Za-z]*('''|\"\"\"|'|\")")


def _blanked(source: str) -> str:
    """The program of ``source``: its AST with every string constant blanked (comments are not in an AST)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree, include_attributes=False)


def _tokens(source: str) -> list[tuple[int, str]]:
    """The tokens of ``source`` without comments (and the line breaks they leave), each string blanked."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL):
            continue
        text = tok.string
        if tok.type == tokenize.STRING:
            text = _OPENING.match(text)[0]
        out.append((tok.type, text))
    return out


def _strings(tree: ast.AST) -> list[tuple[ast.Constant, bool]]:
    """Every string constant of ``tree``, in ``ast.walk`` order, and whether it is only shown (not read).

    Shown: a docstring, a string whose nearest call taking it as an argument is ``print``, or a label in no
    call at all (``('oracle calls', ...)`` of a table). Read: a subscript, a dict key, a comparison, a format
    specification, an argument or keyword of any other call. A string in no call that the program hands on
    to a call through a variable (``for kind in ('opt', 'uno')``) cannot be told from a label here: the
    translations leave such name-like strings as they are (:func:`english_text` does not count them).
    """
    parents: dict[ast.AST, ast.AST] = {}
    docstrings = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(first.value)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        shown, read, child, parent = True, False, node, parents.get(node)
        while node not in docstrings and parent is not None:
            read = read or (
                (isinstance(parent, ast.Subscript) and child is parent.slice)
                or (isinstance(parent, ast.Dict) and child in parent.keys)
                or isinstance(parent, ast.Compare)
                or (isinstance(parent, ast.FormattedValue) and child is parent.format_spec)
            )
            if isinstance(parent, ast.Call) and child is not parent.func:
                shown = isinstance(parent.func, ast.Name) and parent.func.id == "print"
                break
            child, parent = parent, parents.get(parent)
        if node in docstrings:
            shown, read = True, False
        out.append((node, shown and not read))
    return out


def program_problems(en: str, zh: str) -> list[str]:
    """Why the code ``zh`` is not the program ``en`` with comments and shown strings translated (empty: it is).

    The token streams are equal once comments are dropped and strings blanked, and so are the ASTs with their
    string constants blanked; the nbgrader markers are the same; a string differs only where it is shown
    (:func:`_strings`), so that the program computes, and grades, exactly what the English one does.
    """
    try:
        if _tokens(en) != _tokens(zh) or _blanked(en) != _blanked(zh):
            return ["not the same program once comments are dropped and strings blanked"]
    except (SyntaxError, tokenize.TokenError) as err:
        return [f"does not parse: {err}"]
    out = []
    if [ln.strip() for ln in en.splitlines() if _MARKER.match(ln)] != [
        ln.strip() for ln in zh.splitlines() if _MARKER.match(ln)
    ]:
        out.append("the nbgrader markers (### BEGIN/END SOLUTION, HIDDEN TESTS) differ")
    for (a, shown), (b, _) in zip(_strings(ast.parse(en)), _strings(ast.parse(zh)), strict=True):
        if a.value != b.value and not shown:
            out.append(f"the string {a.value!r} is read by the program: it stays as it is (not {b.value!r})")
    return out


def _has_english(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]{3,}", text)) and not _CJK.search(text)


def english_text(source: str) -> list[str]:
    """The English a student reads in a code cell: comments and shown strings with words and no Chinese.

    nbgrader's markers, ``noqa`` pragmas and the strings the program reads (keys, arguments) do not count.
    """
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
        tree = ast.parse(source)
    except (SyntaxError, tokenize.TokenError):
        return []
    comments = [
        t.string for t in toks if t.type == tokenize.COMMENT and not _MARKER.match(t.string) and "noqa" not in t.string
    ]
    strings = [n.value for n, shown in _strings(tree) if shown and not n.value.isidentifier()]
    return [t for t in comments + strings if _has_english(t)]


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
    markdown_ids, ids = set(), set()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            problems += _code(lab, cell, words.get(cell.id))
            ids.add(cell.id)
            if i == 1:
                cell.source = cell.source.rstrip("\n") + "\n" + SETUP_LINE
            continue
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
    for extra in sorted(set(words) - markdown_ids - ids):
        problems.append(f"{lab} {extra}: a translation for no cell of the English master")
    return nb, problems


def _code(lab: str, cell: nbformat.NotebookNode, entry: dict | None) -> list[str]:
    """Put the Chinese of a code cell (its ``code`` entry) in place; what is wrong with it."""
    if entry is None:
        left = english_text(cell.source)
        return [f"{lab} {cell.id}: no Chinese for this code cell's English ({left[0]!r}...)"] if left else []
    zh = str(entry.get("code", "")).rstrip("\n")
    if entry.get("en-sha") != fingerprint(cell.source):
        return [
            f"{lab} {cell.id}: the English code changed after it was translated (en-sha {entry.get('en-sha')}, "
            f"now {fingerprint(cell.source)}): update the Chinese, then python tools/labs_zh.py stamp {lab} {cell.id}"
        ]
    problems = [f"{lab} {cell.id}: {p}" for p in program_problems(cell.source, zh)]
    if not problems:
        cell.source = zh
    return problems


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

    Cell ids, kinds, code (the same program, :func:`program_problems`, the setup cell save its last line),
    nbgrader metadata (grade ids, points, locks; in ``released`` copies a graded cell's checksum follows its
    text) and notebook metadata.
    """
    out = []
    if [(c.id, c.cell_type) for c in en.cells] != [(c.id, c.cell_type) for c in zh.cells]:
        return ["the cells differ (ids or kinds)"]
    if en.metadata != zh.metadata:
        out.append("the notebook metadata differ")
    for i, (a, b) in enumerate(zip(en.cells, zh.cells, strict=True)):
        meta_a, meta_b = copy.deepcopy(dict(a.metadata)), copy.deepcopy(dict(b.metadata))
        if released:  # nbgrader's checksum of a cell follows its text, translated in both kinds of cell
            for m in (meta_a, meta_b):
                m.get("nbgrader", {}).pop("checksum", None)
        if meta_a != meta_b:
            out.append(f"cell {a.id}: the metadata differ")
        if a.cell_type == "code":
            want, got = a.source, b.source
            if i == 1:
                if not got.endswith("\n" + SETUP_LINE):
                    out.append(f"cell {a.id}: the setup cell must end with the line {SETUP_LINE!r}")
                got = got[: -len(SETUP_LINE) - 1]
            if program_problems(want, got):
                out.append(f"cell {a.id}: the code differs: {'; '.join(program_problems(want, got))}")
        elif "### BEGIN SOLUTION" in a.source and not released:
            if b.source.count("### BEGIN SOLUTION") != 1 or b.source.count("### END SOLUTION") != 1:
                out.append(f"cell {a.id}: the model answer must keep one BEGIN/END SOLUTION region")
    return out


#: What nbgrader writes in place of a model answer in the Chinese student copies (``zh/notebooks/nbgrader_config.py``).
ANSWER_STUB = "在这里写下你的回答"

#: What nbgrader writes in place of model code there (the English copies say ``# YOUR CODE HERE``).
CODE_STUB = "# 在这里写你的代码\nraise NotImplementedError()"

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
    """``tools/terms.py``'s terminology check of a Chinese master, less what :data:`DECIDED` overrides."""
    return [p for p in terms.term_problems(path) if not any(f"'{zh}' for {en}:" in p for en, zh in DECIDED.items())]


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
    cells = {c.id: c for c in english(lab).cells}
    for cid in [c for c in cells if c in translation(lab)] if ids == ["--all"] else ids:
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
