"""Fetching a model repository from the Hugging Face hub, every file checked against the hub's hash.

``fetch(repo_id)`` downloads (or finds in huggingface_hub's cache) the files a model
and its tokenizer need, never a pickle checkpoint, and returns the local snapshot
folder that ``from_pretrained`` then reads with no further call to the hub. The cache
keeps each file under the ETag the hub sent for it (``blobs/<etag>``): the SHA-256 of
an LFS file, the git blob SHA-1 of a small one. A file whose bytes do not hash to its
ETag (a damaged download, a flipped bit on disk, a garbled header) is deleted, with a
line on stderr, and fetched once more; if it is still wrong (or there is no hub to
fetch it from) it is deleted again and ``CorruptFileError`` says which.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .._i18n import _
from .integrity import PICKLE_SUFFIXES, SAFETENSORS_FILES, CorruptFileError, PickleCheckpointError, matches_etag

#: The files fetched from a repository: configs, safetensors weights, tokenizer files (no pickles, no other formats).
FETCH_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.jinja"]


def fetch(repo_id: str) -> Path:
    """The local snapshot folder of ``repo_id`` with every fetched file verified against the hub's ETag."""
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(repo_id, allow_patterns=FETCH_PATTERNS))
    bad = [name for name in _files(folder) if not _verified(repo_id, folder, name)]
    for name in bad:
        print(
            _("specdec_lite: {repo_id}/{name} does not match the hub's hash; discarded, fetching it again").format(
                repo_id=repo_id, name=name
            ),
            file=sys.stderr,
            flush=True,
        )
        _discard(folder / name)
    still_bad = []
    for name in bad:
        try:
            _refetch(repo_id, folder.name, name)
        except Exception as err:  # offline, or the hub refused: the file stays discarded
            raise CorruptFileError(
                _(
                    "{repo_id}/{name}: the cached file did not match the hub's hash and was deleted; "
                    "fetching it again failed ({type_err_name}: {err})"
                ).format(repo_id=repo_id, name=name, type_err_name=type(err).__name__, err=err)
            ) from err
        if not _verified(repo_id, folder, name):
            _discard(folder / name)
            still_bad.append(name)
    if still_bad:
        raise CorruptFileError(
            _(
                "{repo_id}: {join_still_bad} did not match the hub's hash, nor did it when fetched "
                "again (a damaged connection or mirror?); deleted, nothing of it is cached"
            ).format(repo_id=repo_id, join_still_bad=", ".join(still_bad))
        )
    if not any((folder / name).exists() for name in SAFETENSORS_FILES):
        _refuse_pickles(repo_id, folder.name)
    return folder


def _refuse_pickles(repo_id: str, revision: str) -> None:
    """``PickleCheckpointError`` if the repository's weights are pickles only (they were not fetched)."""
    from huggingface_hub import HfApi

    try:
        names = HfApi().list_repo_files(repo_id, revision=revision)
    except Exception:  # offline: from_pretrained then says which weights file is missing
        return
    if pickles := sorted(n for n in names if n.endswith(PICKLE_SUFFIXES)):
        raise PickleCheckpointError(
            _(
                "{repo_id} on the hub has its weights only as pickle checkpoints ({join_pickles}); "
                "specdec_lite reads safetensors only and did not download them"
            ).format(repo_id=repo_id, join_pickles=", ".join(pickles))
        )


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def _verified(repo_id: str, folder: Path, name: str) -> bool:
    """Whether ``folder/name`` hashes to the ETag the hub gave it (the cached blob's name, else asked of the hub)."""
    path = folder / name
    if not path.exists():  # a dangling link: its blob is gone
        return False
    if path.is_symlink():
        etag = path.resolve().name
    else:  # a cache without symbolic links keeps no ETag: ask the hub
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        try:
            etag = get_hf_file_metadata(hf_hub_url(repo_id, name, revision=folder.name)).etag or ""
        except Exception as err:
            raise CorruptFileError(
                _(
                    "{repo_id}/{name}: cannot verify (the cache records no ETag and the hub did not "
                    "answer: {type_err_name})"
                ).format(repo_id=repo_id, name=name, type_err_name=type(err).__name__)
            ) from err
    return matches_etag(path, etag)


def _discard(path: Path) -> None:
    """Delete a snapshot file and the blob it links to (a blob under an ETag it does not match is never kept)."""
    if path.is_symlink():
        path.resolve().unlink(missing_ok=True)
    path.unlink(missing_ok=True)


def _refetch(repo_id: str, revision: str, name: str) -> None:
    from huggingface_hub import hf_hub_download

    hf_hub_download(repo_id, name, revision=revision, force_download=True)
