"""Numbers that match the paper: the paper's results carry the paper's labels, the book's its own.

sphinx-proof and sphinx-exercise number each kind (theorem, algorithm, exercise, ...)
in one sequence across the whole book, so the paper's Theorem 3 would render as
"Theorem 6". This extension renumbers after Sphinx has assigned its numbers:

* a ``prf`` directive with the option ``:paper: 1(b)`` renders as "Theorem 1(b)", in
  its box and in every ``{prf:ref}`` link to it;
* every other numbered result, every exercise and every figure in a chapter page
  (``book/chNN_*``) is numbered within its chapter and kind: "Proposition 6.1",
  "Exercise 3.2", "Figure 5.1". Undotted numbers are the paper's, dotted numbers the book's.

Both boxes and links read ``env.toc_fignumbers``, so overriding that one table
after Sphinx fills it (``env-get-updated``) renumbers everything consistently.
"""

from __future__ import annotations

import re
from typing import Any

from docutils.parsers.rst import directives
from sphinx.util import logging

logger = logging.getLogger(__name__)
_CHAPTER = re.compile(r"(?:^|/)ch(\d+)_[^/]*$")
#: Figures of pages outside the chapters, numbered with a dot too ("Figure 0.1" on the landing page,
#: "Figure W.1" in the worked example), so that an undotted number is always the paper's.
PAGE_FIGURES = {"book/intro": 0, "book/worked_example": "W"}


def _with_paper_option(cls: type) -> type:
    class PaperNumbered(cls):  # type: ignore[misc, valid-type]
        option_spec = {**cls.option_spec, "paper": directives.unchanged_required}

        def run(self) -> list[Any]:
            paper = self.options.pop("paper", None)
            result = super().run()
            if paper:
                node = result[0]
                node["paper"] = paper
                node["classes"].append("paper-result")
                self.env.proof_list[node["label"]]["paper"] = paper
            return result

    PaperNumbered.__name__ = cls.__name__
    return PaperNumbered


def _chapter_kinds(app: Any) -> set[str]:
    from sphinx_proof.proof_type import PROOF_TYPES

    return set(PROOF_TYPES) | {"exercise", "figure"}


def renumber(app: Any, env: Any) -> list[str]:
    """Give the paper's results the paper's numbers and the book's results chapter numbers."""
    kinds = _chapter_kinds(app)
    paper = {}
    seen: dict[tuple[str, str], str] = {}
    for label, entry in getattr(env, "proof_list", {}).items():
        if entry.get("paper") and not entry.get("nonumber"):
            paper[label] = entry["paper"]
            key = (entry["realtype"], entry["paper"])
            if key in seen:
                logger.warning(f"two boxes carry the paper's {key[0]} {key[1]}: {seen[key]} and {label}")
            seen[key] = label
    changed = []
    for docname, numbers in env.toc_fignumbers.items():
        match = _CHAPTER.search(docname)
        for kind, ids in numbers.items():
            if kind not in kinds:
                continue
            count = 0
            for node_id in sorted(ids, key=ids.get):
                if node_id in paper:
                    ids[node_id] = (paper[node_id],)
                elif match:
                    count += 1
                    ids[node_id] = (int(match[1]), count)
                elif kind == "figure" and docname in PAGE_FIGURES:
                    count += 1
                    ids[node_id] = (PAGE_FIGURES[docname], count)
                else:
                    continue
                changed.append(docname)
    return sorted(set(changed))


def paper_figure_numbers(app: Any, doctree: Any) -> None:
    """The same numbers on paper: LaTeX numbers a figure before Chapter 1 "1" and one in an appendix by the
    appendix's place; the pages of ``PAGE_FIGURES`` set LaTeX's figure number to theirs ("0.1", "W.1") and give
    it back at their end (raw LaTeX, which the HTML writer leaves out)."""
    from docutils import nodes

    prefix = PAGE_FIGURES.get(app.env.docname)
    if prefix is None:
        return
    doctree.insert(0, nodes.raw("", rf"\renewcommand{{\thefigure}}{{{prefix}.\arabic{{figure}}}}", format="latex"))
    doctree.append(nodes.raw("", r"\let\thefigure\sdBookFigureNumber", format="latex"))


def setup(app: Any) -> dict[str, Any]:
    from sphinx_proof.proof_type import PROOF_TYPES

    app.setup_extension("sphinx_proof")
    for name, cls in PROOF_TYPES.items():
        app.add_directive_to_domain("prf", name, _with_paper_option(cls), override=True)
    app.connect("env-get-updated", renumber, priority=900)
    app.connect("doctree-read", paper_figure_numbers)  # after Sphinx assigns its numbers (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
