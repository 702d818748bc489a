"""Caps on what one request may ask of the server (every request is untrusted)."""

from __future__ import annotations

MAX_BODY_BYTES = 64 * 1024 * 1024  # one request body, after decompression
MAX_DATUMS = 4096  # per forward/backward request
MAX_SEQUENCE_TOKENS = 32768  # one datum or one prompt (further capped by the model's context)
MAX_SAMPLES = 128  # num_samples of one sample request
MAX_NEW_TOKENS = 8192  # max_tokens of one sample request
MAX_LORA_RANK = 512
MAX_NAME_CHARS = 200  # checkpoint names, ids
MAX_TRAINING_CLIENTS = 32  # live training clients (each holds a model and its optimizer)
MAX_PENDING = 10000  # futures kept for retrieval
POLL_WAIT_SECONDS = 20.0  # how long retrieve_future holds a request for a result before "try_again"
