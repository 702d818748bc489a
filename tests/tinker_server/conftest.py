"""A real local Tinker server on a loopback port (a thread of this process) and the unmodified SDK pointed at it."""

from __future__ import annotations

import socket
import threading
import time

import pytest


@pytest.fixture(scope="session")
def tinker_url(tiny_dir, tmp_path_factory):
    """The base URL of a running server whose storage is a fresh temp dir."""
    import uvicorn

    from ptbench.tinker_server.app import build_app
    from ptbench.tinker_server.service import TinkerService
    from ptbench.tinker_server.storage import Storage

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    service = TinkerService(Storage(tmp_path_factory.mktemp("tinker-storage")), "cpu")
    server = uvicorn.Server(uvicorn.Config(build_app(service), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the local Tinker server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    service.futures.close()


@pytest.fixture(scope="session")
def service_client(tinker_url):
    """A tinker.ServiceClient on the local server (the SDK insists on a tml- key; any will do)."""
    import os

    os.environ.setdefault("TINKER_API_KEY", "tml-local")
    os.environ.setdefault("TINKER_TELEMETRY", "0")
    import tinker

    client = tinker.ServiceClient(base_url=tinker_url)
    yield client
    client.close("success")
