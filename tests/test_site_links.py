"""Every link of the built site leads somewhere: each internal ``href`` and ``src`` of every page of both
editions resolves to a file of the site, and the "PDF" button of every page leads to its edition's PDF
where the site is published (``html.baseurl`` of ``_config.yml``), which the publishing workflow builds.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from pdf import PDF_NAMES, SITE_FOLDER  # noqa: E402

#: Folders of the built site (either edition's) whose HTML files are not pages: the theme's Jinja macros
#: copied among its static files.
NOT_PAGES = "_static"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("href", "src") and value]


def internal_links(site: Path) -> dict[str, list[str]]:
    """Every page of ``site`` (relative path) and the internal links it holds (no scheme, not ``//``, not
    only a ``#fragment``)."""
    out = {}
    for page in sorted(site.rglob("*.html")):
        name = page.relative_to(site).as_posix()
        if NOT_PAGES in name.split("/")[:-1]:
            continue
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        out[name] = [u for u in parser.urls if not urlsplit(u).scheme and not u.startswith("//") and urlsplit(u).path]
    return out


def dead_links(site: Path, links: dict[str, list[str]]) -> list[str]:
    """``page -> link`` for each link that does not resolve to a file of ``site`` (a folder: its index.html)."""
    out = []
    for page, urls in links.items():
        for url in urls:
            target = (site / page).parent / unquote(urlsplit(url).path)
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                out.append(f"{page} -> {url}")
    return out


def test_every_internal_link_of_the_built_site_leads_to_a_file(built_book: Path) -> None:
    links = internal_links(built_book)
    zh = [p for p in links if p.startswith("zh/")]
    assert len(zh) > 10 and len(links) - len(zh) > 10, "both editions' pages are crawled"
    dead = dead_links(built_book, links)
    print(f"{sum(map(len, links.values()))} internal links on {len(links)} pages ({len(zh)} Chinese)")
    assert not dead, f"{len(dead)} links lead nowhere:\n" + "\n".join(dead[:40])


def test_the_link_check_finds_a_dead_link(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "img.png").write_bytes(b"x")
    (tmp_path / "book" / "a.html").write_text(
        '<a href="b.html#top">b</a><img src="../img.png"><a href="#here">here</a><a href="https://x.org/">x</a>'
        '<a href="../pdf/specdec-theory-en.pdf">PDF</a><script src="../_static/gone.js"></script>'
    )
    (tmp_path / "book" / "b.html").write_text('<a href="a.html">a</a>')
    for static in ("_static", "zh/_static"):
        (tmp_path / static).mkdir(parents=True)
        (tmp_path / static / "macros.html").write_text("<a href=\"{{ pathto('x') }}\">x</a>")
    links = internal_links(tmp_path)
    assert set(links) == {"book/a.html", "book/b.html"}
    assert dead_links(tmp_path, links) == [
        "book/a.html -> ../pdf/specdec-theory-en.pdf",
        "book/a.html -> ../_static/gone.js",
    ]


def test_the_pdf_button_leads_to_the_pdfs_the_workflow_publishes() -> None:
    """The address is set once (``html.baseurl``); both editions' buttons lead to ``<it>/pdf/``; the
    workflow that publishes ``_build/html`` runs ``tools/pdf.py`` (which copies the PDFs into its ``pdf/``)
    after the README's build command and before the upload."""
    from book._ext import paper_figures

    published = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["html"]["baseurl"]
    assert published.startswith("https://") and published.endswith("/")
    assert "baseurl" not in (yaml.safe_load((ROOT / "zh" / "_config.yml").read_text(encoding="utf-8"))["html"])
    assert paper_figures.site_url() == published and paper_figures.SITE_FOLDER == SITE_FOLDER == "pdf"
    for lang in ("en", "zh"):
        for page in ("book/intro", "book/ch01_markov_chains"):
            assert paper_figures.pdf_href(lang, page) == f"{published}pdf/{PDF_NAMES[lang]}"
    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in steps]
    build = next(i for i, r in enumerate(runs) if "jupyter-book build ." in r)
    pdf = next(i for i, r in enumerate(runs) if "python tools/pdf.py" in r)
    upload = next(i for i, s in enumerate(steps) if "upload-pages-artifact" in s.get("uses", ""))
    assert build < pdf < upload and steps[upload]["with"]["path"] == "_build/html"
