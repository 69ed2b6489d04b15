"""The book on paper: one PDF per edition in ``_build/pdf/`` (``python tools/pdf.py``).

Each edition goes through Jupyter Book's LaTeX route (``jupyter-book build --builder pdflatex``,
XeLaTeX, see the ``latex:`` sections of ``_config.yml`` and ``zh/_config.yml``) with the same
warning flags as the site; ``book/_ext/paper_figures.py`` prints every figure of the site as an
image. Neither edition executes anything the HTML build executed: each uses its edition's jupyter-cache,
``<out>/_build/.jupyter_cache`` (English) and ``<out>/_build/zh/_build/.jupyter_cache`` (Chinese, executed
in Chinese, see ``book/_ext/editions.py``), so the Chinese PDF prints the Chinese run's figures and outputs.
When the site was built into the same folder, the PDFs are also copied into it (``_build/html/pdf/``): the
publishing workflow publishes them there, where every page's header links to its edition's PDF
(``html.baseurl`` of ``_config.yml``; ``book/_ext/paper_figures.py``).

    python tools/pdf.py                      # both editions -> _build/pdf/specdec-theory-{en,zh}.pdf
    python tools/pdf.py --editions en        # English only
    python tools/pdf.py --path-output DIR    # build under DIR/_build (as jupyter-book's --path-output)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = {"en": ROOT, "zh": ROOT / "zh"}
#: The PDFs' names (``latex_documents.targetname`` in each edition's _config.yml, with .pdf).
PDF_NAMES = {"en": "specdec-theory-en.pdf", "zh": "specdec-theory-zh.pdf"}
#: LaTeX's files of a previous run that could keep latexmk from starting again after a failed run.
STALE = ("*.fdb_latexmk", "*.aux", "*.toc", "*.out", "*.xdv")
#: Where the site links each edition's PDF, relative to the site's root (_build/html).
SITE_FOLDER = "pdf"


def _jupyter_book() -> list[str]:
    main = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"  # jupyter_book has no __main__
    return [sys.executable, "-c", main]


def build(edition: str, out: Path) -> Path:
    """Build one edition's PDF under ``out`` and return its path."""
    # the folder of the HTML build of the same edition (book/_ext/editions.py): its execution cache is reused
    work = out if edition == "en" else out / "_build" / edition
    latex = work / "_build" / "latex"
    env = dict(os.environ)
    if edition != "en":  # the timings the English run recorded (specdec_lite._measurements)
        env["SPECDEC_LITE_MEASUREMENTS"] = f"replay:{out / '_build' / 'measurements'}"
    for pattern in STALE:
        for stale in latex.glob(pattern):
            stale.unlink()
    cmd = [*_jupyter_book(), "build", str(EDITIONS[edition]), "--path-output", str(work), "--builder", "pdflatex"]
    cmd += ["-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    pdf = latex / PDF_NAMES[edition]
    if proc.returncode != 0 or not pdf.is_file():
        log = latex / pdf.with_suffix(".log").name
        tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
        raise SystemExit(f"the {edition} PDF failed to build:\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}\n{tail}")
    return pdf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--editions", default="en,zh", help="comma-separated: en, zh (default both)")
    parser.add_argument("--path-output", type=Path, default=ROOT, help="build under PATH/_build (default: here)")
    args = parser.parse_args(argv)
    editions = [e.strip() for e in args.editions.split(",") if e.strip()]
    unknown = set(editions) - EDITIONS.keys()
    if unknown:
        parser.error(f"unknown editions {sorted(unknown)}; choose from {sorted(EDITIONS)}")
    out = args.path_output.resolve()
    target = out / "_build" / "pdf"
    target.mkdir(parents=True, exist_ok=True)
    site = out / "_build" / "html"
    for edition in editions:
        start = time.monotonic()
        pdf = build(edition, out)
        shutil.copyfile(pdf, target / pdf.name)
        if site.is_dir():
            (site / SITE_FOLDER).mkdir(exist_ok=True)
            shutil.copyfile(pdf, site / SITE_FOLDER / pdf.name)
        print(f"{edition}: {target / pdf.name} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
