"""The pictures of a round (specdec_lite.figures.round) read well: WCAG 2.1 AA contrast and a text alternative."""

from __future__ import annotations

import re

import numpy as np

from specdec_lite.figures.round import BACKGROUND, FILLS, describe_round, round_svg, stages, worked_round


def luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of ``#RRGGBB``."""
    channels = [int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_matches_wcag():
    assert abs(contrast("#000000", "#FFFFFF") - 21.0) < 1e-9
    assert abs(contrast("#767676", "#FFFFFF") - 4.54) < 0.01  # the lightest grey that passes AA on white


def rounds():
    vocab = ("sun", "rain", "snow", "wind")
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    rejected = worked_round(vocab, p, q, drafts=("rain", "sun", "wind"), u=(0.52, 0.81), u_last=0.40)
    kept = worked_round(vocab, p, q, drafts=("rain", "snow", "wind"), u=(0.52, 0.93, 0.35), u_last=0.66)
    return rejected, kept


def test_every_label_and_outline_has_aa_contrast():
    """Text at 4.5:1 on the picture's background and on every box fill (a label may sit on
    either); box outlines at 3:1 on the background (WCAG 1.4.3 and 1.4.11)."""
    svg = round_svg(list(rounds()), ["(a)", "(b)"])
    texts = re.findall(r"<text\b[^>]*>", svg)
    assert texts and all(" fill=" in t for t in texts), "every label names its colour (none inherits the page's)"
    for color in set(re.findall(r'<text\b[^>]*\bfill="(#[0-9A-Fa-f]{6})"', svg)):
        for ground in [BACKGROUND, *FILLS.values()]:
            assert contrast(color, ground) >= 4.5, (color, ground, contrast(color, ground))
    for color in set(re.findall(r'<rect\b[^>]*\bstroke="(#[0-9A-Fa-f]{6})"', svg)):
        assert contrast(color, BACKGROUND) >= 3.0, (color, contrast(color, BACKGROUND))
    assert f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>' in svg, "an opaque background in dark mode too"


def test_the_text_alternative_says_what_the_picture_shows():
    rejected, kept = rounds()
    svg = round_svg([rejected], ["(a) A round with a rejection"])
    label = re.search(r'aria-label="([^"]*)"', svg)[1]
    assert re.search(r"<title>([^<]*)</title>", svg)[1] == label
    assert label.startswith("(a) A round with a rejection. The draft proposes rain, sun and wind")
    assert "rain: min(1, q/p) = 0.67, u = 0.52 &lt; 0.67, kept" in label
    assert "sun: min(1, q/p) = 0.25, u = 0.81 ≥ 0.25, rejected" in label
    assert "drawn from the residual" in label and "Output: rain and wind." in label
    whole = describe_round(kept, "(b)")
    assert "bonus token, wind, is drawn from q" in whole and "Output: rain, snow, wind and wind." in whole
    # a picture drawn up to a step describes only what it has drawn
    first = describe_round(rejected, "(a)", upto=0)
    assert "proposes rain, sun and wind" in first and "target call" not in first
    steps = [describe_round(rejected, "(a)", upto=k) for k in range(len(stages(rejected)))]
    assert all(b.startswith(a + " ") for a, b in zip(steps, steps[1:], strict=False)), "each step adds to the last"
