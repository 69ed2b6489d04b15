"""The Chinese edition stays the English book: same pages, same code, same numbers, current translations.

The first test is the one a contributor meets: it fails when an English section changed after its
Chinese counterpart was translated, or when what the editions share (code cells, formulas, labels,
directives, glued numbers, references, figures) differs. The others show that each kind of drift is
caught, on small pages written here.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from docutils import nodes

from tests.test_book import site_pages
from tools import editions as ed
from tools import terms as tm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import editions as ext  # noqa: E402  (the Sphinx extension, from book/_ext)


def test_the_editions_are_in_step():
    problems = ed.check()
    assert not problems, "\n".join(problems)


EN = """---
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Decoding as a Markov chain

A model returns a law over the next token, see {prf:ref}`thm-one` and {cite:p}`yin2024theoretical`.

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: A caption.
    name: fig-a
---
x = 1  # a comment
```

(sec-tv)=
## Total variation

$$
\\mathrm{TV}(p, q) = 1 - \\sum_x \\min(p(x), q(x))
$$

It is {glue:text}`tv-value:.3f` here, see {doc}`../notebooks/lab01_markov_chains`.

:::{prf:theorem} One
:label: thm-one
Text.
:::
"""

ZH = """---
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# 把解码看成马尔可夫链

模型给出下一个词元（token）的分布，见 {prf:ref}`thm-one` 和 {cite:p}`yin2024theoretical`。

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: A caption.
    name: fig-a
---
x = 1  # a comment
```

:::{zh-caption} fig-a
一个图注。
:::

(sec-tv)=
## 总变差

$$
\\mathrm{TV}(p, q) = 1 - \\sum_x \\min(p(x), q(x))
$$

这里它等于 {glue:text}`tv-value:.3f`，见 {en-doc}`实验 1（英文）<../notebooks/lab01_markov_chains>`。

:::{prf:theorem} 一
:label: thm-one
正文。
:::
"""


@pytest.fixture
def pair(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "zh" / "book").mkdir(parents=True)
    en, zh = tmp_path / "book" / "ch01.md", tmp_path / "zh" / "book" / "ch01.md"
    en.write_text(EN)
    zh.write_text(ZH)
    lines = zh.read_text().splitlines()
    for k, sec in sorted(enumerate(ed.parse(ZH).sections), reverse=True):
        lines.insert(sec.start, f"% en-sha: {ed.fingerprint(ed.parse(EN).sections[k].text)}")
    zh.write_text("\n".join(lines) + "\n")
    return en, zh


def test_a_faithful_pair_is_in_step(pair):
    assert ed.differences(*pair) == []


def test_an_english_edit_names_the_section_to_translate_again(pair):
    en, zh = pair
    en.write_text(EN.replace("here, see", "on this pair, see"))
    (found,) = ed.differences(en, zh)
    assert "§2 '总变差'" in found and "'Total variation' changed after it was translated" in found
    assert "python tools/editions.py stamp" in found


@pytest.mark.parametrize(
    "change, kind",
    [
        (("x = 1  # a comment", "x = 2  # a comment"), "code cells differ"),
        (("(sec-tv)=\n", ""), "labels differ"),
        (("{glue:text}`tv-value:.3f`", "0.250"), "glued numbers differ"),
        (("\\min(p(x), q(x))", "\\min(p, q)"), "display formulas differ"),
        ((":::{prf:theorem} 一", ":::{prf:lemma} 一"), "directives differ"),
        (("{prf:ref}`thm-one`", "定理"), "cross-references or citations differ"),
        ((":::{zh-caption} fig-a\n一个图注。\n:::\n", ""), "zh-caption"),
        (("---\nkernelspec", "---\nkernelspec: {}\nx"), "front matter"),
        (("## 总变差", "### 总变差"), "headings differ"),
    ],
)
def test_what_the_editions_share_is_checked(pair, change, kind):
    en, zh = pair
    zh.write_text(zh.read_text().replace(*change, 1))
    assert any(kind in d for d in ed.differences(en, zh)), ed.differences(en, zh)


def test_a_chinese_display_formula_ends_with_the_full_width_mark(pair):
    """A display formula's closing mark is the sentence's: ASCII in English, full-width (in a \\text) in Chinese."""
    en, zh = pair
    formula = "\\min(p(x), q(x))\n$$"
    en.write_text(en.read_text().replace(formula, "\\min(p(x), q(x)).\n$$"))
    zh.write_text(zh.read_text().replace(formula, "\\min(p(x), q(x))\\text{。}\n$$"))

    def found():  # the English section changed: its stamp is out of date, which is not what this test is about
        return [d for d in ed.differences(en, zh) if "changed after it was translated" not in d]

    assert found() == []
    zh.write_text(zh.read_text().replace("\\text{。}", "."))
    (one,) = found()
    assert "ends with the ASCII '.': write \\text{。}" in one
    zh.write_text(zh.read_text().replace("q(x)).\n$$", "q(x))\\text{，}\n$$"))
    (one,) = found()
    assert "display formulas differ" in one
    assert ed.closing_mark("a\\,\n\\end{aligned}") is None  # a thin space, not a comma
    assert ed.display_key("x\\text{，}\n\\end{aligned}") == ed.display_key("x,\n\\end{aligned}")


def test_a_missing_stamp_is_reported(pair):
    en, zh = pair
    zh.write_text("\n".join(line for line in zh.read_text().splitlines() if not line.startswith("% en-sha")))
    assert sum("no '% en-sha:' line" in d for d in ed.differences(en, zh)) == 2


def test_stamp_records_the_current_english(tmp_path, monkeypatch, pair):
    en, zh = pair
    en.write_text(EN.replace("here, see", "on this pair, see"))
    monkeypatch.setattr(ed, "ROOT", tmp_path)
    assert ed.stamp(zh, [2]) == [2]
    assert ed.differences(en, zh) == []


def test_a_page_in_one_edition_only_is_reported(tmp_path):
    (tmp_path / "zh").mkdir()
    en_toc, zh_toc = tmp_path / "_toc.yml", tmp_path / "zh" / "_toc.yml"
    en_toc.write_text(
        yaml.safe_dump(
            {
                "root": "book/intro",
                "parts": [{"chapters": [{"file": "book/ch01"}, {"file": "notebooks/lab01"}, {"file": "book/ch02"}]}],
            }
        )
    )
    zh_toc.write_text(
        yaml.safe_dump(
            {
                "root": "book/intro",
                "parts": [
                    {"chapters": [{"file": "book/ch01"}, {"file": "book/labs"}, {"file": "notebooks/lab01"}]},
                    {"chapters": [{"file": "book/extra"}]},
                ],
            }
        )
    )
    pairs, problems = ed.page_pairs(en_toc, zh_toc)
    assert [p[1].name for p in pairs] == ["intro.md", "ch01.md"]  # a lab's Chinese twin: tools/labs_zh.py
    assert problems == ["book/ch02: no Chinese page in zh/_toc.yml", "zh/book/extra: no English page in _toc.yml"]
    zh_toc.write_text(zh_toc.read_text().replace("notebooks/lab01", "book/ch02"))
    assert "notebooks/lab01: no Chinese lab in zh/_toc.yml" in ed.page_pairs(en_toc, zh_toc)[1]


def test_the_terminology_table_is_one_term_per_concept():
    terms = ed.terms()
    for key in ("en", "zh"):
        values = [t[key] for t in terms]
        assert len(values) == len(set(values)), f"a {key} term twice in zh/terms.yml"
    chosen = {t["zh"] for t in terms}
    for t in terms:
        assert not chosen & set(t.get("avoid", [])), f"{t['en']}: a variant it avoids is another concept's term"


def test_terms_are_checked(tmp_path, monkeypatch):
    page = tmp_path / "p.md"
    monkeypatch.setattr(tm, "terms", lambda: [{"en": "draft model", "zh": "草稿模型", "avoid": ["草案模型"]}])
    page.write_text("# 标题：草稿模型\n\n草稿模型（draft model）给出 $p$。草稿模型很小。\n")
    assert ed.term_problems(page) == []
    page.write_text("# 标题\n\n让**草稿模型**（draft model）先猜。\n")  # the gloss after the closing markup
    assert ed.term_problems(page) == []
    page.write_text("# 标题\n\n草稿模型给出 $p$，即草稿模型（draft model）。\n")
    assert ["needs the English after it" in d for d in ed.term_problems(page)] == [True]
    page.write_text("# 标题\n\n草案模型（draft model）。\n\n```{code-cell} ipython3\n# 草案模型 in code is code\n```\n")
    (found,) = ed.term_problems(page)
    assert "'草案模型' for draft model" in found


def _page_problems(tmp_path, text: str) -> list[str]:
    page = tmp_path / "p.md"
    page.write_text(f"# 标题\n\n{text}\n", encoding="utf-8")
    return ed.term_problems(page)


@pytest.mark.parametrize(
    "text, variant",
    [
        ("再从 $q$ 中抽出一个奖励词元（bonus token）。", "奖励"),  # bonus token: 额外词元; 奖励 is an RL reward
        ("4. **奖励**。如果全部被接受", "奖励"),
        ("两个分布共有的质量 $\\min(p, q)$", "共有的质量"),  # mass: 概率质量; 质量 alone reads "quality"
        ("损失就是过度接受的质量。", "过度接受的质量"),
        ("残差分布把质量放在 $q > p$ 的地方。", "质量放在"),
        ("在词元浏览器（token explorer）中选择", "词元浏览器"),  # explorer: 探索器; 浏览器 is a web browser
        ("运行拒绝次数浏览器。", "拒绝次数浏览器"),
        ("从拒绝分布中抽取", "拒绝分布"),  # rejection law: 拒绝后分布
        ("使挂钟时间（wall-clock）最短", "挂钟"),  # wall-clock: 墙钟时间
        ("每个请求的键值缓存", "键值缓存"),
        ("接受才恰好是 i.i.d. 的。", "i.i.d."),  # i.i.d.: 独立同分布
        ("输出服从目标的分布。", "服从目标的"),  # the models are 目标模型 / 草稿模型
        ("每个草稿调用花费 $c$。", "草稿调用"),
        ("**前置知识**：第 1 章。书外知识：条件概率。", "书外知识"),  # the recurring phrases, one wording each
        ("本书以外：二项分布。", "本书以外"),
        ("*编程（实验 1）*。打开英文实验。", "编程（实验"),
        ("*提示；本问题由实验评分*。", "本问题由实验评分"),
    ],
)
def test_the_terminology_table_rejects_each_variant(tmp_path, text, variant):
    found = _page_problems(tmp_path, text)
    assert any(f"'{variant}' for" in d for d in found), found


@pytest.mark.parametrize(
    "text",
    [
        "再从 $q$ 中抽出一个额外词元（bonus token）；论文用奖励模型评判输出。",
        "草稿模型的质量设为 0：以质量换速度。两个分布共有的概率质量。",
        "浏览器绘制图形之前；在词元探索器中选择预设。",
        "从拒绝后分布（rejection law）中抽取。",
        "各次接受独立同分布（i.i.d.）时。",
        "目标模型（target model）的分布，草稿模型（draft model）调用。",
        "本书之外：条件概率。",
    ],
)
def test_the_decided_terms_pass_the_check(tmp_path, text):
    first_uses = "词元（token）、草稿模型（draft model）、目标模型（target model）。"
    assert _page_problems(tmp_path, first_uses + text) == []


def test_a_self_check_opens_with_the_fixed_phrase(tmp_path):
    fixed = next(t["zh"] for t in ed.terms() if t.get("under") == "自测")
    assert _page_problems(tmp_path, f"正文。\n\n### 自测\n\n{fixed}\n\n**1.** 问题？") == []
    found = _page_problems(tmp_path, "正文。\n\n### 自测\n\n以下小问题用来检验阅读。\n\n**1.** 问题？")
    assert [d for d in found if "fixed phrase" in d] and "§2 '自测'" in found[0], found


def test_the_two_configurations_agree():
    en = yaml.safe_load((ROOT / "_config.yml").read_text())
    zh = yaml.safe_load((ROOT / "zh" / "_config.yml").read_text())
    assert zh["execute"] == en["execute"]  # both editions' lab pages are the student copies, never executed
    assert zh["parse"] == en["parse"]
    assert zh["sphinx"]["extra_extensions"] == en["sphinx"]["extra_extensions"]
    assert zh["sphinx"]["local_extensions"] == {k: f"../{v}" for k, v in en["sphinx"]["local_extensions"].items()}
    own = {"language", "numfig_format", "bibtex_default_style"}  # the references' connectives in Chinese
    assert {k: v for k, v in zh["sphinx"]["config"].items() if k not in own} == {
        k: v for k, v in en["sphinx"]["config"].items() if k not in own
    }
    assert zh["sphinx"]["config"]["numfig_format"]["figure"] == "图 %s"
    assert zh["sphinx"]["config"]["language"] == "zh_CN"
    assert (en["sphinx"]["config"]["bibtex_default_style"], zh["sphinx"]["config"]["bibtex_default_style"]) == (
        "specdec",
        "specdec_zh",
    )
    assert zh["bibtex_bibfiles"] == [f"../{b}" for b in en["bibtex_bibfiles"]]


def test_line_breaks_between_chinese_characters_are_joined():
    join = ext.join_cjk_html
    assert join("下面的链接\n打开英文页面") == "下面的链接打开英文页面"
    assert join("页面，\n  见下") == "页面，见下"
    assert join("的分布，\n<strong>预测</strong>") == "的分布，<strong>预测</strong>"  # across inline markup
    assert join("论文\n<em>推测</em>") == "论文<em>推测</em>"
    assert join("分布 $p$\n的") == "分布 $p$\n的"  # next to Latin text or maths a break is a space
    assert join("论文\n<em>A Theoretical</em>") == "论文\n<em>A Theoretical</em>"
    assert join("draft\nmodel") == "draft\nmodel"
    assert join("<pre>代码\n代码</pre>") == "<pre>代码\n代码</pre>"  # code keeps its lines


def test_line_breaks_next_to_full_width_punctuation_are_joined():
    join = ext.join_cjk_html
    math = '<span class="math notranslate nohighlight">\\(p\\)</span>'
    assert join(f"的分布，\n{math}") == f"的分布，{math}"  # after punctuation, whatever follows
    assert join("见下。</em>\nEnglish") == "见下。</em>English"
    assert join(f"{math}\n，下一个") == f"{math}，下一个"  # and before it
    assert join("“超出”\n的图景") == "“超出”的图景"
    assert join(f"分布 {math}\n的") == f"分布 {math}\n的"  # a break beside Latin text or maths stays a space


@pytest.mark.parametrize(
    "source, html",
    [
        ("**平均是对目标模型的前缀取的，**而不是", "<strong>平均是对目标模型的前缀取的，</strong>而不是"),
        ("**输入：**草稿", "<strong>输入：</strong>草稿"),
        ("*推测解码（speculative decoding）*让一个", "<em>推测解码（speculative decoding）</em>让一个"),
        ("它们**共有**的概率质量", "它们<strong>共有</strong>的概率质量"),
        ("**自动规则**。审核", "<strong>自动规则</strong>。审核"),
        ("称为**“过度接受”**的规则", "称为<strong>“过度接受”</strong>的规则"),
        ("目标模型（target model）**$q$", "目标模型（target model）**$q$"),  # an opening run needs a closing one
    ],
)
def test_bold_and_italic_next_to_full_width_punctuation_render(source, html):
    from markdown_it import MarkdownIt

    assert MarkdownIt("commonmark").use(ext.cjk_emphasis_plugin).renderInline(source) == html


@pytest.mark.parametrize(
    "source",
    ["**foo.**bar", "a **b** c", "x**y**z", "*a*b", "snake_case_name", "__init__", "**a** (b)", "2 * 3 * 4", "*(a)*b"],
)
def test_emphasis_without_chinese_follows_commonmark(source):
    from markdown_it import MarkdownIt

    plain, cjk = MarkdownIt("commonmark"), MarkdownIt("commonmark").use(ext.cjk_emphasis_plugin)
    assert cjk.renderInline(source) == plain.renderInline(source)


def _emphasis_problems(markdown: str) -> list[str]:
    """Bold and italic that plain CommonMark leaves as literal asterisks, or that close on full-width punctuation
    (the book's rule puts the punctuation and the English gloss outside: ``**草稿模型**（draft model）先``)."""
    from markdown_it import MarkdownIt

    prose = re.sub(r"\$\$.*?\$\$|\$[^$]+\$", "X", markdown, flags=re.S)  # ``$q^*$`` is not emphasis
    out = []
    for block in MarkdownIt("commonmark").parse(prose):
        children = block.children or []
        for before, child in zip([None, *children], children, strict=False):
            if child.type == "text" and "*" in child.content:
                out.append(f"literal '*' in {child.content[:60]!r}")
            if child.type in ("em_close", "strong_close") and before is not None and before.type == "text":
                if re.search(f"[{ext.FULL_WIDTH_PUNCT}]$", before.content):
                    out.append(f"emphasis closes on '{before.content[-1]}' in {before.content[-40:]!r}")
    return out


def test_the_emphasis_reader_finds_both_faults():
    assert _emphasis_problems("让**草稿模型（draft model）**先") == ["literal '*' in '让**草稿模型（draft model）**先'"]
    assert _emphasis_problems("**学完本章：**\n") == ["emphasis closes on '：' in '学完本章：'"]
    assert _emphasis_problems("让**草稿模型**（draft model）先，$\\mathrm{Loss}^*$ 与 *停时*：") == []


def test_chinese_pages_render_their_emphasis_in_plain_commonmark():
    """Every Chinese page's bold and italic render without the build's CJK emphasis rule, and none closes on
    full-width punctuation."""
    problems = [
        f"{zh.relative_to(ROOT)}: {p}"
        for zh in sorted((ROOT / "zh" / "book").glob("*.md"))
        for p in _emphasis_problems(zh.read_text(encoding="utf-8"))
    ]
    assert not problems, "\n".join(problems)


def test_the_chinese_build_gives_every_myst_parser_the_emphasis_rule(monkeypatch):
    """MyST has no setting for markdown-it plugins: the Chinese build wraps ``create_md_parser`` where it is used."""
    import importlib

    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig

    for name in ext.MD_PARSER_USERS:  # undone after the test
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "create_md_parser", module.create_md_parser)
    changed = ext.use_cjk_emphasis()
    assert "myst_nb.sphinx_" in changed and "myst_parser.parsers.sphinx_" in changed, changed
    for name in changed:
        md = importlib.import_module(name).create_md_parser(MdParserConfig(), RendererHTML)
        assert "<strong>输入：</strong>草稿" in md.render("**输入：**草稿"), name
    assert ext.use_cjk_emphasis() == [], "applied twice"


# --- The built site: both editions, as the build writes them -------------------------------------


class Html(HTMLParser):
    """What the tests below read in a page: figure captions, glued numbers and cell outputs, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.captions: list[str] = []
        self.glued: list[str] = []
        self.outputs: list[str] = []
        self._stack: list[tuple[str, str | None]] = []  # (tag, what its text goes to)

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "meta", "link", "input", "hr", "source", "wbr", "col", "area", "base", "embed"):
            return
        classes = (dict(attrs).get("class") or "").split()
        into = self._stack[-1][1] if self._stack else None
        if tag == "figcaption":
            self.captions.append("")
            into = "captions"
        elif "pasted-text" in classes:
            self.glued.append("")
            into = "glued"
        elif "cell_output" in classes and into is None:
            self.outputs.append("")
            into = "outputs"
        self._stack.append((tag, into))

    def handle_endtag(self, tag):
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        into = self._stack[-1][1] if self._stack else None
        if into:  # an output's text nodes apart ("step 1" and "4 · output" in an SVG are not "14")
            getattr(self, into)[-1] += data + (" " if into == "outputs" else "")


def read(built_book: Path, page: str) -> tuple[str, Html]:
    text = (built_book / f"{page}.html").read_text(encoding="utf-8")
    parsed = Html()
    parsed.feed(text)
    return text, parsed


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def squash(text: str) -> str:
    """Text with runs of white space as one space, and element ids (plotly draws a fresh one per run) removed."""
    return _UUID.sub("<id>", " ".join(text.split()))


_SWITCH = re.compile(r'<a class="btn edition-switch" href="([^"]+)" hreflang="([^"]+)" lang="([^"]+)">([^<]+)</a>')


def test_each_page_says_its_language_and_links_to_its_counterpart(built_book):
    for page in site_pages():
        html = (built_book / f"{page}.html").read_text(encoding="utf-8")
        zh = page.startswith("zh/")
        assert re.search(r'<html[^>]*\slang="([^"]+)"', html)[1] == ("zh-CN" if zh else "en"), page
        switch = _SWITCH.search(html)
        assert switch, f"{page}: no link to the other edition in the header"
        href, hreflang, lang, text = switch.groups()
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), href))
        if zh:
            expected = ext.ZH_ONLY.get(page[3:], page[3:])
            assert (hreflang, lang, text) == ("en", "en", "English")
        else:
            twin = any((ROOT / "zh" / f"{page}{suffix}").is_file() for suffix in (".md", ".ipynb"))  # a lab: .ipynb
            expected = f"zh/{page}" if twin else f"zh/{ext.EN_ONLY_TARGET}"
            assert (hreflang, lang, text) == ("zh-CN", "zh-CN", "中文")
        assert target == f"{expected}.html" and (built_book / target).is_file(), f"{page} -> {target}"
        assert f'<link rel="alternate" hreflang="{hreflang}" href="{href}" />' in html, page


_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")  # after a Chinese character too
_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")
#: An element id a run draws afresh (``sd-round-3de33c714e7f``): not a number of the page.
_DRAWN_ID = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)*-[0-9a-f]{6,}\b")


def unescape(text: str) -> str:
    """Text with JSON's ``\\uXXXX`` escapes (a figure's data in a script) read as the characters they name."""
    return _ESCAPED.sub(lambda m: chr(int(m[1], 16)), text)


#: A column's width, which follows the length of its header's words in each language: layout, not a number shown.
_HEADER_WIDTH = re.compile(r'style=\\?"min-width:[\d.]+em\\?"')


def numbers(text: str) -> list[str]:
    """The numbers in a text (one output, one glued value), sorted: a translation may reorder its words."""
    text = _HEADER_WIDTH.sub("", _DRAWN_ID.sub("<id>", unescape(squash(text))))
    return sorted(n.replace("−", "-") for n in _NUMBER.findall(text))


def test_both_editions_show_the_same_computed_numbers_and_outputs(built_book):
    """Each edition runs the code cells in its language: the outputs' words differ, their numbers do not."""
    pairs, _ = ed.page_pairs()
    glued = 0
    for en_src, _zh_src in pairs:
        page = en_src.relative_to(ROOT).with_suffix("").as_posix()
        _, en = read(built_book, page)
        _, zh = read(built_book, f"zh/{page}")
        assert sorted(map(numbers, zh.glued)) == sorted(map(numbers, en.glued)), f"{page}: glued numbers differ"
        assert len(zh.outputs) == len(en.outputs), f"{page}: {len(zh.outputs)} cell outputs, {len(en.outputs)}"
        for i, (zh_out, en_out) in enumerate(zip(zh.outputs, en.outputs, strict=True)):
            assert numbers(zh_out) == numbers(en_out), f"{page}: the numbers of cell output {i} differ"
        glued += len(en.glued)
        for caption in zh.captions:
            assert re.search(r"[\u4e00-\u9fff]", caption), f"zh/{page}: a figure caption in English: {caption!r}"
        assert len(zh.captions) == len(en.captions), f"zh/{page}: {len(zh.captions)} captions, {len(en.captions)}"
    assert glued > 100, f"only {glued} glued numbers found: is the HTML parsed?"


_ANY_CJK = re.compile(f"[{ext._CJK}]")


def test_the_english_pages_outputs_are_english(built_book):
    """No Chinese character in an English page's outputs: printed lines, figures' JSON, widgets, glued values."""
    pages = [p for p in site_pages() if not p.startswith("zh/")]
    for page in pages:
        _, en = read(built_book, page)
        for text in en.outputs + en.glued:
            found = _ANY_CJK.search(unescape(text))
            assert not found, (
                f"{page}: a Chinese character in an output: {unescape(text)[max(0, found.start() - 80) :][:200]!r}"
            )
    assert len(pages) > 10


def test_the_chinese_pages_outputs_come_from_a_chinese_run(built_book):
    """Chapter 8's sentence on the GPU files is made by the package in each page's language (its .po message)."""
    import gettext

    from specdec_lite import _i18n
    from specdec_lite.llm import gpu_notes, measure_pair

    catalogue = gettext.translation(_i18n.DOMAIN, str(_i18n.LOCALE_DIR), languages=["zh_CN"])
    english = gpu_notes.results_gpu_note(measure_pair.load_results())
    chinese = catalogue.gettext(english)
    assert _ANY_CJK.search(chinese), f"no Chinese for {english!r} in the catalogue"
    for page, sentence in (("book/ch08_real_models", english), ("zh/book/ch08_real_models", chinese)):
        _, parsed = read(built_book, page)
        assert sentence in map(squash, parsed.glued), f"{page}: {sentence!r} is not glued"


def test_the_chinese_chrome_is_chinese(built_book):
    """sphinx-togglebutton's hint, sphinx-proof's "Proof.", the search box and Sphinx's links speak each edition."""
    page = "book/ch02_unbiased"
    en, zh = (
        (built_book / f"{page}.html").read_text(encoding="utf-8"),
        (built_book / f"zh/{page}.html").read_text(encoding="utf-8"),
    )
    assert "let toggleHintShow = 'Click to show';" in en and "<p>Proof. " in en
    assert "let toggleHintShow = '点击显示';" in zh and "let toggleHintHide = '点击隐藏';" in zh
    assert "<p>证明：" in zh and "Proof." not in zh
    assert f'placeholder="{ext.SEARCH_BAR_ZH}"' in zh
    for english in ("Click to show", "Link to this heading", "Search this book", "© Copyright", "Toggle primary"):
        assert english not in zh, f"zh/{page}: {english!r}"
    assert 'aria-label="Main"' in en and 'aria-label="主导航"' in zh


def test_proofs_open_in_chinese():
    from docutils.utils import new_document
    from sphinx_proof.nodes import proof_node

    doc = new_document("test")
    proof = proof_node()
    box = nodes.admonition()
    box += nodes.paragraph("", "", nodes.Text("Proof. Let x be a token."))
    proof += box
    doc += proof
    assert ext.translate_proofs(doc) == 1
    assert box.astext() == "证明：Let x be a token."
    assert ext.translate_proofs(doc) == 0  # translated once


def test_the_themes_english_labels_are_translated():
    page = '<button title="Toggle primary sidebar"></button><nav aria-label="Main"></nav><nav aria-label="Mains"></nav>'
    assert ext.translate_labels(page) == (
        '<button title="切换主侧边栏"></button><nav aria-label="主导航"></nav><nav aria-label="Mains"></nav>'
    )


def test_chrome_messages_are_the_last_fallback():
    import gettext

    first = gettext.NullTranslations()
    first.add_fallback(ext.ChromeMessages(ext.CHROME_ZH))
    assert first.gettext("Link to this heading") == "链接到此标题"
    assert first.gettext("Not a message") == "Not a message"


def test_an_execution_cache_holds_one_language(tmp_path):
    """The Chinese build empties a cache made in English (or an older one that says no language), and unlinks a link."""
    from types import SimpleNamespace

    def app(language: str, cache: Path) -> SimpleNamespace:
        mystnb = SimpleNamespace(execution_cache_path=str(cache))
        return SimpleNamespace(config=SimpleNamespace(language=language), env=SimpleNamespace(mystnb_config=mystnb))

    cache = tmp_path / "cache"
    (cache / "executed").mkdir(parents=True)
    (cache / ext.CACHE_PACKAGE_FILE).write_text(ext.package_digest() + "\n")
    ext._own_cache(app("en", cache))  # an English cache from before the language file: kept, and now says English
    assert (cache / "executed").is_dir() and (cache / ext.CACHE_LANGUAGE_FILE).read_text().strip() == "en"
    ext._own_cache(app("zh_CN", cache))
    assert not (cache / "executed").exists() and (cache / ext.CACHE_LANGUAGE_FILE).read_text().strip() == "zh_CN"
    (cache / "executed").mkdir()
    ext._own_cache(app("zh_CN", cache))  # its own language: kept
    assert (cache / "executed").is_dir()
    old = tmp_path / "zh-cache"
    (tmp_path / "english").mkdir()
    old.symlink_to(tmp_path / "english", target_is_directory=True)
    ext._own_cache(app("zh_CN", old))
    assert not old.is_symlink() and old.is_dir() and (tmp_path / "english").is_dir()


def test_an_execution_cache_holds_one_package(tmp_path, monkeypatch):
    """A cache made with other package files, or one that does not say, is emptied; one made with these is kept."""
    from types import SimpleNamespace

    mystnb = SimpleNamespace(execution_cache_path=str(tmp_path / "cache"))
    app = SimpleNamespace(config=SimpleNamespace(language="en"), env=SimpleNamespace(mystnb_config=mystnb))
    cache = tmp_path / "cache"
    (cache / "executed").mkdir(parents=True)
    ext._own_cache(app)  # it does not say its package files
    assert not (cache / "executed").exists()
    assert (cache / ext.CACHE_PACKAGE_FILE).read_text().strip() == ext.package_digest()
    (cache / "executed").mkdir()
    ext._own_cache(app)  # made with these files: kept
    assert (cache / "executed").is_dir()
    root = tmp_path / "repo"
    for name in ("specdec_lite/laws.py", "specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.mo", "benchmarks/a.json"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("1")
    before = ext.package_digest(root)
    for name in ("specdec_lite/laws.py", "specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.mo", "benchmarks/a.json"):
        (root / name).write_text("2")
        assert ext.package_digest(root) != before, name
        before = ext.package_digest(root)
    (root / "specdec_lite" / "__pycache__").mkdir()
    (root / "specdec_lite" / "__pycache__" / "laws.cpython-311.pyc").write_text("compiled")
    (root / "benchmarks" / "notes.md").write_text("not read by a page")
    assert ext.package_digest(root) == before
    monkeypatch.setattr(ext, "package_digest", lambda: "another package")
    ext._own_cache(app)  # made with other files
    assert not (cache / "executed").exists()


def test_the_chinese_pages_are_searchable_in_chinese(built_book):
    script = (built_book / "zh" / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(script[script.index("(") + 1 : script.rindex(")")])
    for word in ("推测", "解码", "草稿", "拒绝"):
        assert word in index["terms"], f"'{word}' is not in the Chinese search index (is jieba installed?)"
    english = json.loads((lambda s: s[s.index("(") + 1 : s.rindex(")")])((built_book / "searchindex.js").read_text()))
    assert "speculative" in english["terms"] or "specul" in english["terms"]


def test_the_toggles_of_hidden_cells_speak_chinese():
    body = '<p class="collapsed admonition-title">Show code cell source</p><p class="x">Hide code cell outputs</p>'
    assert ext.translate_toggles(body) == (
        '<p class="collapsed admonition-title">显示代码</p><p class="x">隐藏输出</p>'
    )


def test_a_reader_finds_chinese_words_with_the_search_box(built_book, tmp_path):
    """In Chromium, Sphinx's search page of each edition finds the pages that use the words typed."""
    from tests import browser_support as bs

    bs.require_chromium()
    searches = [
        ("zh/search.html", "推测解码"),  # a term of zh/terms.yml, one word for jieba
        ("zh/search.html", "目标模型调用"),  # two words typed without a space, in no title
        ("zh/search.html", "总变差距离 马尔可夫链"),
        ("search.html", "total variation"),
    ]
    results = bs.search_book(built_book, searches, tmp_path)
    for r in results:
        assert not r["errors"], f"{r['page']}?q={r['query']}: {r['errors']}"
        assert r["found"], f"{r['page']}?q={r['query']} finds nothing"
        edition = "zh/" if r["page"].startswith("zh/") else ""
        for href in r["found"]:
            assert href.startswith("book/") or href.startswith("notebooks/"), href
        assert any(href.startswith("book/ch") for href in r["found"]), (r["query"], r["found"][:5])
        assert edition or not any("zh/" in href for href in r["found"])


class Paragraphs(HTMLParser):
    """The text of each block (paragraph, list item, table cell, term, caption, heading) of a page's article,
    without code, formulas and cell outputs (those are the English edition's, byte for byte)."""

    BLOCKS = ("p", "li", "td", "th", "dt", "dd", "figcaption", "caption", "h1", "h2", "h3", "h4", "h5", "h6")
    VOID = ("br", "img", "meta", "link", "input", "hr", "source", "wbr", "col", "area", "base", "embed")

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._stack: list[tuple[str, bool, int | None]] = []  # (tag, skipped, index of its block)
        self._article = False

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        if tag == "article":
            self._article = True
        classes = (dict(attrs).get("class") or "").split()
        skip = (
            (self._stack and self._stack[-1][1])
            or tag in ("pre", "code", "script", "style", "kbd")
            or "math" in classes
            or "cell_output" in classes
        )
        block = self._stack[-1][2] if self._stack else None
        if skip and not (self._stack and self._stack[-1][1]) and block is not None and self._article:
            self.blocks[block] += "X"  # what is left out (a formula, code) still stands between its neighbours
        if tag in self.BLOCKS and not skip and self._article:
            self.blocks.append("")
            block = len(self.blocks) - 1
        self._stack.append((tag, bool(skip), block))

    def handle_endtag(self, tag):
        if tag == "article":
            self._article = False
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self._article and self._stack and not self._stack[-1][1] and self._stack[-1][2] is not None:
            self.blocks[self._stack[-1][2]] += data


def chinese_blocks(built_book: Path) -> list[tuple[str, str]]:
    """(page, text) of every block of text of every Chinese page."""
    out = []
    for page in ed.toc_files(ROOT / "zh" / "_toc.yml"):
        parsed = Paragraphs()
        parsed.feed((built_book / "zh" / f"{page}.html").read_text(encoding="utf-8"))
        out += [(page, text) for text in parsed.blocks if re.search(r"[\u4e00-\u9fff]", text)]
    return out


def test_chinese_paragraphs_have_no_line_breaks_between_characters(built_book):
    """A source line break between two Chinese characters would show as a space: the build joins them."""
    cjk_break = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]\n[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
    paragraphs = 0
    for page in ed.toc_files(ROOT / "zh" / "_toc.yml"):
        html = (built_book / "zh" / f"{page}.html").read_text(encoding="utf-8")
        for p in re.findall(r"<p>(.*?)</p>", html, flags=re.S):
            paragraphs += 1
            assert not cjk_break.search(re.sub(r"<[^>]+>", "", p)), f"zh/{page}: a line break inside {p[:80]!r}"
    assert paragraphs > 500


_AFTER_PUNCT = re.compile(f"[{ext.FULL_WIDTH_PUNCT}][ \\t\\n\\u00a0\\u3000]+\\S")


def test_the_paragraph_reader_finds_literal_markup_and_spaces_after_punctuation():
    """What the next test reads, on a page written here: prose yes; code, formulas and cell outputs no."""
    page = (
        '<html><p>主题</p><article class="bd-article"><p>**平均是前缀取的，**而不是 '
        '<span class="math notranslate">\\(p^*\\)</span></p><ul><li>文字。 下一句</li></ul>'
        '<p>字母：<span class="math notranslate">\\(p\\)</span> 是草稿模型</p>'
        '<div class="cell_output"><p>输出 *x*</p></div><pre>代码， *</pre><dl><dt>术语，\nterm</dt></dl>'
        "</article><p>作者： 页脚</p></html>"
    )
    parsed = Paragraphs()
    parsed.feed(page)
    assert parsed.blocks == ["**平均是前缀取的，**而不是 X", "文字。 下一句", "字母：X 是草稿模型", "术语，\nterm"]
    assert [m[0][0] for b in parsed.blocks for m in [_AFTER_PUNCT.search(b)] if m] == ["。", "，"]


def test_chinese_paragraphs_show_no_markup_and_no_space_after_punctuation(built_book):
    """Every block of Chinese text on the site: bold and italic rendered (no literal ``*``), and no space after
    full-width punctuation (neither typed nor a source line break)."""
    blocks = chinese_blocks(built_book)
    assert len(blocks) > 1500, f"only {len(blocks)} blocks of Chinese text: is the article parsed?"
    stars = [f"zh/{page}: {text.strip()[:100]!r}" for page, text in blocks if "*" in text]
    assert not stars, "literal asterisks (emphasis that did not render):\n" + "\n".join(stars)
    spaces = [
        f"zh/{page}: ...{text[max(0, m.start() - 20) : m.end() + 10]!r}"
        for page, text in blocks
        for m in _AFTER_PUNCT.finditer(text)
    ]
    assert not spaces, f"{len(spaces)} spaces after full-width punctuation:\n" + "\n".join(spaces)


def test_every_page_is_read_again_when_the_package_changed(monkeypatch):
    """Sphinx reads again only pages whose source changed: with other package files, every page is read and run."""
    from types import SimpleNamespace

    env = SimpleNamespace(found_docs={"intro", "book/ch01", "book/ch02"})
    app = SimpleNamespace()
    # an environment that never said its package (or one from before): every page not already being read
    assert ext._pages_of_another_package(app, env, {"book/ch02"}, set(), set()) == ["book/ch01", "intro"]
    assert env.specdec_package_digest == ext.package_digest()
    assert ext._pages_of_another_package(app, env, set(), {"book/ch01"}, set()) == []  # the same files: Sphinx decides
    monkeypatch.setattr(ext, "package_digest", lambda root=None: "other files")
    assert ext._pages_of_another_package(app, env, set(), set(), set()) == ["book/ch01", "book/ch02", "intro"]
    assert ext._pages_of_another_package(app, env, set(), set(), set()) == []


def test_a_chinese_code_cell_may_comment_in_chinese_but_runs_the_english_program():
    """Code cells are compared as their options and their tokens without comments: a translated comment passes,
    a changed number, name, string or option does not."""
    en = "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nx = f(1, 'a')   # the draft\nprint(x)  # shown\n```"
    same = "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nx = f(1, 'a')   # 草稿\nprint(x)  # 显示\n```"
    assert ed.code_key(en) == ed.code_key(same)
    assert ed.code_key(en) == ed.code_key(en.replace("# the draft\n", "\n# a comment line of its own\n"))
    for changed in (
        en.replace("f(1,", "f(2,"),
        en.replace("'a'", "'b'"),
        en.replace("print(x)", "print(y)"),
        en.replace("hide-input", "remove-input"),
        en.replace("x = f", "x = g"),
    ):
        assert ed.code_key(changed) != ed.code_key(en), changed
