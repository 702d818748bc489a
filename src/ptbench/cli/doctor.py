"""`ptbench doctor`: what the local environment guarantees on this machine (each guarantee of docs/SECURITY.md
enforced, monitored or not available), so a user checks a cluster node before submitting a campaign to it."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add `doctor` to the app."""

    @app.command("doctor")
    def doctor(
        rootless: Annotated[bool | None, typer.Option(
            "--rootless/--root", help="the mode to check (default: rootless unless run as root)")] = None,
    ) -> None:
        """Print the local environment's guarantees on this machine."""
        from ptbench.sandbox.guarantees import table
        from ptbench.sandbox.rootless import is_rootless

        print(table(is_rootless(rootless)))
