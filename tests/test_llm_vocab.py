"""Pairs whose embedding tables are padded to different sizes: one tokenizer, different numbers of logits.

The engine works on the target's ``V`` logits. A draft with fewer has ``p(x) = 0``
beyond its own (only the residual ``[q - p]_+`` outputs those tokens), one with
more is cut to the target's ``V`` before its softmax; either way the output law is
exactly the target's. Exactness is checked against the target's law of 2-token
continuations enumerated from its logits (``V = 12``: 144 sequences).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specdec_lite.laws import tv  # noqa: E402
from specdec_lite.llm import _hf, autoregressive_generate, load_pair, speculative_generate  # noqa: E402
from specdec_lite.llm.pairs import load_named_pair  # noqa: E402
from specdec_lite.llm.verify import probs_from_logits  # noqa: E402
from specdec_lite.stats import chi_square, mean_and_se, sequence_index  # noqa: E402

from .conftest import ALPHA, Z  # noqa: E402
from .tiny_models import neox, one_thread  # noqa: E402, F401

#: Transformer models sampled thousands of times (the inner loop leaves them to the full run).
pytestmark = pytest.mark.slow

V = 12  # the target's logits
PROMPT = [1, 2]
M = 2  # new tokens in the exactness tests


def with_head(model, logits, seed=0):
    """``model`` with an untied output head ``Linear(hidden, logits)``: it outputs ``logits`` ids, whatever it reads."""
    torch.manual_seed(seed)
    model.set_output_embeddings(torch.nn.Linear(model.config.hidden_size, logits, bias=False))
    return model.eval()


@pytest.fixture(scope="module", params=["fewer", "more"])
def padded(request):
    """(kind, draft, target): the draft outputs 9 logits (reads 12 ids) or 14 (reads 14); the target 12 (reads 12)."""
    target = neox(2, 16, V, seed=1)
    draft = with_head(neox(1, 16, V, seed=0), 9, seed=2) if request.param == "fewer" else neox(1, 16, 14, seed=0)
    return request.param, draft, target


@torch.inference_mode()
def logits_after(model, prefixes):
    return model(input_ids=torch.tensor(prefixes)).logits.double()


def target_two_token_law(target, temperature=1.0):
    """Exact law of the 2 new tokens, ``q_1(a) q_2(b | a)``, flattened row-major (index ``a V + b``)."""
    L = probs_from_logits(logits_after(target, [PROMPT + [a] for a in range(V)]), temperature).double().numpy()
    n = len(PROMPT)
    q1, q2 = L[0, n - 1], L[:, n]
    return (q1[:, None] * q2).ravel(), q1


def draft_law_on_target_vocab(logits):
    """The law the engine uses for the draft: softmax of its first ``V`` logits, zero-padded to ``V``."""
    p = torch.softmax(logits[..., :V], -1)
    return torch.nn.functional.pad(p, (0, V - p.shape[-1])).numpy()


def test_padding_carries_real_mass(padded):
    """Guard for the tests' power: the target's ids 9..11 (the short draft's missing ones) and the long draft's
    extra ids 12, 13 have substantial probability."""
    kind, draft, target = padded
    _, q1 = target_two_token_law(target)
    assert q1[9:].sum() > 0.15
    assert _hf.vocab_size(draft) == (9 if kind == "fewer" else 14) and _hf.vocab_size(target) == V
    if kind == "more":
        extra = torch.softmax(logits_after(draft, [PROMPT + [a] for a in range(V)])[:, -1], -1)[:, V:].sum(-1)
        assert extra.mean() > 0.05  # the draft's law is really cut: ids 12, 13 had mass


def test_speculative_generate_is_unbiased_with_padding(padded):
    """Chi-square of 1500 two-token continuations (K = 1: residual, bonus and a last drafted round) against q."""
    kind, draft, target = padded
    exact, _ = target_two_token_law(target)
    gen = torch.Generator().manual_seed(1234)
    runs = [speculative_generate(draft, target, PROMPT, M, lookahead=1, generator=gen) for _ in range(1500)]
    tokens = np.array([r.tokens.numpy() for r in runs])
    assert chi_square(np.bincount(sequence_index(tokens, V), minlength=V**M), exact).pvalue > ALPHA
    accepted = np.array([r.accepted for r in runs])
    v_draft = min(_hf.vocab_size(draft), V)
    assert (tokens[accepted] < v_draft).all()  # an accepted token is a draft token
    if kind == "fewer":
        # Ids 9..11 at the first position (always drafted) can only come from the residual [q - p]_+.
        beyond = tokens[:, 0] >= v_draft
        assert beyond.sum() > 50 and not accepted[beyond, 0].any()


def test_position_statistics_are_over_the_targets_vocabulary(padded):
    """tv and reject_prob per drafted position equal TV(p, q) with p padded or cut to the target's V tokens."""
    _, draft, target = padded
    res = speculative_generate(draft, target, PROMPT, 12, lookahead=2, generator=11)
    seq = PROMPT + res.tokens.tolist()
    n = len(PROMPT)
    lp, lq = (logits_after(m, [seq])[0, n - 1 : -1] for m in (draft, target))
    p, q = draft_law_on_target_vocab(lp), torch.softmax(lq, -1).numpy()
    d = res.drafted
    assert d.any()
    np.testing.assert_allclose(res.tv[d], tv(p, q)[d], atol=1e-5)
    np.testing.assert_allclose(res.reject_prob[d], tv(p, q)[d], atol=1e-5)  # eps = 0: r = TV
    np.testing.assert_allclose(res.bias_opt[d], 0.0, atol=1e-5)


def test_theorem1_rejections_match_summed_tv_with_padding(padded):
    """E[N_rej - sum of TV at drafted positions] = 0 over 150 runs, within Z standard errors."""
    _, draft, target = padded
    gen = torch.Generator().manual_seed(5)
    runs = [speculative_generate(draft, target, PROMPT, 8, lookahead=3, generator=gen) for _ in range(150)]
    diff = np.array([r.rejections - r.predicted_rejections for r in runs])
    mean, se = mean_and_se(diff)
    assert abs(mean) < Z * se
    assert np.mean([r.rejections for r in runs]) > 1.0  # the check is not vacuous


@pytest.mark.parametrize("draft_logits", [40, 60])
def test_greedy_with_a_padded_draft_is_the_targets_greedy_output(draft_logits):
    """Temperature 0: one-hot laws on the target's 50 tokens; a 40-logit draft is rejected wherever the target's
    argmax is one of ids 40..49, and the residual is then that argmax."""
    target = neox(2, 32, 50, seed=4, init=0.1)
    base = neox(1, 16, max(50, draft_logits), seed=3, init=0.1)
    draft = with_head(base, draft_logits, seed=3) if draft_logits < 50 else base
    for prompt in ([5], [7, 1, 30, 2]):
        ar = autoregressive_generate(target, prompt, 20, temperature=0)
        for K in (1, 3, 8):
            sd = speculative_generate(draft, target, prompt, 20, lookahead=K, temperature=0)
            assert torch.equal(sd.tokens, ar.tokens), (prompt, K)
            assert sd.rejections > 0
    assert (autoregressive_generate(target, [5], 20, temperature=0).tokens >= 40).any()  # the guard's point


@pytest.mark.parametrize(
    ("make", "match"),
    [
        # The draft reads 9 ids, the target outputs 12: Qwen-like padding, read the wrong way round.
        (
            lambda: (neox(1, 16, 9, seed=0), neox(2, 16, V, seed=1)),
            r"the target emitted token (9|10|11) \(new token \d+, (from the residual|as a bonus)\), which the draft "
            r"cannot read: the draft's input vocabulary is 9 token ids \(its input embedding has fewer rows than the "
            r"target's 12 logits\)",
        ),
        # A target whose 12 logits exceed its own 9 input ids: neither its nor the draft's tokens 9..11 can be read.
        (
            lambda: (neox(1, 16, V, seed=0), with_head(neox(2, 16, 9, seed=1), V)),
            r"token (9|10|11) \(new token \d+.*\), which the target cannot read: the target's input vocabulary is 9",
        ),
        # A draft whose 12 logits exceed its own 9 input ids.
        (
            lambda: (with_head(neox(1, 16, 9, seed=0), V), neox(2, 16, V, seed=1)),
            r"token (9|10|11) \(new token \d+.*\), which the draft cannot read: the draft's input vocabulary is 9",
        ),
    ],
    ids=["draft-reads-fewer", "target-reads-fewer", "draft-reads-fewer-than-it-outputs"],
)
def test_an_unreadable_token_is_a_named_error(make, match):
    """A ValueError naming the token and the reader's input vocabulary, before the model is fed it: no IndexError."""
    draft, target = make()
    with pytest.raises(ValueError, match=match):
        for seed in range(20):
            speculative_generate(draft, target, PROMPT, 30, lookahead=3, generator=seed)


def test_a_short_input_embedding_is_not_an_error_up_front():
    """Padding rows of a trained target carry almost no mass: the pair is accepted, and a token the draft cannot
    read is an error only once the draft would read it (never the last token)."""
    draft, target = neox(1, 16, 9, seed=0), neox(2, 16, V, seed=1)
    last = [int(speculative_generate(draft, target, PROMPT, 1, lookahead=3, generator=s).tokens[0]) for s in range(40)]
    assert max(last) >= 9
    with pytest.raises(ValueError, match=r"input_ids: token ids must lie in \[0, 9\)"):
        speculative_generate(draft, target, [1, 10], 3)  # the prompt is checked up front against every model
    with pytest.raises(ValueError, match="eos_token_id"):
        speculative_generate(draft, target, PROMPT, 3, eos_token_id=10)


def test_autoregressive_names_a_token_its_model_cannot_read():
    model = with_head(neox(2, 16, 9, seed=1), V)
    with pytest.raises(ValueError, match=r"the model emitted token (9|10|11) .*the model's input vocabulary is 9"):
        for seed in range(20):
            autoregressive_generate(model, PROMPT, 30, generator=seed)


# --- loading a padded pair from folders --------------------------------------------------


def quiet_padding(model, first):
    """Give ids ``first`` on almost no probability, as training does to a padded table's rows: the final norm's
    coordinate 0 is the constant 1, and the head's rows ``first:`` read only it, with weight -30."""
    with torch.no_grad():
        norm = model.gpt_neox.final_layer_norm
        norm.weight[0], norm.bias[0] = 0.0, 1.0
        head = model.get_output_embeddings().weight
        head[first:] = 0.0
        head[first:, 0] = -30.0
    return model


@pytest.fixture(scope="module")
def padded_dirs(tmp_path_factory):
    """Folders of models padded to 290, 320 and 384 ids, and a 300-token BPE tokenizer (in the 384 one)."""
    pytest.importorskip("tokenizers")
    from specdec_lite.llm.fallback import stdlib_texts, train_tokenizer

    root = tmp_path_factory.mktemp("padded_pair")
    tok = train_tokenizer(stdlib_texts(20_000), 300)
    for vocab, layers in ((290, 1), (320, 1), (384, 2)):
        model = neox(layers, 16, vocab, seed=vocab, context=128)
        quiet_padding(model, len(tok)).save_pretrained(root / str(vocab))
    tok.save_pretrained(root / "384")
    tok.save_pretrained(root / "tokenizer")
    return root, len(tok)


@pytest.mark.parametrize(("draft", "target"), [("320", "384"), ("384", "320")])
def test_load_named_pair_loads_and_runs_a_padded_pair(padded_dirs, draft, target):
    root, n_tok = padded_dirs
    pair = load_named_pair(root / draft, root / target, tokenizer_name=root / "tokenizer", device="cpu")
    assert (_hf.vocab_size(pair.draft), _hf.vocab_size(pair.target)) == (int(draft), int(target))
    res = speculative_generate(
        pair.draft, pair.target, pair.encode("def f(x):\n    return x"), 16, lookahead=3, generator=0
    )
    assert len(res.tokens) == 16 and int(res.tokens.max()) < n_tok and res.drafted.any()
    assert isinstance(pair.decode(res.tokens), str)


def test_load_pair_by_name_accepts_padding_and_a_too_big_tokenizer_is_still_an_error(padded_dirs):
    root, n_tok = padded_dirs
    pair = load_pair(root / "320", root / "384", device="cpu", verbose=False)  # the tokenizer from the target
    assert len(pair.tokenizer) == n_tok
    with pytest.raises(
        ValueError,
        match=rf"tokenizer_name: the tokenizer .* has {n_tok} tokens but the models read "
        r"only 290 \(draft: 290 logits, 290 input ids; target: 384 logits",
    ):
        load_named_pair(root / "290", root / "384", device="cpu")
