"""The HTTP routes (FastAPI): the SDK's paths, JSON checked by `schemas`, protobuf by `wire`; the rest a clear 404.

Errors answer 4xx with `{"error": ...}` (the SDK retries 5xx, so a refusal must never be one); a path this
server does not serve names the SDK call behind it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from ptbench.errors import first_line, validation_line
from ptbench.tinker_server import limits, schemas, wire
from ptbench.tinker_server.errors import CallError, NotImplementedCall
from ptbench.tinker_server.futures import Proto
from ptbench.tinker_server.service import TinkerService

log = logging.getLogger(__name__)
API = "/api/v1"

# Server flags the SDK fetches first: no JWT exchange, plain httpx, one fwd/bwd chunk at a time, per-request futures.
CLIENT_CONFIG = {
    "pjwt_auth_enabled": False,
    "use_pyqwest_transport": False,
    "parallel_fwdbwd_chunks": False,
    "proto_compress_fwdbwd": False,
    "sample_use_retrieve_futures": False,
    "custom_loss_server_side": False,
    "sample_join_sampling_session": False,
}

# Paths the SDK knows that this server does not serve, and the public calls behind them.
UNSERVED = {
    "copy_weights": "copy_weights (ServiceClient / RestClient)",
    "save_weights_external": "TrainingClient.save_weights_external",
    "create_custom_loss": "ServiceClient.create_custom_loss with server-side custom losses",
    "retrieve_futures": "the sampling futures poller (retrieve_futures)",
    "weights_info": "RestClient.get_weights_info_by_tinker_path",
    "training_runs": "RestClient training-run and checkpoint listing / deletion / publishing",
    "checkpoints": "RestClient.list_user_checkpoints",
    "sessions": "RestClient session listing and search",
    "auth": "JWT authentication",
    "billing": "RestClient.get_billing_usage",
    "whoami": "RestClient.whoami",
    "audit_log": "RestClient.get_audit_log",
    "unload_model": "unload_model",
}


def error(status: int, message: str) -> JSONResponse:
    """A one-line error the SDK shows as its exception's message."""
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request) -> bytes:
    """The request body, refused past MAX_BODY_BYTES."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limits.MAX_BODY_BYTES):
        raise CallError(f"request body larger than {limits.MAX_BODY_BYTES} bytes")
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limits.MAX_BODY_BYTES:
            raise CallError(f"request body larger than {limits.MAX_BODY_BYTES} bytes")
    return bytes(body)


def render(result: Any) -> Response:
    """A call's answer: protobuf bytes or JSON (None = an empty JSON body)."""
    if isinstance(result, Proto):
        return Response(result.data, media_type=wire.PROTO_TYPE)
    return JSONResponse(result)


def build_app(service: TinkerService) -> FastAPI:
    """The FastAPI app serving `service`."""
    app = FastAPI(title="ptbench local Tinker", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(CallError)
    async def _refused(request: Request, exc: CallError) -> JSONResponse:
        return error(404 if isinstance(exc, NotImplementedCall) else 400, first_line(exc))

    @app.exception_handler(ValidationError)
    async def _invalid(request: Request, exc: ValidationError) -> JSONResponse:
        return error(400, f"invalid {request.url.path.removeprefix(API + '/')}: {validation_line(exc)}")

    @app.exception_handler(wire.WireError)
    async def _unreadable(request: Request, exc: wire.WireError) -> JSONResponse:
        return error(400, first_line(exc))

    def json_call(path: str, schema: type[BaseModel], call: Callable[[Any], Any]) -> None:
        async def handle(request: Request) -> Response:
            parsed = schema.model_validate_json(await read_body(request) or b"{}")
            result = call(parsed)
            return render(await result if hasattr(result, "__await__") else result)

        app.add_api_route(f"{API}/{path}", handle, methods=["POST"], name=path)

    for path, schema, call in (
        ("create_session", schemas.CreateSession, service.create_session),
        ("session_heartbeat", schemas.Heartbeat, service.heartbeat),
        ("create_model", schemas.CreateModel, service.create_model),
        ("get_info", schemas.GetInfo, service.get_info),
        ("optim_step", schemas.OptimStep, service.optim_step),
        ("save_weights", schemas.SaveWeights, service.save_weights),
        ("save_weights_for_sampler", schemas.SaveForSampler, service.save_for_sampler),
        ("load_weights", schemas.LoadWeights, service.load_weights),
        ("create_sampling_session", schemas.CreateSamplingSession, service.create_sampling_session),
        ("join_sampling_session", schemas.JoinSamplingSession, service.join_sampling_session),
        ("asample", schemas.Sample, service.sample),
        ("retrieve_future", schemas.RetrieveFuture, service.retrieve),
    ):
        json_call(path, schema, call)

    @app.post(f"{API}/forward_backward")
    async def forward_backward(request: Request) -> Response:
        body = wire.decompress(await read_body(request), request.headers.get("content-encoding"))
        return render(service.forward_backward(body))

    @app.get(f"{API}/healthz")
    async def health() -> Response:
        return JSONResponse({"status": "ok"})

    @app.get(f"{API}/get_server_capabilities")
    async def capabilities() -> Response:
        return JSONResponse(service.capabilities())

    @app.post(f"{API}/client/config")
    async def client_config() -> Response:
        return JSONResponse(CLIENT_CONFIG)

    @app.post(f"{API}/client/dynamic_config")
    async def client_dynamic_config() -> Response:
        return JSONResponse({"refresh_interval_sec": 3600})

    @app.post(f"{API}/telemetry")
    async def telemetry() -> Response:
        return JSONResponse({"status": "accepted"})

    @app.post(API + "/sessions/{session_id}/finish")
    async def finish(session_id: str) -> Response:
        service.sessions.pop(session_id, None)
        return JSONResponse(None)

    @app.get(API + "/samplers/{sampler_id}")
    async def sampler(sampler_id: str) -> Response:
        return JSONResponse(service.get_sampler(sampler_id))

    @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def unserved(path: str, request: Request) -> Response:
        first = path.removeprefix(API.lstrip("/") + "/").split("/")[0]
        call = UNSERVED.get(first, f"{request.method} /{path}")
        return error(404, f"ptbench's local Tinker does not implement {call}")

    return app
