"""The habits that separated good runs from bad ones (the frogs write-up, PostTrainBench's findings), each measured
on a classified trace. An indicator the trace cannot decide is None (never a guess); `evidence` names what it was
measured from."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ptbench.traces.classify import DEV_EVALUATION, RAW_OUTPUTS, TIMER, UNRECOGNISED_LINE, Classification
from ptbench.traces.events import Event
from ptbench.traces.model import ActivityTime, Indicator, IndicatorKind, Segment

HABITS: dict[str, tuple[IndicatorKind, str, str]] = {  # name: kind, column label, the habit
    "budget_used": (
        "share", "used", "sense of time: the share of the budget used before stopping (most agents stop early; "
        "longer runs score higher)"),
    "timer_checks": ("count", "timer", "sense of time: how often it checked the time left (`timer`)"),
    "training_share": (
        "share", "train%", "the budget spent training (a bad run: 3.6% training, 61% watching evaluations)"),
    "training_with_waits_share": (
        "share", "train+wait%", "the budget spent training, counting waits that follow a training command "
        "(training run in the background while the agent sleeps)"),
    "evaluation_share": ("share", "eval%", "the budget spent evaluating (a bad run: 61% watching evaluations)"),
    "evaluations": ("count", "evals", "how often it measured its model"),
    "raw_output_looks": (
        "count", "raw", "sanity checks of raw model outputs (a lax regex found answers buried in prose, so scores "
        "looked fine)"),
    "format_checked": (
        "flag", "format", "its evaluations report strict format or parse rates (naive SFT on a weak model's data "
        "ruined the format)"),
    "ran_rl": ("flag", "RL", "it ran RL at all (PostTrainBench: SFT dominates, RL is rare)"),
    "sft_before_rl": ("flag", "SFT>RL", "SFT before RL, so RL starts from a model that answers in format"),
    "curriculum": ("flag", "curric", "a curriculum from small to large problems (boards)"),
    "disjoint_eval": (
        "flag", "disjoint", "it evaluated on data disjoint from its training data (100% on the training generator's "
        "boards, 0/500 held out)"),
    "evaluated_after_training": (
        "flag", "eval-after", "it measured the real metric after its last training (a partial reward can decouple "
        "from the solve rate)"),
}
MAX_EVIDENCE = 3

_FORMAT = re.compile(r"parse|format|complian|strict", re.I)
_CURRICULUM = re.compile(r"curricul", re.I)
_SIZE = re.compile(r"(?:\bN=|--n[= ]|--size[= ]|board[_-]?size[= ]|--level[= ]|--stage[= ])(\d+)", re.I)
_SPLIT_EVIDENCE = re.compile(
    r"train_test_split|held[-_ ]?out|holdout|disjoint|dedup|canonical[_ ]hash|"
    r"--split[= ](?:dev|val|validation)\b|split\s*=\s*['\"](?:dev|val|validation)['\"]", re.I)
_DATA_FILE = re.compile(r"[\w./-]+\.(?:jsonl?|csv|parquet|arrow)\b")

Classified = Sequence[tuple[Event, Classification]]


def training_methods(classified: Classified) -> list[str]:
    """Training methods in the order first seen (`unknown` for training that names none)."""
    methods = [m for _, c in _ordered(classified) if c.activity == "training" for m in (c.methods or ("unknown",))]
    return list(dict.fromkeys(methods))


def indicators(classified: Classified, segments: Sequence[Segment], activities: Sequence[ActivityTime],
               budget: float | None, budget_used: float | None, written: dict[str, str]) -> list[Indicator]:
    """Every indicator of HABITS, in that order."""
    ordered = _ordered(classified)
    training = [i for i, (_, c) in enumerate(ordered) if c.activity == "training"]
    evaluations = [i for i, (_, c) in enumerate(ordered) if c.activity == "evaluation"]
    methods = training_methods(classified)
    shares = {a.activity: a.share_of_budget for a in activities}
    timers = [e for e, c in ordered if TIMER in c.rules or c.rule == TIMER]
    raw = _looks(ordered)
    values: dict[str, tuple[bool | int | float | None, list[str]]] = {
        "budget_used": (budget_used, []),
        "timer_checks": (len(timers), _texts(timers)),
        "training_share": (shares.get("training"), []),
        "training_with_waits_share": (_with_waits(segments, budget), []),
        "evaluation_share": (shares.get("evaluation"), []),
        "evaluations": (len(evaluations), _texts(ordered[i][0] for i in evaluations)),
        "raw_output_looks": (len(raw), _texts(raw)),
        "format_checked": _format_checked([ordered[i][0] for i in evaluations]),
        "ran_rl": (("rl" in methods) if training else None, methods),
        "sft_before_rl": _sft_before_rl(methods),
        "curriculum": _curriculum([ordered[i][0] for i in training], written) if training else (None, []),
        "disjoint_eval": _disjoint([ordered[i][0] for i in training], [ordered[i] for i in evaluations],
                                   ordered, written) if evaluations else (None, []),
        "evaluated_after_training": ((evaluations[-1] > training[-1]) if evaluations else False, [])
        if training else (None, []),
    }
    return [Indicator(name=name, kind=kind, value=values[name][0], habit=habit,
                      evidence=values[name][1][:MAX_EVIDENCE]) for name, (kind, _, habit) in HABITS.items()]


def _with_waits(segments: Sequence[Segment], budget: float | None) -> float | None:
    if not budget:
        return None
    spent = sum(s.end - s.start for s in segments
                if s.activity == "training" or (s.activity == "waiting" and s.waiting_on == "training"))
    return round(spent / budget, 6)


def _ordered(classified: Classified) -> list[tuple[Event, Classification]]:
    """The events that happened once each, in trace order (a reference agent's phase summary repeats its lines)."""
    return [(e, c) for e, c in classified if e.kind != "phase"]


def _looks(ordered: list[tuple[Event, Classification]]) -> list[Event]:
    """Events that show raw outputs, a run of them (unrecognised log lines in between, such as a wrapped raw
    line's rest) counting once."""
    looks, showing = [], False
    for event, c in ordered:
        if c.rule == UNRECOGNISED_LINE:
            continue
        raw = RAW_OUTPUTS in c.rules or c.rule == RAW_OUTPUTS
        if raw and not showing:
            looks.append(event)
        showing = raw
    return looks


def _texts(events: Iterable[Event]) -> list[str]:
    out: list[str] = []
    for event in events:
        if len(out) >= MAX_EVIDENCE:
            break
        out.append(event.text.strip()[:200])
    return out


def _format_checked(evaluations: list[Event]) -> tuple[bool | None, list[str]]:
    if not evaluations:
        return None, []
    hits = [e for e in evaluations if _FORMAT.search(e.text) or _FORMAT.search(e.output)]
    return bool(hits), _texts(hits)


def _sft_before_rl(methods: list[str]) -> tuple[bool | None, list[str]]:
    if "rl" not in methods:
        return None, ["no RL"] if methods else []
    return "sft" in methods and methods.index("sft") < methods.index("rl"), methods


def _curriculum(training: list[Event], written: dict[str, str]) -> tuple[bool, list[str]]:
    said = [text for text in (*(e.text for e in training), *written.values()) if _CURRICULUM.search(text)]
    if said:
        return True, [f"mentions a curriculum: {said[0].strip()[:160]}"]
    sizes = list(dict.fromkeys(int(m[1]) for e in training for m in _SIZE.finditer(e.text)))
    if len(sizes) >= 2 and sizes == sorted(sizes):
        return True, [f"trains on sizes {sizes} in increasing order"]
    return False, []


def _disjoint(training: list[Event], evaluations: list[tuple[Event, Classification]],
              ordered: list[tuple[Event, Classification]], written: dict[str, str]) -> tuple[bool | None, list[str]]:
    """No: a data file both trained and evaluated on; yes: an explicit split, dedup or held-out set (or the reference
    agent's dev boards, disjoint from its training boards by construction); else unknown."""
    trained = {f for e in training for f in _DATA_FILE.findall(e.text)}
    shared = sorted(trained & {f for e, _ in evaluations for f in _DATA_FILE.findall(e.text)})
    if shared:
        return False, [f"{name} is used for training and for evaluation" for name in shared]
    if any(c.rule == DEV_EVALUATION for _, c in evaluations):
        return True, ["the reference agent evaluates on dev boards disjoint from its training boards"]
    texts = [e.text for e, _ in ordered if e.kind != "line"] + list(written.values())
    said = next((m[0] for text in texts if (m := _SPLIT_EVIDENCE.search(text))), None)
    return (True, [f"holds data out: {said}"]) if said else (None, [])
