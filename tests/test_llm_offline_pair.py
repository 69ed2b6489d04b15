"""The offline pair that ships inside the package: its files are the recipe's, and it loads without training."""

import dataclasses
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from specdec_lite.llm import fallback, pairs  # noqa: E402
from specdec_lite.llm.fallback import SHIPPED_DIR, FallbackRecipe, check_files, read_meta  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def meta():
    return read_meta(SHIPPED_DIR)


@pytest.fixture(scope="module")
def shipped():
    """The pair as ``load_pair(hub=False)`` gives it; training is made impossible while it loads."""
    real = fallback.train_pair
    fallback.train_pair = lambda *a, **k: pytest.fail("the shipped pair must load without training")
    try:
        return pairs.load_pair(hub=False, device="cpu", verbose=False, progress=False)
    finally:
        fallback.train_pair = real


def test_shipped_files_are_the_recipes(meta):
    """meta.json records this code's recipe, and every shipped file has the SHA-256 recorded at training time."""
    assert meta["recipe"] == dataclasses.asdict(FallbackRecipe())
    assert meta["recipe_key"] == FallbackRecipe().key()
    assert check_files(SHIPPED_DIR) == []
    assert {"draft/model.safetensors", "target/model.safetensors", "tokenizer/tokenizer.json"} <= set(meta["files"])
    assert meta["size_bytes"] == sum((SHIPPED_DIR / f).stat().st_size for f in meta["files"])
    # Trained for exactly the recipe's steps: no time cap decides how far training went.
    assert meta["target"]["steps"] == FallbackRecipe().target_steps == len(meta["target"]["losses"])
    assert meta["draft"]["steps"] == FallbackRecipe().draft_steps == len(meta["draft"]["losses"])
    assert meta["threads"] == FallbackRecipe().threads


def test_check_names_a_changed_file(tmp_path):
    copy = tmp_path / "pair"
    shutil.copytree(SHIPPED_DIR, copy)
    weights = copy / "draft" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    (copy / "tokenizer" / "stray.txt").write_text("x")
    assert check_files(copy) == ["draft/model.safetensors", "tokenizer/stray.txt"]
    assert fallback.main(["--check", "--out", str(copy)]) == 1
    assert fallback.main(["--check"]) == 0


@pytest.mark.slow
def test_the_command_checks_the_shipped_files():
    out = subprocess.run(
        [sys.executable, "-m", "specdec_lite.llm.offline", "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert "all match their SHA-256" in out.stdout and "Warning" not in out.stderr


def test_load_pair_offline_is_the_shipped_pair(shipped, meta):
    assert shipped.source == "fallback" and shipped.info["folder"] == str(SHIPPED_DIR)
    assert fallback.fallback_is_cached() and fallback.fallback_pair_dir() == SHIPPED_DIR
    for role, model in (("draft", shipped.draft), ("target", shipped.target)):
        assert sum(p.numel() for p in model.parameters()) == meta[role]["parameters"]
        assert model.config.num_hidden_layers == meta["recipe"][role]["layers"]
        assert next(model.parameters()).dtype == torch.float32  # stored in float16, computed in float32
    assert len(shipped.tokenizer) == meta["vocab_size"]
    text = "def __init__(self, name):\n    self.name = name\n"
    assert shipped.decode(shipped.encode(text)) == text


@pytest.mark.slow
def test_held_out_numbers_are_those_of_the_shipped_weights(shipped, meta):
    """Recomputed from the shipped files, the held-out losses and mean TV are those meta.json records."""
    texts = fallback.stdlib_texts(meta["recipe"]["corpus_bytes"])
    if fallback.corpus_hash(texts) != meta["corpus_sha256"]:
        pytest.skip(f"this Python's standard library is not the corpus of Python {meta['python']}")
    data = fallback.encode_corpus(shipped.tokenizer, texts)
    held_out = data[int(0.95 * len(data)) :]
    got = fallback.evaluate_pair(shipped.draft, shipped.target, held_out, seq_len=meta["recipe"]["seq_len"])
    for key, value in meta["held_out"].items():
        assert got[key] == pytest.approx(value, rel=1e-4), key


@pytest.mark.slow
def test_a_wheel_carries_the_shipped_pair(tmp_path, meta):
    """``pip install`` of the package (as in Colab) installs every shipped file."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("specdec_lite-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in [*meta["files"], "meta.json"]:
        assert f"specdec_lite/llm/offline_pair/{name}" in names


LAB8 = ROOT / "notebooks" / "source" / "lab08_real_models" / "lab08_real_models.md"
# (K, eps, quantity, as the model answers write it): means over seeds 0..7, 32 tokens, the default prompt.
LAB8_ANSWERS = [
    (1, 0.0, "calls", "17.0"),
    (2, 0.0, "calls", "12.0"),
    (4, 0.0, "calls", "8.9"),
    (8, 0.0, "calls", "5.9"),
    (1, 0.0, "rejections", "1.6"),
    (4, 0.0, "rejections", "3.8"),
    (8, 0.0, "rejections", "2.9"),
    (1, 0.0, "summed_tv", "2.2"),
    (4, 0.0, "summed_tv", "3.9"),
    (8, 0.0, "summed_tv", "4.0"),
    (4, 0.0, "accepted_percent", "86"),
    (4, 0.0, "rejections", "3.75"),
    (4, 0.0, "summed_tv", "3.86"),
    (4, 0.15, "calls", "7"),
    (4, 0.15, "max_rejections", "no rejection"),
    (4, 0.3, "max_rejections", "no rejection"),
    (4, 0.3, "summed_tv", "3.85"),
    (4, 0.3, "expected", "0.004"),
]


@pytest.mark.slow
def test_lab8_model_answers_quote_the_shipped_pair(shipped):
    """Every number of Lab 8's model answers is what the explorer gives on the shipped pair."""
    from specdec_lite.llm import speculative_generate
    from specdec_lite.llm.measure import default_prompts

    answers = LAB8.read_text()
    answers = answers[answers.index("**Answer to question 1.**") : answers.index("## 4.")]
    ids = shipped.encode(default_prompts(shipped)[0])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = {
            (K, eps): [
                speculative_generate(shipped.draft, shipped.target, ids, 32, lookahead=K, eps=eps, generator=seed)
                for seed in range(8)
            ]
            for K, eps in {(K, eps) for K, eps, _, _ in LAB8_ANSWERS}
        }
    finally:
        torch.set_num_threads(threads)

    def value(rs, quantity):
        return {
            "calls": lambda: sum(r.oracle_calls for r in rs) / 8,
            "rejections": lambda: sum(r.rejections for r in rs) / 8,
            "summed_tv": lambda: sum(float(r.tv[r.drafted].sum()) for r in rs) / 8,
            "expected": lambda: sum(r.predicted_rejections for r in rs) / 8,
            "accepted_percent": lambda: (
                100 * sum(int(r.accepted.sum()) for r in rs) / sum(int(r.drafted.sum()) for r in rs)
            ),
            "max_rejections": lambda: max(r.rejections for r in rs),
        }[quantity]()

    for K, eps, quantity, text in LAB8_ANSWERS:
        got = value(runs[K, eps], quantity)
        assert text in answers, (K, eps, quantity, text)
        if text == "no rejection":
            assert got == 0, (K, eps, quantity)
        else:
            decimals = len(text.split(".")[1]) if "." in text else 0
            assert f"{got:.{decimals}f}" == text, (K, eps, quantity, got, text)
