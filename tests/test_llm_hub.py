"""The hub branch of ``load_pair()``, end to end: real huggingface_hub and transformers against a local HTTP hub.

Two tiny GPT-NeoX models (1 and 2 layers) with a small BPE tokenizer are served as ``EleutherAI/pythia-70m`` and
``EleutherAI/pythia-410m`` by :class:`tests.hub_server.FakeHub`. huggingface_hub reads ``HF_ENDPOINT`` when it is
imported, so the download runs in a fresh Python process; the parent then checks the server's log and the cache.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
hf_constants = pytest.importorskip("huggingface_hub.constants")

import huggingface_hub  # noqa: E402

from specdec_lite.llm import pairs  # noqa: E402
from specdec_lite.llm.fallback import stdlib_texts, train_tokenizer  # noqa: E402

from .hub_server import FakeHub  # noqa: E402

#: A stand-in hub on 127.0.0.1 and a child Python that downloads and loads two models.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DRAFT, TARGET = pairs.CPU_PAIR
MARK = "HUB-TEST-RESULT "
#: Run in the child: load_pair's automatic choice, one speculative generation, and a JSON line of what happened.
CHILD = f"""
import json
from huggingface_hub import constants
from specdec_lite.llm import load_pair, speculative_generate
from specdec_lite.llm.pairs import hub_reachable

pair = load_pair(device="cpu")
out = speculative_generate(pair.draft, pair.target, pair.encode("def f"), 8, lookahead=2, generator=0)
print({MARK!r} + json.dumps({{
    "endpoint": constants.ENDPOINT, "reachable": hub_reachable(), "source": pair.source,
    "draft_name": pair.draft_name, "target_name": pair.target_name, "reason": pair.info["reason"],
    "layers": [m.config.num_hidden_layers for m in (pair.draft, pair.target)], "vocab": len(pair.tokenizer),
    "device": pair.device.type, "tokens": out.tokens.tolist(),
}}))
"""


@pytest.fixture(scope="module")
def repo_dirs(tmp_path_factory) -> dict[str, Path]:
    """Two repository folders as on the hub: each holds its model's files and the (shared) tokenizer's."""
    root = tmp_path_factory.mktemp("hub_repos")
    tok = train_tokenizer(stdlib_texts(20_000), 300)
    dirs = {}
    for repo_id, layers, seed in ((DRAFT, 1, 0), (TARGET, 2, 1)):
        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=len(tok),
            hidden_size=16,
            num_hidden_layers=layers,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=128,
        )
        folder = root / repo_id.replace("/", "--")
        transformers.GPTNeoXForCausalLM(cfg).save_pretrained(folder)
        tok.save_pretrained(folder)
        dirs[repo_id] = folder
    return dirs


@pytest.fixture(scope="module")
def hub(repo_dirs):
    server = FakeHub(repo_dirs)
    yield server
    server.close()


def child_env(endpoint: str, home: Path, cache: Path) -> dict[str, str]:
    """This environment without any hub or offline setting, pointed at ``endpoint`` with a fresh ``HF_HOME``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_"))}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(home),
        HF_HUB_DISABLE_TELEMETRY="1",
        PYTHONPATH=str(ROOT),
        # A file where the offline pair's cache folder should be: a load_pair that missed the hub branch
        # can never spend minutes training a fallback pair there; the test fails in seconds instead.
        SPECDEC_LITE_CACHE=str(cache),
        OMP_NUM_THREADS="1",
    )
    return env


@pytest.fixture(scope="module")
def loaded(hub, tmp_path_factory):
    """What the child saw (its JSON line), and its ``HF_HOME``."""
    tmp = tmp_path_factory.mktemp("hub_child")
    (tmp / "no-fallback").write_text("")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=child_env(hub.url, tmp / "hf_home", tmp / "no-fallback"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = "\n".join(f"{r.method} {r.path} -> {r.status}" for r in hub.requests)
    assert proc.returncode == 0, f"child failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}\nserver log:\n{log}"
    (line,) = [s for s in proc.stdout.splitlines() if s.startswith(MARK)]
    return json.loads(line.removeprefix(MARK)), tmp / "hf_home"


def test_load_pair_takes_the_hub_branch_and_decodes(loaded, hub):
    seen, _ = loaded
    assert seen["endpoint"] == hub.url and seen["reachable"] is True
    assert (seen["source"], seen["draft_name"], seen["target_name"], seen["reason"]) == ("hub/local", DRAFT, TARGET, "")
    assert seen["layers"] == [1, 2] and seen["vocab"] == 300 and seen["device"] == "cpu"  # the served tiny models
    assert len(seen["tokens"]) == 8 and all(0 <= t < 300 for t in seen["tokens"])


def test_weights_config_and_tokenizer_were_downloaded(loaded, hub):
    assert loaded
    unserved = [r for r in hub.requests if not r.route]
    assert not unserved, f"requests the fake hub does not answer (a library fell back on something): {unserved}"
    assert {"config.json", "model.safetensors"} <= hub.downloaded(DRAFT)
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= hub.downloaded(TARGET)
    # Every file fetched was asked about first (HEAD: ETag, commit, size), as huggingface_hub does.
    heads = {r.path.replace("/resolve/", "/", 1) for r in hub.requests if r.method == "HEAD" and r.status == 200}
    gets = {r.path.replace("/resolve/", "/", 1) for r in hub.requests if r.method == "GET" and r.route == "resolve"}
    assert gets <= heads


def test_downloaded_files_are_byte_identical(loaded, hub, repo_dirs):
    _, home = loaded
    for repo_id, folder in repo_dirs.items():
        snapshot = home / "hub" / f"models--{repo_id.replace('/', '--')}" / "snapshots" / hub.repos[repo_id].commit
        names = hub.downloaded(repo_id)
        assert names and {p.name for p in snapshot.iterdir()} >= names
        for name in names:
            assert (snapshot / name).read_bytes() == (folder / name).read_bytes(), f"{repo_id}/{name}"


# --- the server answers errors the way the hub does (in-process: huggingface_hub takes endpoint=) ----------------


@pytest.fixture
def online(monkeypatch):
    """huggingface_hub online in this process even where HF_HUB_OFFLINE was set when it was imported."""
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)


@pytest.mark.parametrize(
    "repo_id, revision, filename, error",
    [
        (TARGET, "main", "missing.json", "RemoteEntryNotFoundError"),
        ("EleutherAI/no-such-model", "main", "config.json", "RepositoryNotFoundError"),
        (TARGET, "no-such-branch", "config.json", "RevisionNotFoundError"),
    ],
)
def test_errors_become_huggingface_hub_exceptions(hub, online, tmp_path, repo_id, revision, filename, error):
    exc = getattr(huggingface_hub.errors, error)
    with pytest.raises(exc):
        huggingface_hub.hf_hub_download(repo_id, filename, revision=revision, endpoint=hub.url, cache_dir=tmp_path)


def test_model_info_and_tree_listing(hub, online, repo_dirs):
    api = huggingface_hub.HfApi(endpoint=hub.url)
    assert api.model_info(TARGET).sha == hub.repos[TARGET].commit
    assert sorted(api.list_repo_files(TARGET)) == sorted(p.name for p in repo_dirs[TARGET].iterdir())
    (weights,) = [f for f in api.list_repo_tree(TARGET) if f.path == "model.safetensors"]
    assert weights.lfs is not None and weights.size == (repo_dirs[TARGET] / "model.safetensors").stat().st_size


# --- hub_reachable honours HF_ENDPOINT: scheme, host and port -------------------------------------------------------


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_hub_reachable_reads_the_endpoint_at_call_time(hub, monkeypatch):
    monkeypatch.setattr(hf_constants, "ENDPOINT", hub.url)
    assert pairs.hub_reachable(timeout=2.0)
    monkeypatch.setattr(hf_constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    assert not pairs.hub_reachable(timeout=2.0)


@pytest.mark.parametrize(
    "endpoint",
    [
        "not a url",
        "",
        "http://",
        "127.0.0.1",
        "ftp://127.0.0.1:21",
        "http://127.0.0.1:port",
        "http://127.0.0.1:99999",
        "http://[::1",
    ],
)
def test_hub_reachable_is_false_for_a_garbage_endpoint(monkeypatch, endpoint):
    monkeypatch.setattr(hf_constants, "ENDPOINT", endpoint)
    assert pairs.hub_reachable(timeout=1.0) is False
