"""The book builds with warnings as errors, and every page in the table of contents exists."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files.append(chapter["file"])
            files += [s["file"] for s in chapter.get("sections", [])]
    return [str(Path(f).with_suffix("")) for f in files]


def test_every_toc_page_is_built(built_book):
    for page in toc_files():
        html = built_book / f"{page}.html"
        assert html.is_file(), f"missing page {html}"
        assert html.stat().st_size > 2000


def test_plotly_js_is_served_by_the_book(built_book):
    js = built_book / "_static" / "plotly.min.js"
    assert js.is_file() and js.stat().st_size > 1_000_000


def test_bibliography_renders(built_book):
    html = (built_book / "book" / "references.html").read_text().lower()
    assert "theoretical perspective for speculative decoding" in html
    assert "fast inference from transformers via speculative decoding" in html
