"""Judge models for benchmarks graded by a model (Arena-Hard's "judge", HealthBench's "grader"), and the integrity
checks' optional LLM judge (role `integrity`, any benchmark).

Each benchmark role is bound to an inspect model name: `--judge ROLE=PROVIDER/MODEL`, else $PTBENCH_JUDGE_MODEL,
else PostTrainBench's judge, gpt-5-mini through the openai provider (which reads OPENAI_API_KEY). The integrity
judge runs only when bound (`--judge integrity=PROVIDER/MODEL`, else $PTBENCH_INTEGRITY_JUDGE_MODEL).
"""

from __future__ import annotations

from ptbench.benchmarks.registry import BenchmarkDef
from ptbench.errors import UserError
from ptbench.settings import env_name, settings

DEFAULT_JUDGE = "openai/gpt-5-mini"
JUDGE_ENV = env_name("judge_model")
INTEGRITY_ROLE = "integrity"
INTEGRITY_JUDGE_ENV = env_name("integrity_judge_model")


def _bindings(given: list[str]) -> list[tuple[str, str]]:
    """(role, model) of each `--judge ROLE=PROVIDER/MODEL`; a malformed one is a UserError."""
    bindings = []
    for item in given:
        role, sep, model = item.partition("=")
        if not sep or not role or "/" not in model:
            raise UserError(f"--judge expects ROLE=PROVIDER/MODEL, got {item!r}")
        bindings.append((role, model))
    return bindings


def integrity_judge(given: list[str]) -> str | None:
    """The model bound to the integrity judge role (`--judge integrity=...`, else $PTBENCH_INTEGRITY_JUDGE_MODEL), if
    any."""
    chosen = next((model for role, model in _bindings(given) if role == INTEGRITY_ROLE), None)
    return chosen or settings().integrity_judge_model or None


def resolve_judges(benchmark: BenchmarkDef, given: list[str]) -> dict[str, str]:
    """role -> inspect model name for every judge role of the benchmark (the integrity role aside); unknown roles
    are a UserError."""
    chosen: dict[str, str] = {}
    for role, model in _bindings(given):
        if role == INTEGRITY_ROLE:
            continue
        if role not in benchmark.judge_roles:
            roles = ", ".join(benchmark.judge_roles) or "none"
            raise UserError(f"{benchmark.name} has no judge role {role!r} (its roles: {roles})")
        chosen[role] = model
    default = settings().judge_model or DEFAULT_JUDGE
    return {role: chosen.get(role, default) for role in benchmark.judge_roles}
