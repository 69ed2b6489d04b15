"""Each graded notebook's kernel in a sandbox built from bubblewrap, setpriv and prlimit.

A student's notebook is code the grader did not write. ``SandboxedKernelManager`` (the
kernel manager of ``execute.GradingExecute``) starts each kernel as::

    prlimit --cpu --as --nproc --fsize --nofile --core -- bwrap <namespaces and mounts> \
        [setpriv --reuid 65534 ...] python -m ipykernel_launcher -f <connection file>

* ``bwrap`` (Debian's ``bubblewrap``) gives the kernel its own mount, PID, network, IPC
  and UTS namespaces. Its file system is built from nothing: the system (``/usr``,
  ``/etc``), Python and the ``specdec_lite`` package, read-only; a private writable home
  ``/home/student`` and ``/tmp`` (tmpfs of ``Limits.scratch_bytes`` each) holding a
  read-only copy of the one notebook being graded; and the folder of the kernel's IPC
  sockets, through which it talks to the grader (``transport="ipc"``: its network
  namespace has only its own loopback). The course directory (``source/``,
  ``release/``, ``submitted/``, ``autograded/``, ``feedback/``, ``gradebook.db``) is not
  in it at all.
* Run as root (CI), the kernel drops to ``Limits.uid`` (``nobody``) with ``setpriv`` and
  no capabilities; run as a normal user, it keeps that user's id inside a user namespace.
* ``prlimit`` limits CPU seconds, address space, processes (per uid: enforced for the
  dedicated uid only), file size and open files. ``--die-with-parent`` and the PID
  namespace end every process the notebook started when its kernel ends.

``missing()`` says why the sandbox cannot run here (no ``bwrap``, user namespaces refused,
...); ``statement()`` says, in plain words, what is isolated and what is not.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .kernel import PatientKernelManager

#: The kernel's home and working folder inside the sandbox.
HOME = "/home/student"
#: The uid and gid a kernel runs as when the grader is root (``nobody`` on Debian).
NOBODY = 65534
#: Environment variables that reach the kernel (everything else, tokens and keys included, stays outside).
_ENV_KEEP = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONHASHSEED",
    "MPLBACKEND",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "SPECDEC_LITE_GRADED",
)  # llm.budget.GRADED_VARIABLE: set by the grader
_ENV_PREFIXES = ("JPY_", "NBGRADER_", "SPECDEC_LITE_LOCKED")
#: Files of the kernel's folder larger than this are not copied into the sandbox.
_MAX_COPIED = 64 << 20


@dataclass(frozen=True)
class Limits:
    """What one sandboxed kernel may use (``prlimit`` and the tmpfs sizes)."""

    cpu_s: int = 1800  #: CPU seconds, all threads together (SIGKILL past it)
    memory_bytes: int = 6 << 30  #: address space of each process (torch alone reserves ~0.7 GiB)
    processes: int = 512  #: processes and threads of the sandbox's uid (as root only, see ``statement``)
    file_bytes: int = 256 << 20  #: the largest file it may write
    scratch_bytes: int = 512 << 20  #: size of each of its two writable folders (home, /tmp), in memory
    open_files: int = 1024
    uid: int = NOBODY  #: the uid (and gid) it runs as when the grader is root


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run on this machine; the message says why and what to do."""


def _as_root() -> bool:
    return os.geteuid() == 0


def _python_paths(kernel_python: str | None = None) -> list[Path]:
    """Folders of the interpreter and its packages, bound read-only (outside ``/usr``)."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sysconfig.get_paths()["stdlib"])}
    found |= {Path(p) for p in site.getsitepackages()}
    if site.ENABLE_USER_SITE and Path(site.getusersitepackages()).is_dir():
        found.add(Path(site.getusersitepackages()))
    if kernel_python:
        found.add(Path(kernel_python).parent.parent)
    keep = sorted(p for p in found if p.is_dir() and not _under(p, Path("/usr")))
    return [p for p in keep if not any(q != p and _under(p, q) for q in keep)]


def _under(p: Path, root: Path) -> bool:
    try:
        p.relative_to(root)
    except ValueError:
        return False
    return True


def package_dir() -> Path:
    """The folder of the ``specdec_lite`` package the labs import (bound read-only)."""
    import specdec_lite

    return Path(specdec_lite.__file__).resolve().parent


def _read_only_extras() -> list[Path]:
    """Caches of models the labs load (read-only when present): the package's fallback pair, Hugging Face's."""
    out = []
    for var, default in (("SPECDEC_LITE_CACHE", "~/.cache/specdec_lite"), ("HF_HOME", "~/.cache/huggingface")):
        path = Path(os.environ.get(var) or default).expanduser()
        if path.is_dir():
            out.append(path.resolve())
    return out


class _Args(list):
    """bwrap arguments, creating each missing parent folder world-readable before a bind."""

    def __init__(self) -> None:
        super().__init__()
        self.made: set[str] = {"/"}

    def parents(self, dest: Path) -> None:
        for parent in reversed(dest.parents):
            if str(parent) not in self.made:
                self += ["--perms", "0755", "--dir", str(parent)]
                self.made.add(str(parent))

    def bind(self, src: Path, dest: Path | None = None, ro: bool = True) -> None:
        dest = dest or src
        self.parents(dest)
        self += ["--ro-bind" if ro else "--bind", str(src), str(dest)]
        self.made.add(str(dest))


def visible(kernel_python: str | None = None) -> list[Path]:
    """What the kernel sees of the host's folders beside the system's, read-only: Python, its packages,
    ``specdec_lite`` (an editable install's source folder) and the model caches, wherever they live."""
    return _python_paths(kernel_python) + [package_dir()] + _read_only_extras()


def wrap(
    cmd: list[str],
    *,
    files: list[Path],
    ipc_dir: Path,
    env: dict[str, str],
    limits: Limits = Limits(),
    hidden: Sequence[Path] = (),
) -> list[str]:
    """The command that runs ``cmd`` (a kernel) in the sandbox; ``files`` appear read-only in its home.

    ``hidden``: folders the kernel must not see (the course directory); a folder it must see that holds one
    raises :class:`SandboxUnavailable` rather than show it."""
    pkg = package_dir()
    hidden = [Path(h).resolve() for h in hidden]
    a = _Args()
    a += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    a += [] if _as_root() else ["--unshare-user"]
    a += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    a.bind(Path("/usr"))
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            a += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            a.bind(path)
    a.bind(Path("/etc"))
    a += ["--dev", "/dev", "--proc", "/proc"]
    # the private folders first, then what the kernel must see bound over them: Python, its packages and
    # specdec_lite may live under /tmp or a home folder (a clone and a venv in /tmp, an editable install)
    for tmp in (HOME, "/tmp"):
        a.parents(Path(tmp))
        a += ["--perms", "1777", "--size", str(limits.scratch_bytes), "--tmpfs", tmp]
        a.made.add(tmp)
    for path in visible(cmd[0]):
        if any(_under(h, path) for h in hidden):
            raise SandboxUnavailable(
                f"{path} (Python or a package the kernel needs) holds {next(h for h in hidden if _under(h, path))}, "
                "which the kernel must not see: install Python and specdec_lite outside the course directory"
            )
        a.bind(path)
    for f in files:
        a += ["--ro-bind", str(f), f"{HOME}/{f.name}"]
    a.bind(ipc_dir, ro=False)
    a += ["--chdir", HOME, "--clearenv"]
    keep = {k: v for k, v in env.items() if k in _ENV_KEEP or k.startswith(_ENV_PREFIXES)}
    keep |= {
        "HOME": HOME,
        "TMPDIR": "/tmp",
        "PATH": os.pathsep.join([str(Path(cmd[0]).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "PYTHONPATH": str(pkg.parent),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": keep.get("MPLBACKEND", "agg"),
        "SPECDEC_LITE_CACHE": str(_read_only_extras()[0]) if _read_only_extras() else f"{HOME}/.cache/specdec_lite",
    }
    for k, v in sorted(keep.items()):
        a += ["--setenv", k, v]
    inner = list(cmd)
    if _as_root():
        a += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        uid = str(limits.uid)
        inner = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--no-new-privs",
            "--",
        ] + inner
    lim = [
        f"--cpu={limits.cpu_s}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        "--core=0",
    ]
    lim += [f"--nproc={limits.processes}"] if _as_root() else []
    return [shutil.which("prlimit") or "prlimit", *lim, "--", shutil.which("bwrap") or "bwrap", *a, *inner]


@functools.cache
def missing() -> str | None:
    """Why the sandbox cannot run here, or None when a sandboxed ``python -c`` works."""
    tools = ["bwrap", "prlimit"] + (["setpriv"] if _as_root() else [])
    absent = [t for t in tools if shutil.which(t) is None]
    if absent:
        return f"{', '.join(absent)} not found (Debian/Ubuntu: apt-get install bubblewrap util-linux)"
    with tempfile.TemporaryDirectory(prefix="specdec-sandbox-probe-") as tmp:
        ipc = Path(tmp) / "ipc"
        ipc.mkdir()
        # Python without site (no .pth file runs) checks that the sandbox starts, drops to its uid and sees the
        # package; importing it (NumPy) would add a third of a second to every graded submission
        init = package_dir() / "__init__.py"
        probe = f"import os; assert os.path.isfile({str(init)!r}), 'specdec_lite not visible'; print(os.getuid())"
        cmd = wrap([sys.executable, "-S", "-c", probe], files=[], ipc_dir=ipc, env={})
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return f"bwrap could not start a sandbox here ({proc.stderr.strip()[-300:] or proc.returncode})"
    return None


def require() -> None:
    """Raise :class:`SandboxUnavailable` when ``missing()``."""
    why = missing()
    if why:
        raise SandboxUnavailable(
            f"the grading sandbox cannot run: {why}. Install bubblewrap (and allow unprivileged user "
            "namespaces), or grade without isolation with `python -m specdec_lite.classroom autograde --unsandboxed` "
            "(students' code then runs with your rights; the report says so)."
        )


def statement(limits: Limits = Limits(), sandboxed: bool = True) -> list[str]:
    """What a graded kernel can and cannot reach, in plain words (printed at the start of a run)."""
    if not sandboxed:
        return [
            "NOT SANDBOXED: each student's code runs with your rights: it can read the masters and other "
            "submissions, write the gradebook, open network connections and leave processes running.",
        ]
    who = f"uid {limits.uid} (no capabilities)" if _as_root() else f"your own uid ({os.getuid()}), in a user namespace"
    gib, mib = 1 << 30, 1 << 20
    return [
        f"sandboxed (bubblewrap): each notebook's kernel runs as {who}, in its own mount, PID, network, IPC "
        "and UTS namespaces;",
        f"  it sees: the system (/usr, /etc), Python and specdec_lite read-only; its own notebook (a read-only "
        f"copy) in {HOME} and /tmp, writable, {limits.scratch_bytes // mib} MiB each, in memory; the folder of its "
        "IPC sockets;",
        "  it does not see: the course directory (source/, release/, submitted/, autograded/, feedback/, "
        "gradebook.db), other students' files, your home; it has no network (only its own loopback);",
        f"  limits: {limits.cpu_s} s of CPU, {limits.memory_bytes / gib:g} GiB of address space per process, "
        f"files of {limits.file_bytes // mib} MiB, {limits.open_files} open files, "
        + (f"{limits.processes} processes and threads" if _as_root() else "processes not limited (not root)")
        + "; every process it started ends with its kernel;",
        "  not isolated: the CPU time it takes from other work (within its limits), and what the student's code "
        "does inside its own kernel (it can still fool the checks in-process: `report` lists what it saw).",
    ]


class SandboxedKernelManager(PatientKernelManager):
    """A kernel manager that starts each kernel in the sandbox, talking to it over IPC sockets."""

    limits: Limits = Limits()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._run_dir = Path(tempfile.mkdtemp(prefix="specdec-kernel-"))
        ipc = self._run_dir / "ipc"
        ipc.mkdir()
        if _as_root():
            os.chown(ipc, self.limits.uid, self.limits.uid)
        self.transport = "ipc"
        self.connection_file = str(ipc / "kernel.json")
        self.ip = str(ipc / "k")

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        if _as_root():
            os.chown(self.connection_file, self.limits.uid, self.limits.uid)
        files = self._copy_files(Path(kw.get("cwd") or os.getcwd()))
        kw["cwd"] = str(self._run_dir)
        cmd = wrap(
            kernel_cmd,
            files=files,
            ipc_dir=Path(self.connection_file).parent,
            env=kw.get("env") or {},
            limits=self.limits,
            hidden=[Path.cwd()],
        )  # nbgrader runs in the course directory
        await super()._async_launch_kernel(cmd, **kw)

    def _copy_files(self, folder: Path) -> list[Path]:
        """Copies of the notebooks (and small plain files) of the kernel's folder, readable by the sandbox."""
        out = self._run_dir / "files"
        out.mkdir(exist_ok=True)
        copied = []
        for f in sorted(folder.iterdir()) if folder.is_dir() else []:
            if f.name.startswith(".") or not f.is_file() or f.is_symlink() or f.stat().st_size > _MAX_COPIED:
                continue
            shutil.copyfile(f, out / f.name)
            (out / f.name).chmod(0o444)
            copied.append(out / f.name)
        out.chmod(0o755)
        return copied

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._run_dir, ignore_errors=True)


#: The committed measurement of the sandbox's cost (``benchmarks/grading_sandbox.py`` writes it).
SANDBOX_RUNS = Path(__file__).resolve().parents[2] / "benchmarks" / "grading_sandbox.json"


def sandbox_runs(path: Path = SANDBOX_RUNS) -> dict[str, Any]:
    """A class graded on Lab 1 with and without the sandbox: seconds of each, per student, the machine."""
    import json

    return json.loads(Path(path).read_text())
