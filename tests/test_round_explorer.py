"""The round explorer (Chapter 2): a random round, drawn step by step."""

import re

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.figures.round import round_svg, stages
from specdec_lite.stats import chi_square
from specdec_lite.widgets import round_explorer as RE
from specdec_lite.widgets.token_explorer import token_laws
from tests.conftest import ALPHA


def test_random_round_is_reproducible_and_uses_the_laws():
    a, b = RE.random_round(6, "random", 0.3, K=5, seed=7), RE.random_round(6, "random", 0.3, K=5, seed=7)
    assert a.output == b.output and a.u == b.u
    p, q = token_laws(6, "random", 0.3, seed=7)
    np.testing.assert_allclose(a.p, p) and np.testing.assert_allclose(a.q, q)
    np.testing.assert_allclose(a.accept_prob, sd.acceptance(p, q)[list(a.drafts)])
    assert len(a.drafts) == 5 and 1 <= len(a.output) <= 6


def test_random_rounds_output_the_target_law():
    """Over seeds, the first token a round writes follows q (Theorem 1(a) for one position)."""
    V = 5
    first = np.array([RE.random_round(V, "shifted", 0.4, K=3, seed=s).output[0] for s in range(4000)])
    _, q = token_laws(V, "shifted", 0.4)
    assert chi_square(np.bincount(first, minlength=V), q).pvalue > ALPHA


def test_steps_reveal_the_round_one_at_a_time():
    r = RE.random_round(5, "shifted", 0.5, K=4, seed=3)
    names = stages(r)
    shapes = []
    for step in range(len(names)):
        html = RE.round_update(5, "shifted", 0.5, K=4, seed=3, step=step)
        assert f"step {step + 1} of {len(names)}: {names[step]}" in html
        shapes.append(len(re.findall(r"<rect|<text", html)))
    assert all(a < b for a, b in zip(shapes, shapes[1:], strict=False)), shapes
    # a step past the end shows the whole round
    assert RE.round_update(5, "shifted", 0.5, K=4, seed=3, step=99).endswith(
        RE.round_update(5, "shifted", 0.5, K=4, seed=3, step=len(names) - 1).split("</p>", 1)[1]
    )


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="K"):
        RE.random_round(K=0)
    with pytest.raises(ValueError, match="step"):
        RE.round_update(step=-1)
    with pytest.raises(ValueError, match="quality"):
        RE.random_round(quality=1.5)


def test_explorer_builds_and_redraws():
    box = RE.round_explorer()
    picture = box.children[-1]
    step = box.children[1].children[2]
    assert step.description == "step" and "step 1 of" in picture.value
    step.value = 2
    assert "step 3 of" in picture.value
    box.children[1].children[0].value = 2  # K
    assert step.max == 4


def test_stepper_holds_every_step_and_shows_the_first():
    r = RE.random_round(4, "shifted", 0.5, K=3, seed=1)
    page = RE.round_stepper_html(r, "a round")
    n = len(stages(r))
    steps = re.findall(r'<div data-step="(\d+)"( hidden)?>', page)
    assert [int(k) for k, _ in steps] == list(range(n))
    assert [bool(h) for _, h in steps] == [False] + [True] * (n - 1)
    assert f'max="{n - 1}"' in page and f"step 1 of {n}: draft" in page
    # each hidden picture is the round drawn up to its step
    last = page.split(f'<div data-step="{n - 1}" hidden>')[1].split("</div>")[0]
    assert last.replace('style="max-width:100%;height:auto" ', "") == round_svg([r], ["a round"], upto=n - 1)
    # two steppers on one page do not share an id
    ids = [re.search(r'id="(sd-round-\w+)"', RE.round_stepper_html(r, t))[1] for t in ("a", "b")]
    assert ids[0] != ids[1]


def test_the_explorers_picture_shrinks_to_its_box_and_scrolls_past_nine_tenths_with_a_shadow_cue():
    """Four drafts on a phone's column (about 340 pixels in a lab's still) would be shrunk to 77% of their size,
    their smallest words 10 pixels: they stop at 90% (12 pixels) and scroll sideways, with a shadow at the edge the
    picture goes on beyond, which shows on the picture's own see-through background. The controls wrap onto more
    rows where three do not fit."""
    for K in (4, 8):
        page = RE.round_update(5, "shifted", 0.5, K=K, seed=3, step=99)
        width = int(re.search(r'viewBox="0 0 (\d+) ', page)[1])
        assert RE.MIN_SCALE * 13 >= 11, "the picture's smallest words at 11 pixels or more"
        assert f"min-width:{round(RE.MIN_SCALE * width)}px;max-width:{width}px" in page
        box = re.search(r'<div style="([^"]*)"><svg style="width:100%;', page)[1]
        assert "overflow-x:auto" in box and "no-repeat local" in box and "no-repeat scroll" in box
        assert 'fill="#FFFFFF"/>' not in page.split("<title>")[1], "no background of its own over the shadows"
    assert all(row.layout.flex_flow == "wrap" for row in RE.round_explorer().children[:-1])
