"""Choosing, loading and describing a draft/target pair.

``load_pair()`` with no names picks automatically: on a CUDA GPU with internet
the paper's Pythia pair (``pythia-70m`` drafting for ``pythia-2.8b``; a 1b target
on GPUs under 20 GB, such as a free Colab T4), otherwise the offline pair that
:mod:`specdec_lite.llm.fallback` trains on the standard library's source. Any
other pair can be named (hub names or local folders); both go through
``from_pretrained`` with ``trust_remote_code`` off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ._hf import require_transformers, vocab_size
from .fallback import FallbackRecipe, fallback_pair_dir, read_meta

#: The paper's pair (Table 1 of Yin et al.).
PAPER_PAIR = ("EleutherAI/pythia-70m", "EleutherAI/pythia-2.8b")
#: A target that fits a free Colab GPU comfortably.
COLAB_PAIR = ("EleutherAI/pythia-70m", "EleutherAI/pythia-1b")
#: GPU memory (GiB) from which the paper's 2.8b target is chosen automatically.
PAPER_PAIR_MIN_GIB = 20.0


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``device`` if given, else CUDA, then Apple MPS, then CPU."""
    if device is not None:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(device: torch.device, dtype: torch.dtype | str | None = None) -> torch.dtype:
    """``dtype`` if given; else bfloat16 on CUDA GPUs that support it (else float16), float16 on MPS, float32 on CPU.

    Whatever the weights' dtype, the engine turns logits into probabilities in float32.
    """
    if dtype is not None:
        if isinstance(dtype, str):
            if not isinstance(getattr(torch, dtype, None), torch.dtype):
                raise ValueError(f"dtype: unknown torch dtype {dtype!r}")
            return getattr(torch, dtype)
        return dtype
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "mps":
        return torch.float16
    return torch.float32


@dataclass
class ModelPair:
    """A draft ``p`` and a target ``q`` sharing a tokenizer, ready on one device."""

    draft: Any
    target: Any
    tokenizer: Any
    draft_name: str
    target_name: str
    source: str  # "fallback" (trained here), or "hub/local" (named by the reader or chosen automatically)
    device: torch.device
    dtype: torch.dtype
    info: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """One line naming the pair, for printing next to every figure."""
        where = f"{self.device.type}, {str(self.dtype).removeprefix('torch.')}"
        if self.source == "fallback":
            return (f"offline pair trained by specdec_lite on the Python standard library: draft {self.draft_name}, "
                    f"target {self.target_name} ({where})")
        return f"draft {self.draft_name} → target {self.target_name} ({where})"

    def encode(self, text: str) -> torch.Tensor:
        """Token ids of ``text`` as a 1-D tensor on the pair's device."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError("text: encodes to no tokens")
        return torch.tensor(ids, dtype=torch.long, device=self.device)

    def decode(self, tokens: Any) -> str:
        return self.tokenizer.decode(torch.as_tensor(tokens).tolist())

    def pieces(self, tokens: Any) -> list[str]:
        """Each token decoded on its own (for showing where each came from)."""
        return [self.tokenizer.decode([t]) for t in torch.as_tensor(tokens).tolist()]


def _from_pretrained(name: str | Path, device: torch.device, dtype: torch.dtype) -> Any:
    tf = require_transformers()
    key = "dtype" if int(tf.__version__.split(".")[0]) >= 5 else "torch_dtype"
    model = tf.AutoModelForCausalLM.from_pretrained(str(name), trust_remote_code=False, **{key: dtype})
    return model.to(device).eval()


def _tokenizer(name: str | Path) -> Any:
    return require_transformers().AutoTokenizer.from_pretrained(str(name), trust_remote_code=False)


def load_named_pair(
    draft_name: str | Path,
    target_name: str | Path,
    *,
    tokenizer_name: str | Path | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    source: str = "hub/local",
) -> ModelPair:
    """Load two causal LMs by hub name or local folder (tokenizer from ``tokenizer_name`` or the target).

    Raises ``ValueError`` if their vocabularies (number of logits) differ.
    """
    dev = pick_device(device)
    dt = pick_dtype(dev, dtype)
    draft = _from_pretrained(draft_name, dev, dt)
    target = _from_pretrained(target_name, dev, dt)
    if vocab_size(draft) != vocab_size(target):
        raise ValueError(
            f"draft and target must share a vocabulary: {draft_name} outputs {vocab_size(draft)} logits, "
            f"{target_name} {vocab_size(target)}"
        )
    tokenizer = _tokenizer(tokenizer_name if tokenizer_name is not None else target_name)
    return ModelPair(draft, target, tokenizer, str(draft_name), str(target_name), source, dev, dt)


def load_fallback_pair(
    recipe: FallbackRecipe | None = None,
    *,
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    progress: bool = True,
) -> ModelPair:
    """The offline pair: trained once (cached), then loaded back with ``from_pretrained``."""
    folder = fallback_pair_dir(recipe, cache_dir, progress=progress)
    meta = read_meta(folder)
    shapes = {role: meta["recipe"][role] for role in ("draft", "target")}
    pair = load_named_pair(folder / "draft", folder / "target", tokenizer_name=folder / "tokenizer",
                           device=device, dtype=dtype, source="fallback")
    pair.draft_name, pair.target_name = (
        f"stdlib-{shapes[r]['layers']}x{shapes[r]['hidden']} ({meta[r]['parameters'] / 1e6:.1f}M params)"
        for r in ("draft", "target")
    )
    pair.info = {"folder": str(folder), **{k: v for k, v in meta.items() if k not in ("draft", "target")},
                 **{r: {k: v for k, v in meta[r].items() if k != "losses"} for r in ("draft", "target")},
                 "losses": {r: meta[r]["losses"] for r in ("draft", "target")}}
    return pair


def _hub_offline() -> bool:
    flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in flags)


def load_pair(
    draft_name: str | Path | None = None,
    target_name: str | Path | None = None,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    fallback: FallbackRecipe | None = None,
    cache_dir: str | Path | None = None,
    verbose: bool = True,
    progress: bool = True,
) -> ModelPair:
    """A draft/target pair, and a printed line saying which.

    With names: exactly that pair (errors propagate). Without: the paper's pair on
    a CUDA GPU with at least ``PAPER_PAIR_MIN_GIB`` GiB, ``COLAB_PAIR`` on a
    smaller GPU, and the offline pair when there is no GPU, the hub is
    unreachable, or ``HF_HUB_OFFLINE=1``.
    """
    if (draft_name is None) != (target_name is None):
        raise ValueError("draft_name and target_name: give both or neither")
    reason = ""
    if draft_name is not None:
        pair = load_named_pair(draft_name, target_name, device=device, dtype=dtype)
    else:
        dev = pick_device(device)
        pair = None
        if dev.type != "cuda":
            reason = f"no CUDA GPU ({dev.type})"
        elif _hub_offline():
            reason = "HF_HUB_OFFLINE is set"
        else:
            gib = torch.cuda.get_device_properties(dev).total_memory / 2**30
            names = PAPER_PAIR if gib >= PAPER_PAIR_MIN_GIB else COLAB_PAIR
            try:
                pair = load_named_pair(*names, device=dev, dtype=dtype)
            except OSError as err:  # no internet, or the hub refused
                reason = f"could not load {names[1]} from the hub ({type(err).__name__})"
        if pair is None:
            pair = load_fallback_pair(fallback, cache_dir=cache_dir, device=device, dtype=dtype, progress=progress)
    if verbose:
        print(f"Model pair: {pair.describe()}" + (f" — chosen because: {reason}" if reason else ""))
    pair.info.setdefault("reason", reason)
    return pair
