"""Sessions, training clients and sampling sessions, and the calls on them (each a method; slow ones become futures)."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.tinker_server import limits, schemas, wire
from ptbench.tinker_server.bases import TINY, BaseModelRef, context_length, resolve_base
from ptbench.tinker_server.errors import CallError
from ptbench.tinker_server.futures import Futures, Proto, Result
from ptbench.tinker_server.sampler import Sampler
from ptbench.tinker_server.storage import LoraShape, Storage, tinker_path
from ptbench.tinker_server.trainer import TrainingModel, pick_device

MAX_LOADED_SAMPLERS = 4


@dataclass
class SamplingSession:
    """What a sampling session samples from: a base model, plus saved sampler weights if any."""

    base: BaseModelRef
    weights: Path | None
    model_path: str | None
    clients: int = 0


class TinkerService:
    """The server's state. Slow work runs on the futures' one worker thread, which alone touches models."""

    def __init__(self, storage: Storage, device: str | None = None) -> None:
        self.storage = storage
        self.device = device or pick_device()
        self.futures = Futures()
        self.sessions: dict[str, float] = {}
        self.models: dict[str, TrainingModel] = {}
        self.sampling: dict[str, SamplingSession] = {}
        self._samplers: dict[tuple[str, str | None], Sampler] = {}
        self._lock = threading.Lock()

    # --- sessions and capabilities -------------------------------------------------------------
    def create_session(self, request: schemas.CreateSession) -> dict[str, Any]:
        session_id = uuid.uuid4().hex
        self.sessions[session_id] = time.time()
        return {"type": "create_session", "session_id": session_id}

    def heartbeat(self, request: schemas.Heartbeat) -> dict[str, Any]:
        self._session(request.session_id)
        self.sessions[request.session_id] = time.time()
        return {"type": "session_heartbeat"}

    def capabilities(self) -> dict[str, Any]:
        from ptbench.models.tiny import ensure_tiny

        return {
            "supported_models": [
                {
                    "model_name": TINY,
                    "max_context_length": context_length(ensure_tiny()),
                    "trainable": True,
                    "sampleable": True,
                }
            ]
        }

    def _session(self, session_id: str) -> None:
        if session_id not in self.sessions:
            raise CallError(f"unknown session {session_id!r}")

    # --- training clients -----------------------------------------------------------------------
    def create_model(self, request: schemas.CreateModel) -> dict[str, Any]:
        self._session(request.session_id)
        if request.lora_config is None:
            raise CallError(
                "create_model without lora_config (full fine-tuning) is not supported; use a LoRA training client"
            )
        base = resolve_base(request.base_model)
        spec = request.lora_config
        lora = LoraShape(
            rank=spec.rank, train_attn=spec.train_attn, train_mlp=spec.train_mlp, train_unembed=spec.train_unembed
        )
        model_id = f"{request.session_id}:train:{request.model_seq_id}"

        def work() -> Result:
            self._add_model(TrainingModel(model_id, base, lora, spec.seed, self.device))
            return {"type": "create_model", "model_id": model_id}

        return self._future(work, model_id)

    def _add_model(self, model: TrainingModel) -> None:
        if len(self.models) >= limits.MAX_TRAINING_CLIENTS:
            raise CallError(f"this server holds at most {limits.MAX_TRAINING_CLIENTS} training clients")
        if model.model_id in self.models:
            raise CallError(f"model {model.model_id} exists already")
        self.models[model.model_id] = model

    def _model(self, model_id: str) -> TrainingModel:
        model = self.models.get(model_id)
        if model is None:
            raise CallError(f"unknown model {model_id!r}")
        return model

    def get_info(self, request: schemas.GetInfo) -> dict[str, Any]:
        model = self._model(request.model_id)
        return {
            "type": "get_info",
            "model_id": model.model_id,
            "model_data": {"arch": "lora", "model_name": model.base.name, "tokenizer_id": str(model.base.path)},
            "is_lora": True,
            "lora_rank": model.lora.rank,
            "model_name": model.base.name,
        }

    def forward_backward(self, body: bytes) -> dict[str, Any]:
        request = wire.decode_forward_backward(body)
        self._model(request.model_id)

        def work() -> Result:
            outputs, metrics = self._model(request.model_id).forward_backward(request)
            return Proto(wire.encode_forward_backward(outputs, metrics))

        return self._future(work, request.model_id)

    def optim_step(self, request: schemas.OptimStep) -> dict[str, Any]:
        self._model(request.model_id)

        def work() -> Result:
            return {"metrics": self._model(request.model_id).optim_step(request.adam_params)}

        return self._future(work, request.model_id)

    def save_weights(self, request: schemas.SaveWeights) -> dict[str, Any]:
        model = self._model(request.model_id)
        name = request.path or f"state-{model.steps:06d}-{uuid.uuid4().hex[:6]}"

        def work() -> Result:
            model.save(self.storage, "training", name)
            return {"type": "save_weights", "path": tinker_path(model.model_id, "training", name)}

        return self._future(work, model.model_id)

    def save_for_sampler(self, request: schemas.SaveForSampler) -> dict[str, Any]:
        model = self._model(request.model_id)
        name = request.path or f"sampler-{model.steps:06d}-{uuid.uuid4().hex[:6]}"
        path = tinker_path(model.model_id, "sampler", name)

        def work() -> Result:
            directory = model.save(self.storage, "sampler", name)
            if request.path is not None:
                return {"type": "save_weights_for_sampler", "path": path}
            session_id = self._add_sampling(SamplingSession(model.base, directory, path))
            return {"type": "save_weights_for_sampler", "sampling_session_id": session_id}

        return self._future(work, model.model_id)

    def load_weights(self, request: schemas.LoadWeights) -> dict[str, Any]:
        directory, meta = self.storage.resolve(request.path, "training")
        session_id, seq = request.session_id, request.model_seq_id
        if request.model_id is None and (session_id is None or seq is None):
            raise CallError("load_weights needs model_id, or session_id and model_seq_id")
        if request.model_id is not None:
            self._model(request.model_id)
        else:
            self._session(str(session_id))

        def work() -> Result:
            if request.model_id is not None:
                model = self._model(request.model_id)
            else:
                model = TrainingModel(
                    f"{session_id}:train:{seq}", resolve_base(meta.base_model), meta.lora, 0, self.device
                )
            model.load(directory, meta, request.optimizer)
            if request.model_id is None:
                self._add_model(model)
            return {"type": "load_weights", "path": request.path, "model_id": model.model_id}

        return self._future(work, request.model_id)

    # --- sampling -------------------------------------------------------------------------------
    def create_sampling_session(self, request: schemas.CreateSamplingSession) -> dict[str, Any]:
        self._session(request.session_id)
        if request.model_path:
            directory, meta = self.storage.resolve(request.model_path, "sampler")
            session = SamplingSession(resolve_base(meta.base_model), directory, request.model_path)
        elif request.base_model:
            session = SamplingSession(resolve_base(request.base_model), None, None)
        else:
            raise CallError("create_sampling_session needs model_path or base_model")
        return {"type": "create_sampling_session", "sampling_session_id": self._add_sampling(session)}

    def _add_sampling(self, session: SamplingSession) -> str:
        session_id = f"sampler-{uuid.uuid4().hex}"
        with self._lock:
            self.sampling[session_id] = session
        return session_id

    def _sampling(self, session_id: str) -> SamplingSession:
        session = self.sampling.get(session_id)
        if session is None:
            raise CallError(f"unknown sampling session {session_id!r}")
        return session

    def join_sampling_session(self, request: schemas.JoinSamplingSession) -> dict[str, Any]:
        session = self._sampling(request.sampling_session_id)
        with self._lock:
            session.clients += 1
            counter = session.clients
        return {"type": "join_sampling_session", "client_counter": counter}

    def get_sampler(self, sampler_id: str) -> dict[str, Any]:
        session = self._sampling(sampler_id)
        return {"sampler_id": sampler_id, "base_model": session.base.name, "model_path": session.model_path}

    def sample(self, request: schemas.Sample) -> dict[str, Any]:
        if request.topk_prompt_logprobs or request.topk_sample_logprobs or request.prompt_alt_tokens_k:
            raise CallError("top-k log-probabilities and prompt_alt_tokens are not supported by this server")
        if request.target_prompt_logprobs is not None:
            raise CallError("target_prompt_logprobs is not supported by this server")
        if request.sampling_session_id:
            session = self._sampling(request.sampling_session_id)
        elif request.model_path:
            directory, meta = self.storage.resolve(request.model_path, "sampler")
            session = SamplingSession(resolve_base(meta.base_model), directory, request.model_path)
        elif request.base_model:
            session = SamplingSession(resolve_base(request.base_model), None, None)
        else:
            raise CallError("sample needs sampling_session_id, model_path or base_model")
        prompt = request.prompt.tokens()

        def work() -> Result:
            sampler = self._sampler(session)
            prompt_logprobs = sampler.prompt_logprobs(prompt) if request.prompt_logprobs else None
            sequences = sampler.sample(prompt, request.num_samples, request.sampling_params)
            return Proto(wire.encode_sample(sequences, prompt_logprobs))

        answer = self._future(work, None)
        answer["sample_sequence_ids"] = [f"{answer['request_id']}-{i}" for i in range(request.num_samples)]
        return answer

    def _sampler(self, session: SamplingSession) -> Sampler:
        key = (str(session.base.path), str(session.weights) if session.weights else None)
        sampler = self._samplers.pop(key, None) or Sampler(session.base, session.weights, self.device)
        self._samplers[key] = sampler  # most recently used last
        while len(self._samplers) > MAX_LOADED_SAMPLERS:
            del self._samplers[next(iter(self._samplers))]
        return sampler

    # --- futures --------------------------------------------------------------------------------
    def _future(self, work: Any, model_id: str | None) -> dict[str, Any]:
        request_id = self.futures.submit(work)
        return {"request_id": request_id, "model_id": model_id} if model_id else {"request_id": request_id}

    async def retrieve(self, request: schemas.RetrieveFuture) -> Result:
        return await self.futures.retrieve(request.request_id)
