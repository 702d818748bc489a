"""Agent names for `ptbench run` (Harbor agents, `reference` = the task's solution, `module:Class`) and seed tags."""

from __future__ import annotations

from harbor.agents.base import BaseAgent
from harbor.agents.factory import AgentFactory
from harbor.models.trial.config import AgentConfig
from harbor.utils.import_path import import_class

from ptbench.errors import UserError
from ptbench.settings import env_name

REFERENCE = "reference"
"""Our name for the task's own solution (solution/solve.sh), which Harbor runs as its `oracle` agent."""

SEED_ENV = env_name("seed")
"""Environment variable carrying a trial's seed index; it also makes each seed's trial config distinct."""


def resolve_agent(spec: str) -> AgentConfig:
    """`NAME[@MODEL]` or `module:Class[@MODEL]` as a Harbor AgentConfig; an unknown agent is a UserError."""
    name, _, model = spec.partition("@")
    name, model_name = name.strip(), (model.strip() or None)
    if not name:
        raise UserError(f"empty agent name in {spec!r}")
    if name == REFERENCE:
        name = "oracle"
    if ":" in name:
        try:
            import_class(name, base=BaseAgent, label="agent")
        except (ValueError, TypeError) as exc:
            raise UserError(f"agent {name!r}: {exc}") from exc
        return AgentConfig(import_path=name, model_name=model_name)
    if name not in AgentFactory.registered_names():
        raise UserError(
            f"unknown agent {name!r}: use {REFERENCE!r}, a Harbor agent "
            f"({', '.join(AgentFactory.registered_names())}) or module:Class"
        )
    return AgentConfig(name=name, model_name=model_name)


def with_seed(agent: AgentConfig, seed: int) -> AgentConfig:
    """A copy of the agent config tagged with a seed index."""
    return agent.model_copy(update={"env": {**agent.env, SEED_ENV: str(seed)}}, deep=True)


def seed_of(agent: AgentConfig) -> int | None:
    """The seed index a trial's agent config was tagged with, if any."""
    value = agent.env.get(SEED_ENV, "")
    return int(value) if value.isdecimal() else None


def agent_label(agent: AgentConfig) -> str:
    """How an agent is named in the store and in progress: `reference` for Harbor's oracle, else the Harbor name or
    the import path."""
    if agent.name == "oracle":
        return REFERENCE
    return agent.name or agent.import_path or "unknown"
