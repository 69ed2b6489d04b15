"""The thin layer between the engine and Hugging Face ``transformers``.

``transformers`` is an optional extra (``pip install transformers``), imported
only when needed. The few calls the engine makes on a model go through here, so
that version differences (the cache keyword was ``past_key_values`` before
transformers 5 and is ``cache`` since) live in one place.
"""

from __future__ import annotations

import inspect
from functools import cache
from types import ModuleType
from typing import Any

import torch

from .._i18n import _


def require_transformers() -> ModuleType:
    """Import ``transformers`` or raise an ``ImportError`` that says how to install it."""
    try:
        import transformers
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            _(
                "specdec_lite.llm needs Hugging Face transformers: `pip install transformers` (or "
                "`pip install specdec_lite[llm]`)."
            )
        ) from err
    return transformers


@cache
def _cache_keyword(model_class: type) -> str:
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def new_cache(model: Any) -> Any:
    """An empty ``DynamicCache`` for ``model`` (keys and values grow as tokens are fed)."""
    DynamicCache = require_transformers().DynamicCache
    try:
        return DynamicCache(config=model.config)
    except TypeError:  # older transformers: no config argument
        return DynamicCache()


def forward(model: Any, ids: torch.Tensor, cache: Any) -> torch.Tensor:
    """Feed ``ids`` (a 1-D tensor of new tokens) through ``model`` after the tokens in ``cache``.

    Returns the logits at every fed position as float32, shape ``(len(ids), V)``;
    ``cache`` grows by ``len(ids)`` entries.
    """
    out = model(input_ids=ids[None, :], use_cache=True, **{_cache_keyword(type(model)): cache})
    return out.logits[0].float()


def crop(cache: Any, n: int) -> None:
    """Drop the last ``n >= 0`` entries of ``cache`` (``crop(-n)`` means the same in transformers 4 and 5)."""
    if n > 0:
        cache.crop(-n)


def cache_length(cache: Any) -> int:
    return int(cache.get_seq_length())


def vocab_size(model: Any) -> int:
    """Number of logits the model outputs (rows of its output embedding)."""
    emb = model.get_output_embeddings()
    if emb is not None:
        return int(emb.weight.shape[0])
    return int(model.config.vocab_size)


#: Config attributes that hold a model's context length, by architecture family.
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")


def context_length(model: Any) -> int | None:
    """Most positions ``model`` was built for (its config's ``max_position_embeddings`` or kin); None if unknown."""
    for key in _CONTEXT_KEYS:
        value = getattr(model.config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def input_vocab_size(model: Any) -> int:
    """Number of token ids ``model`` can read (rows of its input embedding)."""
    return int(model.get_input_embeddings().weight.shape[0])


def model_device(model: Any) -> torch.device:
    return next(model.parameters()).device
