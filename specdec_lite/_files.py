"""Output paths of the commands, checked up front: a file that cannot be written fails before the work, not after."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ._i18n import _


def writable_folder(folder: str | Path, arg: str) -> Path:
    """``folder``, after writing (and deleting) a probe file in it, or in the nearest folder above it that exists
    (where the missing ones would be created); else a ``PermissionError`` naming ``arg``. Nothing is left behind."""
    path = Path(folder).expanduser()
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise NotADirectoryError(20, f"{str(probe)!r} is a file")
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as err:
        raise PermissionError(
            _("{arg}: cannot write in {str_folder!r} ({err_strerror_or_err})").format(
                arg=arg, str_folder=str(folder), err_strerror_or_err=err.strerror or err
            )
        ) from None
    return path


def writable_file(file: str | Path, arg: str) -> Path:
    """``file`` (not a folder), whose folder is created if missing and :func:`writable_folder`."""
    path = Path(file).expanduser()
    if path.is_dir():
        raise IsADirectoryError(
            _("{arg}: {str_file!r} is a folder; expected a file name").format(arg=arg, str_file=str(file))
        )
    writable_folder(path.parent, arg)
    return path
