"""Choosing, loading and describing a draft/target pair.

``load_pair()`` with no names picks automatically: on a CUDA GPU with internet
the paper's Pythia pair (``pythia-70m`` drafting for ``pythia-2.8b``; a 1b target
on GPUs under 20 GiB, such as a free Colab T4); on a CPU (or Apple GPU) with
internet a pair a laptop can run (``pythia-70m`` drafting for ``pythia-410m``);
otherwise the offline pair that ships with the package (trained by
:mod:`specdec_lite.llm.fallback` on the standard library's source). Any other
pair can be named (hub names or local folders). Hub files are checked against the
hub's hashes before use (:mod:`~specdec_lite.llm.hub`), the offline pair's against its
``meta.json``; weights are read from safetensors files only, with ``from_pretrained``
and ``trust_remote_code`` off, and must fill the model exactly
(:mod:`~specdec_lite.llm.integrity`).
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .._i18n import _
from ._hf import input_vocab_size, require_transformers, vocab_size
from .fallback import FallbackRecipe, fallback_is_cached, fallback_pair_dir, read_meta
from .hub import fetch
from .integrity import check_loading_info, check_same_vocab, check_weight_files

#: The paper's pair (Table 1 of Yin et al.).
PAPER_PAIR = ("EleutherAI/pythia-70m", "EleutherAI/pythia-2.8b")
#: A target that fits a free Colab GPU comfortably.
COLAB_PAIR = ("EleutherAI/pythia-70m", "EleutherAI/pythia-1b")
#: A pair a laptop's CPU can run: the paper's draft, and the smallest Pythia target 6x its depth.
CPU_PAIR = ("EleutherAI/pythia-70m", "EleutherAI/pythia-410m")
#: Files of which a local tokenizer folder must hold at least one.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "tokenizer.model",
    "spiece.model",
    "vocab.txt",
)
#: Device types a pair can run on.
DEVICE_TYPES = ("cpu", "cuda", "mps")
#: Dtypes the weights can take (by name): probabilities are float32 whatever they are.
WEIGHT_DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}
#: GPU memory (GiB) from which the paper's 2.8b target is chosen automatically.
PAPER_PAIR_MIN_GIB = 20.0


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``device`` if given (it must exist on this machine), else CUDA, then Apple MPS, then CPU.

    Asking for ``"cuda"`` or ``"mps"`` where torch finds none is a ``RuntimeError``
    at once, before anything is loaded or trained; a device of another kind (such as
    ``"meta"``, which holds no data) or not a device at all is a ``ValueError``.
    """
    if device is not None:
        if not isinstance(device, (str, torch.device)):
            raise ValueError(
                _("device: expected None, a name such as 'cpu' or 'cuda:0', or a torch.device, got {device!r}").format(
                    device=device
                )
            )
        try:
            dev = torch.device(device)
        except RuntimeError as err:
            raise ValueError(
                _("device: {device!r} is not a device torch knows ({err})").format(device=device, err=err)
            ) from None
        if dev.type not in DEVICE_TYPES:
            raise ValueError(
                _(
                    "device: {str_device!r} cannot run a model pair; expected one of {join_DEVICE_TYPES} "
                    "(with an index for cuda, e.g. 'cuda:1')"
                ).format(str_device=str(device), join_DEVICE_TYPES=", ".join(DEVICE_TYPES))
            )
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(
                _(
                    "device: {str_device!r} was asked for, but torch finds no CUDA GPU "
                    "(torch.cuda.is_available() is False; in Colab choose Runtime > Change runtime type "
                    "> GPU, or pass device='cpu')"
                ).format(str_device=str(device))
            )
        if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
            count = torch.cuda.device_count()
            raise RuntimeError(
                _("device: {str_device!r} was asked for, but torch finds {count} CUDA GPU(s)").format(
                    str_device=str(device), count=count
                )
            )
        mps = getattr(torch.backends, "mps", None)
        if dev.type == "mps" and (mps is None or not mps.is_available()):
            raise RuntimeError(
                _("device: {str_device!r} was asked for, but torch finds no Apple GPU (MPS)").format(
                    str_device=str(device)
                )
            )
        return dev
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(device: torch.device, dtype: torch.dtype | str | None = None) -> torch.dtype:
    """``dtype`` if given; else the weights' dtype the hardware runs natively.

    On CUDA: bfloat16 where it is native (compute capability 8.0 or more: A100, L4,
    H100, RTX 30xx and later), float16 otherwise (a T4 or V100 emulates bfloat16,
    slowly). float16 on Apple MPS, float32 on a CPU. Whatever the weights' dtype,
    the engine turns logits into probabilities in float32.
    """
    if dtype is not None:
        name = dtype.removeprefix("torch.") if isinstance(dtype, str) else None
        if isinstance(dtype, torch.dtype):
            name = str(dtype).removeprefix("torch.")
        if name not in WEIGHT_DTYPES:
            raise ValueError(
                _("dtype: expected one of {join_WEIGHT_DTYPES} (a torch.dtype or its name), got {dtype!r}").format(
                    join_WEIGHT_DTYPES=", ".join(WEIGHT_DTYPES), dtype=dtype
                )
            )
        return WEIGHT_DTYPES[name]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.get_device_capability(device) >= (8, 0) else torch.float16
    if device.type == "mps":
        return torch.float16
    return torch.float32


_SIZE = re.compile(r" \((\d+(?:\.\d+)?)M params\)$")


def display_name(name: str) -> str:
    """A model's name as a reader sees it: the offline models' " (0.3M params)" in the current language."""
    m = _SIZE.search(name)
    return name if m is None else name[: m.start()] + _(" ({millions}M params)").format(millions=m.group(1))


@dataclass
class ModelPair:
    """A draft ``p`` and a target ``q`` sharing a tokenizer, ready on one device."""

    draft: Any
    target: Any
    tokenizer: Any
    draft_name: str
    target_name: str
    source: str  # "fallback" (trained by specdec_lite), or "hub/local" (named by the reader or chosen automatically)
    device: torch.device
    dtype: torch.dtype
    info: dict[str, Any] = field(default_factory=dict)

    def describe(self, *, short: bool = False) -> str:
        """One line naming the pair, for printing next to every figure; ``short``: only the two models, the
        device and the dtype (a figure's subtitle, which must fit a phone in a line or two)."""
        where = f"{self.device.type}, {str(self.dtype).removeprefix('torch.')}"
        if short:
            draft, target = (_SIZE.split(name)[0] for name in (self.draft_name, self.target_name))
            return f"{draft} → {target} ({where})"
        if self.source == "fallback":
            return _(
                "offline pair trained by specdec_lite on the Python standard library: draft {draft}, "
                "target {target} ({where})"
            ).format(draft=display_name(self.draft_name), target=display_name(self.target_name), where=where)
        return _("draft {draft} → target {target} ({where})").format(
            draft=display_name(self.draft_name), target=display_name(self.target_name), where=where
        )

    def encode(self, text: str) -> torch.Tensor:
        """Token ids of ``text`` as a 1-D tensor on the pair's device."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(_("text: encodes to no tokens"))
        return torch.tensor(ids, dtype=torch.long, device=self.device)

    def decode(self, tokens: Any) -> str:
        return self.tokenizer.decode(torch.as_tensor(tokens).tolist())

    def pieces(self, tokens: Any) -> list[str]:
        """Each token decoded on its own (for showing where each came from)."""
        return [self.tokenizer.decode([t]) for t in torch.as_tensor(tokens).tolist()]


def _from_pretrained(name: str | Path, folder: Path, device: torch.device, dtype: torch.dtype, arg: str) -> Any:
    """The model in ``folder`` (``name``'s local folder or verified hub snapshot): safetensors, every tensor read."""
    tf = require_transformers()
    check_weight_files(folder, arg)
    key = "dtype" if int(tf.__version__.split(".")[0]) >= 5 else "torch_dtype"
    model, info = tf.AutoModelForCausalLM.from_pretrained(
        str(folder), trust_remote_code=False, use_safetensors=True, output_loading_info=True, **{key: dtype}
    )
    check_loading_info(info, str(name), arg)
    return model.to(device).eval()


def _local_folder(name: str | Path, folders: dict[str, Path]) -> Path:
    """The folder ``name`` is read from: itself if a local folder, else its hub snapshot (fetched once, verified)."""
    key = str(name)
    if key not in folders:
        local = Path(name).expanduser()
        folders[key] = local if local.is_dir() else fetch(key)
    return folders[key]


def _looks_local(name: str | Path) -> bool:
    """A ``Path``, or a string that is a path, not a hub id (``owner/name``: one slash, no leading ``/.~``)."""
    text = str(name)
    return isinstance(name, Path) or text.startswith(("/", ".", "~")) or text.count("/") > 1 or "\\" in text


def _check_source(name: str | Path, arg: str, needs: str = "config.json") -> None:
    """``name`` is an existing folder (holding ``needs``), or a hub name; else a named error before any loading."""
    if not isinstance(name, (str, Path)) or not str(name).strip():
        raise ValueError(
            _("{arg}: expected a hub name ('owner/name') or a local folder, got {name!r}").format(arg=arg, name=name)
        )
    folder = Path(name).expanduser()
    if folder.exists():
        if not folder.is_dir():
            raise FileNotFoundError(
                _("{arg}: {str_name!r} is a file; expected a folder saved with save_pretrained").format(
                    arg=arg, str_name=str(name)
                )
            )
        if needs and not (folder / needs).is_file():
            raise FileNotFoundError(
                _("{arg}: the folder {str_name!r} holds no {needs} (save the model there with save_pretrained)").format(
                    arg=arg, str_name=str(name), needs=needs
                )
            )
    elif _looks_local(name):
        raise FileNotFoundError(
            _("{arg}: there is no folder {str_name!r} (a hub name has the form 'owner/name')").format(
                arg=arg, str_name=str(name)
            )
        )


def check_model_name(name: str | Path, arg: str, needs: str = "config.json") -> None:
    """``name`` is a local folder (holding ``needs``) or a well-formed hub name (``owner/name``), else a named error.

    Whether the hub holds such a repository is known only when it is asked (at loading).
    """
    _check_source(name, arg, needs)
    if not Path(name).expanduser().exists():
        from huggingface_hub.utils import validate_repo_id

        try:
            validate_repo_id(str(name))
        except ValueError as err:
            raise ValueError(
                _("{arg}: {str_name!r} is neither a folder nor a hub name ({err})").format(
                    arg=arg, str_name=str(name), err=err
                )
            ) from None


def _check_tokenizer_files(name: str | Path) -> None:
    """A local tokenizer folder must hold tokenizer files (else transformers builds an empty tokenizer)."""
    _check_source(name, "tokenizer_name", needs="")
    folder = Path(name).expanduser()
    if folder.is_dir() and not any((folder / f).is_file() for f in TOKENIZER_FILES):
        raise FileNotFoundError(
            _(
                "tokenizer_name: the folder {str_folder!r} holds no tokenizer files (none of "
                "{join_TOKENIZER_FILES}); save the tokenizer there (tokenizer.save_pretrained) or "
                "pass tokenizer_name= a folder or hub name that has one"
            ).format(str_folder=str(folder), join_TOKENIZER_FILES=", ".join(TOKENIZER_FILES))
        )


def _tokenizer(name: str | Path, folder: Path, models: dict[str, tuple[Any, Path]]) -> Any:
    """The tokenizer in ``folder`` (``name``'s); its ids must fit every model's logits and input embedding (the
    smallest of them), and a model saved with a tokenizer of its own must have been saved with this one."""
    _check_tokenizer_files(folder)
    auto = require_transformers().AutoTokenizer
    tok = auto.from_pretrained(str(folder), trust_remote_code=False)
    sizes = {role: (vocab_size(m), input_vocab_size(m)) for role, (m, _) in models.items()}
    vocab = min(min(s) for s in sizes.values())
    if len(tok) > vocab:
        shown = "; ".join(
            _("{role}: {v} logits, {rows} input ids").format(role=role, v=v, rows=rows)
            for role, (v, rows) in sizes.items()
        )
        raise ValueError(
            _(
                "tokenizer_name: the tokenizer of {str_name!r} has {len_tok} tokens but the models "
                "read only {vocab} ({shown}); it is not these models' tokenizer"
            ).format(str_name=str(name), len_tok=len(tok), vocab=vocab, shown=shown)
        )
    own = {
        f"the {role} ({str(where)!r})": where
        for role, (_, where) in models.items()
        if where != folder and any((where / f).is_file() for f in TOKENIZER_FILES)
    }
    if own:
        check_same_vocab(
            {
                repr(str(name)): tok,
                **{role: auto.from_pretrained(str(where), trust_remote_code=False) for role, where in own.items()},
            }
        )
    return tok


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

    Their numbers of logits may differ (one tokenizer, embedding tables padded to different sizes: the
    engine works on the target's). The tokenizer's ids must fit the smallest of both models' logits and
    input embeddings, else ``ValueError``; a model folder saved with a tokenizer of its own must hold this
    same tokenizer, else ``ForeignTokenizerError``. A hub name is fetched by :func:`specdec_lite.llm.hub.fetch`
    (every file checked against the hub's hash); weights are read from safetensors only
    (``PickleCheckpointError`` otherwise) and must fill the model exactly (``WeightsMismatchError``).
    """
    dev = pick_device(device)
    dt = pick_dtype(dev, dtype)
    _check_source(draft_name, "draft_name")
    _check_source(target_name, "target_name")
    tokenizer_name = tokenizer_name if tokenizer_name is not None else target_name
    _check_tokenizer_files(tokenizer_name)  # before the models are loaded
    folders: dict[str, Path] = {}
    where = {
        role: _local_folder(name, folders)
        for role, name in (("draft", draft_name), ("target", target_name), ("tokenizer", tokenizer_name))
    }
    draft = _from_pretrained(draft_name, where["draft"], dev, dt, "draft_name")
    target = _from_pretrained(target_name, where["target"], dev, dt, "target_name")
    tokenizer = _tokenizer(
        tokenizer_name, where["tokenizer"], {"draft": (draft, where["draft"]), "target": (target, where["target"])}
    )
    return ModelPair(draft, target, tokenizer, str(draft_name), str(target_name), source, dev, dt)


def load_fallback_pair(
    recipe: FallbackRecipe | None = None,
    *,
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    progress: bool = True,
) -> ModelPair:
    """The offline pair, loaded with ``from_pretrained``: the shipped one for the default recipe.

    Any other ``recipe`` is trained on first use and cached under ``cache_dir``.
    """
    dev = pick_device(device)  # a missing GPU or a bad dtype fails here, not after training
    if dtype is not None:
        pick_dtype(dev, dtype)
    folder = fallback_pair_dir(recipe, cache_dir, progress=progress)
    meta = read_meta(folder)
    shapes = {role: meta["recipe"][role] for role in ("draft", "target")}
    pair = load_named_pair(
        folder / "draft",
        folder / "target",
        tokenizer_name=folder / "tokenizer",
        device=dev,
        dtype=dtype,
        source="fallback",
    )
    pair.draft_name, pair.target_name = (
        f"stdlib-{shapes[r]['layers']}x{shapes[r]['hidden']} ({meta[r]['parameters'] / 1e6:.1f}M params)"
        for r in ("draft", "target")
    )
    pair.info = {
        "folder": str(folder),
        **{k: v for k, v in meta.items() if k not in ("draft", "target")},
        **{r: {k: v for k, v in meta[r].items() if k != "losses"} for r in ("draft", "target")},
        "losses": {r: meta[r]["losses"] for r in ("draft", "target")},
    }
    return pair


def _hub_offline() -> bool:
    flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in flags)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the hub endpoint opens within ``timeout`` seconds.

    The endpoint is ``huggingface_hub.constants.ENDPOINT`` (``HF_ENDPOINT``, read at call time), so a mirror or a
    local server counts: its host, and its port (else 443 for https, 80 for http). An endpoint that is not an
    http(s) URL with a host is unreachable.
    """
    from urllib.parse import urlsplit

    try:
        from huggingface_hub import constants

        endpoint = str(constants.ENDPOINT)
    except ImportError:  # pragma: no cover - transformers always brings huggingface_hub
        endpoint = "https://huggingface.co"
    try:
        url = urlsplit(endpoint)
        default = {"https": 443, "http": 80}.get(url.scheme)
        host, port = url.hostname, (url.port if url.port is not None else default)
    except ValueError:  # e.g. a port that is not a number, or an unclosed [IPv6 bracket
        return False
    if not host or port is None or default is None:
        return False
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except (OSError, ValueError):  # ValueError: a host name IDNA cannot encode, or one holding a NUL
        return False
    return True


def hub_pair_for(device: torch.device) -> tuple[str, str]:
    """The hub pair ``load_pair()`` tries on ``device``: by GPU memory on CUDA, ``CPU_PAIR`` elsewhere."""
    if device.type != "cuda":
        return CPU_PAIR
    gib = torch.cuda.get_device_properties(device).total_memory / 2**30
    return PAPER_PAIR if gib >= PAPER_PAIR_MIN_GIB else COLAB_PAIR


def load_pair(
    draft_name: str | Path | None = None,
    target_name: str | Path | None = None,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    fallback: FallbackRecipe | None = None,
    cache_dir: str | Path | None = None,
    hub: bool = True,
    verbose: bool = True,
    progress: bool = True,
) -> ModelPair:
    """A draft/target pair, and a printed line saying which.

    With names: exactly that pair (errors propagate). Without: from the hub when it is
    reachable (and ``hub`` is true and ``HF_HUB_OFFLINE`` unset), the paper's pair on a
    CUDA GPU with at least ``PAPER_PAIR_MIN_GIB`` GiB, ``COLAB_PAIR`` on a smaller
    GPU, ``CPU_PAIR`` on a CPU or Apple GPU; otherwise the offline pair shipped with
    the package (with ``fallback``, a recipe of one's own: trained on first use, and
    a line says so before training starts).
    """
    if (draft_name is None) != (target_name is None):
        raise ValueError(_("draft_name and target_name: give both or neither"))
    reason = ""
    if draft_name is not None:
        pair = load_named_pair(draft_name, target_name, device=device, dtype=dtype)
    else:
        dev = pick_device(device)
        if dtype is not None:
            pick_dtype(dev, dtype)  # a bad dtype fails before any download or loading
        pair = None
        if _hub_offline():
            reason = _("HF_HUB_OFFLINE is set")
        elif not hub:
            reason = "hub=False"
        elif not hub_reachable():
            reason = _("the Hugging Face hub is unreachable (offline)")
        else:
            names = hub_pair_for(dev)
            try:
                pair = load_named_pair(*names, device=dev, dtype=dtype)
            except OSError as err:  # the hub refused, the connection broke, or a file failed its checks
                why = str(err).splitlines()[0][:300] if str(err) else ""
                reason = _("could not load {name} from the hub ({error})").format(
                    name=names[1], error=type(err).__name__ + ": " * bool(why) + why
                )
        if pair is None:
            if verbose and not fallback_is_cached(fallback, cache_dir):
                print(
                    _(
                        "Model pair: {reason}, so specdec_lite trains the offline pair of this recipe on this "
                        "machine (once; then cached)"
                    ).format(reason=reason),
                    flush=True,
                )
            pair = load_fallback_pair(fallback, cache_dir=cache_dir, device=dev, dtype=dtype, progress=progress)
    if verbose:
        line = _("Model pair: {pair}").format(pair=pair.describe())
        print(line + (_(" — chosen because: {reason}").format(reason=reason) if reason else ""))
    pair.info.setdefault("reason", reason)
    return pair
