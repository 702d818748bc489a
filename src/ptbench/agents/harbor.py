"""Harbor's Gemini CLI and OpenCode agents, minus their installer when the CLI is already on PATH.

Harbor's Codex and Claude Code classes skip their installers when `codex` / `claude` runs; its Gemini CLI and
OpenCode classes always install Node with nvm and the CLI with npm (network needed, into the sandbox's home, every
trial). These subclasses check first, as the other two do, so the CLI from `ptbench agents install` is used; their
run commands are Harbor's, unchanged."""

from __future__ import annotations

import shlex

from harbor.agents.installed.gemini_cli import GeminiCli as HarborGeminiCli
from harbor.agents.installed.opencode import OpenCode as HarborOpenCode
from harbor.environments.base import BaseEnvironment

from ptbench.agents.clis import AGENT_CLIS


async def _on_path(environment: BaseEnvironment, command: str) -> bool:
    return (await environment.exec(command=f"command -v {shlex.quote(command)} >/dev/null 2>&1")).return_code == 0


class GeminiCli(HarborGeminiCli):
    """Harbor's `gemini-cli`, installing only when `gemini` is not on PATH."""

    async def install(self, environment: BaseEnvironment) -> None:
        if not await _on_path(environment, AGENT_CLIS["gemini-cli"].command):
            await super().install(environment)


class OpenCode(HarborOpenCode):
    """Harbor's `opencode`, installing only when `opencode` is not on PATH."""

    async def install(self, environment: BaseEnvironment) -> None:
        if not await _on_path(environment, AGENT_CLIS["opencode"].command):
            await super().install(environment)
