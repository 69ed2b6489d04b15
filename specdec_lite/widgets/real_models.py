"""Lab 8 explorer: one speculative run of a real model pair, position by position.

``generation_update(pair, prompt)`` returns ``update(K, eps, seed)``, which runs
``speculative_generate`` once and draws ``figures.real_models.generation_figure``
(TV per position, coloured accepted / rejected / bonus). Needs torch and
transformers, imported only when this module is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._i18n import _
from ..figures.real_models import generation_figure
from .core import explorer


def generation_update(
    pair: Any, prompt: str, *, max_new_tokens: int = 32, temperature: float = 1.0
) -> Callable[..., Any]:
    """The explorer's update function for ``pair`` and ``prompt``."""
    from ..llm import speculative_generate

    ids = pair.encode(prompt)
    label = pair.describe()

    def update(K: int = 4, eps: float = 0.0, seed: int = 0) -> Any:
        res = speculative_generate(
            pair.draft,
            pair.target,
            ids,
            max_new_tokens,
            lookahead=int(K),
            temperature=temperature,
            eps=float(eps),
            generator=int(seed),
        )
        return generation_figure(res, label, pair.pieces(res.tokens))

    return update


def generation_explorer(pair: Any = None, prompt: str | None = None, **kwargs: Any) -> Any:
    """Sliders for lookahead K, over-acceptance eps and the seed, above the run's figure.

    Without a ``pair`` it takes ``llm.load_pair()`` (the offline pair shipped with the
    package when no hub is reachable), and the pair's first default prompt.
    """
    import ipywidgets as w

    if pair is None:
        from ..llm import load_pair

        pair = load_pair(verbose=False, progress=False)
    if prompt is None:
        from ..llm.measure import default_prompts

        prompt = default_prompts(pair)[0]

    controls = {
        "K": w.IntSlider(value=4, min=1, max=8, description="K"),
        "eps": w.FloatSlider(value=0.0, min=0.0, max=0.5, step=0.05, description="ε"),
        "seed": w.IntSlider(value=0, min=0, max=20, description=_("seed")),
    }
    return explorer(generation_update(pair, prompt, **kwargs), controls)
