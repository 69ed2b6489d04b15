"""Every model file is checked before use: hub files against the hub's ETag, the offline pair against its meta.json;
safetensors only; weights that fill the model exactly; the models' own tokenizer.

The hub part runs the real huggingface_hub and transformers against :class:`tests.hub_server.FakeHub` serving damaged
files; the server runs inside the child process (huggingface_hub reads ``HF_ENDPOINT`` on import), so the child can
damage files between its steps and print what each step saw.
"""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("huggingface_hub")

from safetensors.torch import load_file, save_file  # noqa: E402

from specdec_lite.llm import fallback  # noqa: E402
from specdec_lite.llm.fallback import FallbackRecipe, check_files, fallback_is_cached, train_tokenizer  # noqa: E402
from specdec_lite.llm.integrity import (  # noqa: E402
    CorruptFileError,
    ForeignTokenizerError,
    PickleCheckpointError,
    WeightsMismatchError,
    git_blob_sha1_of,
    matches_etag,
)
from specdec_lite.llm.pairs import load_named_pair, load_pair  # noqa: E402

from . import test_llm_hub  # noqa: E402
from .test_llm_hub import DRAFT, TARGET, child_env  # noqa: E402

repo_dirs = test_llm_hub.repo_dirs  # the served models' folders (a module fixture)

ROOT = Path(__file__).resolve().parents[1]
MARK = "INTEGRITY-STEP "
PICKLED = "owner/pickled-only"

#: The child: a FakeHub of its own, then one step after another, each printing what it saw as a JSON line.
CHILD = f"""
import hashlib, json, os, sys
from pathlib import Path
from tests.hub_server import FakeHub

hub = FakeHub(json.loads(sys.argv[1]))
os.environ["HF_ENDPOINT"] = hub.url
from specdec_lite.llm import load_pair
from specdec_lite.llm.pairs import load_named_pair

DRAFT, TARGET, PICKLED = {DRAFT!r}, {TARGET!r}, {PICKLED!r}
CACHE = Path(os.environ["HF_HOME"]) / "hub"

def cached(repo, name):
    (snap,) = (CACHE / f"models--{{repo.replace('/', '--')}}" / "snapshots").iterdir()
    return snap / name

def blobs(repo):
    return sorted(p.name for p in (CACHE / f"models--{{repo.replace('/', '--')}}" / "blobs").iterdir())

def flip(path, at=None):
    data = bytearray(path.read_bytes())
    at = len(data) // 3 if at is None else at
    data[at] ^= 0x01
    path.resolve().write_bytes(bytes(data))

def gets(repo, name):
    return sum(r.method == "GET" and r.path.endswith(f"{{repo}}/resolve/{{hub.repos[repo].commit}}/{{name}}")
               for r in hub.requests)

def step(name, fn):
    try:
        seen = fn()
    except Exception as err:
        seen = {{"error": type(err).__name__, "message": str(err)}}
    print({MARK!r} + json.dumps({{"step": name, **seen}}), flush=True)

def auto():
    pair = load_pair(device="cpu", verbose=False)
    weights = {{r: cached(r, "model.safetensors") for r in (DRAFT, TARGET)}}
    return {{"source": pair.source, "reason": pair.info["reason"],
            "verified": all(hashlib.sha256(p.read_bytes()).hexdigest() == p.resolve().name
                            for p in weights.values() if p.exists()),
            "cached": [p.exists() for p in weights.values()],
            "gets": [gets(r, "model.safetensors") for r in (DRAFT, TARGET)]}}

hub.corrupt(DRAFT, "model.safetensors", times=1)
step("damaged once", auto)
flip(cached(TARGET, "model.safetensors"))
step("flipped in the cache", auto)
with open(cached(DRAFT, "model.safetensors").resolve(), "r+b") as f:
    f.write(b"\\xff" * 8)  # the header's length: garbled
step("garbled header", auto)
target_blob = cached(TARGET, "model.safetensors").resolve().name
flip(cached(TARGET, "model.safetensors"))
hub.corrupt(TARGET, "model.safetensors")
step("always damaged", lambda: {{**auto(), "bad blob kept": target_blob in blobs(TARGET)}})
hub.corrupt(TARGET, "model.safetensors", times=0)
step("served intact again", auto)
step("pickle only", lambda: load_named_pair(PICKLED, TARGET, device="cpu") and {{}})
step("pickle requests", lambda: {{"bin": gets(PICKLED, "pytorch_model.bin"),
                                  "unserved": [r.path for r in hub.requests if not r.route]}})
flip(cached(TARGET, "config.json"), at=2)
from huggingface_hub import constants
constants.HF_HUB_OFFLINE = True  # as HF_HUB_OFFLINE=1 does (hub.close() would leave kept-alive connections served)
step("offline, bad config", lambda: load_named_pair(DRAFT, TARGET, device="cpu") and {{}})
"""


@pytest.fixture(scope="module")
def pickled_dir(repo_dirs, tmp_path_factory) -> Path:
    """A repository whose weights exist only as ``pytorch_model.bin`` (a pickle)."""
    folder = tmp_path_factory.mktemp("pickled")
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(repo_dirs[DRAFT] / name, folder / name)
    torch.save(load_file(repo_dirs[DRAFT] / "model.safetensors"), folder / "pytorch_model.bin")
    return folder


@pytest.fixture(scope="module")
def steps(repo_dirs, pickled_dir, tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("integrity_child")
    (tmp / "no-fallback").write_text("")
    served = {**{k: str(v) for k, v in repo_dirs.items()}, PICKLED: str(pickled_dir)}
    env = child_env("http://127.0.0.1:9", tmp / "hf_home", tmp / "no-fallback")
    del env["HF_ENDPOINT"]  # the child sets it to its own hub
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(served)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"child failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    seen = [json.loads(s.removeprefix(MARK)) for s in proc.stdout.splitlines() if s.startswith(MARK)]
    return {s.pop("step"): s for s in seen} | {"stderr": {"text": proc.stderr}}


@pytest.mark.slow
def test_a_download_damaged_once_is_fetched_again(steps):
    seen = steps["damaged once"]
    assert (seen["source"], seen["reason"], seen["verified"], seen["cached"]) == ("hub/local", "", True, [True, True])
    assert seen["gets"] == [2, 1]  # the draft's weights twice: damaged, then intact
    assert "pythia-70m/model.safetensors does not match the hub's hash; discarded" in steps["stderr"]["text"]


@pytest.mark.slow
@pytest.mark.parametrize("step, gets", [("flipped in the cache", [2, 2]), ("garbled header", [3, 2])])
def test_a_damaged_cached_file_is_discarded_and_fetched_again(steps, step, gets):
    seen = steps[step]
    assert (seen["source"], seen["reason"], seen["verified"], seen["gets"]) == ("hub/local", "", True, gets)


@pytest.mark.slow
def test_a_file_the_hub_keeps_sending_damaged_falls_back_and_is_never_cached(steps):
    seen = steps["always damaged"]
    assert seen["source"] == "fallback" and seen["bad blob kept"] is False and seen["cached"] == [True, False]
    assert seen["reason"].startswith(
        "could not load EleutherAI/pythia-410m from the hub (CorruptFileError: "
        "EleutherAI/pythia-410m: model.safetensors did not match the hub's hash, nor did "
        "it when fetched again"
    )
    assert seen["gets"][1] == 3  # the flipped cached copy discarded, fetched once more: damaged
    assert steps["served intact again"]["source"] == "hub/local" and steps["served intact again"]["verified"]


@pytest.mark.slow
def test_pickle_checkpoints_are_refused_and_never_downloaded(steps):
    assert steps["pickle only"]["error"] == "PickleCheckpointError"
    assert (
        "pytorch_model.bin" in steps["pickle only"]["message"] and "safetensors only" in steps["pickle only"]["message"]
    )
    assert steps["pickle requests"] == {"bin": 0, "unserved": []}  # nor any auto-conversion request


@pytest.mark.slow
def test_a_damaged_cached_file_with_no_hub_is_a_named_error(steps):
    seen = steps["offline, bad config"]
    assert seen["error"] == "CorruptFileError"
    assert seen["message"].startswith(
        "EleutherAI/pythia-410m/config.json: the cached file did not match the hub's "
        "hash and was deleted; fetching it again failed"
    )


# --- hashes ----------------------------------------------------------------------------------------------------------


def test_etags_are_checked_as_sha256_or_git_blob_ids(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"weights\n")
    sha = hashlib.sha256(b"weights\n").hexdigest()
    blob = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()
    assert git_blob_sha1_of(path) == blob
    assert matches_etag(path, sha) and matches_etag(path, f'"{blob}"') and matches_etag(path, f'W/"{blob}"')
    assert not matches_etag(path, "0" * 64) and not matches_etag(path, "0" * 40)
    with pytest.raises(CorruptFileError, match="neither a SHA-256 nor a git SHA-1"):
        matches_etag(path, "abc")


# --- local folders: safetensors only, weights that fit, the models' own tokenizer ----------------------------------


@pytest.fixture(scope="module")
def local(repo_dirs, tmp_path_factory) -> Path:
    """Copies of the served draft and target folders (each with its tokenizer)."""
    root = tmp_path_factory.mktemp("local_pair")
    for name, repo in (("draft", DRAFT), ("target", TARGET)):
        shutil.copytree(repo_dirs[repo], root / name)
    return root


def variant(local: Path, tmp_path: Path, role: str = "target") -> Path:
    folder = tmp_path / role
    shutil.copytree(local / role, folder)
    return folder


def test_a_folder_with_only_a_pickle_checkpoint_is_refused(local, pickled_dir):
    with pytest.raises(
        PickleCheckpointError,
        match=r"draft_name: .* holds its weights only as pickle checkpoints "
        r"\(pytorch_model.bin\); specdec_lite reads safetensors only",
    ):
        load_named_pair(pickled_dir, local / "target", device="cpu")


def test_a_config_with_fewer_layers_than_the_weights_is_named(local, tmp_path):
    target = variant(local, tmp_path)
    config = json.loads((target / "config.json").read_text())
    (target / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}))
    with pytest.raises(
        WeightsMismatchError,
        match=r"target_name: the weights of .* do not fit its config.json; "
        r"tensors in the weights but not in the model .*gpt_neox.layers.1",
    ):
        load_named_pair(local / "draft", target, device="cpu")


def test_a_missing_tensor_is_named_not_randomly_initialised(local, tmp_path):
    draft = variant(local, tmp_path, "draft")
    weights = load_file(draft / "model.safetensors")
    del weights["gpt_neox.final_layer_norm.weight"]
    save_file(weights, draft / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(WeightsMismatchError, match="draft_name: .* missing from the weights .*final_layer_norm.weight"):
        load_named_pair(draft, local / "target", device="cpu")


def test_a_foreign_tokenizer_of_the_same_size_is_named(local, tmp_path):
    foreign = tmp_path / "foreign"
    tok = train_tokenizer([" ".join(map(str, range(3000)))] * 3, 300)  # another text: other merges, the same size
    tok.save_pretrained(foreign)
    assert len(tok) == 300
    with pytest.raises(
        ForeignTokenizerError,
        match=r"tokenizer_name: the tokenizer of .*foreign' is not the one saved "
        r"with the (draft|target)",
    ):
        load_named_pair(local / "draft", local / "target", tokenizer_name=foreign, device="cpu")
    pair = load_named_pair(local / "draft", local / "target", tokenizer_name=local / "draft", device="cpu")
    assert len(pair.tokenizer) == 300  # the draft's own copy of the same tokenizer is fine


# --- the offline pair: checked on every load ------------------------------------------------------------------------


def copy_shipped(dest: Path) -> Path:
    shutil.copytree(fallback.SHIPPED_DIR, dest)
    return dest


def test_a_changed_byte_in_the_shipped_pair_is_a_named_error_on_load(monkeypatch, tmp_path):
    shipped = copy_shipped(tmp_path / "offline_pair")
    weights = shipped / "target" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01
    weights.write_bytes(bytes(data))
    monkeypatch.setattr(fallback, "SHIPPED_DIR", shipped)
    with pytest.raises(
        CorruptFileError,
        match=r"the offline pair shipped in .*: target/model.safetensors differ from "
        r"the SHA-256 in meta.json; reinstall specdec_lite",
    ):
        load_pair(hub=False, device="cpu", verbose=False)


def test_a_cache_folder_is_cached_only_when_every_file_matches(tmp_path):
    recipe = FallbackRecipe(seed=7)
    folder = copy_shipped(tmp_path / f"stdlib-pair-{recipe.key()}")
    assert fallback_is_cached(recipe, tmp_path)
    (folder / "draft" / "config.json").write_text("{}")
    assert check_files(folder) == ["draft/config.json"] and not fallback_is_cached(recipe, tmp_path)
    for path in list(folder.iterdir()):
        if path.is_dir():
            shutil.rmtree(path)
    assert check_files(folder) == sorted(json.loads((folder / "meta.json").read_text())["files"])
    assert not fallback_is_cached(recipe, tmp_path)  # meta.json alone is not a pair
    (folder / "meta.json").write_text("{not json")
    assert check_files(folder) == ["meta.json"] and not fallback_is_cached(recipe, tmp_path)


@pytest.mark.slow
def test_a_damaged_cached_pair_is_discarded_and_trained_again(tmp_path, capsys):
    from .test_llm_inputs import TINY

    first = fallback.fallback_pair_dir(TINY, tmp_path, progress=False)
    weights = first / "draft" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    again = fallback.fallback_pair_dir(TINY, tmp_path, progress=False)
    assert again == first and check_files(again) == []
    assert "draft/model.safetensors do not match its meta.json; discarded, training it again" in capsys.readouterr().err
