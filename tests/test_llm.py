"""specdec_lite.llm on tiny Hugging Face models built from configs (no hub, no GPU, no training).

Exactness is checked against laws enumerated from the models' own logits: with a
vocabulary of 3 tokens and 3 new tokens there are 27 sequences.
"""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specdec_lite import tradeoff  # noqa: E402
from specdec_lite.laws import tv  # noqa: E402
from specdec_lite.llm import (  # noqa: E402
    _hf,  # noqa: E402
    autoregressive_generate,
    load_pair,
    pick_device,
    pick_dtype,
    speculative_generate,
)
from specdec_lite.llm.verify import over_accept, position_stats, probs_from_logits, rejection_law  # noqa: E402
from specdec_lite.stats import chi_square, mean_and_se, sequence_index  # noqa: E402

from .conftest import ALPHA, Z  # noqa: E402
from .tiny_models import neox, one_thread  # noqa: E402, F401

V = 3
PROMPT = [1, 2]
TEMPERATURE = 0.8


def llama(layers, hidden, vocab, seed, init=0.3):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=2 * hidden,
        max_position_embeddings=64,
        initializer_range=init,
    )
    return transformers.LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def pair_dirs(tmp_path_factory):
    """A tiny draft and target saved with save_pretrained (the tests load them back like hub models)."""
    root = tmp_path_factory.mktemp("tiny_pair")
    neox(1, 16, V, seed=0).save_pretrained(root / "draft")
    neox(2, 16, V, seed=1).save_pretrained(root / "target")
    return root / "draft", root / "target"


@pytest.fixture(scope="module")
def tiny(pair_dirs):
    auto = transformers.AutoModelForCausalLM
    return tuple(auto.from_pretrained(str(d)).eval() for d in pair_dirs)


@torch.inference_mode()
def laws_after(model, prefixes, temperature=TEMPERATURE):
    """Sampling laws of ``model`` after every prefix (full forward, no cache), float64 numpy (n, L, V)."""
    logits = model(input_ids=torch.tensor(prefixes)).logits
    return probs_from_logits(logits, temperature).double().numpy()


def three_token_laws(model):
    """Per-position laws along every continuation: law1 (V,), law2 (V, V), law3 (V, V, V)."""
    seqs = [PROMPT + [a, b] for a, b in itertools.product(range(V), repeat=2)]
    L = laws_after(model, seqs)
    n = len(PROMPT)
    return L[0, n - 1], L[::V, n].reshape(V, V), L[:, n + 1].reshape(V, V, V)


def joint(l1, l2, l3):
    return (l1[:, None, None] * l2[:, :, None] * l3).ravel()


def sample(fn, runs):
    gen = torch.Generator().manual_seed(1234)
    tokens = np.array([fn(gen).tokens.numpy() for _ in range(runs)])
    return np.bincount(sequence_index(tokens, V), minlength=V**3)


def test_tiny_laws_are_far_apart(tiny):
    """Guard for the tests' power: the draft and target really disagree."""
    p1, q1 = three_token_laws(tiny[0])[1], three_token_laws(tiny[1])[1]
    assert tv(p1, q1).mean() > 0.2


@pytest.mark.slow
def test_speculative_generate_is_unbiased(tiny):
    draft, target = tiny
    exact = joint(*three_token_laws(target))
    counts = sample(
        lambda g: speculative_generate(draft, target, PROMPT, 3, lookahead=2, temperature=TEMPERATURE, generator=g),
        1000,
    )
    assert chi_square(counts, exact).pvalue > ALPHA


def test_lookahead_zero_is_autoregressive_decoding(tiny):
    """K = 0 (Chapter 7): each round is one oracle call and its token from q; the same draws as autoregressive."""
    draft, target = tiny
    res = speculative_generate(draft, target, PROMPT, 6, lookahead=0, temperature=TEMPERATURE, generator=7)
    ar = autoregressive_generate(target, PROMPT, 6, temperature=TEMPERATURE, generator=7)
    assert (res.oracle_calls, res.draft_calls, res.rejections) == (6, 0, 0)
    assert not res.drafted.any() and np.isnan(res.tv).all()
    assert torch.equal(res.tokens, ar.tokens)  # one uniform per token, from the same law, in the same order


@pytest.mark.slow
def test_autoregressive_generate_is_exact(tiny):
    exact = joint(*three_token_laws(tiny[1]))
    counts = sample(lambda g: autoregressive_generate(tiny[1], PROMPT, 3, temperature=TEMPERATURE, generator=g), 500)
    assert chi_square(counts, exact).pvalue > ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("law", ["opt", "uno"])
def test_over_acceptance_has_the_exact_biased_law(tiny, law):
    """With K >= m every position is drafted (no bonus): the law is P^A_1 P^A_2 P^A_3 (P^A from tradeoff)."""
    eps = 0.15
    draft, target = tiny
    (p1, p2, p3), (q1, q2, q3) = three_token_laws(draft), three_token_laws(target)

    def output(p, q):
        return tradeoff.output_law(p, tradeoff.over_accept(p, q, eps), tradeoff.rejection_law(p, q, law))

    exact = joint(output(p1, q1), output(p2, q2), output(p3, q3))
    counts = sample(
        lambda g: speculative_generate(
            draft, target, PROMPT, 3, lookahead=3, temperature=TEMPERATURE, eps=eps, rejection_law=law, generator=g
        ),
        800,
    )
    assert chi_square(counts, exact).pvalue > ALPHA
    # Power: the same samples are told apart from the target's law.
    assert chi_square(counts, joint(q1, q2, q3)).pvalue < ALPHA


def round_structure(rejected, K):
    """Drafted positions and rounds implied by the rejections under lookahead.speculative_k's rule.

    ``j`` is the position inside the round; ``j == K`` is a bonus position, and a
    round with fewer than ``K`` positions left drafts them all (``min(K, R)``).
    """
    j, drafted, rounds = 0, [], 0
    for rej in rejected:
        rounds += j == 0
        drafted.append(j != K)
        j = 0 if rej or j == K else j + 1
    return np.array(drafted), rounds


@pytest.mark.parametrize("K", [1, 2, 3, 8])
def test_rounds_follow_the_markov_chain_convention(tiny, K):
    """The engine drafts min(K, R) with R tokens left, as lookahead.speculative_k does on Markov chains."""
    draft, target = tiny
    gen = torch.Generator().manual_seed(K)
    for _ in range(20):
        res = speculative_generate(draft, target, PROMPT, 7, lookahead=K, temperature=1.0, generator=gen)
        drafted, rounds = round_structure(res.rejected, K)
        np.testing.assert_array_equal(res.drafted, drafted)
        assert res.oracle_calls == rounds
    full = speculative_generate(draft, target, PROMPT, 7, lookahead=7, generator=0)
    assert full.drafted.all()  # K >= max_new_tokens: the paper's K = infinity, no bonus
    assert full.oracle_calls == 1 + int(full.rejected[:-1].sum())  # Chapter 7's 1 + sum_{n<T} R_n


@pytest.mark.slow
def test_greedy_reproduces_the_targets_greedy_output():
    draft, target = neox(1, 16, 50, seed=3, init=0.1), neox(2, 32, 50, seed=4, init=0.1)
    for prompt in ([5], [7, 1, 30, 2]):
        ar = autoregressive_generate(target, prompt, 20, temperature=0)
        hf = target.generate(
            torch.tensor([prompt]), max_new_tokens=20, min_new_tokens=20, do_sample=False, pad_token_id=0
        )[0, len(prompt) :]
        assert torch.equal(ar.tokens, hf)
        for K in (1, 3, 8):
            sd = speculative_generate(draft, target, prompt, 20, lookahead=K, temperature=0)
            assert torch.equal(sd.tokens, ar.tokens), K
            # The target as its own draft: every draft is accepted, K + 1 tokens per oracle call.
            same = speculative_generate(target, target, prompt, 20, lookahead=K, temperature=0)
            assert torch.equal(same.tokens, ar.tokens)
            assert same.rejections == 0 and same.oracle_calls == -(-20 // (K + 1))
        assert sd.rejections > 0


def test_greedy_with_a_llama_pair():
    """Not only GPT-NeoX: any causal LM pair of transformers with a shared vocabulary."""
    draft, target = llama(1, 16, 40, seed=5, init=0.1), llama(2, 32, 40, seed=6, init=0.1)
    ar = autoregressive_generate(target, [3, 4], 16, temperature=0)
    assert torch.equal(speculative_generate(draft, target, [3, 4], 16, lookahead=4, temperature=0).tokens, ar.tokens)


@pytest.mark.parametrize("make", [neox, llama])
def test_cache_gives_the_same_logits_as_a_full_forward(make):
    model = make(2, 16, 30, seed=7)
    seq = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    with torch.inference_mode():
        full = model(input_ids=seq[None]).logits[0].float()
        cache = _hf.new_cache(model)
        a = _hf.forward(model, seq[:4], cache)
        b = _hf.forward(model, seq[4:5], cache)
        c = _hf.forward(model, seq[5:10], cache)
        assert _hf.cache_length(cache) == 10
        torch.testing.assert_close(torch.cat([a, b, c]), full, rtol=1e-4, atol=1e-5)
        # Crop three entries and feed different tokens: logits of the new sequence, as without a cache.
        _hf.crop(cache, 3)
        _hf.crop(cache, 0)
        assert _hf.cache_length(cache) == 7
        other = torch.tensor([8, 8, 0])
        d = _hf.forward(model, other, cache)
        full2 = model(input_ids=torch.cat([seq[:7], other])[None]).logits[0, 7:].float()
        torch.testing.assert_close(d, full2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("eps", "law"), [(0.0, "opt"), (0.2, "opt"), (0.2, "uno")])
def test_position_statistics_match_a_recomputation(tiny, eps, law):
    """TV, rejection probability, both biases and log q per position, from independent full forwards."""
    draft, target = neox(1, 16, 12, seed=8), neox(2, 24, 12, seed=9)
    prompt = [1, 2, 3]
    res = speculative_generate(
        draft, target, prompt, 12, lookahead=2, temperature=1.0, eps=eps, rejection_law=law, generator=11
    )
    seq = prompt + res.tokens.tolist()
    n = len(prompt)
    with torch.inference_mode():
        lp, lq = (m(input_ids=torch.tensor([seq])).logits[0, n - 1 : -1].double() for m in (draft, target))
    p, q = torch.softmax(lp, -1).numpy(), torch.softmax(lq, -1).numpy()
    d = res.drafted
    assert d.any() and (~d).any()
    b = tradeoff.over_accept(p, q, eps)
    np.testing.assert_allclose(res.tv[d], tv(p, q)[d], atol=1e-5)
    np.testing.assert_allclose(res.reject_prob[d], tradeoff.reject_probability(p, b)[d], atol=1e-5)
    np.testing.assert_allclose(res.bias_opt[d], tradeoff.over_accept_point(p, q, eps, "opt")[1][d], atol=1e-5)
    np.testing.assert_allclose(res.bias_uno[d], tradeoff.over_accept_point(p, q, eps, "uno")[1][d], atol=1e-5)
    logq = torch.log_softmax(lq, -1).numpy()[np.arange(len(res.tokens)), res.tokens.numpy()]
    np.testing.assert_allclose(res.target_logprob, logq, atol=1e-4)
    assert np.isnan(res.tv[~d]).all()
    assert res.accepted[~d].sum() == 0
    # Bookkeeping: one oracle call per round, and a round ends at each rejection or bonus token, or with an
    # accepted draft at the last position.
    assert res.oracle_calls == res.rejections + int((~d).sum()) + int(res.accepted[-1])
    assert res.draft_calls >= int(d.sum())  # drafts after a rejection are computed, then thrown away
    assert 0 < res.target_seconds and 0 < res.draft_seconds and res.target_seconds + res.draft_seconds <= res.wall_time


@pytest.mark.slow
def test_theorem1_rejections_match_summed_tv(tiny):
    """E[N_rej - sum of TV at drafted positions] = 0, checked within Z standard errors."""
    draft, target = tiny
    gen = torch.Generator().manual_seed(5)
    runs = [
        speculative_generate(draft, target, PROMPT, 8, lookahead=3, temperature=1.0, generator=gen) for _ in range(200)
    ]
    diff = np.array([r.rejections - r.predicted_rejections for r in runs])
    mean, se = mean_and_se(diff)
    assert abs(mean) < Z * se
    assert np.mean([r.rejections for r in runs]) > 1.0  # the check is not vacuous


def test_verify_matches_the_numpy_formulas():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(7, 0.5), size=20)
    q = rng.dirichlet(np.full(7, 0.5), size=20)
    p[0] = q[0]  # p == q: residual guard
    p[1, :3] = 0
    p[1] /= p[1].sum()  # zero draft probabilities
    pt, qt = torch.tensor(p), torch.tensor(q)
    for eps in (0.0, 0.05, 1.0):
        b = over_accept(pt, qt, eps)
        np.testing.assert_allclose(b.numpy(), tradeoff.over_accept(p, q, eps), atol=1e-12)
        for law in ("opt", "uno"):
            P = rejection_law(pt, qt, law)
            np.testing.assert_allclose(P.numpy(), tradeoff.rejection_law(p, q, law), atol=1e-12)
            t, r, bias_opt, bias_uno = position_stats(pt, qt, b)
            rej, loss = tradeoff.over_accept_point(p, q, eps, law)
            np.testing.assert_allclose(r.numpy(), rej, atol=1e-12)
            np.testing.assert_allclose((bias_opt if law == "opt" else bias_uno).numpy(), loss, atol=1e-12)
            np.testing.assert_allclose(t.numpy(), tv(p, q), atol=1e-12)
    with pytest.raises(ValueError, match="rejection_law"):
        rejection_law(pt, qt, "best")


def test_probs_from_logits_float32_and_greedy():
    logits = torch.tensor([[1.0, 3.0, 3.0, -2.0]], dtype=torch.float16)
    assert probs_from_logits(logits, 1.0).dtype == torch.float32
    assert probs_from_logits(logits, 0).tolist() == [[0.0, 1.0, 0.0, 0.0]]  # first maximum


def test_vocabulary_mismatch_is_a_clear_error(tmp_path):
    """Padded vocabularies (6 and 7 logits) are accepted; ids beyond the smaller one, a tokenizer bigger than it, and
    models on two devices are not (tests/test_llm_vocab.py checks the padded pairs themselves)."""
    draft, target = neox(1, 16, 6, seed=0), neox(1, 16, 7, seed=1)
    assert len(speculative_generate(draft, target, [1], 1, lookahead=2, generator=0).tokens) == 1
    with pytest.raises(ValueError, match=r"input_ids: token ids must lie in \[0, 6\)"):
        speculative_generate(draft, target, [6], 3, lookahead=2)
    with pytest.raises(ValueError, match="same device"):
        speculative_generate(neox(1, 16, 7, seed=0).to("meta"), target, [1], 3, lookahead=2)
    draft.save_pretrained(tmp_path / "d")
    target.save_pretrained(tmp_path / "t")
    target.save_pretrained(tmp_path / "t7")
    tokenizers = pytest.importorskip("tokenizers")
    for n, folder in ((6, "t"), (7, "t7")):
        words = tokenizers.Tokenizer(tokenizers.models.WordLevel({f"w{i}": i for i in range(n)}, unk_token="w0"))
        transformers.PreTrainedTokenizerFast(tokenizer_object=words).save_pretrained(tmp_path / folder)
    pair = load_pair(tmp_path / "d", tmp_path / "t", device="cpu", verbose=False)
    assert (_hf.vocab_size(pair.draft), _hf.vocab_size(pair.target), len(pair.tokenizer)) == (6, 7, 6)
    with pytest.raises(ValueError, match="has 7 tokens but the models read only 6 .draft: 6 logits"):
        load_pair(tmp_path / "d", tmp_path / "t7", device="cpu", verbose=False)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(max_new_tokens=0), "max_new_tokens"),
        (dict(max_new_tokens=2.5), "max_new_tokens"),
        (dict(lookahead=-1), "lookahead"),
        (dict(lookahead=True), "lookahead"),
        (dict(temperature=-1.0), "temperature"),
        (dict(temperature=float("nan")), "temperature"),
        (dict(eps=-0.1), "eps"),
        (dict(eps=True), "eps"),  # a bool is not a number
        (dict(temperature=True), "temperature"),
        (dict(rejection_law="best"), "rejection_law"),
        (dict(input_ids=[]), "input_ids"),
        (dict(input_ids=[[1, 2], [3, 4]]), "input_ids"),
        (dict(input_ids=[0.5]), "input_ids"),
        (dict(generator="seed"), "generator"),
        (dict(draft="pythia"), "draft"),
    ],
)
def test_bad_arguments_name_the_argument(tiny, kwargs, name):
    args = dict(draft=tiny[0], target=tiny[1], input_ids=PROMPT, max_new_tokens=3, lookahead=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        speculative_generate(**args)


def test_autoregressive_bad_arguments(tiny):
    with pytest.raises(ValueError, match="max_new_tokens"):
        autoregressive_generate(tiny[1], PROMPT, -1)
    with pytest.raises(ValueError, match="model"):
        autoregressive_generate(None, PROMPT, 2)


def test_save_and_load_round_trip(pair_dirs, tiny, capsys):
    """load_pair on local folders goes through from_pretrained and gives back the same models."""
    draft_dir, target_dir = pair_dirs
    ref = neox(2, 16, V, seed=1)
    x = torch.tensor([[1, 2, 0, 1]])
    with torch.inference_mode():
        torch.testing.assert_close(tiny[1](input_ids=x).logits, ref(input_ids=x).logits)
    with pytest.raises(ValueError, match="draft_name and target_name"):
        load_pair(draft_dir, None)


def test_device_and_dtype_choice():
    assert pick_device("cpu").type == "cpu"
    assert pick_dtype(torch.device("cpu")) == torch.float32
    assert pick_dtype(torch.device("cpu"), "bfloat16") == torch.bfloat16
    with pytest.raises(ValueError, match="dtype"):
        pick_dtype(torch.device("cpu"), "float17")
    if not torch.cuda.is_available():
        assert pick_device().type in ("cpu", "mps")
