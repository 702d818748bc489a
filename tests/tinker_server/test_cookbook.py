"""The public tinker-cookbook's supervised training loop (`supervised.train.main`, sl_basic's recipe with the dataset
swapped for the cookbook's own example conversations, as sl_basic shows) runs unmodified against the local server.

tinker-cookbook is not a resolved dependency (every release asks an older transformers than the pinned one):
scripts/setup-venv installs it and its own packages with --no-deps into .venv/cookbook (requirements-cookbook.txt),
which this module appends to sys.path; elsewhere the test runs wherever the cookbook is importable.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

COOKBOOK = Path(sys.prefix) / "cookbook"
if COOKBOOK.is_dir():
    sys.path.append(str(COOKBOOK))  # after the environment's own packages, which win
cookbook = pytest.importorskip("tinker_cookbook", reason="tinker-cookbook is not installed (see the module docstring)")


def test_cookbook_supervised_loop_trains_and_checkpoints(tinker_url, service_client, tiny_dir, tmp_path):
    from tinker import types
    from tinker_cookbook.renderers import TrainOnWhat
    from tinker_cookbook.supervised import train
    from tinker_cookbook.supervised.data import FromConversationFileBuilder
    from tinker_cookbook.supervised.types import ChatDatasetBuilderCommonConfig
    from tinker_cookbook.tokenizer_utils import register_tokenizer, unregister_tokenizer
    from transformers import AutoTokenizer

    # The server serves "tiny" by name, never a path; the cookbook's own registry gives that name its tokenizer.
    register_tokenizer("tiny", lambda: AutoTokenizer.from_pretrained(str(tiny_dir)))

    common = ChatDatasetBuilderCommonConfig(
        model_name_for_tokenizer="tiny",
        renderer_name="role_colon",
        max_length=256,
        batch_size=8,
        train_on_what=TrainOnWhat.ALL_ASSISTANT_MESSAGES,
    )
    examples = Path(cookbook.__file__).parent / "example_data" / "conversations.jsonl"
    config = train.Config(
        log_path=str(tmp_path / "log"),
        model_name="tiny",
        recipe_name="recipe_sl_basic",
        renderer_name="role_colon",
        dataset_builder=FromConversationFileBuilder(common_config=common, file_path=str(examples)),
        learning_rate=1e-3,
        lora_rank=8,
        base_url=tinker_url,
        max_steps=3,
        eval_every=0,
        save_every=0,
    )
    try:
        asyncio.run(train.main(config))
    finally:
        unregister_tokenizer("tiny")

    metrics = [json.loads(line) for line in (tmp_path / "log" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [0, 1, 2]
    assert all(m["train_mean_nll"] > 0 for m in metrics)
    final = [json.loads(line) for line in (tmp_path / "log" / "checkpoints.jsonl").read_text().splitlines()][-1]
    sampler = service_client.create_sampling_client(model_path=final["sampler_path"]).result()
    out = sampler.sample(types.ModelInput.from_ints([1, 2, 3]), 1, types.SamplingParams(max_tokens=4)).result()
    assert len(out.sequences[0].tokens) >= 1
