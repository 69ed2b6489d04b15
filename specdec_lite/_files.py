"""Output paths of the commands, checked up front: a file that cannot be written fails before the work, not after."""

from __future__ import annotations

import tempfile
from pathlib import Path


def writable_folder(folder: str | Path, arg: str) -> Path:
    """``folder``, created if missing, after writing (and deleting) a probe file in it; else a ``PermissionError``
    naming ``arg``."""
    path = Path(folder).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise PermissionError(f"{arg}: cannot write in {str(folder)!r} ({err.strerror or err})") from None
    return path


def writable_file(file: str | Path, arg: str) -> Path:
    """``file`` (not a folder), whose folder is created if missing and :func:`writable_folder`."""
    path = Path(file).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{arg}: {str(file)!r} is a folder; expected a file name")
    writable_folder(path.parent, arg)
    return path
