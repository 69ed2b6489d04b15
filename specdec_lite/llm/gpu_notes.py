"""What Chapter 8 says about the devices of the measurement files committed with the book.

Chapter 8 shows every results file (``measure_pair``) and every shapes file (``shapes``) under
``benchmarks/real_models/``; these sentences say which of them, if any, were measured on a GPU,
in the reader's language (``specdec_lite._i18n``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._i18n import _


def _on_gpu(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [res for res in results if res["device"]["type"] == "cuda"]


def results_gpu_note(results: Sequence[Mapping[str, Any]]) -> str:
    """One sentence: the call costs of the results files measured on a GPU, or that none was."""
    gpu = _on_gpu(results)
    if not gpu:
        return _(
            "None of the results files committed with this build was measured on a GPU, so the book makes no "
            "claim about what a verification call costs there."
        )
    files = "; ".join(
        _("{device}, c = {c:.3f}, c_K = {c_K}").format(
            device=res["device"]["name"],
            c=res["call_costs"]["c"],
            c_K=", ".join(_("{c_K:.2f} (K = {K})").format(c_K=v, K=k) for k, v in res["call_costs"]["c_K"].items()),
        )
        for res in gpu
    )
    return _("Measured on a GPU: {files}.").format(files=files)


def shapes_gpu_note(results: Sequence[Mapping[str, Any]]) -> str:
    """One sentence: the GPUs (and dtypes) of the shapes files measured on one, or that all were on a CPU."""
    gpu = _on_gpu(results)
    if not gpu:
        return _(
            "Every shapes file committed with this build was measured on a CPU, so the tables and the figure show "
            "CPU costs only; on a GPU the command writes a file of its own, and it appears here at the next build."
        )
    files = ", ".join(_("{device} ({dtype})").format(device=res["device"]["name"], dtype=res["dtype"]) for res in gpu)
    return _("Measured on a GPU: {files}.").format(files=files)
