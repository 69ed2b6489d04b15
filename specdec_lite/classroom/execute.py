"""nbgrader's Execute step, made to survive a cell that never ends or a kernel that dies.

nbgrader's autograde runs a submission in one kernel; when a cell runs past its timeout
or the kernel exits (``os._exit(1)``, a crash), nbclient raises and nbgrader drops the
whole submission: no autograded notebook, no feedback, a 0 in the export. ``GradingExecute``
takes its place in ``notebooks/nbgrader_config.py``. It runs the cells one by one with the
lab's per-cell timeout (``timeouts.CELL_TIMEOUT_S``, chosen per notebook from nbgrader's
resources, so one ``nbgrader autograde`` run may mix labs) and, when a cell fails that way:

1. records the failure as the cell's error output (``CellTimeoutError`` or
   ``DeadKernelError``, with what happened), so nbgrader scores a graded cell 0 and
   ``report`` finds it;
2. starts a fresh kernel and runs again, silently, every earlier cell that did not fail
   (their outputs stay as recorded), so the kernel holds what it held before the failure;
   a cell is run once more that way (``retries``) before it counts as failed, since on a
   loaded machine a kernel can stall, idle, while the client waits for its reply;
3. goes on with the next cell. The student keeps the points of every cell before and
   after the failure that passes.

Every kernel runs in the sandbox of ``sandbox`` (``sandbox = "bwrap"``, the default); on a
machine where it cannot run, grading refuses to start unless ``sandbox = "off"`` is set
explicitly (``autograde --unsandboxed``). What the cells output is bounded as it arrives
(``outputs``: per output, per cell and per notebook; a message over ``max_message_bytes`` is
refused unread), so no print fills the grader's memory, the autograded notebook or the feedback.
Each graded notebook's folder gets a record of how it was run, ``.grading.json`` (``RECORD``:
the sandbox, the output limits and what was cut, the grader's peak memory), which ``report`` reads.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import time
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellExecutionComplete, CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict, Enum, Float, Integer

from . import outputs as _outputs
from . import sandbox as _sandbox
from .kernel import PatientKernelManager
from .timeouts import CELL_TIMEOUT_S, cell_timeout

#: The ``ename`` of the error output written into a cell that ran past its timeout.
TIMEOUT = "CellTimeoutError"
#: The ``ename`` of the error output written into a cell during which the kernel died.
DIED = "DeadKernelError"

#: The ``ename`` of the error output of a cell left unrun after ``max_failures`` failed cells.
NOT_RUN = "CellNotRunError"

#: The environment variable that tells a kernel its notebook is graded (``specdec_lite.llm.budget.GRADED_VARIABLE``,
#: not imported from there: that package imports torch).
GRADED_VARIABLE = "SPECDEC_LITE_GRADED"

#: The record of how a notebook was graded, next to it in ``autograded/<student>/<lab>/``.
RECORD = ".grading.json"

#: What nbclient raises when a cell cannot finish (a timeout, a dead or unresponsive kernel).
_FAILURES = (CellTimeoutError, DeadKernelError, TimeoutError, RuntimeError)


def _since(start: float) -> float:
    return time.perf_counter() - start


def failure_output(ename: str, evalue: str) -> NotebookNode:
    """An error output as a kernel writes it, so nbgrader and the feedback treat it as an error."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class GradingExecute(Execute):
    """Execute each cell with the lab's timeout; a timeout or a dead kernel fails that cell only."""

    lab_timeouts = Dict(
        default_value=dict(CELL_TIMEOUT_S),
        help="Per-cell timeout in seconds of each lab (assignment id); other labs get `timeout`.",
    ).tag(config=True)

    interrupt_on_timeout = Bool(False, help="A timed-out cell's kernel is replaced, never interrupted.").tag(
        config=True
    )

    shutdown_kernel = Enum(
        ["graceful", "immediate"],
        default_value="immediate",
        help="A graded notebook's kernel is killed when its last cell has run (the sandbox ends every process it"
        " started): a polite shutdown request costs a third of a second per submission for nothing kept.",
    ).tag(config=True)

    probe_after_s = Float(
        0.5,
        help="After a refused message, seconds without a message of the cell before the grader asks the kernel"
        " whether the cell is over (a kernel_info request, answered once it is).",
    ).tag(config=True)

    max_probes = Integer(8, help="Requests of the kind above sent during one cell at most.").tag(config=True)

    measurements = Enum(
        ["smallest", "full"],
        default_value="smallest",
        help="smallest: the kernel's environment says the notebook is graded (specdec_lite.llm.budget.graded), so"
        " a lab's measurement section, on which no score depends, runs its smallest plan; full: at the lab's budget.",
    ).tag(config=True)

    retries = Integer(
        1,
        help="A cell that times out or loses its kernel runs again this many times, in a fresh kernel, before it fails"
        " (a kernel can stall without computing on a loaded machine; an endless loop fails again).",
    ).tag(config=True)

    max_failures = Integer(8, help="After this many failed cells, the remaining cells are not run.").tag(config=True)

    sandbox = Enum(
        ["bwrap", "off"],
        default_value="bwrap",
        help="bwrap: each kernel in the sandbox of specdec_lite.classroom.sandbox (grading refuses to start where it "
        "cannot run); off: students' code runs with the grader's rights (the report says so).",
    ).tag(config=True)

    cpu_per_cell_limit = Integer(
        30, help="A kernel's CPU seconds (all threads) are limited to this many times the lab's cell limit."
    ).tag(config=True)

    max_output_bytes = Integer(
        _outputs.Limits.output, help="Bytes kept of one output (a stream's text, a display); the rest is cut."
    ).tag(config=True)
    max_cell_output_bytes = Integer(_outputs.Limits.cell, help="Bytes kept of one cell's outputs.").tag(config=True)
    max_notebook_output_bytes = Integer(
        _outputs.Limits.notebook, help="Bytes kept of a notebook's outputs (all cells)."
    ).tag(config=True)
    max_message_bytes = Integer(
        _outputs.Limits.message, help="A message from the kernel larger than this is refused unread."
    ).tag(config=True)

    _told = False  # the sandbox's statement is logged once per process
    _replaying = False  # cells run again silently in a fresh kernel: their outputs are thrown away
    _refused_seen = 0  # messages the current client's sockets had refused when the current cell started

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # a missed reply costs seconds, not the cell limit (see ``kernel``); nbgrader's Execute sets its own manager
        kwargs.setdefault("kernel_manager_class", PatientKernelManager)
        super().__init__(*args, **kwargs)
        self._iopub_raise = self.raise_on_iopub_timeout  # as configured; off for a cell that lost a message
        if self.sandbox == "bwrap":
            _sandbox.require()
            if self.kernel_manager_class is PatientKernelManager:
                self.kernel_manager_class = _sandbox.SandboxedKernelManager

    def limits(self) -> _sandbox.Limits:
        """The sandbox's limits for the notebook being run (CPU time from its lab's cell limit)."""
        return _sandbox.Limits(cpu_s=max(60, int(self.cpu_per_cell_limit * (self.timeout or 60))))

    def output_limits(self) -> _outputs.Limits:
        """What the grader keeps of the outputs (this run's configuration)."""
        return _outputs.Limits(
            self.max_output_bytes, self.max_cell_output_bytes, self.max_notebook_output_bytes, self.max_message_bytes
        )

    def create_kernel_manager(self) -> Any:
        km = super().create_kernel_manager()
        if isinstance(km, _sandbox.SandboxedKernelManager):
            km.limits = self.limits()
        if isinstance(km, PatientKernelManager):
            km.max_message_bytes = self.max_message_bytes
        return km

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        self._refused_seen = self._refused()
        for channel in (kc.iopub_channel, kc.shell_channel):
            channel.on_refused = self._on_refused
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # nbclient binds the sync names to its own

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        """nbclient's, with ``GRADED_VARIABLE`` in the kernel's environment unless ``measurements`` is full."""
        env = dict(kwargs.pop("env", None) or os.environ)
        env.pop(GRADED_VARIABLE, None)
        if self.measurements == "smallest":
            env[GRADED_VARIABLE] = "1"
        await super().async_start_new_kernel(env=env, **kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)

    def _on_refused(self) -> None:
        # the refused message's connection took the cell's last messages (its idle status) with it
        self.raise_on_iopub_timeout = False

    def _refused(self) -> int:
        """Messages the client's sockets refused so far."""
        if self.kc is None:
            return 0
        return sum(getattr(ch, "refused", 0) for ch in (self.kc.iopub_channel, self.kc.shell_channel))

    def _budget_now(self) -> _outputs.OutputBudget:
        if getattr(self, "_budget", None) is None:
            self._budget = _outputs.OutputBudget(self.output_limits())
        return self._budget

    async def async_execute_cell(self, cell: NotebookNode, cell_index: int, *args: Any, **kw: Any) -> NotebookNode:
        """nbclient's, with the output limits: the cell's budget starts afresh, what was cut is said at its end."""
        budget = self._budget_now()
        budget.start_cell()
        self.raise_on_iopub_timeout = self._iopub_raise
        try:
            cell = await super().async_execute_cell(cell, cell_index, *args, **kw)
        finally:
            refused, self._refused_seen = self._refused() - self._refused_seen, self._refused()
            if not self._replaying:
                budget.refused(cell_index, refused)
                for out in cell.get("outputs", []):  # streams are joined at the end of a cell
                    if out.get("output_type") == "stream" and _outputs.size(out.get("text", "")) > budget.limits.output:
                        budget.add_cut(cell_index, _outputs.fit(out, budget.limits.output))
                notice = budget.notice(cell_index)
                if notice is not None:
                    cell.outputs.append(notice)
        return cell

    execute_cell = run_sync(async_execute_cell)

    def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> NotebookNode | None:
        """nbclient's, keeping each output within the limits (``outputs.OutputBudget``)."""
        budget, keep = self._budget_now(), not self._replaying
        parent = msg["parent_header"].get("msg_id")
        if self.output_hook_stack[parent]:  # an Output widget's capture: kept in the widget's state
            if not budget.take_bytes(_outputs.size(msg.get("content")), cell_index, keep):
                return None
            return super().output(outs, msg, display_id, cell_index)
        out = super().output(outs, msg, display_id, cell_index)
        if out is not None and outs and outs[-1] is out and not budget.take(out, cell_index, keep):
            outs.pop()
            return None
        return out

    async def _async_poll_output_msg(self, parent_msg_id: str, cell: NotebookNode, cell_index: int) -> None:
        """nbclient's, which also ends once the kernel answers a request sent after a refused message.

        A refused message drops its connection and the messages behind it, the cell's last one (its idle status)
        among them, and nbclient then waits ``iopub_timeout`` (4 s) for that status after the cell's reply. The
        kernel handles its requests in order and publishes a status for each, so once it has published one for a
        ``kernel_info`` request sent after the refusal, every message of the cell has arrived or was lost: the
        cell is over. Without a refusal this is nbclient's loop."""
        assert self.kc is not None
        probes: set[str] = set()
        while True:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=self.probe_after_s))
            except Empty:
                if self._refused() > self._refused_seen and len(probes) < self.max_probes:
                    probes.add(self.kc.kernel_info())
                continue
            parent = msg["parent_header"].get("msg_id")
            if parent in probes:
                return
            if parent == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)  # raises CellExecutionComplete at the idle status
                except CellExecutionComplete:
                    return

    def process_message(self, msg: dict, cell: NotebookNode, cell_index: int) -> NotebookNode | None:
        """nbclient's; a display's update and a widget's messages count against the cell's limits too."""
        kind = msg.get("msg_type", "")
        if kind == "update_display_data" or kind.startswith("comm"):
            budget = self._budget_now()
            n = _outputs.size(msg.get("content")) + sum(len(b) for b in msg.get("buffers") or [])
            if not budget.take_bytes(n, cell_index, not self._replaying):
                return None
            if kind == "update_display_data" and isinstance(msg["content"].get("data"), dict):
                cut = _outputs.fit(NotebookNode(data=msg["content"]["data"]), budget.limits.output)
                if cut:
                    budget.add_cut(cell_index, cut)
        return super().process_message(msg, cell, cell_index)

    def statement(self) -> list[str]:
        """What this run's kernels can and cannot reach."""
        return _sandbox.statement(self.limits(), sandboxed=self.sandbox == "bwrap")

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None) -> tuple[NotebookNode, Any]:
        """Run ``nb`` cell by cell; see the module's docstring for what happens on a failure."""
        from nbclient import NotebookClient

        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        lab = (resources or {}).get("nbgrader", {}).get("assignment")
        if lab in self.lab_timeouts or self.timeout is None:
            self.timeout = cell_timeout(lab, self.lab_timeouts)
        if not GradingExecute._told:
            for line in self.statement():
                (self.log.warning if self.sandbox == "off" else self.log.info)("%s", line)
            GradingExecute._told = True
        failed: set[int] = set()
        self._budget = _outputs.OutputBudget(self.output_limits())
        with self.setup_kernel():
            self._kernel_info()
            for index, cell in enumerate(self.nb.cells):
                if cell.cell_type != "code":
                    continue
                if len(failed) >= self.max_failures:
                    cell.outputs = [
                        failure_output(NOT_RUN, "not run: too many cells of this notebook failed before it")
                    ]
                    continue
                for attempt in range(1 + self.retries):
                    start = time.perf_counter()
                    try:
                        self.preprocess_cell(cell, resources, index)
                    except _FAILURES as err:
                        self.log.warning(
                            "cell %d failed after %.1f s (attempt %d): %s", index, _since(start), attempt + 1, err
                        )
                        self._fresh_kernel(index, failed)  # stops the old kernel and what still listens to it
                        if attempt == self.retries:
                            failed.add(index)
                            self._record(cell, err)
                    else:
                        self.log.info("cell %d ran in %.2f s", index, _since(start))
                        break
        self.set_widgets_metadata()
        self._write_record(resources)
        return self.nb, self.resources

    def _write_record(self, resources: Any) -> None:
        folder = (resources or {}).get("metadata", {}).get("path")
        if not folder or not Path(folder).is_dir():
            return
        record = {"sandbox": self.sandbox, "statement": self.statement(), "outputs": self._budget_now().record()}
        # the grader's own peak resident memory (Linux reports KiB), whatever the cells printed
        record["grader_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        (Path(folder) / RECORD).write_text(json.dumps(record, indent=1) + "\n")

    def _kernel_info(self) -> None:
        assert self.kc is not None
        info = self.wait_for_reply(self.kc.kernel_info())
        assert info is not None
        self.nb.metadata["language_info"] = info["content"]["language_info"]

    def _record(self, cell: NotebookNode, err: BaseException) -> None:
        if isinstance(err, TimeoutError):  # CellTimeoutError is one
            ename, evalue = TIMEOUT, f"this cell ran longer than {self.timeout} s and was stopped"
        else:
            ename, evalue = DIED, f"the kernel died (exited or crashed) while this cell ran: {err}"
        self.log.error("cell %s: %s", cell.get("id", "?"), evalue)
        cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
        cell.outputs.append(failure_output(ename, evalue + "; the cells after it ran in a fresh kernel"))

    def _fresh_kernel(self, upto: int, failed: set[int]) -> None:
        """A new kernel that has run, again, every code cell before ``upto`` not in ``failed``."""
        while True:
            try:
                self.shutdown_kernel = "immediate"  # a looping or dead kernel would not answer a polite request
                self._cleanup_kernel()
            except Exception as err:  # a dead kernel may refuse a clean shutdown
                self.log.warning("while stopping the kernel: %s", err)
                self.km = self.kc = None
            self.km = self.create_kernel_manager()
            self.start_new_kernel()
            self.start_new_kernel_client()
            self._kernel_info()
            self._replaying = True
            try:
                for j, cell in enumerate(self.nb.cells[:upto]):
                    if cell.cell_type != "code" or j in failed:
                        continue
                    try:
                        self.execute_cell(copy.deepcopy(cell), j, store_history=False)
                    except _FAILURES as err:  # it passed before, failed now: leave it out and start again
                        self.log.error("cell %d failed when run again (%s); leaving it out", j, err)
                        failed.add(j)
                        break
                else:
                    return
            finally:
                self._replaying = False
