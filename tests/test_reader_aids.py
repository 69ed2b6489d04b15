"""The reader's aids stay honest: results at a glance, glossary, self-checks, answers, the worked example.

These tests read the Markdown sources only (no build): every function and test named on the
results page exists, every numbered box of the chapters is listed there, every glossary term
is linked from the notation page, every chapter ends with folded self-check questions, and
every exploration exercise has an answer, not only hints.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CHAPTERS = sorted(BOOK.glob("ch0*.md"))
RESULTS = (BOOK / "results.md").read_text(encoding="utf-8")
GLOSSARY = (BOOK / "glossary.md").read_text(encoding="utf-8")
NOTATION = (BOOK / "notation.md").read_text(encoding="utf-8")
BOXES = ("theorem", "lemma", "proposition", "corollary", "remark", "algorithm", "definition", "assumption")


def boxes(text: str) -> list[tuple[str, str, str | None]]:
    """(kind, label, paper number or None) of every sphinx-proof box of a page."""
    out = []
    for m in re.finditer(r"^:::\{prf:(\w+)\}.*\n:label: (\S+)\n(?::paper: (\S+)\n)?", text, re.M):
        if m[1] in BOXES:
            out.append((m[1], m[2], m[3]))
    return out


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after ``heading``."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def glossary_terms() -> list[str]:
    body = GLOSSARY.split("```{glossary}", 1)[1].split("```", 1)[0]
    return [line.strip() for line in body.splitlines() if line and not line.startswith((" ", ":"))]


def test_every_box_of_the_chapters_is_at_a_glance():
    listed = set(re.findall(r"\{prf:ref\}`([^`]+)`", RESULTS))
    found = [(page.name, label) for page in CHAPTERS for _, label, _ in boxes(page.read_text(encoding="utf-8"))]
    assert len(found) >= 35, f"only {len(found)} boxes found: has the box syntax changed?"
    missing = [f"{name}: {label}" for name, label in found if label not in listed]
    assert not missing, f"not on the results page: {missing}"


def test_paper_results_are_in_the_paper_table_and_the_books_in_the_other():
    paper = {r[2]: r[0] for r in table_rows(RESULTS, "## The paper's results")}
    book = {r[2]: r[0] for r in table_rows(RESULTS, "## The book's results")}
    for page in CHAPTERS:
        for kind, label, number in boxes(page.read_text(encoding="utf-8")):
            ref = f"{{prf:ref}}`{label}`"
            if number:
                assert ref in paper, f"{label} carries the paper's number {number} but is not in the paper's table"
                assert paper[ref].lower().startswith(f"{kind} {number}".lower()), (label, paper[ref])
            else:
                assert ref not in paper, f"{label} is the book's, yet listed among the paper's results"
                assert ref in book, f"{label} is not in the table of the book's results"


@pytest.mark.parametrize("heading", ["## The paper's results", "## The book's results"])
def test_every_named_function_exists(heading):
    named = 0
    for row in table_rows(RESULTS, heading):
        for dotted in re.findall(r"`(specdec_lite\.[\w.]+)`", row[3]):
            module, name = dotted.rsplit(".", 1)
            path = ROOT / module.replace(".", "/")
            source = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text(encoding="utf-8")
            defined = re.search(rf"^def {name}\(", source, re.M)
            imported = re.search(rf"^from \.\w+ import [^\n]*\b{name}\b", source, re.M)
            assert defined or imported, f"{dotted} is neither defined nor imported there"
            named += 1
    assert named >= 15


@pytest.mark.parametrize("heading", ["## The paper's results", "## The book's results"])
def test_every_named_test_exists(heading):
    named = 0
    for row in table_rows(RESULTS, heading):
        for path, name in re.findall(r"`(tests/\w+\.py)::(\w+)`", row[4]):
            source = (ROOT / path).read_text(encoding="utf-8")
            assert re.search(rf"^def {name}\(", source, re.M), f"{path} has no {name}"
            named += 1
    assert named >= 15


def test_departures_table_is_there_and_points_at_boxes():
    rows = table_rows(RESULTS, "## Where the book departs from the paper")
    assert len(rows) >= 8 and all(len(r) == 4 and all(r) for r in rows), rows


def test_glossary_has_the_core_terms_and_the_notation_page_links_every_one():
    terms = glossary_terms()
    for core in [
        "round",
        "oracle call",
        "residual",
        "cascade",
        "bonus token",
        "acceptance rate",
        "lookahead",
        "cost ratio",
        "over-acceptance",
        "under-acceptance",
        "draft quality",
    ]:
        assert core in terms, f"the glossary lacks {core!r}"
    assert terms == sorted(terms, key=str.lower) or ":sorted:" in GLOSSARY
    linked = {t.lower() for t in re.findall(r"\{term\}`([^`<]+)`", NOTATION)}
    missing = [t for t in terms if t.lower() not in linked]
    assert not missing, f"the notation page does not link {missing}"


def test_every_chapter_ends_with_three_to_five_folded_self_checks():
    """The last subsection of the chapter's last section, Exercises (other tests want Exercises last)."""
    for page in CHAPTERS:
        text = page.read_text(encoding="utf-8")
        assert "\n### Self-check\n" in text, f"{page.name}: no self-check section"
        tail = text.split("\n### Self-check\n", 1)[1]
        last = re.findall(r"^## +(.+)$", text, re.M)[-1]
        assert last == "Exercises" and not re.search(r"^#{2,3} ", tail, re.M), f"{page.name}: not the end of Exercises"
        questions = re.findall(r"^\*\*(\d)\.\*\* ", tail, re.M)
        answers = re.findall(r"^:::\{admonition\} Answer\n:class: dropdown\n", tail, re.M)
        assert 3 <= len(questions) <= 5 and len(answers) == len(questions), (page.name, questions, len(answers))


def test_every_exploration_exercise_has_an_answer():
    explored = 0
    for page in CHAPTERS:
        text = page.read_text(encoding="utf-8")
        for label in re.findall(r"^:label: (ex-ch\d\d-explore)$", text, re.M):
            solution = text.split(f":::{{solution}} {label}", 1)[1].split("\n:::\n", 1)[0]
            assert ":class: dropdown" in solution and "**Answer.**" in solution, f"{page.name}: {label}"
            explored += 1
    assert explored == len(CHAPTERS)


def test_the_new_pages_are_appendices_of_the_toc():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    appendices = next(part for part in toc["parts"] if part["caption"] == "Appendices")
    files = [entry["file"] for entry in appendices["chapters"]]
    for page in ["book/results", "book/glossary", "book/worked_example"]:
        assert page in files, f"{page} is not in the Appendices of _toc.yml"


def test_the_worked_example_checks_each_step_and_glues_its_numbers():
    text = (BOOK / "worked_example.md").read_text(encoding="utf-8")
    used = set(re.findall(r"\{glue:(?:text|md)\}`([\w-]+)", text))
    glued = set(re.findall(r'glue\("([\w-]+)"', text))
    assert used and used <= glued, f"numbers used but never glued: {used - glued}"
    for step in [
        "## One round by hand",
        "## Theorem 1's count",
        "## The Monte Carlo check",
        "## Theorem 2: no unbiased rule rejects less",
        "## Theorems 4 and 5: trading quality for speed",
        "## Theorem 3: two drafts",
        "## A finite lookahead",
        "## Wall-clock, and the best lookahead",
    ]:
        assert step in text
        assert "assert " in text.split(step, 1)[1].split("\n## ", 1)[0], f"{step}: no check in its cells"


def test_the_worked_example_pair_by_hand_against_the_package():
    """Theorems 2-5 on p = (.4, .3, .2, .1), q = (.1, .2, .3, .4), by plain NumPy, then by specdec_lite."""
    from specdec_lite import batch, optimality, tradeoff

    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    tv = np.maximum(q - p, 0).sum()
    # Theorem 5 at eps = 0.1: b = min(1, (q + eps)/p); rejection sum (1 - b) p; loss sum max(b p - q, 0)
    b = np.minimum(1, (q + 0.1) / p)
    reject, loss = ((1 - b) * p).sum(), np.maximum(b * p - q, 0).sum()
    np.testing.assert_allclose([reject, loss, reject + loss], [0.2, 0.2, tv])
    np.testing.assert_allclose(tradeoff.pareto_point(p, q, tradeoff.over_accept(p, q, 0.1)), [reject, loss])
    # UNO at eps = 0: min(p, q) + TV q, against q
    uno = np.minimum(p, q) + tv * q
    np.testing.assert_allclose(tradeoff.over_accept_point(p, q, 0.0, "uno"), [tv, 0.5 * np.abs(uno - q).sum()])
    # the cascade with M = 2: r1 = TV(q, p), q2 = [q - p]_+, r2 = TV(q2, p)
    q2 = np.maximum(q - p, 0) / tv
    r2 = np.maximum(q2 - p, 0).sum()
    reach, _ = batch.residual_cascade(p, q, 2)
    np.testing.assert_allclose(reach, [1, tv, tv * r2])
    np.testing.assert_allclose([tv, r2], [0.4, 0.7])
    # sample and match keeps the draft with probability sum p q, below 1 - TV
    assert optimality.sample_and_match_acceptance(p, q) == pytest.approx((p * q).sum()) == pytest.approx(0.2)
    assert (p * q).sum() < 1 - tv


def test_each_coding_exercise_says_how_to_check_it_alone_with_its_labs_graded_cell():
    """The intro promises: coding exercises are checked by the lab's graded cells (no printed solution)."""
    for page in CHAPTERS:
        text = page.read_text(encoding="utf-8")
        label = re.search(r"^:label: (ex-ch\d\d-lab)$", text, re.M).group(1)
        solution = text.split(f":::{{solution}} {label}", 1)[1].split("\n:::\n", 1)[0]
        assert "**Checking your code on your own.**" in solution, f"{page.name}: {label}"
        graded = re.search(r"`(check_\w+\([^`]*\)\.assert_correct\(\))`", solution).group(1)
        lab = next((ROOT / "notebooks" / "source").glob(f"lab{page.name[2:4]}_*/lab*.md"))
        assert graded in lab.read_text(encoding="utf-8"), f"{page.name}: {graded} is not a graded cell of {lab.name}"
    intro = (BOOK / "intro.md").read_text(encoding="utf-8")
    assert "every exercise has a folded answer" not in intro and "through every chapter" not in intro
