"""A local Tinker: the part of the Tinker training API that the `tinker` SDK's public clients use.

`ptbench tinker serve` runs it; the unmodified SDK talks to it by `base_url`. Modules: `limits` (caps on
untrusted input), `schemas` (the JSON requests, validated), `wire` (the SDK's protobuf bodies), `bases`
(which base models it serves), `storage` (`tinker://` checkpoints on disk), `losses`, `trainer` (LoRA
training clients), `memory` (what a pass needs, what the device has), `sampler` (sampling), `futures` (the SDK's
async result retrieval, the worker's fair turns), `service` (sessions and the calls, per client), `app` (the HTTP
routes, who the client is).
"""
