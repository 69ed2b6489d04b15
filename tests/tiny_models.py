"""Tiny Hugging Face models built from configs, for the llm tests (no hub, no GPU, no training)."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models gain nothing from intra-op threads, and lose a lot when the cores are shared."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def neox(layers=1, hidden=16, vocab=20, seed=0, *, init=0.3, context=64, dropout=0.0):
    """A GPT-NeoX causal LM with ``layers`` layers of width ``hidden``, in eval mode, seeded."""
    torch.manual_seed(seed)
    cfg = transformers.GPTNeoXConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=context,
        initializer_range=init,
        hidden_dropout=dropout,
        attention_dropout=dropout,
    )
    return transformers.GPTNeoXForCausalLM(cfg).eval()
