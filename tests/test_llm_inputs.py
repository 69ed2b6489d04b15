"""Loading a pair: a bad device, dtype, folder or tokenizer is a named error before anything is loaded or trained."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from specdec_lite.llm import pairs  # noqa: E402
from specdec_lite.llm.fallback import FallbackRecipe, ModelShape  # noqa: E402
from specdec_lite.llm.pairs import load_named_pair, load_pair, pick_device, pick_dtype  # noqa: E402

CPU = torch.device("cpu")
TINY = FallbackRecipe(
    corpus_bytes=20_000,
    vocab_size=300,
    seq_len=16,
    batch_size=2,
    draft=ModelShape(1, 16, 2),
    target=ModelShape(1, 16, 2),
    draft_steps=2,
    target_steps=2,
)


@pytest.fixture
def no_loading(monkeypatch):
    """Any model load or training fails the test: the errors under test must come first."""

    def fail(*a, **k):
        pytest.fail("a model was loaded or trained before the bad argument was named")

    monkeypatch.setattr(pairs, "_from_pretrained", fail)
    monkeypatch.setattr(pairs, "fallback_pair_dir", fail)


@pytest.mark.parametrize("device", ["meta", "xla", True, 0.5, "nonsense"])
def test_a_device_that_cannot_run_a_pair_is_named(device):
    with pytest.raises(ValueError, match="device"):
        pick_device(device)


def test_devices_that_exist_are_taken():
    assert pick_device("cpu") == CPU and pick_device(CPU) == CPU


@pytest.mark.parametrize("dtype", [5, "float33", "int8", torch.int8, torch.bool, True, "torch.float8"])
def test_a_dtype_weights_cannot_take_is_named(dtype):
    with pytest.raises(ValueError, match="dtype: expected one of float32, float16, bfloat16"):
        pick_dtype(CPU, dtype)


def test_dtypes_by_name_or_object():
    assert pick_dtype(CPU, "float16") is torch.float16 and pick_dtype(CPU, "torch.bfloat16") is torch.bfloat16
    assert pick_dtype(CPU, torch.float64) is torch.float64 and pick_dtype(CPU) is torch.float32


@pytest.mark.parametrize("kwargs", [{"dtype": "float33"}, {"device": "meta"}])
def test_offline_pair_refuses_bad_settings_before_training(no_loading, tmp_path, kwargs):
    with pytest.raises(ValueError, match="dtype|device"):
        load_pair(hub=False, fallback=TINY, cache_dir=tmp_path, verbose=False, **kwargs)
    with pytest.raises(ValueError, match="dtype|device"):
        pairs.load_fallback_pair(TINY, cache_dir=tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_missing_folders_are_named_before_loading(no_loading, tmp_path):
    with pytest.raises(FileNotFoundError, match="draft_name: there is no folder '/no/such/folder'"):
        load_named_pair("/no/such/folder", "/no/such/target")
    (tmp_path / "d").mkdir()
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="target_name: there is no folder"):
        load_named_pair(tmp_path / "ok", tmp_path / "target")
    with pytest.raises(FileNotFoundError, match="draft_name: the folder .* holds no config.json"):
        load_named_pair(tmp_path / "d", "EleutherAI/pythia-70m")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match="is a file"):
        load_named_pair(tmp_path / "file.txt", "EleutherAI/pythia-70m")
    with pytest.raises(ValueError, match="draft_name: expected a hub name"):
        load_named_pair("", "EleutherAI/pythia-70m")


def test_a_missing_tokenizer_folder_fails_before_the_models_load(no_loading, tmp_path):
    for role in ("d", "t"):
        (tmp_path / role).mkdir()
        (tmp_path / role / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="tokenizer_name: there is no folder"):
        load_named_pair(tmp_path / "d", tmp_path / "t", tokenizer_name=tmp_path / "no-tokenizer")
    with pytest.raises(FileNotFoundError, match="tokenizer_name: the folder .* holds no tokenizer files"):
        load_named_pair(tmp_path / "d", tmp_path / "t")  # the target's folder holds no tokenizer
