"""The fake API's HTTP server on 127.0.0.1: POST .../responses (streamed or not), POST .../chat/completions, GET
.../models; each answer is the script's next step for that request's conversation. Every request body is kept
(`FakeApi.requests`) so a test can see what the agent sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ptbench.agents.fake_api import wire
from ptbench.agents.fake_api.script import FakeApiScript
from ptbench.errors import UserError

MAX_BODY = 64 << 20


class FakeApi:
    """The server, as a context manager running it in a thread; `port` is where it listens."""

    def __init__(self, script: FakeApiScript, port: int = 0) -> None:
        self.script = script
        self.requests: list[tuple[str, dict[str, Any]]] = []
        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        except OSError as exc:
            raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from exc
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeApi:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()


def serve_forever(script: FakeApiScript, port: int) -> None:
    """`ptbench agents fake-api`: print the base URLs, then serve until Ctrl-C."""
    api = FakeApi(script, port)
    print(f"fake API on http://127.0.0.1:{api.port}/v1 (Responses and Chat Completions), {len(script.steps)} steps",
          flush=True)
    try:
        api.serve_forever()
    except KeyboardInterrupt:
        pass


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            """Quiet: the requests are kept, not logged."""

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.headers.get("Upgrade", "").lower() == "websocket":  # Codex tries a WebSocket first
                self._json(426, {"error": {"message": "no WebSocket here: use HTTPS"}})
            elif self.path.rstrip("/").endswith("/models"):
                model = {"id": api.script.model, "object": "model", "owned_by": "ptbench"}
                self._json(200, {"object": "list", "data": [model], "models": []})
            else:
                self._json(404, {"error": {"message": f"no such path {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(min(length, MAX_BODY)) or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "the body is not JSON"}})
                return
            body = body if isinstance(body, dict) else {}
            path = self.path.split("?")[0].rstrip("/")
            api.requests.append((path, body))
            model = str(body.get("model") or api.script.model)
            if path.endswith("/responses"):
                step = api.script.step(wire.responses_turns(body))
                if body.get("stream"):
                    self._stream([(event["type"], event) for event in wire.responses_events(step, body, model)])
                else:
                    done = list(wire.responses_events(step, body, model))[-1]
                    self._json(200, done["response"])
            elif path.endswith("/chat/completions"):
                text = wire.terminus_text(api.script.step(wire.chat_turns(body)))
                if body.get("stream"):
                    self._stream([(None, chunk) for chunk in wire.chat_chunks(text, model)], done_marker=True)
                else:
                    self._json(200, wire.chat_completion(text, model))
            else:
                self._json(404, {"error": {"message": f"no such path {self.path}"}})

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: list[tuple[str | None, dict[str, Any]]], done_marker: bool = False) -> None:
            parts = [(f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n" for name, data in events]
            if done_marker:
                parts.append("data: [DONE]\n\n")
            payload = "".join(parts).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
