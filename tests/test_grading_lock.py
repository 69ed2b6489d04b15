"""The grading lock is declared in one place: ``@_lock.guarded(name)``, consulted by every check's ``@checker``.

A walk over the package fails, naming the function, when a function that computes a lab's answer is not
guarded: the names the checks hold, their namesakes elsewhere in the package, the readable references
(``*reference.py``) and the torch verification helpers (``llm.verify``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import _lock
from specdec_lite.exercises import feedback

ROOT = Path(__file__).resolve().parents[1]
#: Subpackages that hold no lab answer (they draw, explain, grade, time).
NOT_ANSWERS = ("exercises", "classroom", "figures", "widgets", "bench")

torch = pytest.importorskip("torch")
import specdec_lite.llm.verify  # noqa: E402 - declares the llm.* guards (needs torch)


def _modules(skip: tuple[str, ...] = ()) -> list:
    """The package's modules (not the ``__main__`` of a command, nor those under ``skip``), imported."""
    out = []
    for info in pkgutil.walk_packages(sd.__path__, "specdec_lite."):
        if info.name.endswith("__main__") or any(info.name.startswith(f"specdec_lite.{s}") for s in skip):
            continue
        out.append(importlib.import_module(info.name))
    return out


def _checks() -> dict[str, frozenset[str]]:
    """Every ``check_...`` of the exercises: ``module.check -> names it holds``."""
    out = {}
    for mod in _modules(skip=tuple(s for s in NOT_ANSWERS if s != "exercises")):
        if not mod.__name__.startswith("specdec_lite.exercises."):
            continue
        for name, obj in vars(mod).items():
            if name.startswith("check_") and callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                assert hasattr(obj, "__held__"), f"{mod.__name__}.{name} is not declared with @checker"
                out[f"{mod.__name__}.{name}"] = obj.__held__
    return out


def _public_functions() -> dict[str, object]:
    """``module.qualname -> function`` for every public function and method defined in a computing module."""
    out = {}
    for mod in _modules(skip=NOT_ANSWERS):
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                out[f"{mod.__name__}.{name}"] = obj
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and inspect.isfunction(member):
                        out[f"{mod.__name__}.{name}.{attr}"] = member
    return out


def _resolve(name: str) -> object:
    """The object at ``specdec_lite.<name>`` (a module path, then attributes)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, -1, -1):
        try:
            obj = importlib.import_module(".".join(["specdec_lite", *parts[:cut]]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(name)


CHECKS = _checks()
HELD = frozenset().union(*CHECKS.values())


def test_every_name_a_check_holds_is_declared_by_the_function_it_names():
    assert len(CHECKS) >= 25, sorted(CHECKS)
    for check, names in CHECKS.items():
        for name in names:
            assert name in _lock.GUARDED, f"{check} holds {name!r}, which no @_lock.guarded function declares"
            assert _resolve(name) is _lock.GUARDED[name], f"{name!r} is declared by a function elsewhere"


def test_a_check_holding_an_undeclared_name_is_refused_when_it_is_defined():
    with pytest.raises(LookupError, match="laws.tvv"):
        feedback.checker("laws.tv", "laws.tvv")
    with pytest.raises(ValueError, match="already guards"):
        _lock.guarded("laws.tv")(lambda p, q: 0.0)


def test_every_guarded_function_is_held_by_some_check():
    assert set(_lock.GUARDED) <= HELD, f"guarded but held by no check: {sorted(set(_lock.GUARDED) - HELD)}"


def test_every_function_that_computes_a_lab_answer_is_guarded():
    """The walk: the checks' names and their namesakes, the references, the llm verification helpers."""
    functions = _public_functions()
    assert len(functions) > 150, len(functions)
    answers = {name.rsplit(".", 1)[1] for name in HELD}  # tv, residual, speculative_k, marginals, ...
    named_by_report = {"specdec_lite.llm.verify.position_stats", "specdec_lite.llm.verify.probs_from_logits"}
    must = {}
    for where, fn in functions.items():
        module, _, short = where.rpartition(".")
        if (
            short in answers
            or module.endswith("reference")
            or module == "specdec_lite.llm.verify"
            or where in named_by_report
        ):
            must[where] = fn
    unguarded = sorted(where for where, fn in must.items() if getattr(fn, "__guarded__", None) not in _lock.GUARDED)
    assert not unguarded, f"these functions compute a lab's answer but are not @_lock.guarded: {unguarded}"
    assert named_by_report | {
        "specdec_lite.lookahead_reference.speculative_k_one",
        "specdec_lite.lookahead_reference.speculative_k",
        "specdec_lite.batch_reference.batch_one",
        "specdec_lite.reference.speculative",
    } <= set(must)


def test_no_function_switches_itself_off_by_hand():
    """The lock is declared by the decorator only: no ``if _lock.held`` / ``_lock.refuse`` lines in the algorithms."""
    offenders = []
    for path in sorted((ROOT / "specdec_lite").rglob("*.py")):
        if path.name == "_lock.py" or path.parent.name == "exercises" and path.name == "feedback.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"_lock\.(held|refuse)\b", line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, offenders


@pytest.mark.parametrize("name", sorted(_lock.GUARDED))
def test_a_guarded_function_refuses_while_held_and_keeps_its_face(name):
    fn = _lock.GUARDED[name]
    with _lock.hold([name]):
        with pytest.raises(_lock.WriteItYourself, match=re.escape(name)):
            fn()  # refused before its arguments are read
    original = inspect.unwrap(fn)
    assert original is not fn and fn.__guarded__ == name
    assert (fn.__name__, fn.__doc__, inspect.signature(fn)) == (
        original.__name__,
        original.__doc__,
        inspect.signature(original),
    )
    assert fn.__doc__, f"{name} has no docstring"


def test_outside_a_check_a_guarded_function_runs_unchanged():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    assert sd.tv(p, q) == pytest.approx(0.3)
    d, t = sd.chains.one_token(p, q)
    out = sd.lookahead_reference.speculative_k(d, t, 2, 5, np.random.default_rng(0))
    assert out.tokens.shape == (5, 1)
    stats = sd.llm.verify.position_stats(torch.tensor(p), torch.tensor(q), torch.ones(3, dtype=torch.float64))
    assert float(stats[0]) == pytest.approx(0.3)


# --- the routes the report found open, now refused -------------------------------------------------------


def _first(result) -> tuple[int, bool]:
    return int(result.tokens[0, 0]), bool(result.rejected[0, 0])


def _step_by(decoder):
    """A Lab 2 step that hands the work to a package decoder on a one-token pair."""

    def step(p, q, rng):
        d, t = sd.chains.one_token(p, q)
        return decoder(d, t, rng)

    return step


def _one(out) -> tuple[int, bool]:
    return int(out[0][0]), bool(out[1][0])


ref, lref = sd.batch_reference, sd.lookahead_reference
STEP_ROUTES = {
    "lookahead_reference.speculative_k_one": lambda d, t, rng: _one(lref.speculative_k_one(d, t, 1, rng)),
    "lookahead_reference.speculative_k": lambda d, t, rng: _first(lref.speculative_k(d, t, 1, 1, rng)),
    "batch_reference.batch_speculative": lambda d, t, rng: _first(ref.batch_speculative(d, t, 1, 1, rng)),
    "batch_reference.tree_one": lambda d, t, rng: _one(ref.tree_one(d, t, 1, rng)),
    "batch.batch_speculative": lambda d, t, rng: _first(sd.batch.batch_speculative(d, t, 1, 1, rng)),
    "batch.tree_speculative": lambda d, t, rng: _first(sd.batch.tree_speculative(d, t, 1, 1, rng)),
}


@pytest.mark.parametrize("route", sorted(STEP_ROUTES))
def test_a_decoding_step_handed_to_any_package_decoder_gets_write_it_yourself(route):
    from specdec_lite.exercises import bugs, part1

    step = _step_by(STEP_ROUTES[route])
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    assert step(p, q, np.random.default_rng(0))[0] in range(3)  # the route works outside a check
    for check in (part1.check_speculative_step, bugs.check_draft_sampling):
        fb = check(step)
        assert not fb.ok and "write it yourself" in fb.message, (check.__name__, fb.message)


def test_lab9_decoders_handed_to_the_reference_get_write_it_yourself():
    from specdec_lite.exercises import bugs

    def fixed_speculative_k(draft, target, K, rng):
        out = sd.lookahead_reference.speculative_k_one(draft, target, K, rng)
        return out[0], out[3]

    for check in (bugs.check_bonus, bugs.check_mystery):
        fb = check(fixed_speculative_k)
        assert not fb.ok and "write it yourself" in fb.message, (check.__name__, fb.message)


def test_lab5_loss_and_lab4_law_handed_to_the_package_get_write_it_yourself():
    from specdec_lite.exercises import part2

    def tv_loss(p, q, b):
        t = [torch.tensor(x) for x in (p, q, b)]
        return float(sd.llm.verify.position_stats(*t)[2])

    fb = part2.check_tv_loss(tv_loss)
    assert not fb.ok and "write it yourself" in fb.message, fb.message
    fb = part2.check_unbiased_rejection_law(lambda p, q, b: sd.optimality.unbiased_rejection_law(p, q, b))
    assert not fb.ok and "write it yourself" in fb.message, fb.message


def test_lab1_marginals_summed_from_the_sequence_law_get_write_it_yourself():
    from specdec_lite.exercises import part1

    def marginals(chain):
        law = sd.chains.sequence_law(chain).reshape((chain.V,) * chain.T)
        return np.array([law.sum(axis=tuple(a for a in range(chain.T) if a != n)) for n in range(chain.T)])

    chain = sd.MarkovChain.random(3, 4, rng=7, uniform_init=False)
    assert np.allclose(marginals(chain), chain.marginals())  # the route works outside a check
    fb = part1.check_marginals(marginals)
    assert not fb.ok and "write it yourself" in fb.message, fb.message


#: The modules whose functions compute (the llm subpackage's others load models, time or write files).
MATHS = [
    "laws", "tradeoff", "optimality", "biased", "batch", "lookahead", "theory", "chains", "primitives", "stats",
    "reference", "batch_reference", "lookahead_reference", "decoding", "llm.verify",
]  # fmt: skip


def _sweep_cases():
    from tests import check_answers as A

    p, q, b = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), np.array([0.3, 0.9, 1.0])
    unbiased = b * np.minimum(1, q / p)
    chain = sd.MarkovChain.random(3, 4, rng=7, uniform_init=False)
    d, t = sd.MarkovChain.random(3, 5, rng=1, uniform_init=False), sd.MarkovChain.random(3, 5, rng=2)
    return {
        "check_tv": (p, q),
        "check_acceptance": (p, q),
        "check_residual": (p, q),
        "check_unbiased_rejection_law": (p, q, unbiased),
        "check_tv_loss": (p, q, b),
        "check_optimal_rejection_law": (p, q, b),
        "check_over_accept": (p, q, 0.1),
        "check_batch_improvement": (p, q, 3),
        "check_tokens_per_call": (0.6, 3),
        "check_wallclock_speedup": (0.6, 3, 0.1),
        "check_marginals": (chain,),
        "check_expected_rejections_batch": (d, t, 3),
    }, A


def _readings(out) -> list:
    """What a result offers: itself, its items, its public attributes."""
    found = list(out) if isinstance(out, tuple) else [out]
    if not isinstance(out, np.ndarray | torch.Tensor | tuple | float | int):
        found += [v for k, v in vars(out).items() if not k.startswith("_")] if hasattr(out, "__dict__") else []
    return found


def test_no_package_function_hands_a_check_its_answer_while_the_check_runs():
    """Every public function of the computing modules, called on a check's inputs under its lock, is refused,
    fails, or returns something other than the answer (numpy or torch arguments alike)."""
    cases, A = _sweep_cases()
    functions = [
        (f"{m}.{k}", v)
        for m in MATHS
        for k, v in vars(importlib.import_module(f"specdec_lite.{m}")).items()
        if not k.startswith("_") and inspect.isfunction(v) and v.__module__ == f"specdec_lite.{m}"
    ]
    assert len(functions) > 100
    handed = []
    for name, args in cases.items():
        check, answer = A.FUNCTION_CHECKS[name]
        want = np.asarray(answer(*args), dtype=float)
        tensors = tuple(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        for where, fn in functions:
            for call in (args, tensors, args[:-1]):
                with _lock.hold(check.__held__), np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # torch tensors in numpy code
                    try:
                        out = fn(*call)
                    except Exception:  # noqa: BLE001 - refused (WriteItYourself) or not callable this way
                        continue
                for got in _readings(out):
                    try:
                        got = np.asarray(got, dtype=float)
                    except Exception:  # noqa: BLE001 - not numbers
                        continue
                    if got.shape == want.shape and np.allclose(got, want, atol=1e-9):
                        handed.append(f"{where} gives {name}'s answer")
    assert not handed, handed
