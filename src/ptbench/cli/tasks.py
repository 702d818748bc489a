"""`ptbench tasks`: list the catalog, show one task, export tasks as Harbor task directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ptbench.errors import UserError

tasks_app = typer.Typer(
    help="The task catalog: list, show and export tasks as Harbor task directories.", no_args_is_help=True
)


@tasks_app.command("list")
def list_tasks(
    benchmark: Annotated[str | None, typer.Option(help="only this benchmark, e.g. gsm8k or frogs-single")] = None,
) -> None:
    """A table of every task in the catalog."""

    from ptbench.catalog.instructions import budget_hm  # heavy: harbor (0.3 s CPU)
    from ptbench.catalog.tasks import catalog  # heavy: harbor (0.3 s CPU)

    specs = [s for s in catalog().values() if benchmark is None or s.benchmark == benchmark]
    if not specs:
        raise UserError(f"no task has benchmark {benchmark!r}")
    table = Table(title=f"ptbench tasks ({len(specs)})")
    table.add_column("name", no_wrap=True)
    for column in ("base model", "budget", "compute", "hinted"):
        table.add_column(column)
    for spec in specs:
        compute = "Tinker" if spec.backend == "tinker" else f"{spec.gpus} GPU" if spec.gpus else "CPU"
        table.add_row(spec.name, spec.base_model, budget_hm(spec.budget_hours), compute, "yes" if spec.hinted else "")
    Console().print(table)


@tasks_app.command("show")
def show_task(
    name: Annotated[str, typer.Argument(help="task name, see `ptbench tasks list`")],
    instruction: Annotated[bool, typer.Option("--instruction", help="print the agent's instruction.md")] = False,
) -> None:
    """Print a task's spec as JSON (or its instruction)."""
    from ptbench.catalog.tasks import get_task  # heavy: harbor (0.3 s CPU)

    spec = get_task(name)
    if instruction:
        from ptbench.catalog.instructions import render_instruction  # heavy: harbor (0.3 s CPU)

        print(render_instruction(spec), end="")
    else:
        print(spec.model_dump_json(indent=2))


@tasks_app.command("export")
def export(
    names: Annotated[list[str] | None, typer.Argument(help="task names to export")] = None,
    out: Annotated[Path, typer.Option("--out", help="directory that receives one Harbor task dir per task")] = Path(
        "tasks"
    ),
    all_tasks: Annotated[bool, typer.Option("--all", help="export every task in the catalog")] = False,
    force: Annotated[bool, typer.Option("--force", help="replace task directories that already exist")] = False,
    heldout_seed: Annotated[
        int | None,
        typer.Option(
            help="seed of the frogs held-out boards (default: $PTBENCH_HELDOUT_SEED, else this user's secret)",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="a data directory (ptbench data build): each task carries its benchmark's data, train "
            "and dev files for the agent (data/), the test split for the verifier (tests/data/)",
        ),
    ] = None,
    agent_hours: Annotated[
        float | None,
        typer.Option("--agent-hours", help="each task under this agent budget instead of its own (named -<H>h)"),
    ] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", help="each GPU task with this many GPUs (named -<N>gpu)")
    ] = None,
    decoding: Annotated[
        str | None,
        typer.Option(
            "--decoding",
            help="benchmark: the verifier never reads the submission's generation_config.json (named "
            "-benchmark-decoding); default submission",
        ),
    ] = None,
    handoff_parts: Annotated[
        bool,
        typer.Option(
            "--handoff-parts",
            help="hand the submission to the verifier in parts of at most 4 GiB (for Modal, whose transfers are "
            "capped at 5 GiB; docs/RUNNING.md)",
        ),
    ] = False,
    handoff_mount: Annotated[
        bool,
        typer.Option(
            "--handoff-mount",
            help="hand the submission to the verifier through the trial's agent/ dir, bind-mounted (podman, docker: "
            "run with --ek auto_mounting=true; docs/RUNNING.md)",
        ),
    ] = False,
) -> None:
    """Write Harbor task directories (task.toml, instruction.md, environment/, tests/, solution/)."""

    from ptbench.catalog.tasks import catalog, get_task  # heavy: harbor (0.3 s CPU)
    from ptbench.run.export import export_task  # heavy: harbor (0.3 s CPU)

    if all_tasks == bool(names):
        raise UserError("name the tasks to export, or pass --all (not both)")
    specs = list(catalog().values()) if all_tasks else [get_task(name) for name in dict.fromkeys(names or [])]
    specs = [spec.with_budget(agent_hours, gpus).with_decoding(decoding) for spec in specs]
    existing = [str(out / spec.name) for spec in specs if (out / spec.name).exists() and not force]
    if existing:
        raise UserError(f"{existing[0]} exists ({len(existing)} of the tasks do); pass --force to replace")
    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("exporting", total=len(specs))
        for spec in specs:
            progress.update(bar, description=f"exporting {spec.name}")
            export_task(
                spec,
                out,
                heldout_seed=heldout_seed,
                replace=force,
                data_dir=data_dir,
                in_parts=handoff_parts,
                mounted=handoff_mount,
            )
            progress.advance(bar)
    console.print(f"exported {len(specs)} task(s) to {out}")


def register(app: typer.Typer) -> None:
    """Add `ptbench tasks` to the main app."""
    app.add_typer(tasks_app, name="tasks")
