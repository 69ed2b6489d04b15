"""Real models: placeholder until the engine's model pair lands."""

from __future__ import annotations

from typing import Any


def llm_section(sizes: Any, log: Any) -> dict[str, Any]:
    note = "specdec_lite.llm has no model pair to benchmark yet"
    log(f"  llm: skipped ({note})")
    return {"skipped": note}
