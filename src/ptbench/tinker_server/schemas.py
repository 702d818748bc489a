"""The JSON requests the SDK sends, as pydantic models with caps (unknown fields are ignored, as new SDKs add them)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ptbench.tinker_server import limits

Name = Annotated[str, Field(min_length=1, max_length=limits.MAX_NAME_CHARS, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
Id = Annotated[str, Field(min_length=1, max_length=limits.MAX_NAME_CHARS)]
Tokens = Annotated[list[Annotated[int, Field(ge=0, lt=2**31)]], Field(max_length=limits.MAX_SEQUENCE_TOKENS)]


class Request(BaseModel):
    """Base of every request: unknown fields ignored, known ones validated."""

    model_config = ConfigDict(extra="ignore", protected_namespaces=())


class CreateSession(Request):
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list, max_length=100)
    sdk_version: str | None = Field(None, max_length=100)


class Heartbeat(Request):
    session_id: Id


class LoraSpec(Request):
    rank: int = Field(ge=1, le=limits.MAX_LORA_RANK)
    seed: int | None = None
    train_unembed: bool = True
    train_mlp: bool = True
    train_attn: bool = True


class CreateModel(Request):
    session_id: Id
    model_seq_id: int = Field(ge=0)
    base_model: str = Field(min_length=1, max_length=4096)
    lora_config: LoraSpec | None = None


class UnloadModel(Request):
    model_id: Id


class GetInfo(Request):
    model_id: Id


class AdamSpec(Request):
    learning_rate: float = Field(1e-4, ge=0, le=10)
    beta1: float = Field(0.9, ge=0, lt=1)
    beta2: float = Field(0.95, ge=0, lt=1)
    eps: float = Field(1e-12, gt=0, le=1)
    weight_decay: float = Field(0.0, ge=0, le=10)
    grad_clip_norm: float = Field(0.0, ge=0)
    type: str | None = Field(None, max_length=50)


class OptimStep(Request):
    model_id: Id
    seq_id: int | None = None
    adam_params: AdamSpec = Field(validation_alias=AliasChoices("adam_params", "optim_params", "optimizer_params"))


class SaveWeights(Request):
    model_id: Id
    path: Name | None = None


class SaveForSampler(Request):
    model_id: Id
    path: Name | None = None
    sampling_session_seq_id: int | None = Field(None, ge=0)


class LoadWeights(Request):
    model_id: Id | None = None
    session_id: Id | None = None
    model_seq_id: int | None = Field(None, ge=0)
    path: str = Field(min_length=1, max_length=1000)
    optimizer: bool = False


class CreateSamplingSession(Request):
    session_id: Id
    sampling_session_seq_id: int = Field(ge=0)
    base_model: str | None = Field(None, max_length=4096)
    model_path: str | None = Field(None, max_length=1000)


class JoinSamplingSession(Request):
    sampling_session_id: Id


class TextChunk(Request):
    tokens: Tokens
    type: str = Field("encoded_text", pattern="^encoded_text$")


class Prompt(Request):
    chunks: list[TextChunk] = Field(max_length=1000)

    def tokens(self) -> list[int]:
        """The prompt's tokens, chunks joined."""
        return [token for chunk in self.chunks for token in chunk.tokens]


class SamplingSpec(Request):
    max_tokens: int | None = Field(None, ge=1, le=limits.MAX_NEW_TOKENS)
    seed: int | None = None
    stop: str | list[str] | list[int] | None = Field(None)
    temperature: float = Field(1.0, ge=0, le=100)
    top_k: int = Field(-1, ge=-1)
    top_p: float = Field(1.0, gt=0, le=1)


class Sample(Request):
    num_samples: int = Field(1, ge=1, le=limits.MAX_SAMPLES)
    prompt: Prompt
    sampling_params: SamplingSpec
    base_model: str | None = Field(None, max_length=4096)
    model_path: str | None = Field(None, max_length=1000)
    sampling_session_id: Id | None = None
    prompt_logprobs: bool | None = None
    topk_prompt_logprobs: int = 0
    topk_sample_logprobs: int = 0
    prompt_alt_tokens_k: int = 0
    target_prompt_logprobs: Any = None


class RetrieveFuture(Request):
    request_id: Id
    allow_metadata_only: bool = False
