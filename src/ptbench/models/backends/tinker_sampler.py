"""Sampling a Tinker-trained checkpoint (frogs tasks): the checkpoint named in path.txt, via the tinker SDK.

path.txt must hold one `tinker://RUN/sampler_weights/NAME` path. The sampling client reports the
checkpoint's base model, which must be the task's. Prompts are rendered locally with the forced
chat template and the base model's tokenizer (from the registry, pinned, never remote code), and
sent as token ids. The service is the real one (TINKER_API_KEY) or, with $PTBENCH_TINKER_URL, a local
`ptbench tinker serve` (any tml- key).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptbench.errors import UserError, first_line
from ptbench.models.backends.base import Backend, Completion, Conversation, GenerationSettings, Tools
from ptbench.models.registry import BaseModelInfo
from ptbench.models.templates import ChatTemplate, chat_template
from ptbench.settings import settings

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

KEY_ENV, URL_ENV = "TINKER_API_KEY", "TINKER_BASE_URL"
HEALTH_SECONDS = 30.0


def read_tinker_path(path_file: Path) -> str:
    """The sampler checkpoint named in path.txt; anything else is a UserError."""
    from tinker import ParsedCheckpointTinkerPath  # heavy: tinker (3.6 s CPU)

    if not path_file.is_file():
        raise UserError(f"no {path_file.name} at {path_file.parent}")
    text = path_file.read_text(errors="replace").strip()
    try:
        parsed = ParsedCheckpointTinkerPath.from_tinker_path(text)
    except ValueError:
        raise UserError(f"{path_file.name} does not name a tinker checkpoint: {text[:80]!r}") from None
    if parsed.checkpoint_type != "sampler":
        raise UserError(
            f"{path_file.name} names {parsed.checkpoint_type} weights; sampling needs tinker://RUN/sampler_weights/NAME"
        )
    return text


def checked_service_url(base_url: str | None = None) -> str | None:
    """The Tinker API's address (`base_url`, else $TINKER_BASE_URL, else None: the service), checked: a missing key
    ($TINKER_API_KEY) or a server that does not answer is a one-line UserError, never a hang (the SDK retries a dead
    address without end). Cheap (no tinker SDK): callers check before loading anything heavy."""
    import httpx  # heavy: httpx (0.3 s CPU)

    if not os.environ.get(KEY_ENV):
        raise UserError(
            f"no {KEY_ENV}: set it for the Tinker service, or run a local `ptbench tinker serve` and "
            f"set {URL_ENV} and any {KEY_ENV}=tml-..."
        )
    url = base_url or os.environ.get(URL_ENV)
    if url:
        try:
            httpx.get(f"{url.rstrip('/')}/api/v1/healthz", timeout=HEALTH_SECONDS).raise_for_status()
        except httpx.HTTPError as exc:
            raise UserError(f"the Tinker API at {url} does not answer: {first_line(exc)}") from exc
    return url


def open_service(base_url: str | None = None) -> Any:
    """A tinker ServiceClient on the address `checked_service_url` checks first."""
    import tinker  # heavy: tinker (3.6 s CPU)

    url = checked_service_url(base_url)
    try:
        return tinker.ServiceClient(base_url=url or None)
    except tinker.TinkerError as exc:
        raise UserError(f"cannot open the Tinker API: {first_line(exc)}") from exc


class TinkerSampler(Backend):
    """A tinker SamplingClient behind the Backend interface."""

    def __init__(
        self, client: Any, tokenizer: PreTrainedTokenizerBase, template: ChatTemplate, checkpoint: str
    ) -> None:
        self.client = client
        self.tokenizer = tokenizer
        self.template = template
        self.checkpoint = checkpoint

    @classmethod
    def from_path_file(
        cls,
        path_file: Path,
        info: BaseModelInfo,
        service_client: Any = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
    ) -> TinkerSampler:
        """Open the checkpoint in path.txt, refusing one trained from another base model."""
        if not info.tinker:
            raise UserError(f"base model {info.key} is not trained through Tinker")
        checkpoint = read_tinker_path(path_file)
        if service_client is None:
            service_client = open_service(settings().tinker_url or None)
        client = service_client.create_sampling_client(model_path=checkpoint).result()
        trained_from = client.get_base_model()
        if trained_from != info.tinker_name:
            raise UserError(f"checkpoint {checkpoint} was trained from {trained_from}, not {info.tinker_name}")
        if tokenizer is None:
            from ptbench.models.loading import (  # late-bound: tests monkeypatch load_tokenizer
                base_source,
                load_tokenizer,
            )

            tokenizer = load_tokenizer(base_source(info))
        return cls(client, tokenizer, chat_template(info.chat_template), checkpoint)

    def generate(
        self,
        conversations: list[Conversation],
        settings: GenerationSettings,
        n: int = 1,
        tools: list[Tools | None] | None = None,
    ) -> list[list[Completion]]:
        """`n` completions per conversation; all requests are in flight at once."""
        from tinker import ModelInput, SamplingParams  # heavy: tinker (3.6 s CPU)

        params = SamplingParams(
            max_tokens=settings.max_new_tokens,
            temperature=settings.temperature,
            top_p=settings.top_p,
            seed=settings.seed,
            stop=[*settings.stop, *self.template.stop_tokens],
        )
        prompts = self.prompt_ids(conversations, tools)
        futures = [
            self.client.sample(prompt=ModelInput.from_ints(ids), num_samples=n, sampling_params=params)
            for ids in prompts
        ]
        return [
            [self.finish(list(sequence.tokens), settings, len(ids)) for sequence in future.result().sequences]
            for ids, future in zip(prompts, futures, strict=True)
        ]
