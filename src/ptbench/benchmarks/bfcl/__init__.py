"""BFCL v3 simple: function calling, exact-match tool calls, 100 items (see README.md)."""

from ptbench.benchmarks.definition import DEV_SPLIT, NO_TEST_ITEMS, BenchmarkDef, DatasetSource, Generation

BENCHMARK = BenchmarkDef(
    name="bfcl",
    package=__name__,
    version=1,
    kind="posttrainbench",
    title="BFCL",
    about="Function calling: given tool definitions and a request, emit exactly the right call; scored by "
    "exact-match accuracy on {n} items.",
    main_metric="accuracy",
    generation=Generation(max_tokens=16384),
    size=100,
    dataset=DatasetSource(
        origin="bfcl-eval wheel, bfcl_eval/data/BFCL_v4_simple_python.json (= v3 simple, 400 items)",
        revision="bfcl-eval 2026.3.23",
        local_files="BFCL_v4_simple_python.json {id, question, function} and "
        "possible_answer/BFCL_v4_simple_python.json {id, ground_truth} (JSON lines)",
    ),
    allowed_training_data=f"{NO_TEST_ITEMS}; the hub's BFCL 'train' split IS the eval data and is forbidden",
    dev_split=DEV_SPLIT,
    dev_note="simple_python has 400 items: test is simple_python_0..99, dev the other 300",
    training=True,
)
