"""A real local Tinker server on a loopback port (a thread of this process) and the unmodified SDK pointed at it."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def tinker_url(tiny_dir, tmp_path_factory):
    """The base URL of a running server whose storage is a fresh temp dir."""
    from ptbench.tinker_server.background import serve_in_thread

    with serve_in_thread(tmp_path_factory.mktemp("tinker-storage"), "cpu") as (url, _):
        yield url


@pytest.fixture(scope="session")
def service_client(tinker_url):
    """A tinker.ServiceClient on the local server (the SDK insists on a tml- key; any will do)."""
    os.environ.setdefault("TINKER_API_KEY", "tml-local")
    os.environ.setdefault("TINKER_TELEMETRY", "0")
    import tinker

    client = tinker.ServiceClient(base_url=tinker_url)
    yield client
    client.close("success")


@pytest.fixture(scope="module")
def own_server(tiny_dir, tmp_path_factory):
    """A server of this test module's own (its sessions may be ended, its limits tried): (base URL, service)."""
    from tinker_trial import ACTIVATION_BYTES

    from ptbench.tinker_server.background import serve_in_thread

    with serve_in_thread(tmp_path_factory.mktemp("tinker-own"), "cpu", activation_bytes=ACTIVATION_BYTES) as served:
        yield served
