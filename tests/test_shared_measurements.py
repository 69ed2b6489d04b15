"""Live timings shown with the same numbers in both editions, and Chapter 8's notes in the reader's language."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from specdec_lite import _measurements
from specdec_lite._i18n import ENV as LANGUAGE_ENV
from specdec_lite.llm import gpu_notes


def _timer(calls: list[int]):
    @_measurements.shared
    def timed(pair, prompts, *, repeats: int = 1, on_run=None) -> dict[str, float]:
        calls.append(repeats)
        return {"seconds": 0.1 * len(calls)}

    return timed


PAIR = SimpleNamespace(draft_name="d", target_name="t", source="fallback", device="cpu", dtype="float32")


def test_the_english_run_records_and_the_chinese_run_replays(tmp_path, monkeypatch):
    calls: list[int] = []
    timed = _timer(calls)
    monkeypatch.setenv(_measurements.ENV, f"record:{tmp_path}")
    first = timed(PAIR, ["a"], repeats=2, on_run=print)
    again = timed(PAIR, ["a"], repeats=2, on_run=print)  # recording measures every time
    assert calls == [2, 2] and first != again
    monkeypatch.setenv(_measurements.ENV, f"replay:{tmp_path}")
    assert timed(PAIR, ["a"], repeats=2, on_run=print) == again and calls == [2, 2]  # the recorded timing
    other = SimpleNamespace(**{**vars(PAIR), "target_name": "t2"})
    timed(other, ["a"], repeats=2)  # another pair: not recorded, so measured (and stored)
    timed(PAIR, ["b"], repeats=2)  # other prompts
    assert calls == [2, 2, 2, 2]
    assert len(list(tmp_path.glob("*.pickle"))) == 3


@pytest.mark.parametrize("value", ["", "replay", "sometimes:/tmp/x"])
def test_without_a_folder_every_call_measures(tmp_path, monkeypatch, value):
    calls: list[int] = []
    timed = _timer(calls)
    monkeypatch.setenv(_measurements.ENV, value)
    timed(PAIR, ["a"])
    timed(PAIR, ["a"])
    assert calls == [1, 1]


CPU = {"device": {"type": "cpu", "name": "x86_64"}, "dtype": "float32"}
GPU = {
    "device": {"type": "cuda", "name": "NVIDIA H100"},
    "dtype": "bfloat16",
    "call_costs": {"c": 0.0812, "c_K": {"2": 1.013, "4": 1.1}},
}


def test_the_gpu_notes_in_english(monkeypatch):
    monkeypatch.delenv(LANGUAGE_ENV, raising=False)
    assert gpu_notes.results_gpu_note([CPU]) == (
        "None of the results files committed with this build was measured on a GPU, so the book makes no claim "
        "about what a verification call costs there."
    )
    assert gpu_notes.results_gpu_note([CPU, GPU]) == (
        "Measured on a GPU: NVIDIA H100, c = 0.081, c_K = 1.01 (K = 2), 1.10 (K = 4)."
    )
    assert gpu_notes.shapes_gpu_note([CPU]).startswith("Every shapes file committed with this build was measured")
    assert gpu_notes.shapes_gpu_note([GPU, CPU]) == "Measured on a GPU: NVIDIA H100 (bfloat16)."


def test_the_gpu_notes_in_chinese(monkeypatch):
    monkeypatch.setenv(LANGUAGE_ENV, "zh_CN")
    assert gpu_notes.results_gpu_note([CPU]).startswith("随本次构建提交的结果文件没有一个是在 GPU 上测得的")
    assert (
        gpu_notes.results_gpu_note([GPU])
        == "在 GPU 上测得：NVIDIA H100，c = 0.081，c_K = 1.01（K = 2）, 1.10（K = 4）。"
    )
    assert gpu_notes.shapes_gpu_note([CPU]).startswith("随本次构建提交的形状文件都是在 CPU 上测得的")
