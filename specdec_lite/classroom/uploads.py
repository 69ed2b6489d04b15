"""Uploads: every file of a downloads folder, read within bounds, and the student it belongs to.

A downloads folder holds one folder per student (``DOWNLOADS/<student>/<anything>``) or
files named ``<student>_<anything>``; a file belongs to the student its own folder or name
gives, whatever it holds. A zip whose name gives no student (``class.zip``, or the class
export given as DOWNLOADS) is a class export: it counts as the folder it would extract to,
and its members carry the dates the export gives them; a member of a student's own zip
carries the date of that zip, never the date written inside it.

Zips are read member by member, in 1 MiB pieces, never unpacked to disk: no member past
``Limits.member_bytes``, no download past ``Limits.total_bytes`` inflated or
``Limits.members`` files (counted from a zip's end record before its directory is read),
zips at most ``Limits.depth`` deep. Symbolic links (on disk or stored in a zip), FIFOs and
devices are listed, never opened. A file that cannot be read is a ``Download`` with its
``reason``: one damaged upload never stops the others.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

#: A student id: a plain name nbgrader can use as a folder name (matched whole, ``re.fullmatch``).
STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
_LAB_IN_NAME = re.compile(r"lab[ _-]?0?(\d{1,2})(?!\d)", re.I)
_COPY = re.compile(r"copy[ _]of[ _]", re.I)
_DUPLICATE = re.compile(r"\s*[(\[]\d+[)\]]\s*$")
_MiB = 1 << 20
#: What reading a damaged zip member can raise (bad CRC, encryption, Deflate64, a bad header, a short file).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    RuntimeError,
    NotImplementedError,
    EOFError,
    OSError,
    zlib.error,
    ValueError,
)


_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}


@dataclass(frozen=True)
class Limits:
    """Bounds on what ``collect`` reads from one download (a file in DOWNLOADS, zips inflated)."""

    member_bytes: int = 64 * _MiB
    total_bytes: int = 2048 * _MiB
    members: int = 10_000
    depth: int = 3


#: The bounds ``collect`` uses.
LIMITS = Limits()


class Refused(Exception):
    """A download ``collect`` will not read further, with the cause to list."""


def check_student(student: str) -> str:
    """``student`` if it is a plain id (``STUDENT_ID``), else a ``ValueError`` naming the problem."""
    if not isinstance(student, str) or not STUDENT_ID.fullmatch(student):
        raise ValueError(
            f"student id {student!r} is not a plain name (ASCII letters, digits and ._@+-, starting with a letter "
            "or digit, at most 64 characters)"
        )
    return student


@dataclass
class Download:
    """One file found in the downloads: its label, its student, folders and names, bytes, date.

    ``reason`` is set (and ``data`` empty) when the file could not be read.
    """

    source: str
    folders: tuple[str, ...]
    names: tuple[str, ...]
    data: bytes
    modified: float
    student: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def clean_name(name: str) -> str:
    """A download's name without its extensions, ``Copy of``, and `` (1)``-style suffixes."""
    stem = name
    while True:
        lowered = stem.lower()
        for ext in (".ipynb", ".json", ".txt", ".zip"):
            if lowered.endswith(ext):
                stem = stem[: -len(ext)]
                break
        else:
            break
    stem = _COPY.sub("", stem)
    while _DUPLICATE.search(stem):
        stem = _DUPLICATE.sub("", stem)
    return stem.strip()


def student_from_name(name: str) -> str | None:
    """The student id of a ``<student>_<anything>`` file name, or None."""
    stem = clean_name(name)
    m = _LAB_IN_NAME.search(stem)
    if m:
        head = stem[: m.start()].rstrip(" _-.")
        return head or None
    head, sep, _ = stem.partition("_")
    return head.strip() if sep and head.strip() else None


def lab_from_name(name: str, labs: list[str]) -> str | None:
    """The lab whose number the name holds (``lab03``, ``Lab 3``, ``LAB03_x``), or None."""
    m = _LAB_IN_NAME.search(clean_name(name))
    if not m:
        return None
    found = [lab for lab in labs if lab.startswith(f"lab{int(m[1]):02d}")]
    return found[0] if len(found) == 1 else None


def downloads(root: Path, limits: Limits = LIMITS) -> Iterator[Download]:
    """Every file under ``root`` (a folder, or a class export zip), zip members included, links refused.

    Each file of the folder is read within ``limits``; a file that cannot be read is yielded
    with its ``reason``. Links, FIFOs and devices are listed, never opened.
    """
    root = Path(root)
    if root.is_file():
        yield from _top(root, root.name, (), limits, export=True)
        return
    for here, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        base = Path(here)
        rel_here = base.relative_to(root).parts
        for name in sorted(dirs):
            if (base / name).is_symlink():
                yield _refused(rel_here, name, _link_reason(base / name))
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in sorted(files):
            path = base / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                yield _refused(rel_here, name, _link_reason(path))
            elif not stat.S_ISREG(info.st_mode):
                yield _refused(rel_here, name, "not a regular file (a FIFO, socket or device): not read")
            else:
                yield from _top(path, name, rel_here, limits, export=False)


def _refused(folders: tuple[str, ...], name: str, reason: str) -> Download:
    student = folders[0] if folders else student_from_name(name)
    return Download("/".join((*folders, name)), folders, (name,), b"", 0.0, student, reason)


def _link_reason(path: Path) -> str:
    try:
        to = os.readlink(path)
    except OSError:
        to = "?"
    return f"a symbolic link (to {to}): links are never followed; ask for the file itself"


def _top(path: Path, name: str, folders: tuple[str, ...], limits: Limits, export: bool) -> Iterator[Download]:
    """One file of the downloads folder (``export``: the class export zip given as DOWNLOADS)."""
    source = "/".join((*folders, name))
    student = None if export else folders[0] if folders else student_from_name(name)
    try:
        modified = path.stat().st_mtime
        budget = [limits.total_bytes, limits.members]
        zf = _open_zip(path, limits, budget)
        if zf is not None:
            with zf:
                as_export = export or (not folders and student is None)
                yield from _members(zf, source, folders, (name,), modified, student, as_export, 1, limits, budget)
            return
        size = path.stat().st_size
        if size > limits.member_bytes:
            raise Refused(
                f"too large ({size / _MiB:.0f} MiB; a notebook here is at most "
                f"{limits.member_bytes / _MiB:.0f} MiB): not read"
            )
        data = path.read_bytes()
    except Exception as err:  # one strange file never stops the class  # noqa: BLE001
        yield Download(source, folders, (name,), b"", 0.0, student, _cause(err))
        return
    yield Download(source, folders, (name,), data, modified, student)


def zip_shape(src: Path | bytes) -> tuple[int, int] | None:
    """(entries, bytes of the central directory) from a zip's end record, or None when it has none."""
    with open(src, "rb") if isinstance(src, Path) else io.BytesIO(src) as f:
        try:
            end = zipfile._EndRecData(f)  # the end record alone: read before zipfile lists every entry
        except (OSError, struct.error, ValueError):
            return None
    return (end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]) if end else None


def _open_zip(src: Path | bytes, limits: Limits, budget: list[int]) -> zipfile.ZipFile | None:
    """The zip at ``src`` (None when it is none: a PDF whose tail only looks like a zip is a file).

    Its entries are counted from its end record before zipfile reads its directory.
    """
    shape = zip_shape(src)
    if shape is None:
        return None
    entries, size = shape
    if entries > budget[1] or size > limits.members * 1024:
        raise Refused(f"a zip of {entries} entries (a download holds at most {limits.members} files): not read")
    try:
        return zipfile.ZipFile(src if isinstance(src, Path) else io.BytesIO(src))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return None


def _cause(err: BaseException) -> str:
    if isinstance(err, Refused):
        return str(err)
    if isinstance(err, NotImplementedError):
        return f"a zip member it cannot read ({err}; recompress it with the usual Deflate)"
    if isinstance(err, RuntimeError) and "encrypted" in str(err):
        return "an encrypted zip member (password-protected): ask for the file itself"
    return f"a damaged file ({type(err).__name__}: {err})"


def _members(
    zf: zipfile.ZipFile,
    source: str,
    folders: tuple[str, ...],
    names: tuple[str, ...],
    modified: float,
    student: str | None,
    export: bool,
    depth: int,
    limits: Limits,
    budget: list[int],
) -> Iterator[Download]:
    """The members of an open zip: a class export (``export``) gives each its student and date."""
    entries = zf.infolist()
    budget[1] -= len(entries)
    if budget[1] < 0:  # its end record gave a smaller count
        reason = f"a zip of {len(entries)} entries (a download holds at most {limits.members} files): not read"
        yield Download(source, folders, names, b"", 0.0, student, reason)
        return
    files = [e for e in entries if not e.is_dir()]
    if not files:
        what = "a zip holding only folders" if entries else "an empty zip"
        yield Download(source, folders, names, b"", 0.0, student, f"{what}: nothing to place")
        return
    for info in files:
        parts = tuple(p for p in info.filename.replace("\\", "/").split("/") if p not in ("", "."))
        label = f"{source}:{info.filename}"
        inner_folders = folders + parts[:-1]
        inner_names = (parts[-1] if parts else info.filename, *names)
        owner = student
        if owner is None and export:
            owner = parts[0] if len(parts) > 1 else student_from_name(inner_names[0])
        notes: list[str] = []
        when = modified
        if export:
            try:
                when = datetime(*info.date_time).timestamp()
            except (ValueError, OverflowError, OSError):
                notes.append(f"its date in the export is invalid ({info.date_time}): dated as the export")
        try:
            data = _read_member(zf, info, limits, budget)
            if zip_shape(data) is not None and depth >= limits.depth:
                raise Refused(f"zips nested more than {limits.depth} deep: not opened")
            inner = _open_zip(data, limits, budget)
            if inner is not None:
                with inner:
                    yield from _members(
                        inner, label, inner_folders, inner_names, when, owner, owner is None, depth + 1, limits, budget
                    )
                continue
        except (Refused, *_ZIP_ERRORS) as err:
            yield Download(label, inner_folders, inner_names, b"", when, owner, _cause(err), notes)
            continue
        yield Download(label, inner_folders, inner_names, data, when, owner, "", notes)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits, budget: list[int]) -> bytes:
    """A zip member's bytes, read in 1 MiB pieces and never past the bounds."""
    if stat.S_ISLNK(info.external_attr >> 16):
        raise Refused("a symbolic link stored in the zip: links are never followed")
    if info.flag_bits & 0x1:
        raise Refused("an encrypted zip member (password-protected): ask for the file itself")
    if info.compress_type not in _METHODS:
        name = zipfile.compressor_names.get(info.compress_type, "an unknown method")
        raise Refused(
            f"compressed with {name} (method {info.compress_type}), which Python cannot read: "
            "ask for it zipped with the usual Deflate, or the notebook itself"
        )
    cap = min(limits.member_bytes, budget[0])
    if info.file_size > cap:
        raise Refused(_too_big(info.file_size, limits, budget))
    out = bytearray()
    with zf.open(info) as member:
        while piece := member.read(_MiB):
            out += piece
            if len(out) > cap:
                raise Refused(_too_big(len(out), limits, budget, at_least=True))
    budget[0] -= len(out)
    return bytes(out)


def _too_big(size: int, limits: Limits, budget: list[int], at_least: bool = False) -> str:
    what = f"{'more than ' if at_least else ''}{size / _MiB:.0f} MiB"
    if size > limits.member_bytes:
        return f"inflates to {what} (a file here is at most {limits.member_bytes / _MiB:.0f} MiB): not read"
    return f"the download inflates to more than {limits.total_bytes / _MiB:.0f} MiB in all: not read"
