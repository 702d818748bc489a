"""GPQA main: graduate-level multiple-choice science, 448 questions (see README.md)."""

from ptbench.benchmarks.definition import DEV_SPLIT, NO_TEST_ITEMS, BenchmarkDef, DatasetSource, Generation

BENCHMARK = BenchmarkDef(
    name="gpqa",
    package=__name__,
    version=1,
    kind="posttrainbench",
    title="GPQA",
    about="Graduate-level multiple-choice science questions, answered after reasoning; scored by accuracy "
    "on {n} questions.",
    main_metric="accuracy",
    generation=Generation(max_tokens=16384),
    size=448,
    dataset=DatasetSource(
        origin="hf:Idavidrein/gpqa (configs gpqa_main, gpqa_extended; gated)",
        revision=None,
        local_files="gpqa_main.csv, gpqa_extended.csv: the dataset's CSV columns (Question, "
        "Correct Answer, Incorrect Answer 1-3, Record ID)",
    ),
    allowed_training_data=f"{NO_TEST_ITEMS}; no GPQA questions (main, diamond or extended)",
    dev_split=DEV_SPLIT,
    dev_note="gpqa_extended minus gpqa_main (98 questions): same writers, disjoint from the 448 test items",
    training=True,
)
