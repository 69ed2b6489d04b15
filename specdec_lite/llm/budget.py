"""How much to measure, what it costs, and what fits in a time budget.

Measuring a pair is three stages of engine runs (``measure_pair``): the speed
benchmark, the Theorem 1 runs and the eps sweep. Their cost is predicted from a
few timed calls (:class:`Calibration`). An autoregressive run of ``T`` tokens makes
``T`` target calls. A speculative run with lookahead ``K`` makes ``m(T)`` rounds, each
one verification call on up to ``K + 1`` tokens after up to ``K`` draft calls, where
``m`` and the draft calls are their expectations when acceptances are i.i.d. with
rate ``alpha`` (:func:`expected_calls`, Chapter 7's horizon included).

:func:`plan_measurement` cuts the settings, knob by knob in the order of
:data:`CUTS` and each down to its floor, until the predicted seconds fit the budget,
then gives back the integer knobs (:data:`REFILLS`), the last cut first, while they
still fit.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .._i18n import N_, _
from ..primitives import check_int, check_ints, check_real

#: Rejection laws of the eps sweep (Decoding-OPT and Decoding-UNO): each eps value is measured with both.
EPS_LAWS = ("opt", "uno")
#: Tokens of the speed benchmark's warm-up run of each method.
WARMUP_TOKENS = 4
#: Largest seed (torch seeds its generators with 64 bits; each prompt's runs add its index).
MAX_SEED = 2**63 - 1
#: The stages of a measurement, in the order they run.
STAGES = ("speed", "theorem1", "eps_sweep")


def _values(values: Any, name: str) -> tuple[Any, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise ValueError(
            _("{name}: expected a sequence (a list or tuple), got {values!r}").format(name=name, values=values)
        )
    return tuple(values.tolist() if isinstance(values, np.ndarray) else values)


def check_distinct_ints(values: Any, name: str, *, empty: bool = False) -> tuple[int, ...]:
    """``values`` as a tuple after checking they are distinct integers >= 1 (at least one unless ``empty``)."""
    out = tuple(check_ints(_values(values, name), name))
    if not out and not empty:
        raise ValueError(_("{name}: must hold at least one value").format(name=name))
    if len(set(out)) < len(out):
        raise ValueError(_("{name}: values must be distinct, got {values!r}").format(name=name, values=values))
    return out


@dataclass(frozen=True)
class MeasureSettings:
    """How much to measure: runs, tokens and lookaheads of each stage (checked at construction).

    ``hf_lookaheads``: the lookaheads of Hugging Face's assisted generation; empty
    means no comparison with Hugging Face at all.
    """

    lookaheads: tuple[int, ...] = (1, 2, 4, 6, 8)
    hf_lookaheads: tuple[int, ...] = (2, 4, 8)
    speed_tokens: int = 48
    speed_repeats: int = 2
    theorem1_runs: int = 20
    theorem1_tokens: int = 32
    theorem1_lookahead: int = 4
    eps_values: tuple[float, ...] = (0.0, 0.003, 0.01, 0.03, 0.1)
    eps_runs: int = 4
    eps_tokens: int = 32
    eps_lookahead: int = 4
    prompts: int = 4
    temperature: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "lookaheads", check_distinct_ints(self.lookaheads, "lookaheads"))
        put(self, "hf_lookaheads", check_distinct_ints(self.hf_lookaheads, "hf_lookaheads", empty=True))
        eps = tuple(check_real(e, "eps_values", low=0.0) for e in _values(self.eps_values, "eps_values"))
        if not eps or len(set(eps)) < len(eps):
            raise ValueError(
                _("eps_values: expected at least one value, all distinct, got {eps_values!r}").format(
                    eps_values=self.eps_values
                )
            )
        put(self, "eps_values", eps)
        for name, low in (
            ("speed_tokens", 1),
            ("speed_repeats", 1),
            ("theorem1_runs", 2),
            ("theorem1_tokens", 1),
            ("theorem1_lookahead", 1),
            ("eps_runs", 2),
            ("eps_tokens", 1),
            ("eps_lookahead", 1),
            ("prompts", 1),
        ):
            put(self, name, check_int(getattr(self, name), name, low=low))
        put(self, "seed", check_int(self.seed, "seed", low=0, high=MAX_SEED))
        put(self, "temperature", check_real(self.temperature, "temperature", low=0.0))

    @property
    def all_lookaheads(self) -> tuple[int, ...]:
        """Every ``K`` some stage runs, sorted."""
        return tuple(sorted({*self.lookaheads, *self.hf_lookaheads, self.theorem1_lookahead, self.eps_lookahead}))


#: Fewer runs and lookaheads.
QUICK = MeasureSettings(
    lookaheads=(1, 2, 4, 6),
    hf_lookaheads=(2, 4),
    speed_tokens=32,
    theorem1_runs=10,
    eps_values=(0.0, 0.01, 0.1),
    eps_runs=3,
)


#: The environment variable the course's grader sets to "1" in the kernel of every notebook it grades
#: (``classroom.execute.GradingExecute``).
GRADED_VARIABLE = "SPECDEC_LITE_GRADED"
#: The budget, in seconds, of a measurement in a graded notebook: below any plan, so it measures its smallest.
GRADED_BUDGET_S = 1e-3


def graded() -> bool:
    """Whether this notebook is being graded: then a measurement runs its smallest plan (``GRADED_BUDGET_S``).

    No score depends on a measurement: a lab's graded cells come before its measurement section and read
    nothing it computes, so the grader does not spend minutes per student measuring at the lab's budget."""
    return os.environ.get(GRADED_VARIABLE) == "1"


#: Tokens up to which :func:`expected_calls` runs its recursion; beyond, both counts grow at their stationary rates.
EXACT_TOKENS = 1024


def expected_calls(alpha: float, K: int, T: int) -> tuple[float, float]:
    """Expected (rounds, draft calls) of a speculative run of ``T`` tokens, acceptances i.i.d. Bernoulli(alpha).

    With ``t`` tokens to go a round drafts ``k = min(K, t)`` tokens; its first rejection
    at draft ``g`` (probability ``alpha^(g-1) (1 - alpha)``) emits ``g`` tokens, and if all
    ``k`` are accepted it emits ``k + 1`` (``k`` when ``k = t``). The rounds are
    ``lookahead.iid_expected_oracle_calls``. Exact up to ``EXACT_TOKENS`` tokens; past
    them each further token costs ``1 / mu`` rounds and ``K / mu`` drafts, with
    ``mu = (1 - alpha^(K+1)) / (1 - alpha)`` the tokens of a full round (the renewal
    theorem: the exact counts differ from this by a constant, to within a round).
    """
    a = check_real(alpha, "alpha", low=0.0, high=1.0)
    K, T = check_int(K, "K"), check_int(T, "T", low=0)
    n = min(T, EXACT_TOKENS)
    rounds, drafts = _call_tables(a, K, 1 << max(0, n - 1).bit_length())
    extra = (T - n) / (K + 1 if a == 1.0 else (1 - a ** (K + 1)) / (1 - a))
    return float(rounds[n] + extra), float(drafts[n] + K * extra)


@lru_cache(maxsize=256)
def _call_tables(a: float, K: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`expected_calls`' recursion for every ``t <= size`` (one table per power-of-two size, reused)."""
    rounds, drafts = np.zeros(size + 1), np.zeros(size + 1)
    for t in range(1, size + 1):
        k = min(K, t)
        g = np.arange(1, k + 1)
        w = a ** (g - 1) * (1 - a)
        rest = t - k - 1 if k < t else 0
        rounds[t] = 1.0 + w @ rounds[t - g] + a**k * rounds[rest]
        drafts[t] = k + w @ drafts[t - g] + a**k * drafts[rest]
    return rounds, drafts


@dataclass(frozen=True)
class Calibration:
    """Seconds measured on a few short runs, from which the cost of every run is predicted.

    ``target``: one target call of autoregressive decoding; ``draft``: one draft call;
    ``verify[K]``: one verification call with lookahead ``K`` (between measured values
    of ``K``, interpolated linearly); ``ar_overhead``: the engine's own work per
    autoregressive token; ``round_overhead``: per speculative round; ``hf_ratio``:
    Hugging Face's ``generate`` over our autoregressive loop for the same tokens;
    ``alpha``: the acceptance rate; ``seconds``: the calibration's own wall time.
    """

    target: float
    draft: float
    verify: dict[int, float]
    alpha: float
    ar_overhead: float = 0.0
    round_overhead: float = 0.0
    hf_ratio: float = 1.0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        for name in ("target", "draft", "ar_overhead", "round_overhead", "hf_ratio", "seconds"):
            check_real(getattr(self, name), name, low=0.0)
        check_real(self.alpha, "alpha", low=0.0, high=1.0)
        if not self.verify:
            raise ValueError(_("verify: needs the seconds of at least one verification call"))
        object.__setattr__(
            self,
            "verify",
            {check_int(K, "verify"): check_real(t, f"verify[{K}]", low=0.0) for K, t in sorted(self.verify.items())},
        )

    def verify_seconds(self, K: int) -> float:
        """Seconds of one verification call with lookahead ``K`` (linear between the measured ``K``)."""
        Ks = list(self.verify)
        if not Ks[0] <= K <= Ks[-1]:
            raise ValueError(
                _("K: no verification cost measured for K = {K} (measured: {Ks_0} .. {Ks_1})").format(
                    K=K, Ks_0=Ks[0], Ks_1=Ks[-1]
                )
            )
        return float(np.interp(K, Ks, [self.verify[k] for k in Ks]))

    def run_seconds(self, method: str, K: int, tokens: int) -> float:
        """Predicted seconds of one run of ``method`` (a speed benchmark method name) generating ``tokens``."""
        if method in ("autoregressive", "HF autoregressive"):
            t = tokens * (self.target + self.ar_overhead)
        elif method in ("speculative", "HF assisted"):
            rounds, drafts = expected_calls(self.alpha, K, tokens)
            t = rounds * (self.verify_seconds(K) + self.round_overhead) + drafts * self.draft
        else:
            raise ValueError(_("method: unknown method {method!r}").format(method=method))
        return t * self.hf_ratio if method.startswith("HF") else t

    def scaled(self, pace: float, seconds: float) -> Calibration:
        """Every call ``pace`` times as long (the pace measured so far), with ``seconds`` spent."""
        f = check_real(pace, "pace", low=0.0, open_low=True)
        return dataclasses.replace(
            self,
            target=f * self.target,
            draft=f * self.draft,
            verify={K: f * t for K, t in self.verify.items()},
            ar_overhead=f * self.ar_overhead,
            round_overhead=f * self.round_overhead,
            seconds=seconds,
        )

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def speed_methods(s: MeasureSettings) -> list[tuple[str, int]]:
    """The speed benchmark's methods: ours, then Hugging Face's when ``hf_lookaheads`` is not empty."""
    methods = [("autoregressive", 0)] + [("speculative", K) for K in s.lookaheads]
    if s.hf_lookaheads:
        methods += [("HF autoregressive", 0)] + [("HF assisted", K) for K in s.hf_lookaheads]
    return methods


def stage_seconds(s: MeasureSettings, cal: Calibration, stages: Sequence[str] = STAGES) -> dict[str, float]:
    """Predicted seconds of each of ``stages``: the runs it makes, times each run's predicted cost.

    speed: per method a warm-up run, then ``prompts x repeats`` runs; Theorem 1:
    ``prompts x runs``; eps sweep: ``eps values x 2 laws x prompts x runs``.
    """
    speed = sum(
        cal.run_seconds(m, K, WARMUP_TOKENS) + s.prompts * s.speed_repeats * cal.run_seconds(m, K, s.speed_tokens)
        for m, K in speed_methods(s)
    )
    theorem1 = s.prompts * s.theorem1_runs * cal.run_seconds("speculative", s.theorem1_lookahead, s.theorem1_tokens)
    eps = (
        len(s.eps_values)
        * len(EPS_LAWS)
        * s.prompts
        * s.eps_runs
        * cal.run_seconds("speculative", s.eps_lookahead, s.eps_tokens)
    )
    return {k: v for k, v in {"speed": speed, "theorem1": theorem1, "eps_sweep": eps}.items() if k in stages}


#: The order of the cuts: each knob is lowered one notch at a time, down to its floor, until the plan fits.
#: Repetitions only filter out other work on the machine; the sweep's losses are exact per position (runs only
#: average over texts); Hugging Face is a comparison, not a result of the book; Theorem 1 keeps its runs longest
#: (a standard error per prompt needs two).
CUTS: tuple[tuple[str, int], ...] = (
    ("speed_repeats", 1),
    ("eps_runs", 2),
    ("hf_lookaheads", 1),  # the K nearest Theorem 1's
    ("eps_values", 3),  # the smallest, a middle one and the largest
    ("lookaheads", 3),  # the smallest, Theorem 1's K and the largest
    ("theorem1_runs", 8),
    ("tokens", 16),  # every stage's tokens per run
    ("hf_lookaheads", 0),  # no comparison with Hugging Face
    ("lookaheads", 2),
    ("eps_values", 2),
    ("prompts", 2),
    ("theorem1_runs", 4),
    ("prompts", 1),
    ("tokens", 8),
    ("theorem1_runs", 2),
)
#: The knobs given back after the cuts, one notch at a time, the last cut first, while the plan still fits.
REFILLS = ("tokens", "theorem1_runs", "prompts", "eps_runs", "speed_repeats")
TOKEN_FIELDS = ("speed_tokens", "theorem1_tokens", "eps_tokens")
#: The stage each knob sizes (``prompts``: every stage).
KNOB_STAGES = {
    "speed_repeats": "speed",
    "hf_lookaheads": "speed",
    "lookaheads": "speed",
    "speed_tokens": "speed",
    "theorem1_runs": "theorem1",
    "theorem1_tokens": "theorem1",
    "eps_runs": "eps_sweep",
    "eps_values": "eps_sweep",
    "eps_tokens": "eps_sweep",
    "prompts": "every stage",
}
#: How each knob is named in the one-line summary.
KNOB_NAMES = {
    "speed_repeats": N_("speed repeats"),
    "eps_runs": N_("eps runs"),
    "hf_lookaheads": N_("HF lookaheads"),
    "eps_values": N_("eps values"),
    "lookaheads": N_("lookaheads"),
    "theorem1_runs": N_("Theorem 1 runs"),
    "prompts": N_("prompts"),
    "speed_tokens": N_("speed tokens"),
    "theorem1_tokens": N_("Theorem 1 tokens"),
    "eps_tokens": N_("eps tokens"),
    "tokens": N_("tokens"),
}


def _drop_order(s: MeasureSettings, knob: str) -> list[Any]:
    """Which values a thinned knob loses first."""
    values = getattr(s, knob)
    ref = s.theorem1_lookahead
    lo, hi = min(values), max(values)
    if knob == "hf_lookaheads":  # keep the one nearest Theorem 1's K
        return sorted(values, key=lambda K: (-abs(K - ref), -K))
    if knob == "lookaheads":  # interior ones from the largest down, then the largest
        keep = {lo, hi, ref}
        ends = [K for K in dict.fromkeys((hi, lo)) if K != ref]
        return sorted((K for K in values if K not in keep), reverse=True) + ends
    ranked = sorted(values)  # eps values: interior ones farthest from the middle first, then the largest
    mid = (len(ranked) - 1) / 2
    interior = sorted(range(1, len(ranked) - 1), key=lambda i: (-abs(i - mid), -ranked[i]))
    return list(dict.fromkeys([ranked[i] for i in interior] + [hi, lo]))


def _set(s: MeasureSettings, knob: str, v: int, tokens: Sequence[str], top: MeasureSettings) -> MeasureSettings:
    """``s`` with the integer ``knob`` at ``v`` (``tokens``: each token field at ``v``, but no more than in ``top``)."""
    if knob == "tokens":
        return dataclasses.replace(s, **{f: min(getattr(top, f), v) for f in tokens})
    return dataclasses.replace(s, **{knob: v})


def _level(s: MeasureSettings, knob: str, tokens: Sequence[str]) -> int:
    return max(getattr(s, f) for f in tokens) if knob == "tokens" else getattr(s, knob)


def _largest_fit(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """The largest ``v`` in ``lo..hi`` with ``fits(v)`` (which holds below some value and fails above), else None.

    Bisection: the predicted seconds grow with every integer knob, so planning costs
    ``log(hi - lo)`` predictions, however many tokens or runs are asked for.
    """
    if lo > hi or not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _lowered(
    s: MeasureSettings, knob: str, floor: int, tokens: Sequence[str], fits: Callable[[MeasureSettings], bool]
) -> MeasureSettings:
    """``knob`` lowered to the highest notch below its value that fits, else to ``floor``."""
    if knob in ("lookaheads", "hf_lookaheads", "eps_values"):
        values = list(getattr(s, knob))
        if len(values) <= floor:  # already at its floor (an empty list among them: nothing to drop)
            return s
        for drop in _drop_order(s, knob):
            values.remove(drop)
            s = dataclasses.replace(s, **{knob: tuple(values)})
            if len(values) <= floor or fits(s):
                break
        return s
    start = _level(s, knob, tokens)
    v = _largest_fit(floor, start - 1, lambda v: fits(_set(s, knob, v, tokens, s)))
    return _set(s, knob, floor if v is None else v, tokens, s) if start > floor else s


def _raised(
    s: MeasureSettings,
    requested: MeasureSettings,
    knob: str,
    tokens: Sequence[str],
    fits: Callable[[MeasureSettings], bool],
) -> MeasureSettings:
    """The integer ``knob`` raised to the highest notch, up to its ``requested`` value, that still fits."""
    v = _largest_fit(
        _level(s, knob, tokens) + 1,
        _level(requested, knob, tokens),
        lambda v: fits(_set(s, knob, v, tokens, requested)),
    )
    return s if v is None else _set(s, knob, v, tokens, requested)


def seconds(x: float) -> str:
    """Seconds for a one-line summary: whole seconds from 10 s, two significant digits below."""
    return f"{x:,.0f} s" if x >= 10 else f"{x:.2g} s"


@dataclass(frozen=True)
class Cut:
    """One knob of the settings, as requested and as planned (``tokens``: the three token counts)."""

    knob: str
    before: Any
    after: Any

    def __str__(self) -> str:
        if self.knob == "hf_lookaheads" and not self.after:
            return _("no Hugging Face comparison")
        if self.knob == "tokens" and isinstance(self.before, tuple):  # speed, Theorem 1, eps
            return f"{_(KNOB_NAMES['tokens'])} {'/'.join(map(str, self.before))}→{self.after}"

        def size(v: Any) -> Any:
            return len(v) if isinstance(v, tuple) else v

        name = _(KNOB_NAMES[self.knob]) if self.knob in KNOB_NAMES else self.knob
        return f"{name} {size(self.before)}→{size(self.after)}"


@dataclass(frozen=True)
class Plan:
    """The settings that fit a budget: what was asked, what will run, what it is predicted to cost, what was cut.

    ``stages``: predicted seconds of each stage; ``total_s``: those plus the calibration's seconds.
    """

    requested: MeasureSettings
    settings: MeasureSettings
    calibration: Calibration
    budget_s: float | None
    stages: dict[str, float]
    cuts: tuple[Cut, ...] = field(default=())

    @property
    def total_s(self) -> float:
        return self.calibration.seconds + sum(self.stages.values())

    @property
    def fits(self) -> bool:
        return self.budget_s is None or self.total_s <= self.budget_s

    def summary(self) -> str:
        """The plan in one line: the budget, what was cut, and the predicted seconds."""
        cut = _(", ").join(map(str, self.cuts)) or _("nothing cut")
        if self.budget_s is None:
            return _("no time budget: the settings as given; predicted {total}").format(total=seconds(self.total_s))
        if not self.fits:
            return _(
                "budget {budget} is too small for this pair on this machine: the smallest "
                "measurement ({cut}) is predicted at {total}"
            ).format(budget=seconds(self.budget_s), cut=cut, total=seconds(self.total_s))
        return _("budget {budget}: {cut}; predicted {total}").format(
            budget=seconds(self.budget_s), cut=cut, total=seconds(self.total_s)
        )

    def record(self) -> dict[str, Any]:
        """The plan for a results file (``predicted_s``: the seconds spent when it was made, then each stage's)."""
        return {
            "budget_s": self.budget_s,
            "fits": self.fits,
            "summary": self.summary(),
            "requested": dataclasses.asdict(self.requested),
            "calibration": self.calibration.record(),
            "cuts": [{"knob": c.knob, "from": c.before, "to": c.after} for c in self.cuts],
            "predicted_s": {"spent": self.calibration.seconds, **self.stages, "total": self.total_s},
        }


def knob_changes(requested: MeasureSettings, planned: MeasureSettings) -> tuple[Cut, ...]:
    """The knobs that differ, in the order of :data:`CUTS` (the three token counts as one when they agree)."""
    order = [f for knob, _ in CUTS for f in (TOKEN_FIELDS if knob == "tokens" else (knob,))]
    cuts = [
        Cut(f, getattr(requested, f), getattr(planned, f))
        for f in dict.fromkeys(order)
        if getattr(requested, f) != getattr(planned, f)
    ]
    tokens = [c for c in cuts if c.knob in TOKEN_FIELDS]
    if len(tokens) == 3 and len({c.after for c in tokens}) == 1:
        at = cuts.index(tokens[0])
        cuts = [c for c in cuts if c.knob not in TOKEN_FIELDS]
        before = tuple(c.before for c in tokens)
        cuts.insert(at, Cut("tokens", before[0] if len(set(before)) == 1 else before, tokens[0].after))
    return tuple(cuts)


def plan_measurement(
    settings: MeasureSettings,
    calibration: Calibration,
    budget_s: float | None,
    *,
    done: Sequence[str] = (),
    used: MeasureSettings | None = None,
) -> Plan:
    """The largest settings, cut in the order of :data:`CUTS`, whose predicted seconds fit ``budget_s``.

    The calibration's own seconds count against the budget. Each knob is lowered
    one notch at a time and the next knob is touched only when this one reaches its
    floor. A coarse last notch (one prompt fewer) can leave seconds unused: the
    integer knobs cut on the way (:data:`REFILLS`) are then given back one notch at
    a time, the last cut first, while the plan still fits. ``budget_s=None`` keeps
    the settings as given. When even the smallest settings do not fit, the plan
    holds them and ``fits`` is False.

    Planning again during a measurement: ``done`` names the stages already measured,
    ``used`` the settings they were measured with (their knobs and ``prompts`` stay as
    used), and ``calibration.seconds`` the seconds spent so far.
    """
    if not isinstance(settings, MeasureSettings):
        raise ValueError(
            _("settings: expected MeasureSettings, got {type_settings_name}").format(
                type_settings_name=type(settings).__name__
            )
        )
    if budget_s is not None:
        budget_s = check_real(budget_s, "budget_s", low=0.0, open_low=True)
    if isinstance(done, str) or not set(done) <= set(STAGES):
        raise ValueError(
            _("done: expected a list of stages among {STAGES}, got {done!r}").format(STAGES=STAGES, done=done)
        )
    if done and not isinstance(used, MeasureSettings):
        raise ValueError(_("used: the settings the stages in done were measured with are needed"))
    left = [stage for stage in STAGES if stage not in done]
    frozen = {k for k, stage in KNOB_STAGES.items() if done and (stage in done or k == "prompts")}
    tokens = [f for f in TOKEN_FIELDS if f not in frozen]
    start = dataclasses.replace(settings, **{k: getattr(used, k) for k in frozen})

    def total(s: MeasureSettings) -> float:
        return calibration.seconds + sum(stage_seconds(s, calibration, left).values())

    def fits(s: MeasureSettings) -> bool:
        return total(s) <= budget_s

    s, cut = start, []
    if budget_s is not None:
        for knob, floor in CUTS:
            if fits(s):
                break
            if knob in frozen or (knob == "tokens" and not tokens):
                continue
            lowered = _lowered(s, knob, floor, tokens, fits)
            if lowered != s:
                s = lowered
                cut.append(knob)
        for knob in dict.fromkeys(reversed(cut)):  # each knob once, by its last cut, the last first
            if knob in REFILLS and fits(s):
                s = _raised(s, settings, knob, tokens, fits)
    return Plan(settings, s, calibration, budget_s, stage_seconds(s, calibration, left), knob_changes(settings, s))
