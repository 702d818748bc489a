"""`ptbench tinker serve`: a local Tinker API (LoRA training and sampling) for the unmodified `tinker` SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ptbench.errors import UserError

tinker_app = typer.Typer(help="A local Tinker API served by ptbench.", no_args_is_help=True)


@tinker_app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="port (0 = any free port)")] = 8000,
    storage: Annotated[
        Path | None, typer.Option("--storage", help="checkpoint directory (default: .ptbench/tinker)")
    ] = None,
    device: Annotated[str | None, typer.Option("--device", help="cpu or cuda (default: cuda when present)")] = None,
) -> None:
    """Serve the Tinker API; point the SDK at it with TINKER_BASE_URL=http://HOST:PORT (any TINKER_API_KEY=tml-...)."""
    import uvicorn

    from ptbench.models.tiny import ensure_tiny
    from ptbench.paths import work_dir
    from ptbench.tinker_server.app import build_app
    from ptbench.tinker_server.service import TinkerService
    from ptbench.tinker_server.storage import Storage

    if device not in (None, "cpu", "cuda"):
        raise UserError(f"--device must be cpu or cuda, not {device!r}")
    ensure_tiny()  # built before the first request, not during one
    service = TinkerService(Storage(storage or work_dir() / "tinker"), device)
    try:
        uvicorn.run(build_app(service), host=host, port=port, log_level="warning")
    finally:
        service.futures.close()


def register(app: typer.Typer) -> None:
    """Add `ptbench tinker ...` to the main app."""
    app.add_typer(tinker_app, name="tinker")
