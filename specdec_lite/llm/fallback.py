"""The offline model pair: a draft and a target that specdec_lite trains itself, and ships.

No download is needed: the text is the Python standard library's own source,
which every Python installation carries. A byte-level BPE tokenizer is trained on
it with the ``tokenizers`` library, then two GPT-NeoX models (the Pythia
architecture) of very different cost: a one-layer draft and a twelve-layer
target. On a CPU a small model's call costs mostly a fixed amount per layer, so
depth is what makes the target expensive to call (about seven draft calls) while
keeping it quick to train; the draft is distilled from the target so that they
often agree.

The recipe is fixed (steps, seed, one thread), and the pair it trained ships inside
the package (``SHIPPED_DIR``: weights in float16, tokenizer, ``meta.json`` with the
SHA-256 of every file), so ``load_pair(hub=False)`` loads it in seconds and every
machine computes with the same weights. ``python -m specdec_lite.llm.offline
--retrain`` retrains it from the recipe and says whether the files came out the
same; ``--check`` verifies the shipped files against their recorded hashes. Any
other recipe is trained on first use and cached (``$SPECDEC_LITE_CACHE``).
Everything is saved with ``save_pretrained`` and read back through
``from_pretrained``, the same path a hub model takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .._files import writable_folder
from .._i18n import N_, _
from ._hf import require_transformers
from .integrity import CorruptFileError

#: Environment variable that overrides where trained pairs are cached.
CACHE_ENV = "SPECDEC_LITE_CACHE"
EOS = "<|endoftext|>"
#: The pair trained by ``FallbackRecipe()``, shipped with the package.
SHIPPED_DIR = Path(__file__).resolve().parent / "offline_pair"
#: The dtype the shipped weights are stored in (half the bytes; loaded as float32 on a CPU).
STORAGE_DTYPE = torch.float16
_SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idlelib", "turtledemo"}


@dataclass(frozen=True)
class ModelShape:
    """Size of one GPT-NeoX model: layers, width, attention heads."""

    layers: int
    hidden: int
    heads: int


@dataclass(frozen=True)
class FallbackRecipe:
    """Everything that decides the trained pair (its hash names the cache folder).

    The target is trained first; with ``distill`` the draft then learns the
    target's next-token laws (soft labels) instead of the text's tokens, which is
    what raises the acceptance rate ``1 - TV(p, q)`` most for a given draft size.
    Training runs exactly ``target_steps`` and ``draft_steps`` steps on ``threads``
    intra-op threads, from ``seed``: the same recipe on the same Python (whose
    library is the corpus) and library versions gives the same weights, up to the
    rounding of the CPU's vector instructions.
    """

    corpus_bytes: int = 3_000_000
    vocab_size: int = 2048
    seq_len: int = 128
    batch_size: int = 8
    draft: ModelShape = field(default_factory=lambda: ModelShape(layers=1, hidden=64, heads=2))
    target: ModelShape = field(default_factory=lambda: ModelShape(layers=12, hidden=128, heads=4))
    draft_steps: int = 400
    target_steps: int = 500
    draft_lr: float = 3e-3
    target_lr: float = 2e-3
    distill: bool = True
    seed: int = 0
    threads: int = 1

    def key(self) -> str:
        """Short hash of the recipe (the corpus's own hash is recorded in ``meta.json``)."""
        blob = json.dumps(dataclasses.asdict(self), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def default_cache_dir() -> Path:
    """``$SPECDEC_LITE_CACHE`` if set, else ``~/.cache/specdec_lite``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "specdec_lite"


def stdlib_texts(max_bytes: int) -> list[str]:
    """Source files of the standard library (sorted by path, tests left out) up to ``max_bytes`` characters."""
    root = Path(sysconfig.get_paths()["stdlib"])
    texts, total = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("test"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            text = (Path(dirpath) / name).read_text(encoding="utf-8", errors="replace")
            texts.append(text)
            total += len(text)
            if total >= max_bytes:
                return texts
    if not texts:
        raise RuntimeError(_("no Python sources found under {root}").format(root=root))
    return texts


def train_tokenizer(texts: list[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer trained on ``texts``, wrapped for ``transformers``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    fast = require_transformers().PreTrainedTokenizerFast
    return fast(tokenizer_object=tok, eos_token=EOS, bos_token=EOS, pad_token=EOS)


def encode_corpus(tokenizer: Any, texts: list[str]) -> torch.Tensor:
    """All texts as one token stream, files separated by the end-of-text token."""
    ids: list[int] = []
    for enc in tokenizer(texts, add_special_tokens=False)["input_ids"]:
        ids.extend(enc)
        ids.append(tokenizer.eos_token_id)
    return torch.tensor(ids, dtype=torch.long)


def make_model(shape: ModelShape, vocab_size: int, seq_len: int, eos_id: int) -> Any:
    """A freshly initialised GPT-NeoX causal LM of the given shape."""
    tf = require_transformers()
    config = tf.GPTNeoXConfig(
        vocab_size=vocab_size,
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=4 * shape.hidden,
        max_position_embeddings=4 * seq_len,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=False,
    )
    return tf.GPTNeoXForCausalLM(config)


def _batch(data: torch.Tensor, batch: int, seq_len: int, gen: torch.Generator) -> torch.Tensor:
    start = torch.randint(0, len(data) - seq_len - 1, (batch,), generator=gen)
    return torch.stack([data[s : s + seq_len + 1] for s in start.tolist()])


def train_lm(
    model: Any,
    data: torch.Tensor,
    *,
    steps: int,
    batch_size: int,
    seq_len: int,
    lr: float,
    seed: int = 0,
    progress: bool = True,
    desc: str = "training",
    teacher: Any = None,
) -> dict[str, Any]:
    """Next-token cross-entropy with AdamW, linear warm-up then cosine decay; returns the loss history.

    With a ``teacher`` model the labels are its next-token laws ``q`` and the loss is
    ``-sum_x q(x) log p(x)`` (distillation: the same gradient as ``KL(q || p)``).
    """
    from tqdm.auto import tqdm

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    )
    model.train()
    losses: list[float] = []
    start = time.perf_counter()
    bar = tqdm(range(steps), desc=desc, disable=not progress, mininterval=1.0)
    for _step in bar:
        xy = _batch(data, batch_size, seq_len, gen)
        logits = model(input_ids=xy[:, :-1]).logits
        logits = logits.reshape(-1, logits.shape[-1])
        if teacher is None:
            loss = torch.nn.functional.cross_entropy(logits, xy[:, 1:].reshape(-1))
        else:
            with torch.no_grad():
                soft = torch.softmax(teacher(input_ids=xy[:, :-1]).logits.reshape(logits.shape), dim=-1)
            loss = -(soft * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    bar.close()
    model.eval()
    return {"losses": losses, "steps": len(losses), "seconds": time.perf_counter() - start}


@torch.inference_mode()
def evaluate_pair(
    draft: Any,
    target: Any,
    data: torch.Tensor,
    *,
    batches: int = 4,
    batch_size: int = 8,
    seq_len: int = 128,
    seed: int = 1,
) -> dict[str, float]:
    """Held-out cross-entropy of both models and their mean ``TV(p_n, q_n)`` along real text."""
    from ..laws import tv

    gen = torch.Generator().manual_seed(seed)
    ce_d = ce_t = tv_sum = 0.0
    for _batch_i in range(batches):
        xy = _batch(data, batch_size, seq_len, gen)
        ld, lt = draft(input_ids=xy[:, :-1]).logits.float(), target(input_ids=xy[:, :-1]).logits.float()
        y = xy[:, 1:].reshape(-1)
        ce_d += float(torch.nn.functional.cross_entropy(ld.reshape(-1, ld.shape[-1]), y))
        ce_t += float(torch.nn.functional.cross_entropy(lt.reshape(-1, lt.shape[-1]), y))
        tv_sum += float(tv(torch.softmax(ld, -1), torch.softmax(lt, -1)).mean())
    return {"draft_loss": ce_d / batches, "target_loss": ce_t / batches, "mean_tv": tv_sum / batches}


#: The training objectives the offline pair's ``info`` records, as :func:`training_summary` shows them.
OBJECTIVES = (N_("distillation from the target"), N_("next-token cross-entropy"))


def training_summary(info: dict[str, Any]) -> str:
    """The offline pair's training, in three lines: each model's size, steps and training loss (the mean of the
    last 10 steps), then the held-out text."""
    lines = {
        "target": _(
            "target: {millions:.2f}M parameters, {steps} steps ({objective}), training loss {loss:.2f} "
            "(mean of the last 10 steps)"
        ),
        "draft": _(
            "draft : {millions:.2f}M parameters, {steps} steps ({objective}), training loss {loss:.2f} "
            "(mean of the last 10 steps)"
        ),
    }
    out = [
        line.format(
            millions=info[role]["parameters"] / 1e6,
            steps=info[role]["steps"],
            objective=_(info[role]["objective"]),
            loss=info[role]["final_loss"],
        )
        for role, line in lines.items()
    ]
    h = info["held_out"]
    out.append(
        _(
            "held-out text: cross-entropy draft {draft:.2f}, target {target:.2f} nats/token; "
            "mean TV(p_n, q_n) along real text {tv:.3f}"
        ).format(draft=h["draft_loss"], target=h["target_loss"], tv=h["mean_tv"])
    )
    return "\n".join(out)


def training_threads() -> int:
    """Threads for generation: all cores on an idle machine, one when other work keeps the cores busy.

    Oversubscribed cores make torch's intra-op threads wait on each other; one
    thread is then several times faster than two.
    """
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this platform
        busy = 0.0
    return max(1, min(torch.get_num_threads(), cores - int(busy)))


def file_hashes(directory: str | Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` but ``meta.json``, by path relative to it (sorted)."""
    root = Path(directory)
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "meta.json"
    }


def corpus_hash(texts: Sequence[str]) -> str:
    """SHA-256 of the training texts (they are the standard library of the Python that trains)."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("utf-8", errors="replace") + b"\0")
    return h.hexdigest()


def train_pair(directory: Path, recipe: FallbackRecipe, *, progress: bool = True) -> dict[str, Any]:
    """Train tokenizer, draft and target per ``recipe`` (on ``recipe.threads`` threads); save them in ``directory``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(recipe.threads)
    try:
        return _train_pair(Path(directory), recipe, progress=progress)
    finally:
        torch.set_num_threads(threads)


def _train_pair(directory: Path, recipe: FallbackRecipe, *, progress: bool) -> dict[str, Any]:
    import tokenizers

    from .. import __version__ as package_version

    tf = require_transformers()
    torch.manual_seed(recipe.seed)
    t0 = time.perf_counter()
    texts = stdlib_texts(recipe.corpus_bytes)
    tokenizer = train_tokenizer(texts, recipe.vocab_size)
    data = encode_corpus(tokenizer, texts)
    split = int(0.95 * len(data))
    train, held_out = data[:split], data[split:]
    tokenizer_seconds = time.perf_counter() - t0
    vocab = len(tokenizer)
    meta: dict[str, Any] = {
        "recipe": dataclasses.asdict(recipe),
        "recipe_key": recipe.key(),
        "python": sys.version.split()[0],
        "versions": {
            "specdec_lite": package_version,
            "torch": torch.__version__,
            "transformers": tf.__version__,
            "tokenizers": tokenizers.__version__,
        },
        "corpus_files": len(texts),
        "corpus_tokens": len(data),
        "corpus_sha256": corpus_hash(texts),
        "vocab_size": vocab,
        "storage_dtype": str(STORAGE_DTYPE).removeprefix("torch."),
        "tokenizer_seconds": tokenizer_seconds,
        "threads": torch.get_num_threads(),
    }
    models: dict[str, Any] = {}
    for role, shape, steps, lr in (
        ("target", recipe.target, recipe.target_steps, recipe.target_lr),
        ("draft", recipe.draft, recipe.draft_steps, recipe.draft_lr),
    ):
        model = make_model(shape, vocab, recipe.seq_len, tokenizer.eos_token_id)
        teacher = models.get("target") if role == "draft" and recipe.distill else None
        how = (
            _("distilling the target into the draft")
            if teacher is not None
            else {"target": _("training the target"), "draft": _("training the draft")}[role]
        )
        hist = train_lm(
            model,
            train,
            steps=steps,
            batch_size=recipe.batch_size,
            seq_len=recipe.seq_len,
            lr=lr,
            seed=recipe.seed,
            progress=progress,
            teacher=teacher,
            desc=_("{how} ({layers} layer(s), width {hidden})").format(
                how=how, layers=shape.layers, hidden=shape.hidden
            ),
        )
        model.to(STORAGE_DTYPE).save_pretrained(directory / role)
        # What every reader computes with: the stored weights, read back in float32.
        models[role] = tf.AutoModelForCausalLM.from_pretrained(str(directory / role), dtype=torch.float32).eval()
        meta[role] = {
            "parameters": sum(p.numel() for p in model.parameters()),
            "objective": "distillation from the target" if teacher is not None else "next-token cross-entropy",
            "steps": hist["steps"],
            "seconds": hist["seconds"],
            "first_loss": hist["losses"][0],
            "final_loss": sum(hist["losses"][-10:]) / len(hist["losses"][-10:]),
            "losses": hist["losses"],
        }
    meta["held_out"] = evaluate_pair(models["draft"], models["target"], held_out, seq_len=recipe.seq_len)
    meta["total_seconds"] = time.perf_counter() - t0
    tokenizer.save_pretrained(directory / "tokenizer")
    meta["files"] = file_hashes(directory)
    meta["size_bytes"] = sum((directory / name).stat().st_size for name in meta["files"])
    (directory / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def check_files(directory: str | Path) -> list[str]:
    """The files of a trained pair that are missing, extra or changed against its ``meta.json`` (empty if none).

    A ``meta.json`` that is missing, not JSON, or records no files is itself the one file named.
    """
    try:
        recorded = read_meta(directory)["files"]
        if not isinstance(recorded, dict) or not recorded:
            raise ValueError(_("no files recorded"))
    except (OSError, ValueError, KeyError, TypeError):
        return ["meta.json"]
    found = file_hashes(directory)
    return sorted(name for name in set(recorded) | set(found) if recorded.get(name) != found.get(name))


def _is_shipped(recipe: FallbackRecipe) -> bool:
    return recipe == FallbackRecipe() and (SHIPPED_DIR / "meta.json").is_file()


def _cache_folder(recipe: FallbackRecipe, cache_dir: str | Path | None) -> Path:
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return root / f"stdlib-pair-{recipe.key()}"


def fallback_is_cached(recipe: FallbackRecipe | None = None, cache_dir: str | Path | None = None) -> bool:
    """Whether the pair of ``recipe`` is ready without training: shipped (the default recipe), or cached with every
    file matching its ``meta.json``."""
    recipe = recipe or FallbackRecipe()
    if _is_shipped(recipe):
        return True
    final = _cache_folder(recipe, cache_dir)
    return final.is_dir() and not check_files(final)


def fallback_pair_dir(
    recipe: FallbackRecipe | None = None, cache_dir: str | Path | None = None, *, progress: bool = True
) -> Path:
    """Folder holding the trained pair for ``recipe``, its files checked against their SHA-256 in ``meta.json``.

    ``SHIPPED_DIR`` for the default recipe (a changed file there is a ``CorruptFileError``), else the cache. A
    recipe that is not cached is trained first, in a temporary folder that is renamed when complete, so an
    interrupted run never leaves a half-written pair; a cached pair whose files do not match is discarded, with a
    line on stderr, and trained again.
    """
    recipe = recipe or FallbackRecipe()
    if _is_shipped(recipe):
        if bad := check_files(SHIPPED_DIR):
            raise CorruptFileError(
                _(
                    "the offline pair shipped in {SHIPPED_DIR}: {join_bad} differ from the SHA-256 in "
                    "meta.json; reinstall specdec_lite, or train it again: python -m "
                    "specdec_lite.llm.offline --retrain"
                ).format(SHIPPED_DIR=SHIPPED_DIR, join_bad=", ".join(bad))
            )
        return SHIPPED_DIR
    final = _cache_folder(recipe, cache_dir)
    if final.exists():
        if not (bad := check_files(final)):
            return final
        print(
            _(
                "specdec_lite: the cached offline pair {final}: {join_bad} do not match its "
                "meta.json; discarded, training it again"
            ).format(final=final, join_bad=", ".join(bad)),
            file=sys.stderr,
            flush=True,
        )
        shutil.rmtree(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".training-", dir=final.parent))
    try:
        train_pair(tmp, recipe, progress=progress)
        try:
            tmp.rename(final)
        except OSError:  # another process finished first: keep theirs
            if check_files(final):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def read_meta(directory: str | Path) -> dict[str, Any]:
    """The training record ``meta.json`` of a trained pair."""
    return json.loads((Path(directory) / "meta.json").read_text())


def retrain(out: str | Path = SHIPPED_DIR, *, progress: bool = True) -> dict[str, Any]:
    """Train ``FallbackRecipe()`` into ``out`` (replacing what is there) and compare with the files it replaced.

    Returns the new ``meta.json`` with ``"changed"``: the files whose hash differs from
    the previous pair's (None if there was none). Training happens in a sibling
    temporary folder, so an interrupted run leaves ``out`` as it was.
    """
    out = Path(out)
    before = read_meta(out)["files"] if (out / "meta.json").is_file() else None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".retraining-", dir=out.parent))
    try:
        meta = train_pair(tmp, FallbackRecipe(), progress=progress)
        for path in [tmp, *tmp.rglob("*")]:  # mkdtemp and safetensors make owner-only files; these are for all
            path.chmod(0o755 if path.is_dir() else 0o644)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    meta["changed"] = (
        None
        if before is None
        else sorted(name for name in set(before) | set(meta["files"]) if before.get(name) != meta["files"].get(name))
    )
    return meta


def main(argv: Sequence[str] | None = None) -> int:
    """``--check`` the shipped pair's files against their hashes, or ``--retrain`` it from the recipe."""
    ap = argparse.ArgumentParser(prog="python -m specdec_lite.llm.offline", description=main.__doc__)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help=_("verify the shipped files against meta.json"))
    what.add_argument("--retrain", action="store_true", help=_("train FallbackRecipe() and write the pair to --out"))
    ap.add_argument("--out", default=str(SHIPPED_DIR), help=_("folder of the pair (default: the shipped one)"))
    ap.add_argument("--no-progress", action="store_true", help=_("no tqdm progress bars"))
    args = ap.parse_args(argv)
    if args.check:
        try:
            meta = read_meta(args.out)
            if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict) or "recipe_key" not in meta:
                raise ValueError(_("it records no files"))
        except (OSError, ValueError) as err:
            ap.error(
                _("--out: {args_out!r} holds no trained pair (its meta.json: {type_err_name}: {err})").format(
                    args_out=args.out, type_err_name=type(err).__name__, err=err
                )
            )
        bad = check_files(args.out)
        print(
            _("{out}: recipe {key} (this code's: {ours}), {files} files, {mib:.1f} MiB; ").format(
                out=args.out,
                key=meta["recipe_key"],
                ours=FallbackRecipe().key(),
                files=len(meta["files"]),
                mib=meta["size_bytes"] / 2**20,
            )
            + (
                _("all match their SHA-256")
                if not bad
                else _("differ from meta.json: {bad}").format(bad=", ".join(bad))
            )
        )
        return int(bool(bad) or meta["recipe_key"] != FallbackRecipe().key())
    try:
        writable_folder(Path(args.out).expanduser().parent, "--out")
    except OSError as err:
        ap.error(str(err))
    meta = retrain(args.out, progress=not args.no_progress)
    changed = meta["changed"]
    print(
        _(
            "trained {FallbackRecipe_key} in {meta_total_seconds:.0f} s on {meta_threads} "
            "thread(s), Python {meta_python}: {len_meta_files} files, {meta_size_bytes_2_20:.1f} "
            "MiB under {args_out}"
        ).format(
            FallbackRecipe_key=FallbackRecipe().key(),
            meta_total_seconds=meta["total_seconds"],
            meta_threads=meta["threads"],
            meta_python=meta["python"],
            len_meta_files=len(meta["files"]),
            meta_size_bytes_2_20=meta["size_bytes"] / 2**20,
            args_out=args.out,
        )
    )
    print(
        _("no previous pair there")
        if changed is None
        else (
            _("every file is byte-identical to the previous pair")
            if not changed
            else _("files that differ from the previous pair: {changed}").format(changed=", ".join(changed))
        )
    )
    return 0
