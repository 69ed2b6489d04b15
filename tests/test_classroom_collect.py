"""``collect`` and the classroom command line under hostile uploads, with real zips and real subprocesses.

* A class whose uploads include every malformed kind a real class produced (bad CRC, DOS dates of 0
  and 62 seconds, an encrypted member, Deflate64, a PDF with a zip-like tail, 1,200 nested zips, damaged
  notebooks, a 300-character folder, empty and folder-only zips) is collected in one run: the good
  notebooks are placed, every other upload has a NOT PLACED line with its cause, and the log is written.
* Bounds: a 250 KiB zip of 256 MiB of zeros is refused under a 512 MiB address-space cap.
* Links are never followed; student ids are plain names; wrong paths and arguments are one-line
  errors with exit status 2.
* A file belongs to the student its own name gives; dates come from the download, never from inside a
  student's zip; reruns never replace a newer submission with an older one; ``report`` names a submitted
  file that changed after collection.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from specdec_lite.classroom import collect as col

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab03_rejections"
MASTER = ROOT / "notebooks" / "source" / LAB / f"{LAB}.ipynb"
NB = MASTER.read_bytes()


def run(*args: str) -> subprocess.CompletedProcess:
    """``python -m specdec_lite.classroom ARGS`` as an instructor runs it."""
    (proc,) = run_all([args])
    return proc


def run_all(commands: list[tuple[str, ...]]) -> list[subprocess.CompletedProcess]:
    """Several ``python -m specdec_lite.classroom`` command lines, run side by side."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    started = [
        (
            args,
            subprocess.Popen(
                [sys.executable, "-m", "specdec_lite.classroom", *args],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for args in commands
    ]
    done = []
    for args, proc in started:
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def make_course(tmp: Path) -> Path:
    course = tmp / "course"
    (course / "source").mkdir(parents=True)
    shutil.copytree(MASTER.parent, course / "source" / LAB)
    return course


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_STORED, date=(2026, 1, 2, 3, 4, 6)) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, date), data)
    return buffer.getvalue()


def patch_central(data: bytes, offset: int, fmt: str, value: int, local_offset: int | None = None) -> bytes:
    """Set a field of every central directory entry (and of every local header when ``local_offset``)."""
    out = bytearray(data)
    for sig, where in ((b"PK\x01\x02", offset), (b"PK\x03\x04", local_offset)):
        if where is None:
            continue
        i = out.find(sig)
        while i >= 0:
            struct.pack_into(fmt, out, i + where, value)
            i = out.find(sig, i + 4)
    return bytes(out)


def bad_crc() -> bytes:
    data = zip_bytes({f"{LAB}.ipynb": NB})
    i = data.find(b'"cells"')  # a byte of the stored notebook itself
    return data[:i] + b"X" + data[i + 1 :]


def nested(levels: int) -> bytes:
    data = NB
    for k in range(levels):
        data = zip_bytes({f"level{k}.zip" if k else f"{LAB}.ipynb": data})
    return data


def pdf_with_zip_tail() -> bytes:
    eocd = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, 46, 9, 0)
    return b"%PDF-1.4\n% a printout of the notebook\n" + b"0" * 200 + eocd


def damaged_notebook(kind: str) -> bytes:
    nb = json.loads(NB)
    if kind == "nbgrader":
        next(c for c in nb["cells"] if "nbgrader" in c["metadata"])["metadata"]["nbgrader"] = "graded"
    else:
        next(c for c in nb["cells"] if c["cell_type"] == "markdown")["source"] = 42
    return json.dumps(nb).encode()


def write(path: Path, data: bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def hostile_class(dl: Path) -> dict[str, str]:
    """Every malformed upload beside good ones; ``{source: expected cause}`` (None: placed)."""
    write(dl / "good" / f"{LAB}.ipynb", NB)
    write(dl / "crc" / f"{LAB}.zip", bad_crc())
    write(dl / "class.zip", patch_central(zip_bytes({f"zero/{LAB}.ipynb": NB, f"late/{LAB}.ipynb": NB}), 14, "<H", 0))
    write(dl / "export62.zip", patch_central(zip_bytes({f"sec62/{LAB}.ipynb": NB}), 12, "<H", 31))
    write(dl / "locked" / f"{LAB}.zip", patch_central(zip_bytes({f"{LAB}.ipynb": NB}), 8, "<H", 1, local_offset=6))
    write(dl / "d64" / f"{LAB}.zip", patch_central(zip_bytes({f"{LAB}.ipynb": NB}), 10, "<H", 9, local_offset=8))
    write(dl / "pdf" / f"{LAB}.pdf", pdf_with_zip_tail())
    write(dl / "nest" / f"{LAB}.zip", nested(1200))
    write(dl / "meta" / f"{LAB}.ipynb", damaged_notebook("nbgrader"))
    write(dl / "md" / f"{LAB}.ipynb", damaged_notebook("markdown"))
    write(dl / "long.zip", zip_bytes({f"{'x' * 300}/{LAB}.ipynb": NB}))
    write(dl / "empty_lab03.zip", zip_bytes({}))
    write(dl / "folders_lab03.zip", zip_bytes({"a/": b"", "a/b/": b""}))
    write(dl / "two" / "inner.zip", zip_bytes({f"{LAB}.ipynb": NB}))  # a student's own zip: placed
    return {
        f"good/{LAB}.ipynb": None,
        f"class.zip:zero/{LAB}.ipynb": None,
        f"class.zip:late/{LAB}.ipynb": None,
        f"export62.zip:sec62/{LAB}.ipynb": None,
        f"two/inner.zip:{LAB}.ipynb": None,
        f"crc/{LAB}.zip:{LAB}.ipynb": "a damaged file (BadZipFile: Bad CRC-32",
        f"locked/{LAB}.zip:{LAB}.ipynb": "an encrypted zip member",
        f"d64/{LAB}.zip:{LAB}.ipynb": "compressed with deflate64 (method 9), which Python cannot read",
        f"pdf/{LAB}.pdf": "not a notebook",
        f"nest/{LAB}.zip:level1199.zip:level1198.zip:level1197.zip": "zips nested more than 3 deep",
        f"meta/{LAB}.ipynb": "a damaged notebook (cell ",
        f"md/{LAB}.ipynb": "a damaged notebook (the source of cell 1 is not text)",
        f"long.zip:{'x' * 300}/{LAB}.ipynb": "is not a plain name",
        "empty_lab03.zip": "an empty zip: nothing to place",
        "folders_lab03.zip": "a zip holding only folders: nothing to place",
    }


def listing(stdout: str) -> dict[str, str]:
    """``{source: line}`` of collect's output."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("placed   "):
            out[line[9:].split(" -> ")[0]] = line
        elif line.startswith("NOT PLACED "):
            out[line[11:].split(": ")[0]] = line
    return out


@pytest.mark.slow
def test_one_malformed_upload_never_stops_the_class(tmp_path):
    """Every upload of a hostile class ends in the listing, placed or with its cause; the log is written."""
    course, dl = make_course(tmp_path), tmp_path / "dl"
    expected = hostile_class(dl)
    proc = run("collect", str(dl), "--course", str(course))
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    lines = listing(proc.stdout)
    assert set(lines) == set(expected), sorted(set(lines) ^ set(expected))
    for source, cause in expected.items():
        if cause is None:
            assert lines[source].startswith("placed   "), lines[source]
        else:
            assert lines[source].startswith(f"NOT PLACED {source}: ") and cause in lines[source], lines[source]
    assert "5 placed, 10 not placed" in proc.stdout
    for student in ("good", "zero", "late", "sec62", "two"):
        assert (course / "submitted" / student / LAB / f"{LAB}.ipynb").read_bytes() == NB
    assert "its date in the export is invalid" in lines[f"class.zip:zero/{LAB}.ipynb"]
    assert "its date in the export is invalid" in lines[f"export62.zip:sec62/{LAB}.ipynb"]
    logged = {o.source for o in col.logged(course)}
    assert logged == set(expected), "the log records every upload"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == [
        ".collect.json",
        "good",
        "late",
        "sec62",
        "two",
        "zero",
    ], "nothing else written"


@pytest.mark.slow
def test_bounds_refuse_a_zip_bomb_under_a_memory_cap(tmp_path):
    """250 KiB of zip, 256 MiB of zeros: refused by the member bound, in a process capped at 512 MiB."""
    course, dl = make_course(tmp_path), tmp_path / "dl"
    (dl / "bomb").mkdir(parents=True)
    with zipfile.ZipFile(dl / "bomb" / f"{LAB}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open(f"{LAB}.ipynb", "w", force_zip64=True) as member:
            zeros = bytes(1 << 20)
            for _ in range(256):
                member.write(zeros)
    assert (dl / "bomb" / f"{LAB}.zip").stat().st_size < 300 * 1024
    write(dl / "good" / f"{LAB}.ipynb", NB)
    cap = 512 << 20
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))\n"
        "from specdec_lite.classroom.cli import main\n"
        f"raise SystemExit(main(['collect', {str(dl)!r}, '--course', {str(course)!r}]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr[-2000:]
    line = listing(proc.stdout)[f"bomb/{LAB}.zip:{LAB}.ipynb"]
    assert "inflates to 256 MiB (a file here is at most 64 MiB): not read" in line, line
    assert (course / "submitted" / "good" / LAB / f"{LAB}.ipynb").is_file()


def test_bounds_on_total_size_member_count_and_plain_files(tmp_path):
    """Small limits through the API: a member past the total, too many entries, a file too large on disk."""
    course, dl = make_course(tmp_path), tmp_path / "dl"
    write(dl / "many" / "lab03.zip", zip_bytes({f"n{k}.txt": b"x" for k in range(30)}))
    write(dl / "total" / "lab03.zip", zip_bytes({"a.txt": b"a" * 3000, "b.txt": b"b" * 3000}))
    write(dl / "big" / f"{LAB}.ipynb", NB + b" " * 10_000)
    limits = col.Limits(member_bytes=len(NB) + 5000, total_bytes=5000, members=20, depth=2)
    found = {o.source: o.reason for o in col.collect(dl, course, limits=limits)}
    assert found["many/lab03.zip"].startswith("a zip of 30 entries (a download holds at most 20 files)")
    assert found["total/lab03.zip:a.txt"].startswith("not a notebook")
    assert found["total/lab03.zip:b.txt"].startswith("the download inflates to more than")
    assert found[f"big/{LAB}.ipynb"].startswith("too large")


def test_links_are_never_followed(tmp_path):
    """Links to the master, to a classmate's file, a linked folder, a link in a zip, a FIFO: refused, listed."""
    course, dl = make_course(tmp_path), tmp_path / "dl"
    write(dl / "honest" / f"{LAB}.ipynb", NB)
    (dl / "cheat").mkdir()
    (dl / "cheat" / f"{LAB}.ipynb").symlink_to(course / "source" / LAB / f"{LAB}.ipynb")
    (dl / "copier").mkdir()
    (dl / "copier" / f"{LAB}.ipynb").symlink_to(dl / "honest" / f"{LAB}.ipynb")
    (dl / "linkdir").symlink_to(dl / "honest", target_is_directory=True)
    (dl / "fifo").mkdir()
    os.mkfifo(dl / "fifo" / f"{LAB}.ipynb")  # reading it would wait for ever
    info = zipfile.ZipInfo(f"{LAB}.ipynb")
    info.external_attr = 0o120777 << 16
    with zipfile.ZipFile(dl / "zlink_lab03.zip", "w") as zf:
        zf.writestr(info, str(course / "source" / LAB / f"{LAB}.ipynb"))
    found = {o.source: o for o in col.collect(dl, course)}
    assert found[f"honest/{LAB}.ipynb"].target
    for source in (f"cheat/{LAB}.ipynb", f"copier/{LAB}.ipynb", "linkdir"):
        assert found[source].target is None and "a symbolic link" in found[source].reason, found[source]
    assert "not a regular file (a FIFO" in found[f"fifo/{LAB}.ipynb"].reason
    assert "a symbolic link stored in the zip" in found[f"zlink_lab03.zip:{LAB}.ipynb"].reason
    assert sorted(p.name for p in (course / "submitted").iterdir()) == [".collect.json", "honest"]
    # a link planted in submitted/ is never written through
    (course / "submitted" / "victim").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    write(dl / "victim" / f"{LAB}.ipynb", NB)
    found = {o.source: o for o in col.collect(dl, course)}
    assert "is a symbolic link: not written" in found[f"victim/{LAB}.ipynb"].reason
    assert not (tmp_path / "elsewhere").exists()


def test_student_ids_are_plain_names(tmp_path):
    for good in ("jane", "jane.doe@uni.edu", "a-b+c_1"):
        assert col.check_student(good) == good
    for bad in ("../../etc", "jane\n", "", ".hidden", "a/b", "x" * 65, "zoë", "jane doe"):
        with pytest.raises(ValueError, match="is not a plain name"):
            col.check_student(bad)
    course, dl = make_course(tmp_path), tmp_path / "dl"
    write(dl / "jane\n" / f"{LAB}.ipynb", NB)
    write(dl / "class.zip", zip_bytes({f"../../etc/{LAB}.ipynb": NB, f"ok/{LAB}.ipynb": NB}))
    found = {o.source: o for o in col.collect(dl, course)}
    assert "is not a plain name" in found[f"jane\n/{LAB}.ipynb"].reason
    assert col.describe(found[f"jane\n/{LAB}.ipynb"]).startswith(f"NOT PLACED jane\\n/{LAB}.ipynb: "), "one line"
    assert "is not a plain name" in found[f"class.zip:../../etc/{LAB}.ipynb"].reason
    assert found[f"class.zip:ok/{LAB}.ipynb"].target == f"submitted/ok/{LAB}/{LAB}.ipynb"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == [".collect.json", "ok"]


@pytest.mark.slow
def test_wrong_paths_and_arguments_are_one_line_errors(tmp_path):
    """Real command lines: exit 2 and one line naming the problem, never a traceback or "0 placed".

    The class export zip itself is accepted as DOWNLOADS: its folders name the students, its own name none.
    """
    course, export_course = make_course(tmp_path), make_course(tmp_path / "export")
    (tmp_path / "empty").mkdir()
    write(tmp_path / "notes.txt", b"hello")
    write(tmp_path / "class_export.zip", zip_bytes({f"ann/{LAB}.ipynb": NB, f"bob_{LAB}.ipynb": NB}))
    cases = [
        (("collect", str(tmp_path / "nope")), "does not exist"),
        (("collect", str(tmp_path / "empty")), "is empty"),
        (("collect", str(tmp_path / "notes.txt")), "is a file but not a zip"),
        (("collect", str(tmp_path / "empty"), "--lab", "lab99"), "no lab named 'lab99'"),
        (("report", "lab99"), "no lab named 'lab99'"),
        (("autograde", LAB, "--student", "../../etc", "--force"), "--student: student id '../../etc' is not a plain"),
        (("autograde", "--student", "jane\n"), "is not a plain name"),
        (("autograde", LAB, "--jobs", "0"), "--jobs: grade at least one submission at a time"),
        (("release", "nope"), "no lab named 'nope'"),
    ]
    commands = [(*args, "--course", str(course)) for args, _ in cases]
    commands += [("--course", str(tmp_path / "nowhere"), "report"), ("--course", str(tmp_path), "report")]
    commands += [("collect", str(tmp_path / "class_export.zip"), "--course", str(export_course))]
    *errors, nowhere, not_course, export = run_all(commands)
    for (args, message), proc in zip(cases, errors, strict=True):
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not proc.stdout, proc.stdout
    assert nowhere.returncode == 2 and nowhere.stderr.strip().endswith("is not a folder"), nowhere.stderr
    assert not_course.returncode == 2 and "is not an nbgrader course directory" in not_course.stderr, not_course.stderr
    assert not (course / "submitted").exists() and not (course / "gradebook.db").exists(), "no work was done"
    assert export.returncode == 0 and "2 placed, 0 not placed" in export.stdout, export.stdout + export.stderr
    placed = {p.parent.parent.name for p in (export_course / "submitted").glob(f"*/{LAB}/{LAB}.ipynb")}
    assert placed == {"ann", "bob"}


def test_a_file_belongs_to_the_student_its_name_gives(tmp_path):
    """A flat export: alice's zip holding ``bob/<lab>.ipynb`` dated in the future is alice's, dated as her zip."""
    course, dl = make_course(tmp_path), tmp_path / "dl"
    now = time.time()
    write(dl / f"bob_{LAB}.ipynb", NB, mtime=now - 3600)
    stub = NB.replace(b'"cells"', b'"cells" ', 1)
    attack = write(
        dl / f"alice_{LAB}.zip", zip_bytes({f"bob/{LAB}.ipynb": stub}, date=(2099, 1, 1, 0, 0, 0)), mtime=now - 7200
    )
    found = {o.source: o for o in col.collect(dl, course)}
    assert (course / "submitted" / "bob" / LAB / f"{LAB}.ipynb").read_bytes() == NB, "bob's own file stays"
    theirs = found[f"alice_{LAB}.zip:bob/{LAB}.ipynb"]
    assert theirs.student == "alice" and theirs.target == f"submitted/alice/{LAB}/{LAB}.ipynb"
    assert theirs.modified == attack.stat().st_mtime, "dated as the download, not as inside the zip"
    log = col.logged(course)
    for out in log:
        assert out.sha256 == hashlib.sha256((course / out.target).read_bytes()).hexdigest()


@pytest.mark.slow
def test_reruns_keep_the_newest_and_report_changes(tmp_path):
    """An older download never replaces a newer one; a newer one does, with a note; report sees tampering."""
    course = make_course(tmp_path)
    now = time.time()
    newer = NB.replace(b'"cells"', b'"cells" ', 1)
    write(tmp_path / "new" / "jane" / f"{LAB}.ipynb", newer, mtime=now - 100)
    write(tmp_path / "old" / "jane" / f"Copy of {LAB}.ipynb", NB, mtime=now - 1000)
    write(tmp_path / "newest" / "jane" / f"{LAB} (1).ipynb", NB, mtime=now - 10)
    target = course / "submitted" / "jane" / LAB / f"{LAB}.ipynb"
    col.collect(tmp_path / "new", course)
    (out,) = col.collect(tmp_path / "old", course)
    assert out.target is None and out.reason.startswith("older (") and "delete that file" in out.reason
    assert target.read_bytes() == newer
    (out,) = col.collect(tmp_path / "newest", course)
    assert out.target and target.read_bytes() == NB
    assert any(n.startswith(f"replaced submitted/jane/{LAB}/{LAB}.ipynb, collected before from") for n in out.notes)
    assert [o.source for o in col.changed_after_collect(course)] == []
    target.write_bytes(newer)  # changed after collection (a kernel or a hand wrote it)
    proc = run("report", LAB, "--course", str(course))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{LAB}  jane: ")]
    assert f"{LAB}  jane: submitted/jane/{LAB}/{LAB}.ipynb changed after it was collected from " in proc.stdout
    (older,) = [ln for ln in lines if "not placed" in ln]
    assert f"download jane/Copy of {LAB}.ipynb not placed: older (" in older, "the older download is listed once"


def test_a_damaged_record_never_stops_collect(tmp_path):
    course, dl = make_course(tmp_path), tmp_path / "dl"
    write(course / "submitted" / ".collect.json", b"{not json")
    write(dl / "jane" / f"{LAB}.ipynb", NB)
    found = col.collect(dl, course)
    assert [o.target for o in found][0] == f"submitted/jane/{LAB}/{LAB}.ipynb"
    assert "record of earlier runs was unreadable" in found[-1].reason
    assert (course / "submitted" / ".collect.json.unreadable").read_bytes() == b"{not json"
    assert [o.source for o in col.logged(course)] == [f"jane/{LAB}.ipynb"]
