"""The worked round of Chapter 2 and its picture (``specdec_lite.figures.round``)."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.figures.round import draw_by_inversion, round_svg, worked_round
from specdec_lite.stats import chi_square
from tests.conftest import ALPHA

VOCAB = ("sun", "rain", "snow", "wind")
P = (0.4, 0.3, 0.2, 0.1)
Q = (0.1, 0.2, 0.3, 0.4)


def test_rejection_round_by_hand():
    r = worked_round(VOCAB, P, Q, ("rain", "sun", "wind"), (0.52, 0.81), 0.40)
    np.testing.assert_allclose(r.accept_prob, [0.2 / 0.3, 0.1 / 0.4, 1.0])
    assert r.n_accepted == 1 and r.rejected and r.u == (0.52, 0.81)
    np.testing.assert_allclose(r.residual, [0, 0, 0.25, 0.75])
    # cumulative residual (0, 0, 0.25, 1): u = 0.40 falls in the last cell
    assert r.output == (VOCAB.index("rain"), VOCAB.index("wind"))


def test_all_accepted_round_adds_a_bonus_from_q():
    r = worked_round(VOCAB, P, Q, ("rain", "snow", "wind"), (0.52, 0.93, 0.35), 0.25)
    assert r.n_accepted == 3 and not r.rejected
    # cumulative q (0.1, 0.3, 0.6, 1): u = 0.25 falls in the second cell
    assert r.output == (1, 2, 3, VOCAB.index("rain"))


def test_acceptance_is_strictly_below_the_probability():
    # u = b exactly rejects: the test is u < min(1, q/p), as in the reference sampler
    r = worked_round(VOCAB, P, Q, ("sun",), (0.25,), 0.5)
    assert r.rejected


def test_draw_by_inversion_is_exact_on_a_uniform_grid():
    law = np.array([0.0, 0.25, 0.0, 0.5, 0.25])
    N = 4000
    draws = [draw_by_inversion(law, (k + 0.5) / N) for k in range(N)]
    np.testing.assert_allclose(np.bincount(draws, minlength=5) / N, law, atol=1 / N)
    assert draw_by_inversion(np.array([0.5, 0.5 - 1e-17]), 0.9999999) == 1  # rounding never runs past the end


def test_random_rounds_output_the_target_law():
    """Rounds with random drafts and uniforms: the first output token follows q (the lemma)."""
    gen = np.random.default_rng(0)
    runs = 20_000
    first = np.empty(runs, int)
    for i in range(runs):
        drafts = [VOCAB[k] for k in gen.choice(4, size=2, p=P)]
        first[i] = worked_round(VOCAB, P, Q, drafts, gen.random(2), gen.random()).output[0]
    assert chi_square(np.bincount(first, minlength=4), np.array(Q)).pvalue > ALPHA


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(p=(0.5, 0.0, 0.5, 0.0)), "drafts"),  # the draft cannot propose "rain"
        (dict(q=(0.5, 0.5, 0.5, 0.0)), "q"),
        (dict(drafts=("hail",)), "drafts"),
        (dict(u=(0.5,)), "u"),
        (dict(u=(1.0, 0.1)), "u"),
        (dict(u_last=1.0), "u"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, name):
    args = dict(vocab=VOCAB, p=P, q=Q, drafts=("rain", "sun"), u=(0.1, 0.9), u_last=0.5) | kwargs
    with pytest.raises(ValueError, match=name):
        worked_round(**args)


def test_picture_is_svg_with_every_step():
    a = worked_round(VOCAB, P, Q, ("rain", "sun", "wind"), (0.52, 0.81), 0.40)
    b = worked_round(VOCAB, P, Q, ("rain", "snow", "wind"), (0.52, 0.93, 0.35), 0.66)
    svg = round_svg([a, b], ["with a rejection", "all accepted"])
    root = ET.fromstring(svg)
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for words in [
        "with a rejection",
        "all accepted",
        "reject",
        "keep",
        "discarded",
        "[q − p]₊",
        "bonus",
        "one target call",
    ]:
        assert words in text, words
    assert f"{float(sd.acceptance(np.array(P), np.array(Q))[0]):.2f}" in text
    with pytest.raises(ValueError, match="titles"):
        round_svg([a], [])
