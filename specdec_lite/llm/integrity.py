"""Checking a model's files before they are used: trusted hashes, safetensors only, weights that fit the config.

Every file the loader reads is compared with a hash it trusts: a hub file with the
ETag the hub gave it (the SHA-256 of an LFS file such as ``model.safetensors``, the
git blob SHA-1 of a small file such as ``config.json``), which huggingface_hub names
its cached copy after; a file of the offline pair with the SHA-256 its ``meta.json``
records. Weights are read from safetensors files only (a pickle checkpoint such as
``pytorch_model.bin`` can run code when it is read), and every tensor of the model
must come from the file: none missing (it would be left at its random
initialisation), none left over (a config with fewer layers than the weights).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._i18n import _

#: Weight files ``from_pretrained`` reads (one file, or shards listed in an index).
SAFETENSORS_FILES = ("model.safetensors", "model.safetensors.index.json")
#: Checkpoint formats that are pickles (or can hold them): refused.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
#: Checkpoint tensors a model may lack without harm: rotary frequencies, recomputed from the config.
IGNORED_UNEXPECTED = ("inv_freq",)
_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ModelFilesError(OSError):
    """A model's files cannot be used as they are (``load_pair()`` falls back to the offline pair on it)."""


class CorruptFileError(ModelFilesError):
    """A file differs from the hash it is trusted to have (a damaged download or cache)."""


class PickleCheckpointError(ModelFilesError):
    """The weights exist only as a pickle checkpoint (``pytorch_model.bin`` and kin), which is never read."""


class WeightsMismatchError(ModelFilesError):
    """The weights file does not fit the model its config builds: tensors missing, left over, or of another shape."""


class ForeignTokenizerError(ValueError):
    """The tokenizer is not the one saved with the models."""


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def git_blob_sha1_of(path: str | Path) -> str:
    """The git blob id of a file: SHA-1 of ``b"blob <size>\\0"`` then its bytes (a small file's ETag on the hub)."""
    path = Path(path)
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def matches_etag(path: str | Path, etag: str) -> bool:
    """Whether a file's bytes hash to the hub's ``etag``: a SHA-256 (LFS files) or a git blob SHA-1 (others).

    An ETag of neither form cannot vouch for a file: ``CorruptFileError``.
    """
    etag = etag.strip('"').removeprefix("W/").strip('"').lower()
    if _HEX64.fullmatch(etag):
        return sha256_of(path) == etag
    if _HEX40.fullmatch(etag):
        return git_blob_sha1_of(path) == etag
    raise CorruptFileError(
        _("{path}: the hub's ETag {etag!r} is neither a SHA-256 nor a git SHA-1; the file cannot be verified").format(
            path=path, etag=etag
        )
    )


def check_weight_files(folder: str | Path, arg: str) -> None:
    """``folder`` holds safetensors weights; a folder with only pickle checkpoints is ``PickleCheckpointError``."""
    folder = Path(folder)
    if any((folder / name).is_file() for name in SAFETENSORS_FILES):
        return
    pickles = sorted(p.name for p in folder.iterdir() if p.name.endswith(PICKLE_SUFFIXES))
    if pickles:
        raise PickleCheckpointError(
            _(
                "{arg}: {str_folder!r} holds its weights only as pickle checkpoints "
                "({join_pickles}); specdec_lite reads safetensors only (convert it with "
                "safetensors.torch.save_file, or save_pretrained with safe_serialization=True)"
            ).format(arg=arg, str_folder=str(folder), join_pickles=", ".join(pickles))
        )
    raise FileNotFoundError(
        _("{arg}: {str_folder!r} holds no weights ({or_join_SAFETENSORS_FILES})").format(
            arg=arg, str_folder=str(folder), or_join_SAFETENSORS_FILES=" or ".join(SAFETENSORS_FILES)
        )
    )


def check_loading_info(info: dict[str, Any], name: str, arg: str) -> None:
    """``from_pretrained``'s ``output_loading_info``: every tensor of the model read from the file, none left over."""
    missing = sorted(info.get("missing_keys", ()))
    unexpected = sorted(k for k in info.get("unexpected_keys", ()) if not k.endswith(IGNORED_UNEXPECTED))
    mismatched = sorted(str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys", ()))
    problems = [
        f"{what}: {_few(keys)}"
        for what, keys in (
            (_("missing from the weights (they would stay randomly initialised)"), missing),
            (_("in the weights but not in the model its config builds (e.g. more layers)"), unexpected),
            (_("of another shape than the config says"), mismatched),
        )
        if keys
    ]
    problems += [str(msg) for msg in info.get("error_msgs", ())]
    if problems:
        raise WeightsMismatchError(
            _("{arg}: the weights of {name!r} do not fit its config.json; tensors {problems}").format(
                arg=arg, name=name, problems="; ".join(problems)
            )
        )


def check_same_vocab(tokenizers: dict[str, Any]) -> None:
    """All ``tokenizers`` (by origin) map the same strings to the same ids, else ``ForeignTokenizerError``."""
    (first, tok), *others = tokenizers.items()
    vocab = tok.get_vocab()
    for where, other in others:
        theirs = other.get_vocab()
        if theirs != vocab:
            differ = sorted(set(vocab.items()) ^ set(theirs.items()), key=lambda kv: kv[1])
            raise ForeignTokenizerError(
                _(
                    "tokenizer_name: the tokenizer of {first} is not the one saved with {where} "
                    "({len_vocab} and {len_theirs} tokens; {len_differ} (token, id) pairs differ, e.g. "
                    "{differ_0!r})"
                ).format(
                    first=first,
                    where=where,
                    len_vocab=len(vocab),
                    len_theirs=len(theirs),
                    len_differ=len(differ),
                    differ_0=differ[0],
                )
            )


def _few(keys: Iterable[str], n: int = 4) -> str:
    keys = list(keys)
    return ", ".join(keys[:n]) + (_(" and {more} more").format(more=len(keys) - n) if len(keys) > n else "")
