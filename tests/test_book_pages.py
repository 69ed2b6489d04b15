"""The built book's pages, read as HTML: numbering, cross-references, bibliography, buttons.

* Theorems, lemmas, corollaries, propositions, definitions, algorithms and exercises
  carry a number, and no two of one kind share it.
* Every internal link (``{prf:ref}``, ``{ref}``, citations, the table of contents)
  lands on an existing page and anchor; every ``{prf:ref}`` shows a numbered name.
* The bibliography lists every work the chapters cite.
* Lab pages have the "Launch on Colab" button (to the lab in the repository of
  ``_config.yml``) and a download button for the ``.ipynb``; no Colab button anywhere
  opens something other than a lab notebook.
"""

from __future__ import annotations

import re
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin

import pytest
import yaml

from tests.test_book import toc_files

ROOT = Path(__file__).resolve().parents[1]
PAGES = [f"{page}.html" for page in toc_files()]
#: The Chinese edition's pages (zh/_toc.yml), at the same paths under zh/.
ZH_PAGES = [f"zh/{page}.html" for page in toc_files(ROOT / "zh" / "_toc.yml")]
#: The labs' pages, English and Chinese (``zh/notebooks/labNN_*``, the Chinese student copies).
LAB_PAGES = [p for p in [*PAGES, *ZH_PAGES] if p.removeprefix("zh/").startswith("notebooks/lab")]
NUMBERED = ["theorem", "lemma", "corollary", "proposition", "definition", "algorithm", "exercise"]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


class Page(HTMLParser):
    """Ids, links and numbered admonitions of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (href, class)
        self.numbered: list[tuple[str, str, str]] = []  # (kind, id, title text)
        self._open: tuple[str, str] | None = None  # numbered admonition whose title we read
        self._title: list[str] | None = None
        self._link: list | None = None
        self.prf_refs: list[tuple[str, str]] = []  # (href, text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        classes = (a.get("class") or "").split()
        if tag == "div" and "admonition" in classes:
            kind = next((k for k in NUMBERED if k in classes), None)
            if kind and ("proof" in classes or kind == "exercise"):
                self._open = (kind, a.get("id", ""))
        if tag == "p" and "admonition-title" in classes and self._open:
            self._title = []
        if tag == "a" and "href" in a:
            self.links.append((a["href"], a.get("class") or ""))
            self._link = [a["href"], []]

    def handle_endtag(self, tag):
        if tag == "p" and self._title is not None:
            kind, ident = self._open
            self.numbered.append((kind, ident, " ".join("".join(self._title).split())))
            self._title, self._open = None, None
        if tag == "a" and self._link is not None:
            self.prf_refs.append((self._link[0], "".join(self._link[1]).strip()))
            self._link = None

    def handle_data(self, data):
        if self._title is not None:
            self._title.append(data)
        if self._link is not None:
            self._link[1].append(data)


@pytest.fixture(scope="module")
def pages(built_book: Path) -> dict[str, Page]:
    out = {}
    for name in [*PAGES, *ZH_PAGES, "genindex.html", "search.html", "zh/genindex.html", "zh/search.html"]:
        parser = Page()
        parser.feed((built_book / name).read_text(encoding="utf-8"))
        out[name] = parser
    return out


def test_numbered_environments_have_unique_numbers(pages):
    seen: dict[tuple[str, str], str] = {}
    counts: dict[str, int] = defaultdict(int)
    for name in PAGES:
        for kind, ident, title in pages[name].numbered:
            match = re.match(rf"{kind.capitalize()} (\d+(?:\.\d+)*(?:\([a-z]\))?)(?:\s|$)", title)
            assert match, f"{name}: the {kind} {ident!r} has no number: {title!r}"
            key = (kind, match[1])
            assert key not in seen, f"{kind.capitalize()} {match[1]} appears twice: {seen[key]} and {name}#{ident}"
            seen[key] = f"{name}#{ident}"
            counts[kind] += 1
    chapters = [p for p in PAGES if re.match(r"book/ch\d\d_", p)]
    assert chapters, "the table of contents lists no chapter"
    assert counts["theorem"] >= 1 and counts["exercise"] >= 3 * len(chapters), dict(counts)


def test_chinese_pages_number_results_as_the_english_do(pages):
    """Each numbered result and exercise has the same number in both editions (Theorem 1(b) is 定理 1(b))."""
    number = re.compile(r"(\d+(?:\.\d+)*(?:\([a-z]\))?)")
    checked = 0
    for zh in ZH_PAGES:
        en = zh[3:]
        if en not in pages:
            continue
        en_numbers = [(k, i, number.search(t)[1]) for k, i, t in pages[en].numbered]
        zh_numbers = [(k, i, (number.search(t) or [None, None])[1]) for k, i, t in pages[zh].numbered]
        assert zh_numbers == en_numbers, f"{zh}: numbered results differ from {en}"
        for _, _, title in pages[zh].numbered:
            assert re.match(r"[\u4e00-\u9fff]", title), f"{zh}: a box titled in English: {title!r}"
        checked += len(en_numbers)
    assert checked >= 50, f"only {checked} numbered results compared"


def test_internal_links_land(pages, built_book):
    """Every link to a page of the book (either edition), with or without #anchor, resolves."""
    anchored = 0
    for name in [*PAGES, *ZH_PAGES]:
        for href, _ in pages[name].links:
            if re.match(r"^[a-z]+:", href) or href.startswith("//"):
                continue
            target, anchor = urldefrag(urljoin(name, href))
            target = unquote(target) or name
            path = built_book / target
            assert path.exists(), f"{name} links to missing {target}"
            if anchor and target.endswith(".html"):
                if target not in pages:
                    parser = Page()
                    parser.feed(path.read_text(encoding="utf-8"))
                    pages[target] = parser
                assert unquote(anchor) in pages[target].ids, f"{name} links to missing anchor {target}#{anchor}"
                anchored += 1
    assert anchored >= len(PAGES), f"only {anchored} links with an anchor were found: is the HTML parsed?"


def test_prf_references_show_numbers(pages):
    """A {prf:ref} renders as 'Theorem 3', not as a bare label."""
    labels = {ident: kind for name in PAGES for kind, ident, _ in pages[name].numbered}
    checked = 0
    for name in PAGES:
        for href, text in pages[name].prf_refs:
            anchor = urldefrag(href)[1]
            if anchor in labels and labels[anchor] != "exercise" and text:
                checked += 1
                if re.fullmatch(r"[\w-]+", text) and text == anchor:
                    pytest.fail(f"{name}: reference to {anchor} shows its label, not its number")
    assert checked >= len(labels) // 2, f"only {checked} references to {len(labels)} numbered results were found"


def test_bibliography_lists_every_citation(built_book):
    keys = set()
    for page in toc_files():
        for suffix in (".md", ".ipynb"):
            src = ROOT / f"{page}{suffix}"
            if src.is_file():
                for group in re.findall(r"\{cite:?[a-z]*\}`([^`]+)`", src.read_text(encoding="utf-8")):
                    keys |= {k.strip() for k in group.split(",")}
    assert keys, "no chapter cites anything: is the {cite} pattern still the one the book uses?"
    refs = re.sub(r"<[^>]+>", "", (built_book / "book" / "references.html").read_text(encoding="utf-8"))
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    for key in sorted(keys):
        entry = re.search(r"@\w+\{" + re.escape(key) + r",(.*?)\n\}", bib, re.S)
        assert entry, f"cited key {key} is not in references.bib"
        title = re.search(r"title\s*=\s*[{\"]+(.+?)[}\"]+,?\s*\n", entry[1])
        words = re.sub(r"[{}\\]", "", title[1]).split()[:4] if title else []
        assert words and " ".join(words).lower() in " ".join(refs.split()).lower(), f"{key}: not in the bibliography"
    html = (built_book / "book" / "references.html").read_text(encoding="utf-8")
    assert html.count('<div class="citation"') >= len(keys)  # each entry (a list item: book/_ext/a11y.py)


@pytest.mark.parametrize("page", LAB_PAGES)
def test_lab_pages_have_colab_and_download_buttons(pages, built_book, page):
    repo = CONFIG["repository"]["url"].rstrip("/").removeprefix("https://github.com/")
    branch = CONFIG["repository"]["branch"]
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{page.removesuffix('.html')}.ipynb"
    hrefs = [h for h, _ in pages[page].links]
    assert colab in hrefs, f"{page}: no 'Launch on Colab' to {colab}"
    edition, doc = ("zh/", page.removeprefix("zh/")) if page.startswith("zh/") else ("", page)
    download = f"../_sources/{doc.removesuffix('.html')}.ipynb"
    assert download in hrefs, f"{page}: no download button for the notebook"
    assert (built_book / edition / "_sources" / f"{doc.removesuffix('.html')}.ipynb").is_file()


def test_every_colab_button_opens_a_lab(pages):
    for name in [*PAGES, *ZH_PAGES]:
        for href, _ in pages[name].links:
            if href.startswith("https://colab.research.google.com/github/"):
                path = href.split("/blob/", 1)[1].split("/", 1)[1]
                assert path.endswith(".ipynb") and (ROOT / path).is_file(), f"{name}: Colab opens {path}"


def test_publish_workflow_runs_the_readme_command():
    """.github/workflows/book.yml builds with the README's command and deploys _build/html."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^(pip install -r requirements\.txt && jupyter-book build \.)", readme, re.M)
    assert command, "the README's build command changed: update the workflow and this test"
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    assert any(s.get("run", "").strip() == command[1] for s in steps)
    upload = next(s for s in steps if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "_build/html"
    assert any("deploy-pages" in s.get("uses", "") for s in workflow["jobs"]["deploy"]["steps"])
