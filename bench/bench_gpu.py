"""Generation on the accelerator: ptbench's backend paths against plain transformers `generate`, side by side in one
run, on a randomly initialised model of Qwen3-1.7B's shape built here (no hub). Without a GPU it runs a tiny shape on
the CPU so that the script itself stays tested; the figures that matter need a GPU (see bench/README.md).

Rows: plain `generate` (dynamic cache), ptbench's backend on the eager path (dynamic cache), ptbench's backend on the
GPU path (static cache, compiled by transformers; on the CPU the same shapes without compiling), and vLLM when it is
installed. Each row is warmed up once (compile and allocator warm-up are not in the figures), then timed.
Usage: python bench/bench_gpu.py [--batch 64] [--new-tokens 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable

QWEN3_1_7B = {"hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 28, "num_attention_heads": 16,
              "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 4096}
TINY = {"hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 4096, "max_position_embeddings": 1024}
PROMPT_TOKENS = 64


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--new-tokens", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch

    on_gpu = torch.cuda.is_available()
    batch = args.batch or (64 if on_gpu else 8)
    new_tokens = args.new_tokens or (256 if on_gpu else 32)
    model, shape = build_model(on_gpu)
    backend = make_backend(model, batch)
    prompts = [[(7 * row + 3 * i) % 250 + 20 for i in range(PROMPT_TOKENS - row % 5)] for row in range(batch)]
    device = torch.cuda.get_device_name(0) if on_gpu else "cpu (tiny shape: the GPU figures await a GPU)"
    print(f"device: {device}; model: {shape}, {sum(p.numel() for p in model.parameters()) / 1e9:.3f}B parameters, "
          f"{model.dtype}; batch {batch} x {new_tokens} new tokens, prompts of ~{PROMPT_TOKENS} tokens")
    rows: list[tuple[str, Callable[[], int]]] = [
        ("transformers generate (dynamic cache)", lambda: plain_generate(model, prompts, new_tokens)),
        ("ptbench backend, eager path", lambda: ptbench_generate(backend, prompts, new_tokens, static=False)),
        ("ptbench backend, static cache" + (" + compile" if on_gpu else ""),
         lambda: ptbench_generate(backend, prompts, new_tokens, static=True)),
    ]
    print(f"{'path':<44} {'warm-up s':>9} {'tok/s min':>10} {'tok/s med':>10} {'tok/s max':>10} {'ms/step':>8} "
          f"{'peak GiB':>8}")
    for name, run in rows:
        measure(name, run, args.repeats, new_tokens, on_gpu)
    if not importlib.util.find_spec("vllm"):
        print(f"{'vLLM':<44} not installed (the gpu extra)")
    return 0


def build_model(on_gpu: bool):  # noqa: ANN201 - a transformers model
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    shape = QWEN3_1_7B if on_gpu else TINY
    torch.manual_seed(0)
    config = Qwen3Config(**shape, tie_word_embeddings=True, bos_token_id=0, eos_token_id=1, pad_token_id=2)
    dtype = torch.bfloat16 if on_gpu else torch.float32
    with torch.device("cuda" if on_gpu else "cpu"):
        model = Qwen3ForCausalLM(config).to(dtype).eval()
    return model, "Qwen3-1.7B shape" if on_gpu else "tiny shape"


def make_backend(model, batch: int):  # noqa: ANN001, ANN201
    from ptbench.models.backends.transformers_backend import TransformersBackend
    from ptbench.models.templates import chat_template
    from ptbench.models.tokenizer import train_tokenizer

    texts = [f"def add(a, b): return a + b  # hello world {i}" for i in range(200)]
    tokenizer = train_tokenizer(texts, 291, 4096)
    return TransformersBackend(model, tokenizer, chat_template("qwen3"), batch_size=batch)


def plain_generate(model, prompts: list[list[int]], new_tokens: int) -> int:  # noqa: ANN001
    import torch

    width = max(map(len, prompts))
    ids = torch.tensor([[2] * (width - len(p)) + p for p in prompts], device=model.device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=model.device)
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             do_sample=False, pad_token_id=2)
    return int(out[:, width:].numel())


def ptbench_generate(backend, prompts: list[list[int]], new_tokens: int, static: bool) -> int:  # noqa: ANN001
    from ptbench.models.backends import GenerationSettings

    backend.static_cache = static
    backend.stop_ids  # noqa: B018 - resolved once, outside the timing
    done = backend._generate_batch(prompts, GenerationSettings(max_new_tokens=new_tokens), 1)
    return sum(c.output_tokens for row in done for c in row)


def measure(name: str, run: Callable[[], int], repeats: int, new_tokens: int, on_gpu: bool) -> None:
    import torch

    def timed() -> tuple[float, int]:
        if on_gpu:
            torch.cuda.synchronize()
        start = time.perf_counter()
        tokens = run()
        if on_gpu:
            torch.cuda.synchronize()
        return time.perf_counter() - start, tokens

    warm, _ = timed()
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    results = [timed() for _ in range(repeats)]
    rates = sorted(tokens / seconds for seconds, tokens in results)
    step_ms = statistics.median(seconds for seconds, _ in results) / new_tokens * 1000
    peak = torch.cuda.max_memory_allocated() / 2**30 if on_gpu else float("nan")
    print(f"{name:<44} {warm:>9.1f} {rates[0]:>10,.0f} {statistics.median(rates):>10,.0f} {rates[-1]:>10,.0f} "
          f"{step_ms:>8.1f} {peak:>8.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
