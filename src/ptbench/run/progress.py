"""The live view of a running job: trials done/total, which are running, failures and rewards per agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean

from harbor.job import Job
from harbor.trial.hooks import TrialHookEvent
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ptbench.run.agents import agent_label, seed_of
from ptbench.store.models import REWARD, TrialRecord

MAX_RUNNING_SHOWN = 8


@dataclass
class _AgentTally:
    done: int = 0
    failed: int = 0
    rewards: list[float] = field(default_factory=list)


class JobProgress:
    """Counts trials as Harbor reports them; renders as a rich renderable (use it inside `rich.live.Live`)."""

    def __init__(self, total: int, finished: tuple[TrialRecord, ...] = ()) -> None:
        self.total = total
        self.running: dict[str, str] = {}
        self.tallies: dict[str, _AgentTally] = {}
        for record in finished:
            reward = next((m.value for m in record.metrics if m.source == "verifier" and m.name == REWARD), None)
            trial = record.trial
            self._count(_key(trial.agent or "unknown", trial.model_name), trial.status != "ok", reward)

    def attach(self, job: Job) -> None:
        """Follow a Harbor job's trial events."""
        job.on_trial_started(self._started)
        job.on_trial_ended(self._ended)

    @property
    def done(self) -> int:
        return sum(t.done for t in self.tallies.values())

    @property
    def failed(self) -> int:
        return sum(t.failed for t in self.tallies.values())

    async def _started(self, event: TrialHookEvent) -> None:
        agent = event.config.agent
        label = _key(agent_label(agent), agent.model_name)
        self.running[event.trial_name] = f"{event.task_name} · {label} · seed {seed_of(agent)}"

    async def _ended(self, event: TrialHookEvent) -> None:
        self.running.pop(event.trial_name, None)
        result = event.result
        rewards = result.verifier_result.rewards if result.verifier_result else None
        reward = rewards.get(REWARD) if rewards else None
        failed = result.exception_info is not None or rewards is None
        agent = event.config.agent
        self._count(_key(agent_label(agent), agent.model_name), failed, float(reward) if reward is not None else None)

    def _count(self, agent: str, failed: bool, reward: float | None) -> None:
        tally = self.tallies.setdefault(agent, _AgentTally())
        tally.done += 1
        tally.failed += failed
        if reward is not None:
            tally.rewards.append(reward)

    def __rich__(self) -> RenderableType:
        header = Text(
            f"trials {self.done}/{self.total} done · {len(self.running)} running · {self.failed} failed", style="bold"
        )
        table = Table("agent", "done", "failed", "mean reward", "scored", box=None, pad_edge=False)
        for agent, tally in sorted(self.tallies.items()):
            mean = f"{fmean(tally.rewards):.3f}" if tally.rewards else "-"
            table.add_row(agent, str(tally.done), str(tally.failed), mean, str(len(tally.rewards)))
        shown = list(self.running.values())[:MAX_RUNNING_SHOWN]
        running = [Text(f"  running: {label}", style="dim") for label in shown]
        if len(self.running) > MAX_RUNNING_SHOWN:
            running.append(Text(f"  ... and {len(self.running) - MAX_RUNNING_SHOWN} more", style="dim"))
        return Group(header, table, *running)


def _key(agent: str, model: str | None) -> str:
    """How an agent is shown: its label, and the model when one was chosen."""
    return f"{agent}@{model}" if model else agent
