"""Measuring instruments of the benchmark: wall time, random numbers drawn, memory, exponents."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


#: The benchmark's clock: CPU time of this process. numpy runs single-threaded here (one BLAS
#: thread, see ``__main__``), so on an idle machine this is the wall time; on a shared one it
#: leaves out the time spent waiting for a core, which otherwise swamps sub-millisecond calls.
clock = time.process_time


def best_time(
    fn: Callable[[], Any], repeat: int = 3, budget: float = float("inf"), warmup: int = 0, fill: float = 0.0
) -> float:
    """Smallest time of ``repeat`` calls (seconds, by ``clock``): the least disturbed one.

    Stops repeating once the calls so far took more than ``budget`` seconds in all;
    keeps repeating (up to 200 calls) until they took ``fill`` seconds, so that cheap
    calls get many tries. ``warmup`` untimed calls come first: the first touch of
    freshly allocated memory can cost more than the computation (seen here on a
    virtual machine: about 7 ms per MiB), and the steady state is what repeated calls see.
    """
    for _ in range(warmup):
        fn()
    times: list[float] = []
    while not times or (sum(times) <= budget and (len(times) < repeat or (sum(times) < fill and len(times) < 200))):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def median_time(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Median time of ``repeat`` calls (seconds, by ``clock``): what a reader waits, typically."""
    times = []
    for _ in range(max(1, repeat)):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def _philox_words(bit_generator: np.random.Philox) -> int:
    state = bit_generator.state
    counter = state["state"]["counter"]
    # Philox draws 4 words per counter step; buffer_pos counts the words of the current step already used.
    return 4 * (int(counter[0]) + (int(counter[1]) << 64)) + int(state["buffer_pos"])


def count_uniforms(sampler: Callable[[np.random.Generator], Any]) -> int:
    """How many 64-bit random words ``sampler(rng)`` consumes (one per uniform double).

    Runs the sampler once on a Philox generator, whose state is a counter, and reads
    how far the counter moved: no change to the sampler is needed.
    """
    bit_generator = np.random.Philox(12345)
    before = _philox_words(bit_generator)
    sampler(np.random.Generator(bit_generator))
    return _philox_words(bit_generator) - before


def rng_floor(uniforms: int, repeat: int = 3) -> float:
    """Seconds to draw ``uniforms`` doubles from the default generator in one call."""
    gen = np.random.default_rng(0)
    return best_time(lambda: gen.random(max(1, uniforms)), repeat)


def fit_exponent(x: Sequence[float], seconds: Sequence[float]) -> dict[str, float]:
    """Least-squares fit of ``log seconds = a log x + b``: the exponent ``a`` and its R^2."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(seconds, float))
    if lx.size < 2:
        raise ValueError(f"x: need at least 2 points to fit an exponent, got {lx.size}")
    a, b = np.polyfit(lx, ly, 1)
    resid = ly - (a * lx + b)
    ss = float(((ly - ly.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss if ss > 0 else 1.0
    return {"exponent": float(a), "r2": r2}


def scaling(x: Sequence[float], seconds: Sequence[float], tail: int | None = None) -> dict[str, Any]:
    """Points, the exponent fitted on all of them, and on the ``tail`` largest (the asymptotic regime)."""
    out: dict[str, Any] = {"x": [float(v) for v in x], "seconds": [float(s) for s in seconds]}
    out["fit_all"] = fit_exponent(x, seconds)
    tail = tail or max(2, (len(x) + 1) // 2)
    out["fit_tail"] = {**fit_exponent(list(x)[-tail:], list(seconds)[-tail:]), "points": tail}
    return out


def peak_traced_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (tracemalloc, which numpy reports its buffers to) while ``fn`` runs."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    del result
    if not was_tracing:
        tracemalloc.stop()
    return int(peak - base)


def rss_in_subprocess(setup: str, statement: str, timeout: float = 600) -> dict[str, int]:
    """Peak resident memory of ``statement`` in a fresh interpreter, above that after ``setup``.

    Reads ``VmHWM`` (the high-water mark of resident memory) from ``/proc/self/status``,
    which starts afresh with the new process image (``ru_maxrss`` would inherit the
    parent's peak across ``exec``). The baseline is read after ``setup`` (imports,
    building the chains), so the increase is what ``statement`` needed on top.
    """
    code = (
        "import json, re\n"
        "def hwm():\n"
        "    return int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        f"{setup}\n"
        "base = hwm()\n"
        f"{statement}\n"
        "print(json.dumps({'baseline_kib': base, 'peak_kib': hwm()}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=True)
    out = {k: int(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    out["increase_bytes"] = 1024 * (out["peak_kib"] - out["baseline_kib"])
    return out


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPU, cores, memory, load, library versions, commit."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = next(
        (int(line.split()[1]) * 1024 for line in _read("/proc/meminfo").splitlines() if line.startswith("MemTotal")),
        None,
    )
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        commit = (
            subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "cpu": cpu,
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_bytes": mem,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "clock": "process CPU time (time.process_time)",
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": _version("scipy"),
        "plotly": _version("plotly"),
        "torch": _version("torch"),
        "transformers": _version("transformers"),
        "git_commit": commit,
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
