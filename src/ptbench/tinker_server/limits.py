"""Caps on what one request, and one client (a trial: see `app.client_of`), may ask of the server; every request is
untrusted."""

from __future__ import annotations

MAX_BODY_BYTES = 64 * 1024 * 1024  # one request body, after decompression
MAX_BODY_BYTES_IN_FLIGHT = 2 * MAX_BODY_BYTES  # request bodies one client may have half-sent at once
BODY_SECONDS = 60.0  # one request body must arrive whole within this time
MAX_DATUMS = 4096  # per forward/backward request
MAX_SEQUENCE_TOKENS = 32768  # one datum or one prompt (further capped by the model's context)
MAX_SAMPLES = 128  # num_samples of one sample request
MAX_NEW_TOKENS = 8192  # max_tokens of one sample request
MAX_LORA_RANK = 512
MAX_NAME_CHARS = 200  # checkpoint names, ids
MAX_TRAINING_CLIENTS = 8  # live training clients of one client (each holds a model and its optimizer)
MAX_QUEUED = 64  # one client's calls queued or running
MAX_SESSIONS = 64  # one client's live sessions
MAX_SAMPLING_SESSIONS = 256  # one client's live sampling sessions
MAX_CHECKPOINT_BYTES = 64 * 1024**3  # what one client's saved checkpoints may take on disk
MAX_PENDING = 10000  # futures kept for retrieval
POLL_WAIT_SECONDS = 20.0  # how long retrieve_future holds a request for a result before "try_again"
SESSION_SECONDS = 120.0  # a session without a heartbeat for this long has ended (the SDK beats every 10 s)
