"""Arena-Hard v2 writing: creative writing judged pairwise against a baseline (see README.md)."""

from ptbench.benchmarks.definition import NO_TEST_ITEMS, BenchmarkDef, DatasetSource, Generation

BENCHMARK = BenchmarkDef(
    name="arena-hard-writing",
    package=__name__,
    version=1,
    kind="posttrainbench",
    title="Arena-Hard (writing)",
    about="Creative-writing prompts, judged pairwise by an LLM judge against a baseline model's "
    "answers (both orders); scored by win rate on {n} prompts.",
    main_metric="win_rate",
    generation=Generation(max_tokens=16384),
    size=250,
    dataset=DatasetSource(
        origin="Arena-Hard v2.0 creative_writing prompts + a baseline model's answers (local copies only)",
        revision=None,
        local_files="question.jsonl: {uid, category, prompt}; "
        "baseline.jsonl: {uid, messages: [..., {role: assistant, content}]}",
    ),
    allowed_training_data=f"{NO_TEST_ITEMS}; no Arena-Hard prompts, no distillation of the judge or baseline",
    dev_split=None,
    dev_note="the 250 writing prompts are the whole test set; no disjoint prompts share its baseline answers",
    judge_roles=("judge",),
    training=True,
)
