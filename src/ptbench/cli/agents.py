"""`ptbench agents`: install agent CLIs from npm into ptbench's prefix, list them, serve a scripted model API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

agents_app = typer.Typer(help="Agent CLIs (Codex, Claude Code, Gemini CLI, OpenCode) for the local environment.",
                         no_args_is_help=True)


@agents_app.command("install")
def install_command(
    specs: Annotated[list[str], typer.Argument(help="NAME[@VERSION]: codex, claude-code, gemini-cli, opencode "
                                               "(default: the version ptbench pins)")],
) -> None:
    """Install agent CLIs from the npm registry into ptbench's prefix (kept; the local environment puts them on
    PATH, so Harbor's agent classes skip their own installers)."""
    from rich.console import Console

    from ptbench.agents.clis import parse_request
    from ptbench.agents.install import install

    console = Console(stderr=True)
    requests = [parse_request(spec) for spec in specs]  # every name checked before anything is installed
    for cli, version in requests:
        record = install(cli, version, lambda line: console.print(line, highlight=False, markup=False))
        print(f"{record.name} {record.version}")


@agents_app.command("list")
def list_command() -> None:
    """The agent CLIs ptbench knows: the version on PATH in the sandbox, every installed version, the pinned one."""
    from rich.console import Console
    from rich.table import Table

    from ptbench.agents.clis import AGENT_CLIS
    from ptbench.agents.prefix import bin_dir, current, versions

    table = Table("agent", "command", "package", "in use", "installed", "pinned")
    for cli in AGENT_CLIS.values():
        record = current(cli)
        table.add_row(cli.name, cli.command, cli.package, record.version if record else "-",
                      ", ".join(r.version for r in versions(cli)) or "-", cli.version)
    console = Console()
    console.print(table)
    console.print(f"prefix: {bin_dir().parent} (bin/ is on PATH in the local environment)", highlight=False)


@agents_app.command("fake-api")
def fake_api_command(
    script: Annotated[Path, typer.Option("--script", help="the scripted turns (JSON, FakeApiScript)")],
    port: Annotated[int, typer.Option("--port", help="port on 127.0.0.1 (0: any free port, printed)")] = 0,
) -> None:
    """Serve a scripted model API on 127.0.0.1 (OpenAI Responses and Chat Completions, streaming): each request
    gets the script's next step, a shell command to run or a final message. For offline runs of real agents."""
    from ptbench.agents.fake_api.script import load_script
    from ptbench.agents.fake_api.server import serve_forever

    serve_forever(load_script(script), port)


def register(app: typer.Typer) -> None:
    """Add `ptbench agents ...` to the main app."""
    app.add_typer(agents_app, name="agents")
