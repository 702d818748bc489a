"""Forwarded ports (`forward_ports`): the sandbox reaches exactly the named ports of the host's loopback, at the same
port of its own 127.0.0.1, from `public` and `no-network` sandboxes alike; any other host loopback port stays out of
reach, and the relay's sockets cannot be replaced from inside."""

from __future__ import annotations

import pytest
from harbor.models.task.config import NetworkMode
from test_local_env_sandbox import in_env, make_env, ok

REACH = "python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), 5).recv(3).decode())\""


@pytest.mark.parametrize("network", [NetworkMode.PUBLIC, NetworkMode.NO_NETWORK])
def test_only_the_forwarded_port_is_reached(tmp_path, loopback_server, network):
    with loopback_server(meet=1) as opened, loopback_server(meet=1) as closed:
        async def scenario(env):
            reached = await ok(env, REACH.format(port=opened.port))
            refused = await env.exec(REACH.format(port=closed.port))
            planted = await env.exec("rm -f /run/ptbench/forward/*.sock; touch /run/ptbench/forward/x")
            return reached, refused.return_code, planted.return_code

        reached, refused, planted = in_env(make_env(tmp_path, network=network, forward_ports=str(opened.port)),
                                           scenario)
    assert reached.strip() == "go"
    assert refused != 0 and closed.connections == 0
    assert planted != 0  # the relay dir is read-only inside


def test_bad_forward_ports_are_refused(tmp_path):
    with pytest.raises(ValueError, match="forward_ports: 'http' is not a TCP port"):
        make_env(tmp_path, forward_ports="http")
