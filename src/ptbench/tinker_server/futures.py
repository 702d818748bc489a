"""The SDK's futures: a call returns a request id at once, its work runs on one worker thread in arrival order,
and `retrieve_future` long-polls for the result (JSON, or protobuf bytes for the types the SDK reads as proto)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ptbench.errors import first_line
from ptbench.tinker_server import limits
from ptbench.tinker_server.errors import CallError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Proto:
    """A result the SDK reads as protobuf."""

    data: bytes


Result = dict[str, Any] | Proto


class Futures:
    """Pending and finished calls by request id; one worker thread runs them in order."""

    def __init__(self) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tinker-worker")
        self._futures: OrderedDict[str, Future[Result]] = OrderedDict()

    def submit(self, work: Callable[[], Result]) -> str:
        """Queue `work`; its request id."""
        request_id = uuid.uuid4().hex
        self._futures[request_id] = self._worker.submit(work)
        while len(self._futures) > limits.MAX_PENDING:
            oldest = next(iter(self._futures))
            if not self._futures[oldest].done():
                break
            del self._futures[oldest]
        return request_id

    async def retrieve(self, request_id: str, wait: float = limits.POLL_WAIT_SECONDS) -> Result:
        """The call's result, its failure as `{"error", "category"}`, or `try_again` if still running after `wait`."""
        future = self._futures.get(request_id)
        if future is None:
            raise CallError(f"unknown request id {request_id!r}")
        try:
            result = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), wait)
        except TimeoutError:
            return {"type": "try_again", "request_id": request_id, "queue_state": "active"}
        except CallError as exc:
            return {"error": first_line(exc), "category": "user"}
        except Exception as exc:
            log.exception("call %s failed", request_id)
            return {"error": f"server error: {first_line(exc)}", "category": "server"}
        return result

    def close(self) -> None:
        """Stop the worker after the calls already queued."""
        self._worker.shutdown(wait=False, cancel_futures=True)
