"""The book on paper: both editions' PDFs (``python tools/pdf.py``) hold what the site shows.

The PDFs are built once per test run, into the folder of the site the other tests read
(``built_book``, so the LaTeX build reuses its execution cache and its doctrees), and read back
with poppler (``pdftotext``, ``pdfimages``) and the LaTeX log. What each PDF must hold is read from
the built site: every page's title, every numbered figure (with an image on the page that names
it), every numbered result with the site's number (the paper's own numbers included), every glued
number, and each page's header link to the PDF.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import BOOK_ROOT

pytestmark = pytest.mark.slow

sys.path.insert(0, str(BOOK_ROOT / "tools"))
from pdf import PDF_NAMES, SITE_FOLDER  # noqa: E402

EDITIONS = ("en", "zh")
#: The site of each edition inside the built site, and its table of contents.
SITE = {"en": "", "zh": "zh/"}
TOC = {"en": BOOK_ROOT / "_toc.yml", "zh": BOOK_ROOT / "zh" / "_toc.yml"}
#: How a figure's caption starts in the PDF (numfig_format of each _config.yml, then LaTeX's colon).
FIGURE_WORD = {"en": "Figure", "zh": "图"}
#: How the paper's theorems are named in each edition (sphinx-proof's catalogue, as on the site).
THEOREM_WORD = {"en": "Theorem", "zh": "定理"}
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass
class Paper:
    pdf: Path
    log: str
    pages: list[str]  # each page's text, whitespace removed
    image_pages: set[int]  # 1-based numbers of the pages that hold an image


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _build(out: Path) -> str:
    """Build both PDFs under ``out`` (the built site's folder); '' or what went wrong."""
    proc = subprocess.run(
        [sys.executable, str(BOOK_ROOT / "tools" / "pdf.py"), "--path-output", str(out)],
        capture_output=True,
        text=True,
    )
    return "" if proc.returncode == 0 else f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"


@pytest.fixture(scope="module")
def papers(built_book: Path) -> dict[str, Paper]:
    from tests.shared_once import once

    out = built_book.parents[1]
    failure = once("pdf", lambda: _build(out))
    assert not failure, failure
    result = {}
    for edition in EDITIONS:
        pdf = out / "_build" / "pdf" / PDF_NAMES[edition]
        latex = out / "_build" / ("latex" if edition == "en" else f"{edition}/_build/latex")
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True)
        rows = [line.split() for line in listing.stdout.splitlines()[2:]]
        image_pages = {int(row[0]) for row in rows if len(row) > 2 and row[2] == "image"}
        log = (latex / pdf.with_suffix(".log").name).read_text(encoding="utf-8", errors="replace")
        result[edition] = Paper(pdf, log, [_squash(p) for p in text.split("\f")], image_pages)
    return result


def _pages(edition: str) -> list[str]:
    toc = yaml.safe_load(TOC[edition].read_text(encoding="utf-8"))
    return [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]


def _html(built_book: Path, edition: str, page: str) -> str:
    return (built_book / f"{SITE[edition]}{page}.html").read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_every_page_title_is_in_the_pdf(built_book: Path, papers: dict[str, Paper]) -> None:
    for edition in EDITIONS:
        text = "".join(papers[edition].pages)
        for page in _pages(edition):
            h1 = re.search(r"<h1[^>]*>(.*?)</h1>", _html(built_book, edition, page), re.S)
            title = _squash(_text(h1[1])).rstrip("#¶")
            assert title and title in text, f"{edition}: the title of {page} ({title!r}) is not in the PDF"


def test_every_numbered_figure_has_an_image_on_the_page_that_names_it(
    built_book: Path, papers: dict[str, Paper]
) -> None:
    for edition in EDITIONS:
        paper, word = papers[edition], FIGURE_WORD[edition]
        numbers = []
        for page in _pages(edition):
            found = re.findall(r'<span class="caption-number">([^<]*)</span>', _html(built_book, edition, page))
            numbers += [_squash(n) for n in found if _squash(n).startswith(word)]
        assert len(numbers) >= 30, f"{edition}: only {len(numbers)} numbered figures on the site"
        for number in numbers:
            caption = f"{number}:"
            where = [i + 1 for i, text in enumerate(paper.pages) if caption in text]
            assert where, f"{edition}: no caption {caption!r} in the PDF"
            assert set(where) & paper.image_pages, f"{edition}: {number} has no image on its page(s) {where}"


def test_every_numbered_result_keeps_the_sites_number(built_book: Path, papers: dict[str, Paper]) -> None:
    """Theorems, lemmas, algorithms, ... (the paper's numbers, e.g. Theorem 1(b)) and exercises."""
    for edition in EDITIONS:
        text = "".join(papers[edition].pages)
        labels = set()
        for page in _pages(edition):
            html_text = _html(built_book, edition, page)
            boxes = re.findall(
                r'<div class="(?:proof|exercise)[^"]*"[^>]*>\s*<p class="admonition-title">(.*?)</p>', html_text, re.S
            )
            labels |= {
                _squash(_text(re.search(r'<span class="caption-number">([^<]*)</span>', b)[1]))
                for b in boxes
                if "caption-number" in b
            }
        theorem = THEOREM_WORD[edition]
        assert any(re.fullmatch(rf"{theorem}1\([a-z]\)", label) for label in labels), sorted(labels)
        missing = sorted(label for label in labels if label not in text)
        assert not missing, f"{edition}: numbered results of the site not in the PDF: {missing}"


#: Characters of running foot and head a page break may put inside a glued sentence.
FURNITURE = 80


def _across_a_page_break(glued: str, pages: list[str]) -> bool:
    """Whether ``glued`` ends one page and begins the next, its two parts apart only by the page's foot and head."""
    for before, after in itertools.pairwise(pages):
        for k in range(1, len(glued)):
            at = before.rfind(glued[:k])
            if at >= 0 and len(before) - at - k <= FURNITURE and 0 <= after.find(glued[k:]) <= FURNITURE:
                return True
    return False


def test_glued_numbers_are_printed(built_book: Path, papers: dict[str, Paper]) -> None:
    for edition in EDITIONS:
        text = "".join(papers[edition].pages)
        glued = set()
        for page in _pages(edition):
            glued |= {
                _squash(_text(g))
                for g in re.findall(r'<span class="pasted-text">(.*?)</span>', _html(built_book, edition, page), re.S)
            }
        assert len(glued) >= 50, f"{edition}: only {len(glued)} glued numbers found on the site"
        pages = papers[edition].pages
        missing = sorted(g for g in glued if g not in text and not _across_a_page_break(g, pages))
        assert not missing, f"{edition}: glued numbers of the site not in the PDF: {missing[:20]}"
        assert "IPython.core.display" not in text


def test_the_log_reports_no_missing_character_and_no_undefined_reference(papers: dict[str, Paper]) -> None:
    for edition, paper in papers.items():
        assert "Missing character" not in paper.log, edition
        undefined = re.findall(r"(?:Reference|Citation) `[^']*' on page \d+\s+undefined", paper.log)
        assert not undefined, f"{edition}: {undefined[:10]}"
        assert "There were undefined references" not in paper.log, edition


def test_the_chinese_edition_extracts_as_chinese(papers: dict[str, Paper]) -> None:
    text = "".join(papers["zh"].pages)
    chinese = len(_CJK.findall(text))
    fonts = subprocess.run(["pdffonts", str(papers["zh"].pdf)], capture_output=True, text=True, check=True).stdout
    assert "CJK" in fonts, fonts
    # The Chinese prose outweighs the shared code and the figures' English labels.
    letters = len(re.findall("[A-Za-z]", text))
    assert chinese > letters / 2, (chinese, letters)
    assert len(_CJK.findall("".join(papers["en"].pages))) == 0


def test_every_page_links_to_its_editions_pdf(built_book: Path, papers: dict[str, Paper]) -> None:
    """Each page's "PDF" button leads to its edition's PDF where the site is published (``html.baseurl``),
    and the site holds that PDF there (``tools/pdf.py``, which the publishing workflow runs)."""
    config = yaml.safe_load((BOOK_ROOT / "_config.yml").read_text(encoding="utf-8"))
    published = config["html"]["baseurl"].rstrip("/") + "/"
    for edition in EDITIONS:
        for page in _pages(edition):
            link = re.search(r'<a class="btn sd-pdf-link" href="([^"]+)"', _html(built_book, edition, page))
            assert link, f"{edition}: {page} has no link to the PDF"
            assert link[1] == f"{published}{SITE_FOLDER}/{PDF_NAMES[edition]}", (page, link[1])
        site_copy = built_book / SITE_FOLDER / PDF_NAMES[edition]
        assert site_copy.read_bytes() == papers[edition].pdf.read_bytes(), "the site publishes the PDF just built"


def test_the_chinese_pdf_prints_its_chrome_in_chinese(papers: dict[str, Paper]) -> None:
    """sphinx-proof's "Proof." is "证明：" (in italics, before the proof), its index and the bibliography Chinese."""
    zh, en = "".join(papers["zh"].pages), "".join(papers["en"].pages)
    for english, chinese in (("Proof.", "证明："), ("ProofIndex", "定理与定义索引"), ("Bibliography", "参考文献")):
        assert english in en and english not in zh, english
        assert chinese in zh, chinese
    assert zh.count("证明：") >= 10, zh.count("证明：")


def _site_figures(built_book: Path, edition: str) -> list[dict]:
    """Every plotly figure the edition's pages show (the JSON its run wrote into the page)."""
    sys.path.insert(0, str(BOOK_ROOT / "book" / "_ext"))
    from paper_figures import plotly_figure

    figures = []
    for page in _pages(edition):
        html = _html(built_book, edition, page)
        plots = [m.start() for m in re.finditer(r"Plotly\.newPlot\(", html)]
        # a lab page's explorer still (book/_ext/reader_pages.py) is the web's picture of a widget: the PDF's lab
        # chapters print the student copy, whose explorers run in Jupyter or Colab
        stills = {next((at for at in plots if at > s.start()), None) for s in re.finditer("sd-explorer-still", html)}
        figures += [plotly_figure(html[at:]) for at in plots if at not in stills]
    return figures


def test_the_chinese_pdf_prints_the_chinese_runs_figures_in_a_cjk_font(
    built_book: Path, papers: dict[str, Paper]
) -> None:
    """Each edition's PDF holds the images of its own pages' figures: the Chinese ones in Noto Sans CJK SC."""
    sys.path.insert(0, str(BOOK_ROOT / "book" / "_ext"))
    from paper_figures import CJK_FONT_FAMILY, STATIC_DIR, plotly_image_name, with_cjk_font

    out = built_book.parents[1] / "_build"
    for edition, latex, font in (("en", out / "latex", None), ("zh", out / "zh" / "_build" / "latex", CJK_FONT_FAMILY)):
        figures = _site_figures(built_book, edition)
        assert len(figures) >= 20, f"{edition}: only {len(figures)} plotly figures on the site"
        for figure in figures:
            printed = with_cjk_font(figure) if font else figure
            assert (latex / STATIC_DIR / plotly_image_name(printed)).is_file(), (
                f"{edition}: {figure['layout'].get('title')}"
            )
    assert "Noto Sans CJK SC" in CJK_FONT_FAMILY


def test_the_chinese_pdf_prints_the_chinese_runs_sentences(papers: dict[str, Paper]) -> None:
    """Chapter 8's sentence on the GPU files, made by the Chinese run, is in the Chinese PDF (not the English one)."""
    import gettext

    from specdec_lite import _i18n
    from specdec_lite.llm import gpu_notes, measure_pair

    english = gpu_notes.results_gpu_note(measure_pair.load_results())
    chinese = gettext.translation(_i18n.DOMAIN, str(_i18n.LOCALE_DIR), languages=["zh_CN"]).gettext(english)
    assert chinese != english
    zh = "".join(papers["zh"].pages)
    assert _squash(chinese) in zh and _squash(english) not in zh
    assert _squash(english) in "".join(papers["en"].pages)


def _paper_figures():
    sys.path.insert(0, str(BOOK_ROOT / "book" / "_ext"))
    import paper_figures

    return paper_figures


def test_a_printed_figure_has_no_slider_and_its_note_names_the_setting(monkeypatch, tmp_path: Path) -> None:
    """The export hands Kaleido the figure as the page opens it without its controls (shorter by the slider's
    room), and the sentence under it gives the web page's full address and the setting the image shows."""
    import kaleido

    pf = _paper_figures()
    steps = [
        {"label": f"{v:.2f}", "method": "update", "args": [{"visible": [i == j for j in range(2)]}]}
        for i, v in enumerate((0.0, 0.5))
    ]
    figure = {
        "data": [
            {"type": "bar", "x": [1, 2], "y": [3, 4]},
            {"type": "bar", "x": [1, 2], "y": [4, 3], "visible": False},
        ],
        "layout": {
            "height": 480,
            "title": {"text": "A figure with a slider"},
            "sliders": [
                {"active": 0, "currentvalue": {"prefix": "draft quality = "}, "pad": {"t": 40}, "steps": steps}
            ],
            "updatemenus": [{"buttons": [{"label": "first", "method": "update", "args": [{}]}]}],
        },
    }
    handed: list[dict] = []

    def fake_export(specs, **kwargs):
        for spec in specs:
            handed.append(spec)
            Path(spec["path"]).write_bytes(b"png")

    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", fake_export)
    pf.export_plotly([(figure, tmp_path / pf.plotly_image_name(figure))])
    (spec,) = handed
    assert "sliders" not in spec["fig"]["layout"] and "updatemenus" not in spec["fig"]["layout"]
    assert spec["fig"]["data"] == figure["data"] and figure["layout"]["sliders"], "the page's figure is left as it was"
    assert spec["opts"]["height"] == 480 - (pf.SLIDER_HEIGHT - pf.DEFAULT_MARGIN_BOTTOM) < 480
    assert pf.interaction(figure) == "slider" and pf.setting(figure) == "draft quality = 0.00"
    site = pf.site_url()
    assert site.startswith("https://"), site
    for lang, start in (("en", "On the web page ("), ("zh", "网页版（")):
        note = pf.note_paragraph(lang, "slider", pf.page_url(lang, "book/ch03_rejections"), pf.setting(figure))
        address = f"{site}{'zh/' if lang == 'zh' else ''}book/ch03_rejections.html"
        assert note.astext().startswith(f"{start}{address}"), note.astext()
        assert "draft quality = 0.00" in note.astext()


def test_a_long_label_is_set_smaller_rather_than_cut() -> None:
    """A panel title wider than the exported image (Chapter 8's labels) gets a font that fits it; one that fits
    keeps its size."""
    pf = _paper_figures()
    long = "NVIDIA H100 80GB HBM3, 1 thread(s), load average 0.12 on 16 cores; bfloat16; draft EleutherAI/pythia-160m"
    figure = {
        "data": [],
        "layout": {
            "annotations": [
                {"text": long, "x": 0.5, "xref": "paper", "font": {"size": 16}},
                {"text": "short", "x": 0.5, "xref": "paper", "font": {"size": 16}},
            ]
        },
    }
    fitted = pf.paper_figure(figure)["layout"]["annotations"]
    size = fitted[0]["font"]["size"]
    assert size < 16 and pf.text_width(long, size) <= pf.EXPORT_WIDTH
    assert fitted[1]["font"]["size"] == 16


def test_the_token_output_keeps_its_colours(papers: dict[str, Paper]) -> None:
    """Chapter 8's token-by-token output is set in its kinds' colours and line styles (``\\sdtok...`` of the
    preamble), its legend with it, not printed as plain text."""
    for edition, paper in papers.items():
        tex = paper.pdf.parent.parent / ("latex" if edition == "en" else f"{edition}/_build/latex")
        source = (tex / PDF_NAMES[edition].replace(".pdf", ".tex")).read_text(encoding="utf-8")
        for kind in ("accepted", "rejected", "bonus"):
            assert source.count(f"\\sdtok{kind}{{") >= 2, (edition, kind)  # tokens, and the legend's sample
        text = "".join(paper.pages)
        assert "TVdistanceatitsposition" in text or "该位置的TV距离" in text, edition
        assert "itstextisprintedhere" not in text and "这里印出其文字" not in text, edition


def test_a_part_page_prints_its_caption_once(papers: dict[str, Paper]) -> None:
    """The parts' captions name them ("Part I · ..."): LaTeX adds no "Part I" (nor "I") of its own above them."""
    for edition, paper in papers.items():
        toc = yaml.safe_load(TOC[edition].read_text(encoding="utf-8"))
        for part in toc["parts"]:
            caption = _squash(part["caption"])
            pages = [text for text in paper.pages if re.fullmatch(r"\S{0,12}?" + re.escape(caption) + r"\d+", text)]
            assert len(pages) == 1, f"{edition}: no single part page for {caption!r}: {pages}"
            assert re.fullmatch(re.escape(caption) + r"\d+", pages[0]), f"{edition}: its part page reads {pages[0]!r}"


def test_every_note_gives_the_web_pages_full_address(papers: dict[str, Paper]) -> None:
    config = yaml.safe_load((BOOK_ROOT / "_config.yml").read_text(encoding="utf-8"))
    site = config["html"]["baseurl"].rstrip("/") + "/"
    for edition, start in (("en", "Onthewebpage("), ("zh", "网页版（")):
        text = "".join(papers[edition].pages)
        notes = re.findall(re.escape(start) + r"(\S{0,120}?\.html)", text)
        assert len(notes) >= 10, f"{edition}: {len(notes)} notes"
        wrong = [n for n in notes if not n.startswith(site + ("zh/" if edition == "zh" else "") + "book/")]
        assert not wrong, f"{edition}: {wrong[:5]}"


def test_no_figure_sits_alone_in_the_middle_of_a_mostly_empty_page(papers: dict[str, Paper], tmp_path: Path) -> None:
    """A page of floats that the figure fills a little (white above and below it) is what LaTeX makes of a figure
    that fits no text page; the preamble lets figures share text pages instead."""
    import numpy as np

    for edition, paper in papers.items():
        prefix = tmp_path / edition
        subprocess.run(["pdftoppm", "-r", "20", "-gray", str(paper.pdf), str(prefix)], check=True)
        lonely = []
        for number in sorted(paper.image_pages):
            rows = _gray(_page_image(prefix, number))
            body = rows[int(len(rows) * 0.08) : int(len(rows) * 0.92)]
            ink = np.flatnonzero((body <= 250).any(axis=1))
            top, bottom = ink[0] / len(body), (len(body) - 1 - ink[-1]) / len(body)
            if top > 0.1 and bottom > 0.1:
                lonely.append((number, round(top, 2), round(bottom, 2)))
        assert not lonely, f"{edition}: pages with a figure alone in white (page, white above, white below): {lonely}"


def _page_image(prefix: Path, number: int) -> Path:
    """The file pdftoppm wrote for a page (it pads the number to the width of the last page's)."""
    (path,) = [p for p in prefix.parent.glob(f"{prefix.name}-*.pgm") if int(p.stem.rsplit("-", 1)[1]) == number]
    return path


def _gray(path: Path):
    import numpy as np

    data = path.read_bytes()
    magic, size, depth, pixels = data.split(b"\n", 3)
    width, height = map(int, size.split())
    return np.frombuffer(pixels, dtype=np.uint8)[: width * height].reshape(height, width)
