"""The book on paper: every figure of the site as a static image in the LaTeX/PDF build.

The site's figures are plotly.js drawings (``text/html`` from ``specdec_lite.plotting.show``),
SVG pictures, and one step-by-step player of a round; LaTeX can draw none of them, and
MyST-NB's priority list for the ``latex`` builder would fall back to their ``text/plain``
repr. For builders of the ``latex`` format this extension, before MyST-NB picks a mime type
(its ``SelectMimeType`` runs at priority 4), replaces each such output by a PNG:

* a plotly figure: the figure the site shows (its JSON, read back from the cell's executed
  output, so nothing is executed again), exported by plotly's image export, Kaleido, driving
  the system's Chromium (``/usr/bin/chromium``; nothing is downloaded);
* an SVG picture: converted by ``rsvg-convert`` (librsvg);
* the step-by-step player: its last step, the whole round.

An interactive figure (a slider, buttons, a player) is printed as the page opens it, without its
controls (``paper_figure``), and gets a sentence under its image saying that the web page, at its
full address on the published site (``page_url``), lets the reader move it, and which setting the
image shows. A label too wide for the exported image is set smaller rather than cut (``fitted``).
Chapter 8's token-by-token output is set in LaTeX in its kinds' colours and line styles
(``token_latex``, macros in ``paper_preamble.tex``). Other HTML output (coloured text) is printed
as its text, with the same kind of sentence. The PNGs are written under ``<outdir>/static-figures``
and kept between builds (their names are hashes of what they show).

It also sets what the paper edition needs from Sphinx's LaTeX writer: page references after
links between results, the preamble in ``paper_preamble.tex`` (fonts, CJK for the Chinese
edition), and no index.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
#: Where the static images go, relative to the LaTeX output folder (where LaTeX runs).
STATIC_DIR = "static-figures"
#: Pixels of the exported figure's width (CSS pixels: the figure's text is sized for it) and the scale.
EXPORT_WIDTH, EXPORT_SCALE, DEFAULT_HEIGHT = 720, 3, 450
CHROMIUM = "/usr/bin/chromium"

#: The sentence under an interactive output; ``{page}`` is the web page's full address (``site_url``), ``{setting}``
#: the slider's setting or the buttons' view that the printed image shows.
NOTES = {
    "en": {
        "slider": "On the web page ({page}) this figure has a slider; "
        "the printed image shows the setting the page opens with{setting}.",
        "buttons": "On the web page ({page}) this figure has buttons that change what it shows; "
        "the printed image shows its first view{setting}.",
        "stepper": "On the web page ({page}) a slider plays this round one step at a time; "
        "the printed image shows its last step.",
        "html": "On the web page ({page}) this output is coloured and interactive; its text is printed here.",
        "tokens": "On the web page ({page}) each token's tooltip names its kind and the TV distance at its "
        "position; the printed text keeps the page's colours and line styles.",
    },
    "zh": {
        "slider": "网页版（{page}）中此图带有滑块；印出的是网页打开时的设置{setting}。",
        "buttons": "网页版（{page}）中此图带有切换按钮；印出的是它的第一个视图{setting}。",
        "stepper": "网页版（{page}）中可以用滑块逐步播放这一轮；印出的是最后一步。",
        "html": "网页版（{page}）中这段输出带有颜色标记、可以交互；这里印出其文字。",
        "tokens": "网页版（{page}）中每个词元的提示框写出它的类别和该位置的 TV 距离；"
        "这里印出的文字保留网页上的颜色和线型。",
    },
}
#: How the setting a printed figure shows is named after the note's sentence: ", label = 5" / "（label = 5）".
SETTING = {"en": ", {0}", "zh": "（{0}）"}


def plotly_figure(raw: str) -> dict[str, Any] | None:
    """The figure (``data``, ``layout``) of plotly's HTML (``Plotly.newPlot(id, data, layout, config)``)."""
    at = raw.find("Plotly.newPlot(")
    if at < 0:
        return None
    decoder = json.JSONDecoder()
    pos = at + len("Plotly.newPlot(")
    values = []
    for _ in range(3):  # the div's id, data, layout
        while raw[pos] in " \t\r\n,":
            pos += 1
        value, pos = decoder.raw_decode(raw, pos)
        values.append(value)
    _, data, layout = values
    return {"data": data, "layout": layout}


#: The Chinese PDF's figures: plotly's fonts, then Noto Sans CJK SC (Debian's fonts-noto-cjk) for the Chinese
#: characters; Chromium would otherwise take the first font with the glyphs that fontconfig offers (a Kai face).
CJK_FONT_FAMILY = '"Open Sans", verdana, arial, "Noto Sans CJK SC", sans-serif'


def with_cjk_font(figure: dict[str, Any]) -> dict[str, Any]:
    """The figure with :data:`CJK_FONT_FAMILY` as its layout's font (its other font settings kept)."""
    layout = dict(figure["layout"])
    layout["font"] = {**(layout.get("font") or {}), "family": CJK_FONT_FAMILY}
    return {**figure, "layout": layout}


def plotly_image_name(figure: dict[str, Any]) -> str:
    """The PNG's file name of a figure: a hash of what its printed image (``paper_figure``) shows and its size."""
    figure = paper_figure(figure)
    key = hashlib.sha256(json.dumps([figure, _export_size(figure)], sort_keys=True).encode()).hexdigest()
    return f"plotly-{key[:20]}.png"


#: The layout's controls that only the web page can move: the printed image has none of them.
CONTROLS = ("sliders", "updatemenus")


def paper_figure(figure: dict[str, Any]) -> dict[str, Any]:
    """The figure as paper prints it: the page's opening view, without its sliders and buttons (``CONTROLS``).

    plotly makes room for a slider under the plot by widening the bottom margin to the slider's height
    (``SLIDER_HEIGHT``); without the slider the margin is the layout's own again, and the figure is exported
    shorter by the difference, so that the plot keeps its size and no band of white is left under it."""
    layout = figure["layout"]
    paper = {key: value for key, value in layout.items() if key not in CONTROLS}
    if layout.get("sliders"):
        bottom = int((layout.get("margin") or {}).get("b", DEFAULT_MARGIN_BOTTOM))
        paper["height"] = int(layout.get("height") or DEFAULT_HEIGHT) - max(0, SLIDER_HEIGHT - bottom)
    return fitted({**figure, "layout": paper})


#: Pixels under the plot that a slider of ``specdec_lite.plotting.slider_figure`` takes (its pad of 40, its
#: current-value line, its rail and step labels; measured: the plot of a 450-pixel figure is 46 pixels taller
#: without it), and plotly's default bottom margin.
SLIDER_HEIGHT, DEFAULT_MARGIN_BOTTOM = 126, 80


#: plotly's default font size and margins (left, right), the width it gives a legend at the right of the plot
#: (about; the book's legends are short), the size of a title and of a subplot's title, and a <sup>'s scale.
FONT_SIZE, MARGIN_SIDE, LEGEND_WIDTH, TITLE_SCALE, ANNOTATION_SIZE, SUP_SCALE = 12, 80, 150, 17 / 12, 16, 0.7
_WIDE = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def text_width(text: str, size: float) -> float:
    """An upper estimate of the pixels of the widest line of a plotly text (``<br>`` breaks lines, ``<sup>`` and
    ``<sub>`` set text at 70%): a Latin character half an em (Open Sans's average is below), a CJK one an em."""
    widest = 0.0
    for line in re.split(r"<br\s*/?>", text, flags=re.I):
        width, scale = 0.0, 1.0
        for part in re.split(r"(<[^>]*>)", line):
            if part.startswith("<"):
                tag = part.strip("</> ").lower()
                if tag in ("sup", "sub"):
                    scale = 1.0 if part.startswith("</") else SUP_SCALE
                continue
            for char in html.unescape(part):
                width += size * scale * (1.0 if _WIDE.match(char) else 0.5)
        widest = max(widest, width)
    return widest


def fitted(figure: dict[str, Any]) -> dict[str, Any]:
    """The figure with its title and its annotations (a stacked figure's panel titles) in a smaller font where a
    line of theirs would run past the exported image's edges (``EXPORT_WIDTH``): the long labels of Chapter 8's
    figures, wrapped for the web page, must not be cut on paper."""
    layout = dict(figure["layout"])
    width, _ = _export_size(figure)
    base = float((layout.get("font") or {}).get("size") or FONT_SIZE)
    margin = layout.get("margin") or {}
    left = float(margin.get("l", MARGIN_SIDE))
    right = float(margin.get("r", MARGIN_SIDE)) + (LEGEND_WIDTH if layout.get("showlegend") is not False else 0)
    plot = max(width - left - right, 1.0)

    def room(x: float, anchor: str) -> float:  # the widest line that stays inside the image, around x (pixels)
        if anchor == "left" or (anchor == "auto" and x < width / 3):
            return width - x
        if anchor == "right" or (anchor == "auto" and x > 2 * width / 3):
            return x
        return 2 * min(x, width - x)

    def shrink(item: dict[str, Any], size: float, x: float, anchor: str) -> dict[str, Any]:
        need = text_width(str(item.get("text") or ""), size)
        space = room(x, anchor) - 8
        if need <= space:
            return item
        return {**item, "font": {**(item.get("font") or {}), "size": round(size * space / need, 1)}}

    title = layout.get("title")
    if isinstance(title, dict) and title.get("text"):
        size = float((title.get("font") or {}).get("size") or base * TITLE_SCALE)
        x = title.get("x", 0.5)
        at = x * width if title.get("xref", "container") == "container" else left + x * plot
        layout["title"] = shrink(title, size, at, title.get("xanchor", "auto"))
    notes = []
    for note in layout.get("annotations") or ():
        size = float((note.get("font") or {}).get("size") or base)
        ref = str(note.get("xref", "paper"))
        at = left + float(note.get("x", 0.5)) * plot if ref == "paper" or ref.endswith("domain") else left + plot / 2
        notes.append(shrink(note, size, at, note.get("xanchor", "auto")))
    if notes:
        layout["annotations"] = notes
    return {**figure, "layout": layout}


def setting(figure: dict[str, Any]) -> str:
    """What the printed image of an interactive figure shows: its slider's current value (``"K = 4"``), or the
    label of its first buttons' active view; "" where it names none."""
    layout = figure["layout"]
    for slider in layout.get("sliders") or ():
        steps = slider.get("steps") or []
        active = int(slider.get("active") or 0)
        if 0 <= active < len(steps) and steps[active].get("label") not in (None, ""):
            prefix = (slider.get("currentvalue") or {}).get("prefix") or ""
            return html_text(f"{prefix}{steps[active]['label']}")
        return ""
    for menu in layout.get("updatemenus") or ():
        buttons = menu.get("buttons") or []
        active = int(menu.get("active") or 0)
        if 0 <= active < len(buttons) and buttons[active].get("label"):
            return html_text(str(buttons[active]["label"]))
        return ""
    return ""


def interaction(figure: dict[str, Any]) -> str | None:
    """``"slider"``, ``"buttons"`` or None: what a reader of the web page can move in this figure."""
    layout = figure["layout"]
    if layout.get("sliders"):
        return "slider"
    if layout.get("updatemenus"):
        return "buttons"
    return None


def _export_size(figure: dict[str, Any]) -> tuple[int, int]:
    layout = figure["layout"]
    return int(layout.get("width") or EXPORT_WIDTH), int(layout.get("height") or DEFAULT_HEIGHT)


def export_plotly(jobs: list[tuple[dict[str, Any], Path]]) -> None:
    """Write each figure as a PNG with Kaleido (one Chromium for all of them)."""
    if not jobs:
        return
    import kaleido

    if "BROWSER_PATH" not in os.environ and Path(CHROMIUM).is_file():
        os.environ["BROWSER_PATH"] = CHROMIUM  # choreographer's choice of browser; it never downloads one itself
    specs = []
    for figure, path in jobs:
        figure = paper_figure(figure)
        width, height = _export_size(figure)
        opts = {"format": "png", "width": width, "height": height, "scale": EXPORT_SCALE}
        specs.append({"fig": figure, "path": str(path), "opts": opts})
    # The figures' text has no LaTeX ($...$), so MathJax (a CDN script by default) is not loaded.
    try:
        kaleido.write_fig_from_object_sync(specs, kopts={"mathjax": False}, cancel_on_error=True)
    except Exception as err:
        # "kaleido_scopes is not defined": Kaleido's tab called its own script before that script was there
        # (plotly/Kaleido#214 reports the same error from a tab on WSL). Seen once, on a busy 2-core machine while
        # the test suite ran; a second Chromium, for the images not yet written, is tried once, and a second
        # failure stops the build.
        if "kaleido_scopes is not defined" not in str(err):
            raise
        again = [spec for spec in specs if not Path(spec["path"]).is_file()]
        kaleido.write_fig_from_object_sync(again, kopts={"mathjax": False}, cancel_on_error=True)
    missing = [str(path) for _, path in jobs if not path.is_file()]
    if missing:
        raise ExtensionError(f"Kaleido wrote no image for {missing}")


def svg_to_png(svg: str, path: Path) -> None:
    """Write an SVG picture as a PNG (``rsvg-convert``, at three times its size)."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise ExtensionError("rsvg-convert (Debian: librsvg2-bin) is needed to print the SVG figures")
    tmp = path.with_suffix(".svg")
    tmp.write_text(svg, encoding="utf-8")
    subprocess.run([exe, "-z", "3", "-b", "white", "-o", str(path), str(tmp)], check=True)
    tmp.unlink()


def page_url(lang: str, docname: str) -> str:
    """The web page of a document as a reader can type it: the published site's address (``site_url``; the
    Chinese edition's pages are under its ``zh/``) and the page's path; the path alone where no site is set."""
    published = site_url()
    return f"{published}{'zh/' if published and lang == 'zh' else ''}{docname}.html"


def note_paragraph(lang: str, note: str, page: str, shown: str = "") -> nodes.paragraph:
    """The sentence under an interactive output (``NOTES``), in italics, its web page's address a link."""
    before, after = NOTES[lang][note].split("{page}")
    after = after.format(setting=SETTING[lang].format(shown) if shown else "")
    address = nodes.reference(page, page, refuri=page) if "://" in page else nodes.Text(page)
    return nodes.paragraph("", "", nodes.emphasis("", "", nodes.Text(before), address, nodes.Text(after)))


def _page_of(env: Any, node: nodes.Node) -> str:
    """The page a node came from (the LaTeX builder resolves one document made of every page)."""
    while node is not None:
        if isinstance(node, addnodes.start_of_file):
            return node["docname"]
        source = node.get("source") if isinstance(node, nodes.Element) else None
        source = source or getattr(node, "source", None)
        if source and env.path2doc(source.split(":")[0]):
            return env.path2doc(source.split(":")[0])
        node = node.parent
    return env.docname


_INLINE = re.compile(r"</?(?:span|b|i|u|em|strong|mark|abbr|code|sub|sup|a)\b[^>]*>", re.I)
_TAGS = re.compile(r"<[^>]+>")
_SCRIPTS = re.compile(r"<(script|style)\b.*?</\1>", re.S)


def html_text(raw: str) -> str:
    """The visible text of an HTML fragment (inline tags join their text, block tags separate it)."""
    text = _TAGS.sub(" ", _INLINE.sub("", _SCRIPTS.sub(" ", raw)))
    return " ".join(html.unescape(text).split())


class _TokenReader(HTMLParser):
    """The pieces of the token-by-token output (``specdec_lite.figures.real_models.annotated_html``): each run of
    text with the kind of token it is (``"accepted"``, ``"rejected"``, ``"bonus"``; None between tokens), whether it
    is bold, and which block it is in (0 before the tokens, 1 the tokens, 2 the legend)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[tuple[int, str | None, bool, str]] = []
        self._block, self._kind, self._bold, self._skip = 0, None, False, False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("style", "script"):
            self._skip = True
        elif tag == "pre" and "sdl-tokens" in classes:
            self._block = 1
        elif tag == "ul" and "sdl-legend" in classes:
            self._block = 2
        elif tag == "li" and self._block == 2 and self.runs and self.runs[-1][0] == 2:
            self.runs.append((2, None, False, "\n"))
        elif tag == "b":
            self._bold = True
        elif tag == "span":
            kind = next((c[len("sdl-tok-") :] for c in classes if c.startswith("sdl-tok-")), None)
            self._kind = kind if kind in TOKEN_STYLES else None

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip = False
        elif tag == "b":
            self._bold = False
        elif tag == "span":
            self._kind = None

    def handle_data(self, data: str) -> None:
        if not self._skip and data:
            self.runs.append((self._block, self._kind, self._bold, data))


#: The LaTeX macro of each kind of token (``paper_preamble.tex``: the site's colours and line styles).
TOKEN_STYLES = {"accepted": "\\sdtokaccepted", "rejected": "\\sdtokrejected", "bonus": "\\sdtokbonus"}


def token_latex(raw: str, latex_engine: str | None = None) -> str | None:
    """The token-by-token output as LaTeX, or None where ``raw`` holds none: what comes before it, the tokens in
    typewriter type, each in its kind's colour and line style (as on the page), and the legend under them."""
    if 'class="sdl-tokens"' not in raw:
        return None
    from sphinx.util.texescape import escape

    reader = _TokenReader()
    reader.feed(raw)
    blocks: list[list[str]] = [[], [], []]
    for block, kind, bold, data in reader.runs:
        out = blocks[block]
        if block != 1:
            data = data.replace("\xa0", " ")
        for i, line in enumerate(data.split("\n")):
            if i:
                out.append("\\mbox{}\\newline\n" if block == 1 else "\\quad\n")
            if block != 1:
                line = re.sub(r"\s+", " ", line)
            word = line.strip(" ")
            lead, trail = line[: len(line) - len(line.lstrip(" "))], line[len(line.rstrip(" ")) :]
            text = escape(word, latex_engine)
            if kind and word:
                text = f"{TOKEN_STYLES[kind]}{{{text}}}"
            elif bold and word:
                text = f"\\textbf{{{text}}}"
            space = "\\ " if block == 1 else " "
            out.append(space * len(lead) + text + space * len(trail))
    head, tokens, legend = "".join(blocks[0]).strip(), "".join(blocks[1]), "".join(blocks[2]).strip()
    parts = [f"\\noindent {head}\\par" if head else "", f"{{\\noindent\\ttfamily {tokens}\\par}}"]
    if legend:
        parts.append(f"{{\\noindent\\small {legend}\\par}}")
    return "\n\\smallskip\n".join(p for p in parts if p) + "\n"


class _TableReader(HTMLParser):
    """The rows of the HTML tables of a fragment, each cell as its text and whether it is a header."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[bool, str]]]] = []
        self._cell: list[str] | None = None
        self._header = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell, self._header = [], tag == "th"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append((self._header, " ".join("".join(self._cell).split())))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_tables(raw: str) -> list[nodes.table]:
    """The HTML tables of a fragment as docutils tables (header rows: rows of ``<th>`` only)."""
    reader = _TableReader()
    reader.feed(raw)
    tables = []
    for rows in reader.tables:
        rows = [row for row in rows if row]
        if not rows:
            continue
        width = max(len(row) for row in rows)
        table, group = nodes.table(), nodes.tgroup(cols=width)
        table += group
        group.extend(nodes.colspec(colwidth=1) for _ in range(width))
        head, body = nodes.thead(), nodes.tbody()
        for row in rows:
            line = nodes.row()
            for _, text in row + [(False, "")] * (width - len(row)):
                entry = nodes.entry()
                entry += nodes.paragraph(text=text)
                line += entry
            (head if all(header for header, _ in row) and not body.children else body).append(line)
        if head.children:
            group += head
        group += body
        tables.append(table)
    return tables


class StaticFigures(SphinxPostTransform):
    """Replace the site's drawings in notebook outputs by PNG images (LaTeX builders only)."""

    default_priority = 3  # before MyST-NB's SelectMimeType (4), which keeps one mime type per output
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        lang = "zh" if str(self.config.language or "").startswith("zh") else "en"
        outdir = Path(self.app.builder.outdir) / STATIC_DIR
        outdir.mkdir(parents=True, exist_ok=True)
        jobs: list[tuple[dict[str, Any], Path]] = []

        def is_bundle(node: nodes.Node) -> bool:
            return isinstance(node, nodes.container) and node.get("nb_element") == "mime_bundle"

        for bundle in list(self.document.findall(is_bundle)):
            outputs = {child["mime_type"]: child for child in bundle.children}
            raw = "".join(n.astext() for n in outputs["text/html"].findall(nodes.raw)) if "text/html" in outputs else ""
            page = page_url(lang, _page_of(self.env, bundle))
            image, note, text, shown = None, None, None, ""
            figure = plotly_figure(raw) if raw else None
            if figure is not None:
                if lang == "zh":
                    figure = with_cjk_font(figure)
                image = outdir / plotly_image_name(figure)
                if not image.is_file():
                    jobs.append((figure, image))
                note, shown = interaction(figure), setting(figure)
            elif 'class="sd-round-stepper"' in raw:
                svgs = re.findall(r"<svg\b.*?</svg>", raw, re.S)
                image = self._svg_image(svgs[-1], outdir)
                note = "stepper"
            elif "image/svg+xml" in outputs:
                uri = next(outputs["image/svg+xml"].findall(nodes.image))["uri"]
                source = Path(self.env.srcdir) / uri
                image = self._svg_image(source.read_text(encoding="utf-8"), outdir)
            elif raw and token_latex(raw) is not None:
                text, note = [nodes.raw("", token_latex(raw, self.config.latex_engine), format="latex")], "tokens"
            elif raw and not ({"image/png", "image/jpeg", "application/pdf", "text/latex"} & outputs.keys()):
                plain = outputs.get("text/plain")
                if plain is None or plain.astext().startswith("<IPython.core.display.HTML"):
                    if "<table" in raw:  # a table of numbers: the text around it, and the table as a table
                        parts = re.split(r"(<table\b.*?</table>)", raw, flags=re.S)
                        text = [
                            node
                            for part in parts
                            for node in (
                                html_tables(part)
                                if part.startswith("<table")
                                else [nodes.paragraph(text=html_text(part))]
                                if html_text(part)
                                else []
                            )
                        ]
                    else:
                        text, note = html_text(raw), "html"
            if image is None and text is None:
                continue
            content: list[nodes.Node] = []
            if image is not None:
                uri = f"{STATIC_DIR}/{image.name}"
                content.append(nodes.image(uri=uri, candidates={"*": uri}))
            if isinstance(text, list):
                content.extend(text)
            elif text is not None:
                content.append(nodes.paragraph(text=text))
            if note is not None:
                content.append(note_paragraph(lang, note, page, shown))
            new = nodes.container(mime_type="image/png", nb_element="mime_type")
            new.extend(content)
            bundle.children = []
            bundle.append(new)
        export_plotly(jobs)
        # A remote picture (the labs' "Open in Colab" badge) cannot be fetched offline: its alt text stays.
        for image in list(self.document.findall(nodes.image)):
            if "://" in image["uri"]:
                image.replace_self(nodes.Text(image.get("alt") or ""))

    @staticmethod
    def _svg_image(svg: str, outdir: Path) -> Path:
        image = outdir / f"svg-{hashlib.sha256(svg.encode()).hexdigest()[:20]}.png"
        if not image.is_file():
            svg_to_png(svg, image)
        return image


class ExerciseReferences(SphinxPostTransform):
    """A numbered reference to an exercise on another page links to the exercise's own LaTeX label.

    sphinx-exercise labels an exercise ``exercise:<label>`` in LaTeX and resolves references on the
    same page itself; Sphinx writes a reference from another page as ``\\ref{<page>:<label>}``,
    which LaTeX never defines. The reference keeps its resolved text ("Exercise 1.2") and gets the
    exercise's page number, like the other links between results.
    """

    default_priority = 20  # after Sphinx resolved the references (10)
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        from sphinx.util.texescape import escape

        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for ref in list(self.document.findall(addnodes.number_reference)):
            target = (ref.get("refid") or ref.get("refuri", "")).split("#")[-1]
            if target not in registry:
                continue
            label = f"exercise:{target}"
            text = escape(ref.astext())
            latex = f"\\hyperref[{label}]{{{text}}} (\\autopageref*{{{label}}})"
            ref.replace_self(nodes.raw("", latex, format="latex"))


class PaperProofs(SphinxPostTransform):
    """A proof prints as a proof: "*Proof.*" opens it, a square ends it, and no empty box frames it.

    sphinx-proof writes a proof as an admonition with no title (the HTML shows it as a box whose
    text starts with "Proof.", "证明：" in the Chinese edition); LaTeX's admonition would take the proof's
    first paragraph marker for the box's title and draw an empty title bar.
    """

    default_priority = 3
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        from sphinx_proof.nodes import proof_node

        for proof in list(self.document.findall(proof_node)):
            for box in [c for c in proof.children if isinstance(c, nodes.admonition)]:
                if any(isinstance(c, nodes.title) for c in box.children):
                    continue
                body = list(box.children)
                first = body[0] if body and isinstance(body[0], nodes.paragraph) else None
                lead = first[0] if first is not None and first.children else None
                opening = re.match(r"(\S+?\.) |(\S+?：)", str(lead)) if isinstance(lead, nodes.Text) else None
                if opening:  # "Proof. " (sphinx-proof), "证明：" (the Chinese edition, book/_ext/editions.py)
                    first.replace(lead, nodes.Text(str(lead)[opening.end() :]))
                    if opening[1]:
                        first.insert(0, nodes.Text(" "))
                    first.insert(0, nodes.emphasis(text=opening[1] or opening[2]))
                qed = nodes.raw("", "\\hfill\\ensuremath{\\square}", format="latex")
                last = body[-1] if body else None
                if isinstance(last, nodes.paragraph):
                    last += qed
                else:
                    body.append(nodes.paragraph("", "", qed))
                box.replace_self(body)


def _depart_enumerable_latex(self: Any, node: nodes.Element) -> None:
    """sphinx-proof's LaTeX title of a numbered result, in the edition's language (as on the site)."""
    from sphinx_proof.nodes import _, get_node_number, latex_admonition_end, latex_admonition_start, list_rindex

    number = get_node_number(self, node, node.attributes.get("countertype", ""))
    idx = list_rindex(self.body, latex_admonition_start) + 2
    self.body.insert(idx, f"{_(node.attributes.get('realtype', '').title())} {number}")
    self.body.append(latex_admonition_end)


def _latex_settings(app: Any, config: Any) -> None:
    """What Sphinx's LaTeX writer needs for the paper edition (only LaTeX builders read these)."""
    zh = str(config.language or "").startswith("zh")
    preamble = (HERE / "paper_preamble.tex").read_text(encoding="utf-8")
    preamble = preamble.replace("%ZH%", "" if zh else "%")
    elements = dict(config.latex_elements or {})
    elements["preamble"] = elements.get("preamble", "") + preamble
    elements.setdefault("printindex", "")
    elements.setdefault("papersize", "a4paper")
    config.latex_elements = elements
    config.latex_additional_files = [*config.latex_additional_files, str(HERE / "paper_tex" / "bbm.sty")]
    config.latex_use_xindy = False  # makeindex (TeX Live) instead of xindy, which Debian ships apart
    config.latex_show_pagerefs = True
    config.latex_show_urls = "no"


#: The PDFs' names (``latex_documents.targetname`` in each _config.yml) and where the site keeps them.
PDF_NAMES = {"en": "specdec-theory-en.pdf", "zh": "specdec-theory-zh.pdf"}
SITE_FOLDER = "pdf"
PDF_LABELS = {"en": "Book PDF: the whole book, to download", "zh": "全书 PDF：下载整本书"}
#: The button's visible words: what it downloads (the whole book, not this page).
PDF_TEXTS = {"en": "Book PDF", "zh": "全书 PDF"}
#: The theme's download menu item that prints the page on screen (``window.print()``): named for what it does.
PRINT_TEXTS = {"en": "Print this page", "zh": "打印本页"}


def site_url() -> str:
    """The published site's address, ending in "/" (``html.baseurl`` of the English ``_config.yml``, the one
    place it is set; the Chinese edition is published under its ``zh/``), or "" where none is set."""
    import yaml

    config = yaml.safe_load((HERE.parents[1] / "_config.yml").read_text(encoding="utf-8"))
    url = str((config.get("html") or {}).get("baseurl") or "").strip()
    return url if not url or url.endswith("/") else url + "/"


def pdf_href(lang: str, pagename: str) -> str:
    """Where a page's "PDF" button leads: its edition's PDF on the published site (``tools/pdf.py`` builds the
    PDFs into the site's ``pdf/``, which the publishing workflow publishes), so that the button of a site built
    by ``jupyter-book build .`` alone, which holds no PDF, leads to one; without a published site, the site's
    own ``pdf/`` (relative to the page; the Chinese site is ``<site>/zh/``)."""
    published = site_url()
    if published:
        return f"{published}{SITE_FOLDER}/{PDF_NAMES[lang]}"
    up = "../" * (pagename.count("/") + (lang == "zh"))
    return f"{up}{SITE_FOLDER}/{PDF_NAMES[lang]}"


def _pdf_link(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Every page's header links to its edition's PDF (``pdf_href``)."""
    lang = "zh" if str(app.config.language or "").startswith("zh") else "en"
    context["pdf_link"] = {"href": pdf_href(lang, pagename), "label": PDF_LABELS[lang], "text": PDF_TEXTS[lang]}


def _print_item(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """The theme's ".pdf" item of the download menu (it prints the page on screen) reads "Print this page"."""
    lang = "zh" if str(app.config.language or "").startswith("zh") else "en"
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons") or []:
            if button.get("label") == "download-pdf-button":
                button.update(text=PRINT_TEXTS[lang], tooltip=PRINT_TEXTS[lang], icon="fas fa-print")


def _add_link(app: Any, config: Any) -> None:
    if str(config.language or "").startswith("zh") and not config.html_baseurl and site_url():
        config.html_baseurl = site_url() + "zh/"  # the Chinese pages' canonical addresses, from the one setting
    config.templates_path = [*config.templates_path, str(HERE / "paper_templates")]
    config.html_static_path = [*config.html_static_path, str(HERE / "paper_static")]
    options = config.html_theme_options
    end = list(options.get("article_header_end") or ["article-header-buttons.html"])
    if "pdf-link.html" not in end:
        end.insert(max(0, len(end) - 1), "pdf-link.html")  # before the theme's buttons
    options["article_header_end"] = end


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _add_link)
    app.connect("html-page-context", _pdf_link)
    app.connect("html-page-context", _print_item, priority=600)  # after sphinx-book-theme's buttons (501)
    app.add_css_file("paper.css", priority=900)
    app.add_post_transform(StaticFigures)
    app.add_post_transform(PaperProofs)
    app.setup_extension("sphinx_proof")
    from sphinx_proof.nodes import NODE_TYPES, visit_enumerable_node

    for node_class in NODE_TYPES.values():
        app.add_node(node_class, override=True, latex=(visit_enumerable_node, _depart_enumerable_latex))
    app.add_post_transform(ExerciseReferences)
    app.connect("config-inited", _latex_settings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
