"""`ptbench verify` (score a submission), `ptbench evaluate` (the agent's dev-split helper), `ptbench baseline`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from ptbench.cli.options import console, error_line
from ptbench.models.registry import get_base_model
from ptbench.settings import settings

Device = Literal["cpu", "gpu"]
Mode = Literal["zero-shot", "few-shot", "instruct"]

_DATA_DIR = typer.Option(
    "--data-dir",
    help="local copies of the benchmark's data, its folder or a data directory (else the pinned hub revision)",
)
_AGENT_DATA_DIR = typer.Option(
    "--data-dir",
    help="local copies of the benchmark's data, its folder or a data directory (else $PTBENCH_DATA_DIR, else the "
    "pinned hub revision)",
)
_LIMIT = typer.Option("--limit", help="score only the first N items (or boards)")
_DEVICE = typer.Option("--device", help="cpu or gpu (default: the task's device)")
_JUDGE = typer.Option("--judge", help="ROLE=PROVIDER/MODEL for judged benchmarks (repeatable)")
_DECODING = typer.Option(
    "--decoding",
    help="submission: the submitted generation_config.json's sampling parameters "
    "apply where the benchmark fixes none, as vLLM applies them; benchmark: never read it "
    "(default: the task's, submission unless exported otherwise)",
)
_MAX_TOKENS = typer.Option(
    "--max-tokens",
    help="override the benchmark's max tokens (CPU smoke runs; recorded; default $PTBENCH_VERIFY_MAX_TOKENS)",
)


def _max_tokens(given: int | None) -> int | None:
    """--max-tokens, else $PTBENCH_VERIFY_MAX_TOKENS."""
    return given if given is not None else settings().verify_max_tokens


def verify_command(
    task: Annotated[Path, typer.Option("--task", help="the task spec (task.json)")],
    submission: Annotated[Path, typer.Option("--submission", help="final_model/ (or path.txt for Tinker)")],
    out: Annotated[Path, typer.Option("--out", help="where reward.json, details.json and inspect/ go")],
    data_dir: Annotated[Path | None, _DATA_DIR] = None,
    limit: Annotated[int | None, _LIMIT] = None,
    device: Annotated[Device | None, _DEVICE] = None,
    heldout: Annotated[
        Path | None, typer.Option("--heldout", help="frogs held-out boards (default: heldout.jsonl beside the spec)")
    ] = None,
    judge: Annotated[list[str] | None, _JUDGE] = None,
    max_tokens: Annotated[int | None, _MAX_TOKENS] = None,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace", help="the agent's workspace (task dir without final_model), for the integrity checks"
        ),
    ] = None,
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            "--logs", help="the agent's logs or trajectory, a file or dir (repeatable), for the integrity checks"
        ),
    ] = None,
    instruction: Annotated[
        Path | None,
        typer.Option(
            "--instruction", help="the instruction the agent got (default: instruction.md beside the task spec)"
        ),
    ] = None,
    decoding: Annotated[str | None, _DECODING] = None,
    handoff: Annotated[
        Path | None,
        typer.Option(
            "--handoff",
            help="the agent environment's record of the submission (handoff-record): what did not arrive "
            "as it left is a verifier error",
        ),
    ] = None,
) -> None:
    """Score a submission on the task's held-out data: intake, integrity, evaluation, reward."""
    from ptbench.errors import VerifierError  # startup: not needed by `ptbench --help`
    from ptbench.verify.pipeline import VerifyRequest, verify  # heavy: harbor (0.3 s CPU)

    request = VerifyRequest(
        spec_path=task,
        submission=submission,
        out_dir=out,
        data_dir=data_dir,
        limit=limit,
        device=device,
        heldout=heldout,
        judges=judge or [],
        max_tokens=_max_tokens(max_tokens),
        workspace=workspace,
        logs=logs or [],
        instruction=instruction,
        decoding=decoding,
        handoff=handoff,
    )
    try:
        verify(request, console(stderr=True, markup=True))
    except VerifierError as exc:
        console(stderr=True).print(error_line("verify failed:", str(exc)), soft_wrap=True)
        raise typer.Exit(1) from None


def evaluate_command(
    task: Annotated[Path, typer.Option("--task", help="the task spec (task.json)")],
    submission: Annotated[Path, typer.Option("--submission", help="your model directory (or path.txt for Tinker)")],
    limit: Annotated[int | None, _LIMIT] = None,
    data_dir: Annotated[Path | None, _AGENT_DATA_DIR] = None,
    device: Annotated[Device | None, _DEVICE] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="where the inspect log goes (default .ptbench/evaluate/)")
    ] = None,
    judge: Annotated[list[str] | None, _JUDGE] = None,
    max_tokens: Annotated[int | None, _MAX_TOKENS] = None,
) -> None:
    """Score your model on the DEV split (disjoint from the final test set), as the verifier would."""
    from ptbench.verify.agent_evaluate import EvaluateRequest, evaluate  # heavy: harbor (0.3 s CPU)

    evaluate(
        EvaluateRequest(
            spec_path=task,
            submission=submission,
            limit=limit,
            data_dir=data_dir or settings().data_dir,
            device=device,
            out_dir=out,
            judges=judge or [],
            max_tokens=_max_tokens(max_tokens),
        ),
        console(markup=True),
    )


def baseline_command(
    benchmark: Annotated[str, typer.Option("--benchmark", help="benchmark name, e.g. gsm8k")],
    model: Annotated[str, typer.Option("--model", help="base-model key, e.g. tiny or qwen3-1.7b")],
    mode: Annotated[Mode, typer.Option("--mode", help="zero-shot, few-shot (base model) or instruct")],
    limit: Annotated[int | None, _LIMIT] = None,
    data_dir: Annotated[Path | None, _DATA_DIR] = None,
    device: Annotated[Device, typer.Option("--device", help="cpu or gpu")] = "cpu",
    judge: Annotated[list[str] | None, _JUDGE] = None,
    heldout: Annotated[Path | None, typer.Option("--heldout", help="frogs: the held-out boards file")] = None,
    max_tokens: Annotated[int | None, _MAX_TOKENS] = None,
) -> None:
    """Score a base model (zero-/few-shot) or its instruct twin on a benchmark's test set; stored for scoring."""
    from ptbench.verify.baseline import BaselineRequest, run_baseline  # heavy: harbor (0.3 s CPU)

    run_baseline(
        BaselineRequest(
            benchmark=benchmark,
            model=get_base_model(model),
            mode=mode,
            limit=limit,
            data_dir=data_dir,
            device=device,
            judges=judge or [],
            heldout=heldout,
            max_tokens=_max_tokens(max_tokens),
        ),
        console(markup=True),
    )


def handoff_record_command(
    source: Annotated[Path, typer.Argument(help="the submission in the agent's environment")],
    record: Annotated[Path, typer.Argument(help="where the record goes (Harbor's artifacts dir)")],
    stop_others: Annotated[
        bool,
        typer.Option(
            "--stop-others",
            help="first kill the agent's leftover processes in this PID namespace (also $PTBENCH_STOP_OTHERS); "
            "never in the host's own",
        ),
    ] = False,
    parts: Annotated[
        Path | None,
        typer.Option("--parts", help="also cut the recorded files into 4 GiB parts under this dir (capped clouds)"),
    ] = None,
) -> None:
    """Record every file of a submission with its size and SHA-256, for the verifier (a task's collect hook)."""
    from ptbench.verify.handoff import write_record  # startup: not needed by `ptbench --help`
    from ptbench.verify.leftovers import stop_other_processes  # startup: not needed by `ptbench --help`

    if stop_others or settings().stop_others:
        stop_other_processes()
    recorded = write_record(source, record)
    if parts is not None:
        from ptbench.verify.parts import split  # startup: not needed by `ptbench --help`

        split(source, recorded, parts)


def handoff_join_command(
    parts: Annotated[Path, typer.Argument(help="the part dirs' root, as they arrived")],
    record: Annotated[Path, typer.Argument(help="the hand-off record")],
    submission: Annotated[Path, typer.Argument(help="where the submission is rebuilt (replaced)")],
) -> None:
    """Rebuild a submission cut into parts by `handoff-record --parts` (a task's verifier, before verify)."""
    from ptbench.verify.parts import join  # startup: not needed by `ptbench --help`

    join(parts, record, submission)


def register(app: typer.Typer) -> None:
    """Add verify, evaluate, baseline and the collect hook's handoff-record to the main app."""
    app.command("verify")(verify_command)
    app.command("evaluate")(evaluate_command)
    app.command("baseline")(baseline_command)
    app.command("handoff-record", hidden=True)(handoff_record_command)
    app.command("handoff-join", hidden=True)(handoff_join_command)
