"""A small Lab 1 class graded once per test session by the real nbgrader, in the real sandbox.

``graded_class()`` builds a course directory (Lab 1's master, ``generate_assignment``, a
roster), places one notebook per student in ``submitted/``, runs
``python -m specdec_lite.classroom autograde --jobs 1`` (nbgrader, student by student, each kernel
in bubblewrap), then ``report`` and ``nbgrader export``. The students:

* ``attacker``: stubs, and a cell that tries every access the sandbox denies (read the
  master and the course directory, write the gradebook, rewrite a classmate's submission,
  open sockets, leave processes running, allocate 8 GiB) and prints what happened;
* ``cheater``: untouched stubs below ``ast_node_interactivity = "all"``, a planted answer
  cache and forged outcomes;
* ``honest``: right answers that log to stderr, the check cell of exercise 1 deleted, the
  cells of exercise 2 stripped of their nbgrader metadata and its check cell pasted twice;
* ``broken``: a file that is not a notebook (graded first after the attacker: the others
  are graded all the same);
* ``tabulator``: both functions answer from a table of the checks' public instances, computed
  before the checks run (the checks also grade instances drawn while they run);
* ``crasher``: right marginals, and a ``tv`` cell that ends its kernel (``os._exit(1)``);
* ``printer``: right answers, and a cell that prints 3 MiB (the grader keeps 1 MiB of it);
* ``evader``: right marginals, and a ``tv`` that calls a second copy of the package imported
  before the check (what no in-process lock stops: ``report`` lists it for review).

Shared by ``test_grading_sandbox.py``, ``test_grading_scores.py`` and ``test_grading_parallel.py`` (which grades
the same submissions many at a time and compares) (one run for both, whichever workers run
them: ``tests/shared_once.py``).
"""

from __future__ import annotations

import copy
import csv
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat

from specdec_lite import classroom

from .shared_once import once

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab01_markov_chains"
STUDENTS = ("attacker", "broken", "cheater", "crasher", "evader", "honest", "printer", "tabulator")
#: A token in the command line of the processes the attacker leaves behind (none may survive grading).
NONCE = "86399.31415"


def _master() -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / "source" / LAB / f"{LAB}.ipynb", as_version=4)


def _index(nb: nbformat.NotebookNode, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def attack_code(course: Path, port: int) -> str:
    """A cell that tries each denied access and prints ``name: ALLOWED`` or ``name: DENIED (error)``."""
    gradebook, master = course / "gradebook.db", course / "source" / LAB / f"{LAB}.ipynb"
    victim = course / "submitted" / "honest" / LAB / f"{LAB}.ipynb"
    return f'''
import os, socket, subprocess, sqlite3, sys
def attempt(name, fn):
    try:
        fn()
        print(f"{{name}}: ALLOWED", flush=True)
    except BaseException as e:
        print(f"{{name}}: DENIED ({{type(e).__name__}})", flush=True)
def _write_gradebook():
    db = sqlite3.connect({str(gradebook)!r})
    db.execute("UPDATE grade SET auto_score = 99")
    db.commit()
def _rewrite_classmate():
    with open({str(victim)!r}, "w") as f:
        f.write("{{}}")
def _socket():
    socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"sandbox escaped")
attempt("read the master", lambda: open({str(master)!r}).read())
attempt("list the course", lambda: os.listdir({str(course)!r}))
attempt("write the gradebook", _write_gradebook)
attempt("rewrite a classmate", _rewrite_classmate)
attempt("open a socket", _socket)
attempt("reach the internet", lambda: socket.create_connection(("1.1.1.1", 53), timeout=3))
attempt("allocate 8 GiB", lambda: bytearray(8 << 30))
subprocess.Popen(["sleep", "{NONCE}"], start_new_session=True)
_detach = "import os\\nif os.fork() == 0:\\n    os.setsid()\\n    os.execvp('sleep', ['sleep', '{NONCE}'])"
subprocess.Popen([sys.executable, "-c", _detach])
import resource
print("uid:", os.getuid())
_names = ("CPU", "AS", "NPROC", "FSIZE", "NOFILE")
print("limits:", {{n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))[0] for n in _names}})
'''


#: Untouched stubs below a setting that shows every line's value, a planted answer cache, forged outcomes.
CHEAT = """
from IPython.core.interactiveshell import InteractiveShell
InteractiveShell.ast_node_interactivity = "all"
import sys
import specdec_lite.exercises.feedback as _fb
from specdec_lite.exercises.feedback import OUTCOME
from specdec_lite.exercises import part1 as _p1
def _plant(event, args):
    if event == "import" and args[0].startswith("specdec_lite.exercises"):
        for name in ("_LAST", "_CACHE"):
            try:
                getattr(_fb, name)[:] = [(_p1.check_marginals, (marginals,), {}, _fb.correct("planted"))]
            except Exception:
                pass
sys.addaudithook(_plant)
def _forge(result):
    from IPython.display import display
    for check in ("check_marginals", "check_tv"):
        display({"text/plain": "Correct.", OUTCOME: {"check": check, "ok": True}}, raw=True)
get_ipython().events.register("post_run_cell", _forge)
"""

#: A right answer that logs on stderr while the check runs it.
LOGGING_TV = """def tv(p, q):
    logging.info("tv called with %d tokens", len(p))
    return 0.5 * np.abs(p - q).sum()


import logging
logging.basicConfig(level=logging.INFO, force=True)"""


#: Answers looked up in a table of the checks' public instances, computed outside the checks (where the
#: package's functions are not switched off); a flat guess elsewhere.
TABULATED_MARGINALS = """import numpy as np
import specdec_lite as _sd
from specdec_lite.exercises import part1 as _p1
_public = _sd.MarkovChain.random(3, 4, rng=7, uniform_init=False)
_want = [_public.init]
for _P in _public.trans:
    _want.append(_want[-1] @ _P)
_want = np.array(_want)
def marginals(chain):
    if np.array_equal(chain.trans, _public.trans) and np.array_equal(chain.init, _public.init):
        return _want
    return np.full((chain.T, chain.V), 1 / chain.V)"""
TABULATED_TV = """_table = {(p.tobytes(), q.tobytes()): float(_sd.tv(p, q)) for p, q in _p1._cases()}
def tv(p, q):
    return _table.get((np.asarray(p).tobytes(), np.asarray(q).tobytes()), 0.25)"""

#: The package imported a second time, before the check runs: its copy of the lock holds nothing.
SECOND_IMPORT = """import sys
_saved = {k: v for k, v in sys.modules.items() if k.startswith("specdec_lite")}
for _k in _saved:
    del sys.modules[_k]
import specdec_lite as _copy
sys.modules.update(_saved)
def tv(p, q):
    return _copy.tv(p, q)"""


def notebooks() -> dict[str, nbformat.NotebookNode]:
    """The submitted notebook of each student (the attacker's needs the course path and a port: filled later)."""
    master = _master()
    released = nbformat.read(ROOT / "notebooks" / f"{LAB}.ipynb", as_version=4)
    cheater = copy.deepcopy(released)
    cheater.cells.insert(3, nbformat.v4.new_code_cell(CHEAT))
    honest = copy.deepcopy(master)
    honest.cells[_index(honest, "tv")].source = LOGGING_TV
    del honest.cells[_index(honest, "check_marginals")]
    for gid in ("marginals", "explore_q1"):
        honest.cells[_index(honest, gid)].metadata.pop("nbgrader")
    pasted = copy.deepcopy(honest.cells[_index(honest, "check_tv")])
    pasted.id = "pasted-check"
    honest.cells.insert(_index(honest, "check_tv") + 1, pasted)  # the check cell pasted twice, metadata and all
    tabulator = copy.deepcopy(released)
    tabulator.cells[_index(tabulator, "marginals")].source = TABULATED_MARGINALS
    tabulator.cells[_index(tabulator, "tv")].source = TABULATED_TV
    crasher = copy.deepcopy(master)
    crasher.cells[_index(crasher, "tv")].source = "import os\nos._exit(1)"
    printer = copy.deepcopy(master)
    printer.cells.insert(3, nbformat.v4.new_code_cell('print("x" * (3 << 20))'))
    evader = copy.deepcopy(master)
    evader.cells[_index(evader, "tv")].source = SECOND_IMPORT
    return {
        "cheater": cheater,
        "honest": honest,
        "attacker": copy.deepcopy(released),
        "tabulator": tabulator,
        "evader": evader,
        "crasher": crasher,
        "printer": printer,
    }


class _Listener:
    """A TCP server on the host's 127.0.0.1 that records whatever connects."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                self.received.append(conn.recv(100) or b"(connected)")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=classroom.nbgrader_env(), capture_output=True, text=True, timeout=1200)


def survivors() -> list[str]:
    """Command lines of running processes that carry ``NONCE``."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if NONCE in line and "pytest" not in line:
                found.append(f"{proc.name}: {line}")
    return found


@functools.cache
def graded_class() -> dict:
    """Grade the class once (for every worker of the run); the course, each command's output, the export and
    what the host saw."""
    return once("grading-class", _graded_class)


def _graded_class() -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="specdec-grading-class-"))
    course = tmp / "notebooks"
    (course / "source").mkdir(parents=True)
    shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)
    (course / "roster.csv").write_text(
        "id,first_name,last_name,email\n" + "".join(f"{s},{s},Student,{s}@example.org\n" for s in STUDENTS)
    )
    out = {"course": course, "runs": {}}
    nbg = [sys.executable, "-m", "nbgrader"]
    out["runs"]["generate"] = _run([*nbg, "generate_assignment", LAB, "--force"], course)
    out["runs"]["roster"] = _run([*nbg, "db", "student", "import", "roster.csv"], course)
    listener = _Listener()
    try:
        nbs = notebooks()
        nbs["attacker"].cells.insert(3, nbformat.v4.new_code_cell(attack_code(course, listener.port)))
        for student, nb in nbs.items():
            folder = course / "submitted" / student / LAB
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{LAB}.ipynb")
        (course / "submitted" / "broken" / LAB).mkdir(parents=True)
        (course / "submitted" / "broken" / LAB / f"{LAB}.ipynb").write_text('{"cells": [ not json')
        out["honest_submitted"] = (course / "submitted" / "honest" / LAB / f"{LAB}.ipynb").read_bytes()
        out["master_bytes"] = (course / "source" / LAB / f"{LAB}.ipynb").read_bytes()
        out["runs"]["autograde"] = _run(
            [sys.executable, "-m", "specdec_lite.classroom", "autograde", LAB, "--jobs", "1"], course
        )
        out["survivors"] = survivors()
        out["received"] = list(listener.received)
    finally:
        listener.close()
    out["runs"]["report"] = _run([sys.executable, "-m", "specdec_lite.classroom", "report", LAB], course)
    out["runs"]["export"] = _run([*nbg, "export", "--to", "grades.csv"], course)
    with (course / "grades.csv").open() as f:
        out["scores"] = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    return out


def autograded(student: str) -> nbformat.NotebookNode:
    return nbformat.read(graded_class()["course"] / "autograded" / student / LAB / f"{LAB}.ipynb", as_version=4)


def record(student: str) -> dict:
    return json.loads((graded_class()["course"] / "autograded" / student / LAB / ".grading.json").read_text())


def text_of(nb: nbformat.NotebookNode) -> str:
    """Every text output of the notebook, joined."""
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            parts.append(o.get("text", "") or o.get("data", {}).get("text/plain", "") or o.get("evalue", ""))
    return "\n".join(parts)


def report_lines(student: str) -> list[str]:
    text = graded_class()["runs"]["report"].stdout
    return [ln for ln in text.splitlines() if ln.startswith(f"{LAB}  {student}: ")]


if __name__ == "__main__":  # a manual run: python -m tests.grading_class
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    res = graded_class()
    for name, proc in res["runs"].items():
        print(f"--- {name} (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    print("scores", res["scores"], "survivors", res["survivors"], "received", res["received"])
    print(text_of(autograded("attacker"))[-3000:])
    print(res["course"])
