"""specdec_lite.llm as a careless user meets it: every failure early, loud and naming its cause.

Tiny transformers models built from configs (a few thousand parameters); no hub, no GPU.
"""

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specdec_lite.llm import (  # noqa: E402
    autoregressive_generate,
    load_pair,
    pairs,
    pick_device,
    pick_dtype,
    speculative_generate,
)
from specdec_lite.llm.verify import probs_from_logits  # noqa: E402

from .tiny_models import neox, one_thread  # noqa: E402, F401


def gpt2(vocab=20, context=16, seed=0):
    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(vocab_size=vocab, n_embd=16, n_layer=1, n_head=2, n_positions=context)
    return transformers.GPT2LMHeadModel(cfg).eval()


# --- NaN and inf ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("role", ["draft", "target"])
def test_nan_logits_are_reported_not_sampled(role):
    models = {"draft": neox(seed=1), "target": neox(2, seed=2)}
    with torch.no_grad():
        models[role].get_output_embeddings().weight[3] = float("nan")  # a broken checkpoint: one output row is NaN
    with pytest.raises(FloatingPointError, match=f"{role} logits.*NaN"):
        speculative_generate(models["draft"], models["target"], [1, 2], 5, lookahead=2, generator=0)
    if role == "target":
        with pytest.raises(FloatingPointError, match="model logits at new token 0"):
            autoregressive_generate(models["target"], [1, 2], 5, generator=0)


def test_float16_overflow_is_reported():
    """Logits beyond float16's 65504 become inf: an error, not the last token id over and over."""
    model = neox(seed=3).half()
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(1e5)  # weights fit float16 (about 3e4), logits do not
    with pytest.raises(FloatingPointError, match="float16 overflow"):
        autoregressive_generate(model, [1, 2], 4, generator=0)
    with pytest.raises(FloatingPointError, match="target logits"):
        speculative_generate(neox(seed=4).half(), model, [1, 2], 4, lookahead=2, generator=0)


def test_probs_from_logits_edges():
    logits = torch.tensor([[1.0, 3.0, 2.0, -torch.inf]])
    p = probs_from_logits(logits, 1.0)
    assert p.dtype == torch.float32 and p[0, 3] == 0 and torch.isclose(p.sum(), torch.tensor(1.0))
    # A temperature too small to divide by is greedy decoding, not NaN.
    for t in (1e-30, 1e-40, 1e-45):
        assert probs_from_logits(logits, t).tolist() == [[0.0, 1.0, 0.0, 0.0]]
    assert probs_from_logits(-logits[:, :3] - 5, 1e-45).tolist() == [[1.0, 0.0, 0.0]]  # all scaled to -inf
    # Rows are treated separately: only the overflowing row becomes greedy.
    two = torch.tensor([[0.0, 1e-36], [0.0, 400.0]])
    out = probs_from_logits(two, 1e-36)
    assert out[1].tolist() == [0.0, 1.0] and 0.26 < float(out[0, 0]) < 0.27  # 1 / (1 + e)
    with pytest.raises(FloatingPointError, match="no finite logit"):
        probs_from_logits(torch.full((1, 3), -torch.inf), 1.0)
    with pytest.raises(FloatingPointError, match=r"row\(s\) \[1\]"):
        probs_from_logits(torch.tensor([[0.0, 1.0], [torch.inf, 0.0]]), 1.0)


def test_tiny_temperature_is_greedy_decoding():
    draft, target = neox(seed=5), neox(2, seed=6)
    greedy = autoregressive_generate(target, [1, 2], 10, temperature=0)
    for t in (1e-39, 1e-45):
        ar = autoregressive_generate(target, [1, 2], 10, temperature=t, generator=0)
        assert torch.equal(ar.tokens, greedy.tokens)
        sd = speculative_generate(draft, target, [1, 2], 10, lookahead=3, temperature=t, generator=0)
        assert torch.equal(sd.tokens, greedy.tokens)


# --- prompts: context and vocabulary ---------------------------------------------------


@pytest.mark.parametrize("make", [neox, gpt2])
def test_context_length_is_checked_before_any_call(make):
    model = make(context=16)
    ok = autoregressive_generate(model, list(range(10)), 6, generator=0)  # 10 + 6 = 16 positions: fits
    assert len(ok.tokens) == 6
    with pytest.raises(ValueError, match=r"max_new_tokens.*10 tokens.*= 17 positions exceed the model's context of 16"):
        autoregressive_generate(model, list(range(10)), 7)
    draft = make(context=64)
    assert len(speculative_generate(draft, model, list(range(10)), 6, lookahead=4, generator=0).tokens) == 6
    with pytest.raises(ValueError, match="target's context of 16"):
        speculative_generate(draft, model, list(range(10)), 7, lookahead=4)
    with pytest.raises(ValueError, match="draft's context of 16"):
        speculative_generate(model, draft, list(range(10)), 7, lookahead=4)


@pytest.mark.parametrize("ids", [[1, 20], [-1, 2], [25]])
def test_token_ids_outside_the_vocabulary(ids):
    draft, target = neox(vocab=20), neox(2, vocab=20, seed=1)
    with pytest.raises(ValueError, match=r"input_ids: token ids must lie in \[0, 20\)"):
        speculative_generate(draft, target, ids, 3)
    with pytest.raises(ValueError, match="input_ids"):
        autoregressive_generate(target, ids, 3)


# --- training mode ---------------------------------------------------------------------


def test_training_mode_warns_runs_in_eval_and_is_restored():
    draft, target = neox(seed=7, dropout=0.5), neox(2, seed=8, dropout=0.5)
    ref = speculative_generate(draft, target, [1, 2], 12, lookahead=3, generator=4)
    ref_ar = autoregressive_generate(target, [1, 2], 12, generator=4)
    target.train()
    with pytest.warns(UserWarning, match="target: the model was in training mode"):
        res = speculative_generate(draft, target, [1, 2], 12, lookahead=3, generator=4)
    assert torch.equal(res.tokens, ref.tokens)  # dropout was off: the seed reproduces
    assert target.training and not draft.training
    with pytest.warns(UserWarning, match="model: the model was in training mode"):
        assert torch.equal(autoregressive_generate(target, [1, 2], 12, generator=4).tokens, ref_ar.tokens)
    assert target.training


# --- stopping at the end-of-sequence token ---------------------------------------------


@pytest.mark.slow
def test_eos_stop_is_the_run_without_it_cut_after_the_first_eos():
    """Same seed, same draws: stopping at EOS changes nothing before it, and every per-position record is cut too."""
    draft, target = neox(vocab=4, seed=9), neox(2, vocab=4, seed=10)
    eos, stopped = 0, 0
    for seed in range(30):
        full = speculative_generate(draft, target, [1, 2], 12, lookahead=3, generator=seed)
        cut = speculative_generate(draft, target, [1, 2], 12, lookahead=3, generator=seed, eos_token_id=eos)
        hits = np.flatnonzero(full.tokens.numpy() == eos)
        n = hits[0] + 1 if len(hits) else 12
        assert torch.equal(cut.tokens, full.tokens[:n]) and cut.stopped_at_eos == bool(len(hits))
        for name in ("drafted", "accepted", "tv", "reject_prob", "bias_opt", "target_logprob"):
            np.testing.assert_array_equal(getattr(cut, name), getattr(full, name)[:n])
        assert cut.oracle_calls <= full.oracle_calls
        ar_full = autoregressive_generate(target, [1, 2], 12, generator=seed)
        ar_cut = autoregressive_generate(target, [1, 2], 12, generator=seed, eos_token_id=eos)
        hits = np.flatnonzero(ar_full.tokens.numpy() == eos)
        assert torch.equal(ar_cut.tokens, ar_full.tokens[: hits[0] + 1 if len(hits) else 12])
        assert ar_cut.oracle_calls == len(ar_cut.tokens)
        stopped += cut.stopped_at_eos
    assert 0 < stopped < 30  # both branches were exercised
    # Off by default: the theory checks keep their fixed lengths.
    assert all(len(speculative_generate(draft, target, [1, 2], 12, generator=s).tokens) == 12 for s in range(5))
    with pytest.raises(ValueError, match="eos_token_id"):
        speculative_generate(draft, target, [1, 2], 4, eos_token_id=4)


def test_greedy_with_eos_matches_the_targets_greedy_output():
    draft, target = neox(vocab=30, seed=11), neox(2, vocab=30, seed=12)
    greedy = autoregressive_generate(target, [3], 20, temperature=0)
    eos = int(greedy.tokens[7])
    first = int(np.flatnonzero(greedy.tokens.numpy() == eos)[0])
    for K in (1, 4, 20):
        sd = speculative_generate(draft, target, [3], 20, lookahead=K, temperature=0, eos_token_id=eos)
        assert torch.equal(sd.tokens, greedy.tokens[: first + 1]) and sd.stopped_at_eos


# --- device, dtype, tokenizer, choice of pair ------------------------------------------


def test_missing_cuda_fails_before_any_training(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def no_training(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(pairs, "fallback_pair_dir", no_training)
    with pytest.raises(RuntimeError, match="device: 'cuda'.*no CUDA GPU"):
        load_pair(device="cuda", cache_dir=tmp_path, verbose=False)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        pairs.load_fallback_pair(cache_dir=tmp_path, device="cuda:0")
    with pytest.raises(RuntimeError, match="device"):
        pick_device("cuda")
    assert pick_device("cpu").type == "cpu"


@pytest.mark.parametrize(
    ("capability", "dtype"),
    [((7, 5), torch.float16), ((7, 0), torch.float16), ((8, 0), torch.bfloat16), ((9, 0), torch.bfloat16)],
)
def test_dtype_by_compute_capability(monkeypatch, capability, dtype):
    """A T4 (7.5) reports bfloat16 support through emulation; only capability >= 8.0 gets it."""
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert pick_dtype(torch.device("cuda")) == dtype
    assert pick_dtype(torch.device("cuda"), "float32") == torch.float32
    assert pick_dtype(torch.device("cpu")) == torch.float32


def test_missing_tokenizer_files_name_the_folder(tmp_path):
    neox(vocab=20).save_pretrained(tmp_path / "d")
    neox(2, vocab=20, seed=1).save_pretrained(tmp_path / "t")
    with pytest.raises(FileNotFoundError, match="tokenizer_name: the folder .*t' holds no tokenizer files"):
        load_pair(tmp_path / "d", tmp_path / "t", device="cpu", verbose=False)


def test_a_tokenizer_larger_than_the_models_vocabulary(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({f"w{i}": i for i in range(40)}, unk_token="w0"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(tmp_path / "t")
    neox(vocab=20).save_pretrained(tmp_path / "d")
    neox(2, vocab=20, seed=1).save_pretrained(tmp_path / "t")
    with pytest.raises(ValueError, match="tokenizer_name: the tokenizer .* has 40 tokens but the models read only 20"):
        load_pair(tmp_path / "d", tmp_path / "t", device="cpu", verbose=False)


@pytest.fixture
def choice(monkeypatch):
    """load_pair's automatic choice with the hub and the offline pair mocked: what it asked for, and the pairs."""
    asked = []
    fallback = pairs.ModelPair(None, None, None, "d", "t", "fallback", torch.device("cpu"), torch.float32)
    hub_pair = pairs.ModelPair(None, None, None, "D", "T", "hub/local", torch.device("cpu"), torch.float32)

    def from_hub(draft, target, **kwargs):
        asked.append((draft, target))
        return hub_pair

    monkeypatch.setattr(pairs, "load_named_pair", from_hub)
    monkeypatch.setattr(pairs, "load_fallback_pair", lambda *a, **k: fallback)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    return SimpleNamespace(asked=asked, fallback=fallback, hub=hub_pair)


def test_cpu_with_internet_picks_the_small_pythia_pair(monkeypatch, choice):
    monkeypatch.setattr(pairs, "hub_reachable", lambda timeout=3.0: True)
    assert load_pair(device="cpu", verbose=False) is choice.hub
    assert choice.asked == [pairs.CPU_PAIR] and pairs.CPU_PAIR[0] == "EleutherAI/pythia-70m"
    assert load_pair(device="cpu", hub=False, verbose=False) is choice.fallback and len(choice.asked) == 1


def test_offline_says_in_one_line_when_it_trains_a_recipe(monkeypatch, choice, capsys):
    monkeypatch.setattr(pairs, "hub_reachable", lambda timeout=3.0: False)
    monkeypatch.setattr(pairs, "fallback_is_cached", lambda *a: False)
    assert load_pair(device="cpu") is choice.fallback and choice.asked == []
    first, *rest = capsys.readouterr().out.splitlines()
    assert first == (
        "Model pair: the Hugging Face hub is unreachable (offline), so specdec_lite trains the "
        "offline pair of this recipe on this machine (once; then cached)"
    )
    assert len(rest) == 1 and rest[0].startswith("Model pair: offline pair")
    monkeypatch.setattr(pairs, "fallback_is_cached", lambda *a: True)  # cached: no training, no such line
    load_pair(device="cpu")
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "trains" not in out[0]
