"""Frogs, single turn: the Frog Placement Game answered in one JSON reply (see README.md)."""

from ptbench.benchmarks.definition import DEV_SPLIT, SAMPLING_PARAMETERS, BenchmarkDef, DatasetSource, Generation

BENCHMARK = BenchmarkDef(
    name="frogs-single",
    package=__name__,
    version=1,
    kind="frogs",
    title="The Frog Placement Game (single-turn)",
    about="The game and its scoring are described below.",
    main_metric="pass_at_k",
    # k samples per board (epochs; a task's samples_per_item overrides) at a sampling temperature
    generation=Generation(max_tokens=4096, temperature=0.7, epochs=4, imposed=SAMPLING_PARAMETERS),
    size=500,
    dataset=DatasetSource(
        origin="ptbench frogs generator, secret held-out seed (written by the task export)",
        revision="frogs generator v1",
        local_files="heldout.jsonl beside the task spec (--heldout)",
    ),
    allowed_training_data=(
        "boards you generate yourself, e.g. with `ptbench frogs generate` (the training generator, which "
        "never produces a held-out board) or your own generator, with solutions from any solver; no "
        "held-out boards, and no outputs of other language models"
    ),
    dev_split=DEV_SPLIT,
    dev_note="boards from the training generator at the task's seed, never a held-out board",
)
