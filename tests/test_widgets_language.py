"""The explorers speak the lab's language: in a Chinese lab every control, menu item, title, legend and axis is Chinese.

Each explorer is built as a lab builds it, with ``SPECDEC_LITE_LANGUAGE=zh_CN`` (``plotting.show`` caught, so
no browser is involved), and every text a student reads is collected: the controls' labels, the menus' items,
the figure's title, subplot titles, axis titles and legend entries (or, for the round explorer, its step line
and picture title). None may hold an English word outside the symbols the book writes as symbols. The same
explorers built in English keep their English labels (the values the update functions take never change).

Text that the figure helpers of ``specdec_lite/figures`` add (a Pareto front's legend, a running mean's) is
translated there, and held by the same test.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from specdec_lite import _i18n
from specdec_lite.widgets import (
    batch_explorer,
    beat_speculative,
    core,
    lookahead_explorer,
    rejections_explorer,
    round_explorer,
    token_explorer,
    tradeoff_explorer,
)

#: Latin words that are symbols in the book (TV, SE for a standard error, OPT/UNO for the two decoders, min).
SYMBOLS = {"TV", "SE", "min", "OPT", "UNO", "rej"}
#: Formulas the book writes the same in both editions: P(reject), as $P(\text{reject})$ in the text.
FORMULAS = ("P(reject)",)


_WORD = re.compile(r"[A-Za-z]{2,}")
_CJK = re.compile("[\u4e00-\u9fff]")

EXPLORERS = {
    "token": token_explorer.token_explorer,
    "round": round_explorer.round_explorer,
    "rejections": rejections_explorer.rejections_explorer,
    "beat": beat_speculative.beat_explorer,
    "tradeoff": tradeoff_explorer.tradeoff_explorer,
    "batch": batch_explorer.batch_explorer,
    "lookahead": lookahead_explorer.lookahead_explorer,
}


def english_words(text: str) -> list[str]:
    text = re.sub(r"<[^>]+>", " ", text)  # <br>, <sup>
    for formula in FORMULAS:
        text = text.replace(formula, " ")
    return [w for w in _WORD.findall(text) if w not in SYMBOLS]


def controls(box: Any) -> list[Any]:
    return [c for row in box.children[:-1] for c in row.children]


def control_labels(box: Any) -> list[str]:
    """Every control's label and every menu item, as the student sees them."""
    labels = []
    for c in controls(box):
        labels.append(c.description)
        labels += [str(label) for label in getattr(c, "_options_labels", ())]
    return labels


def figure_texts(fig: Any) -> list[str]:
    """Title, subplot titles, axis titles and legend entries of a plotly figure."""
    layout = fig.layout
    texts = [layout.title.text or ""]
    texts += [a.text for a in layout.annotations or () if a.text]
    for name in dir(layout):
        if re.fullmatch(r"[xy]axis\d*", name) and getattr(layout, name).title.text:
            texts.append(getattr(layout, name).title.text)
    texts += [t.name for t in fig.data if t.name]
    return texts


def build(name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """The explorer ``name`` and the texts of what it drew first."""
    shown: list[Any] = []
    monkeypatch.setattr(core, "show", shown.append)
    box = EXPLORERS[name]()
    if name == "round":
        html = box.children[-1].value
        step = re.search(r"<p><b>(.*?)</b></p>", html).group(1)
        return box, [step]
    return box, figure_texts(shown[-1])


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_a_chinese_lab_sees_its_explorers_in_chinese(monkeypatch, name):
    monkeypatch.setenv(_i18n.ENV, "zh_CN")
    box, texts = build(name, monkeypatch)
    labels = control_labels(box)
    english = [t for t in labels + texts if english_words(t)]
    assert not english, f"{name}: English left in a Chinese lab: {english}"
    assert _CJK.search(texts[0]), texts[0]  # the title (the round explorer's step line)


def test_the_values_the_update_functions_take_stay_english(monkeypatch):
    """A menu shows the Chinese label, and hands the update function the English name it always took."""
    monkeypatch.setenv(_i18n.ENV, "zh_CN")
    box, texts = build("beat", monkeypatch)
    menus = {c.description: c for c in controls(box) if hasattr(c, "options")}
    rule = menus["接受规则 b"]
    assert rule.label == "滑块" and rule.value == "sliders"
    rule.label = "推测解码 min(1, q/p)"
    assert rule.value == "speculative min(1, q/p)"
    verdict = beat_speculative.beat_update(accept_preset=rule.value).layout.title.text
    assert verdict.endswith("<sup>无偏且恰好在下界上：这就是推测解码</sup>"), verdict
    monkeypatch.delenv(_i18n.ENV)
    box, texts = build("beat", monkeypatch)
    assert [c.description for c in controls(box)][:3] == ["instance", "rule b", "law P"]
    assert "draft too confident" in controls(box)[0]._options_labels


def test_a_validator_answers_in_chinese(monkeypatch):
    """The laws' check, which ``sd.tv``, ``sd.residual``, ``token_laws`` and ``MarkovChain`` share, in Chinese."""
    from specdec_lite.laws import tv

    monkeypatch.setenv(_i18n.ENV, "zh_CN")
    with pytest.raises(ValueError, match=r"^p：每一行之和必须为 1（允许误差 1e-06）；偏差最大的一行相差 0\.1$"):
        tv([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"^quality（草稿质量）：必须位于 \[0, 1\]，得到的是 2$"):
        token_explorer.token_laws(5, "shifted", 2)
    monkeypatch.delenv(_i18n.ENV)
    with pytest.raises(ValueError, match=r"^p: rows must sum to 1 \(within 1e-06\); worst row is off by 0\.1$"):
        tv([0.5, 0.6], [0.5, 0.5])
