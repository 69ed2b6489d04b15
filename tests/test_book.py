"""The book builds with warnings as errors, and every page in the table of contents exists."""

import re
from pathlib import Path

from tools.editions import toc_files  # the pages of a _toc.yml, read for both editions

ROOT = Path(__file__).resolve().parents[1]


def site_pages() -> list[str]:
    """Every page of the site: the English edition's, then the Chinese edition's under ``zh/``."""
    return toc_files() + [f"zh/{page}" for page in toc_files(ROOT / "zh" / "_toc.yml")]


def test_every_toc_page_is_built(built_book):
    for page in site_pages():
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


# --- Numbering: the paper's results carry the paper's labels, the book's are numbered by chapter ---

#: Every result of the paper, where the book states it, with the label it must render with.
PAPER_RESULTS = {
    "book/ch01_markov_chains": {
        "def-oracle-call": "Definition 1",
        "asm-cost": "Assumption 1",
        "alg-autoregressive": "Algorithm 3",
        "rem-lookahead": "Remark 1",
    },
    "book/ch02_unbiased": {
        "alg-generic": "Algorithm 2",
        "alg-speculative": "Algorithm 1",
        "thm-unbiased": "Theorem 1(a)",
    },
    "book/ch03_rejections": {"thm-rejections": "Theorem 1(b)", "rem-alpha": "Remark 2"},
    "book/ch04_optimality": {"thm-lower-bound": "Theorem 2", "cor-shape": "Corollary 1"},
    "book/ch05_tradeoff": {"thm-optimal-law": "Theorem 4", "thm-front": "Theorem 5"},
    "book/ch06_batch": {"alg-batch": "Algorithm 4", "thm-batch": "Theorem 3", "prop-batch-limit": "Proposition 1"},
}
_BOX = re.compile(
    r'<div class="(?:proof (\w+)[^"]*|(exercise)) admonition" id="([^"]+)">\s*'
    r'<p class="admonition-title"><span class="caption-number">([^<]*)</span>'
)
_LINK = re.compile(r'<a class="reference internal" href="[^"#]*#([^"]+)">(?:<span[^>]*>)?([^<]*)<')


def boxes(html: str) -> list[tuple[str, str, str]]:
    """``(kind, id, rendered label)`` of every numbered result and exercise box, in page order."""
    return [(kind or exercise, node_id, label.strip()) for kind, exercise, node_id, label in _BOX.findall(html)]


def test_paper_results_render_with_the_papers_labels(built_book):
    expected = {label: text for page in PAPER_RESULTS.values() for label, text in page.items()}
    for page, results in PAPER_RESULTS.items():
        found = {node_id: label for _, node_id, label in boxes((built_book / f"{page}.html").read_text())}
        for node_id, label in results.items():
            assert found.get(node_id) == label, f"{page}: box {node_id} is {found.get(node_id)!r}, not {label!r}"
    # every link to a paper result, on every page, says the paper's label (unless it has its own text)
    kinds = ("Theorem", "Algorithm", "Proposition", "Corollary", "Remark", "Definition", "Assumption")
    links = 0
    for html_file in built_book.rglob("*.html"):
        for target, text in _LINK.findall(html_file.read_text()):
            if target in expected and text.startswith(kinds):
                assert text.strip() == expected[target], f"{html_file.name}: link to {target} reads {text!r}"
                links += 1
    assert links >= 30


def test_the_books_own_results_and_exercises_are_numbered_within_their_chapter(built_book):
    paper = {label for page in PAPER_RESULTS.values() for label in page}
    for page in sorted((built_book / "book").glob("ch0*.html")):
        chapter = int(page.name[2:4])
        found = boxes(page.read_text())
        exercises = [label for kind, _, label in found if kind == "exercise"]
        assert exercises == [f"Exercise {chapter}.{i}" for i in range(1, len(exercises) + 1)], page.name
        assert len(exercises) >= 3, page.name
        per_kind: dict[str, int] = {}
        for kind, node_id, label in found:
            if kind == "exercise" or node_id in paper:
                continue
            per_kind[kind] = per_kind.get(kind, 0) + 1
            assert label == f"{kind.title()} {chapter}.{per_kind[kind]}", f"{page.name}: {node_id} is {label!r}"
