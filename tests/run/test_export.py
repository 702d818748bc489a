"""`ptbench tasks export`: every catalog task becomes a directory that Harbor's own parsers accept, with the
instruction, scripts and held-out data where they belong."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.tasks import catalog
from ptbench.trialdir.verifier_failure import VerifierFailure

HELDOUT_SEED = "1234"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """Every catalog task, exported once by the real CLI."""
    out = tmp_path_factory.mktemp("export") / "tasks"
    cache = tmp_path_factory.mktemp("cache")
    result = subprocess.run(
        [sys.executable, "-m", "ptbench.cli.main", "tasks", "export", "--all", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PTBENCH_CACHE": str(cache), "PTBENCH_HELDOUT_SEED": HELDOUT_SEED},
    )
    assert result.returncode == 0, result.stderr
    return out


def test_every_task_is_a_valid_harbor_task(exported: Path):
    from harbor.models.task.task import Task
    from harbor.models.task.verifier_mode import VerifierEnvironmentMode, resolve_task_verifier_mode

    names = sorted(p.name for p in exported.iterdir())
    assert names == sorted(catalog())
    for name, spec in catalog().items():
        task = Task(exported / name)  # Harbor's loader: TaskConfig, paths, tests present
        assert Task.is_valid_dir(exported / name)
        config = task.config
        assert task.name == name
        assert config.agent.timeout_sec == spec.budget_hours * 3600
        assert 900 <= config.verifier.timeout_sec <= 3 * 3600
        assert resolve_task_verifier_mode(config) == VerifierEnvironmentMode.SEPARATE
        env = config.environment
        assert (env.cpus, env.memory_mb, env.gpus) == (spec.cpus, spec.memory_mb, spec.gpus)
        assert env.network_mode.value == ("public" if spec.network == "public" else "no-network")
        assert env.workdir == "/app" and env.healthcheck is not None
        artifacts = [a if isinstance(a, str) else a.source for a in config.artifacts]
        # the workspace and the logs first (Harbor empties /app before re-creating it), then the submission
        submission = "/app/path.txt" if spec.backend == "tinker" else "/app/final_model"
        assert artifacts[:3] == ["/app", "/logs/agent", submission]
        assert ("/app/results.json" in artifacts) == name.startswith("frogs-")
        tinker = {"TINKER_API_KEY", "TINKER_BASE_URL"} if spec.backend == "tinker" else set()
        # the service's key, or a local server's address and key (`ptbench run --tinker local`), and whether the
        # hand-off hook stops the agent's leftovers (the host's: ptbench run sets it where safe); unset is empty
        assert env.env == {key: f"${{{key}:-}}" for key in (*tinker, "PTBENCH_STOP_OTHERS")} | (
            {"PTBENCH_DATA_DIR": env.env["PTBENCH_DATA_DIR"]} if "PTBENCH_DATA_DIR" in env.env else {}
        )
        judged = spec.benchmark in ("arena-hard-writing", "healthbench")
        # the integrity checks' optional judge may be chosen for any task; the benchmark's judges where it has them
        assert set(config.verifier.env) == {"OPENAI_API_KEY", "PTBENCH_INTEGRITY_JUDGE_MODEL"} | tinker | (
            {"PTBENCH_JUDGE_MODEL"} if judged else set()
        )
        assert TaskSpec.load(exported / name / "tests" / "task.json") == spec
        assert TaskSpec.load(exported / name / "solution" / "task.json") == spec
        for script in ("tests/test.sh", "solution/solve.sh"):
            path = exported / name / script
            assert os.access(path, os.X_OK)
            subprocess.run(["bash", "-n", str(path)], check=True)


def test_one_image_context_per_device_class(exported: Path):
    """Harbor's environments key images by the content of environment/: a class hashes alike, the classes not."""
    from harbor.environments.definition import environment_content_hash

    hashes: dict[str, set[str]] = {"cpu": set(), "gpu": set()}
    for name, spec in catalog().items():
        hashes[spec.device].add(environment_content_hash(exported / name / "environment"))
    assert len(hashes["cpu"]) == 1 and len(hashes["gpu"]) == 1 and hashes["cpu"] != hashes["gpu"]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_the_image_installs_this_checkouts_wheel_with_every_dependency_pinned(exported: Path, device: str):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from ptbench.run.image import source_root

    name = next(n for n, spec in catalog().items() if spec.device == device)
    context = exported / name / "environment"
    instructions = dockerfile_instructions((context / "Dockerfile").read_text())
    assert [word for word, _ in instructions][0] == "FROM" and instructions[-1] == ("WORKDIR", "/app")
    assert {word for word, _ in instructions} <= {"FROM", "RUN", "COPY", "ENV", "WORKDIR"}
    base = instructions[0][1]
    assert base.startswith("nvidia/cuda:") if device == "gpu" else base == "python:3.12-slim"
    for word, args in instructions:  # every COPY source is in the context: the build needs nothing else
        if word == "COPY":
            assert (context / args.split()[0]).exists(), args
    [wheel] = sorted((context / "ptbench").glob("ptbench-*.whl"))
    installs = " ".join(args for word, args in instructions if word == "RUN")
    extra = "[gpu]" if device == "gpu" else ""
    assert f'"ptbench{extra} @ file:///opt/ptbench/dist/{wheel.name}"' in installs
    assert installs.count("-c /opt/ptbench/dist/constraints.txt") == 2  # ptbench's dependencies, then bfcl-eval's
    assert ("ptbench models tiny" in installs) == (device == "cpu")  # the CPU tasks' base model, in the image
    root = source_root()
    for pins in ("constraints.txt", "requirements-nodeps.txt"):
        assert (context / "ptbench" / pins).read_bytes() == (root / pins).read_bytes()

    with zipfile.ZipFile(wheel) as archive:  # the wheel is this checkout's package, scripts included
        source = (root / "src" / "ptbench" / "run" / "export.py").read_bytes()
        assert archive.read("ptbench/run/export.py") == source
        dist_info = next(n.split("/")[0] for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert "ptbench = ptbench.cli.main:main" in entry_points and "timer = " in entry_points
    pinned = {
        canonicalize_name(line.split("==")[0]): line.split("==")[1]
        for line in (root / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        requirement = Requirement(line.removeprefix("Requires-Dist: "))
        marker = str(requirement.marker or "")
        if "extra" in marker and f'extra == "{"gpu" if device == "gpu" else "-"}"' not in marker:
            continue  # dev/bench tools, and the GPU extra in the CPU image
        key = canonicalize_name(requirement.name)
        if key == "vllm":
            continue  # the GPU extra resolves within pyproject's range: no GPU machine has pinned it yet
        assert key in pinned and requirement.specifier.contains(pinned[key]), requirement


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per Dockerfile instruction: comments dropped, continuation lines joined."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    pairs = [line.split(maxsplit=1) for line in joined.splitlines() if line.strip()]
    return [(pair[0], pair[1].strip()) for pair in pairs]


def test_the_verifier_gets_the_workspace_weights_included_the_logs_and_the_submission(exported: Path):
    artifacts = tomllib.loads((exported / "gsm8k-qwen3-1.7b" / "task.toml").read_text())["artifacts"]
    assert [(a["source"], a.get("destination")) for a in artifacts] == [
        ("/app", "workspace"),
        ("/logs/agent", "agent-logs"),
        ("/app/final_model", None),
    ]
    assert artifacts[0]["exclude"] == ["./final_model"]  # weight formats elsewhere travel: token ids hide in them


def test_instruction_states_rules_cost_budget_and_submission(exported: Path):
    text = (exported / "gsm8k-qwen3-1.7b" / "instruction.md").read_text()
    head = text[: text.index("## Goal")]
    for rule in (
        "No test data",
        "Don't modify the evaluation harness",
        "Only the given base model",
        "No user interaction",
        "Stay in the task directory",
    ):
        assert rule in head
    assert "scored as the untouched" in head and "Qwen/Qwen3-1.7B-Base" in head
    assert "10:00 (H:MM)" in text and "`timer`" in text
    assert "/app/final_model" in text and "safetensors" in text
    assert "train split is allowed" in text
    tiny = (exported / "gsm8k-tiny" / "instruction.md").read_text()
    assert "0:15 (H:MM)" in tiny and "ptbench models tiny --out DIR" in tiny
    assert "no development split" in (exported / "humaneval-tiny" / "instruction.md").read_text()


def test_hinted_variant_adds_the_playbook(exported: Path):
    plain = (exported / "frogs-single-qwen3-8b" / "instruction.md").read_text()
    hinted = (exported / "frogs-single-qwen3-8b-hinted" / "instruction.md").read_text()
    assert hinted != plain and hinted.startswith(plain.rstrip("\n"))
    extra = hinted[len(plain.rstrip("\n")) :]
    assert "Playbook" in extra and "SFT only to fix unparsable output" in extra
    assert "fewer than 30 minutes remain" in extra and "output schema is strict" in extra
    assert "Playbook" not in plain


def test_tinker_tasks_submit_a_checkpoint_path(exported: Path):
    text = (exported / "frogs-multi-qwen3-8b" / "instruction.md").read_text()
    assert "/app/path.txt" in text and "TINKER_API_KEY" in text and "/app/results.json" in text
    test_sh = (exported / "frogs-multi-qwen3-8b" / "tests" / "test.sh").read_text()
    assert "--submission /app/path.txt" in test_sh


def test_solve_falls_back_to_a_base_model_copy(exported: Path):
    assert "ptbench reference /solution/task.json" in (exported / "gsm8k-tiny/solution/solve.sh").read_text()
    assert "ptbench models tiny --out /app/final_model" in (exported / "gsm8k-tiny/solution/solve.sh").read_text()
    assert "hf download google/gemma-3-4b-pt" in (exported / "gpqa-gemma-3-4b/solution/solve.sh").read_text()
    assert "exit 1" in (exported / "frogs-single-qwen3-8b/solution/solve.sh").read_text()


def test_healthcheck_installs_task_json_and_stamp(exported: Path, tmp_path: Path):
    """Run the exported healthcheck (with /app redirected into tmp) and read back what it wrote."""
    config = tomllib.loads((exported / "bfcl-tiny" / "task.toml").read_text())  # a quote in its spec text
    command = config["environment"]["healthcheck"]["command"].replace("/app", str(tmp_path / "app"))
    env = {**os.environ, "PTBENCH_TIMER_STAMP": str(tmp_path / "stamp.json")}
    subprocess.run(["bash", "-c", command], check=True, env=env, timeout=30)
    assert TaskSpec.load(tmp_path / "app" / "task.json") == catalog()["bfcl-tiny"]
    assert json.loads((tmp_path / "stamp.json").read_text())["budget_seconds"] == 900


@pytest.mark.parametrize("case", ["no-verify", "verify-fails", "verify-ok"])
def test_test_sh_always_leaves_a_valid_reward(exported: Path, tmp_path: Path, case: str):
    """test.sh with a stand-in `ptbench` on PATH: a missing or failing verify still yields reward.json; verify runs
    outside the agent's workspace (where test.sh starts), with no PYTHONPATH and no cwd on sys.path."""
    logs = tmp_path / "verifier"
    script = (exported / "gsm8k-tiny" / "tests" / "test.sh").read_text().replace("/logs/verifier", str(logs))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    body = {
        "no-verify": 'echo "No such command" >&2; exit 2',
        "verify-fails": '[ "$2" = --help ] && exit 0; echo partial > "$7/details.json"; exit 3',
        "verify-ok": '[ "$2" = --help ] && exit 0; echo \'{"reward": 0.5}\' > "$7/reward.json"; '
        'printf "%s\\n" "$PWD" "${PYTHONPATH-unset}" "${PYTHONSAFEPATH-}" > "$7/seen"',
    }[case]
    (bin_dir / "ptbench").write_text(f"#!/bin/bash\n{body}\n")
    (bin_dir / "ptbench").chmod(0o755)
    app = tmp_path / "app"
    app.mkdir()
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(app)},
    )
    assert result.returncode == 0, result.stderr
    reward = json.loads((logs / "reward.json").read_text())
    if case == "verify-ok":
        assert reward == {"reward": 0.5} and not (logs / "details.json").exists()
        cwd, pythonpath, safe_path = (logs / "seen").read_text().splitlines()
        assert not Path(cwd).is_relative_to(app) and (pythonpath, safe_path) == ("unset", "1")
        return
    assert reward == {"reward": 0}
    details = VerifierFailure.model_validate_json((logs / "details.json").read_text())
    assert (
        details.reason
        == {
            "no-verify": "ptbench verify is not available in this ptbench version",
            "verify-fails": "ptbench verify failed with exit code 3",
        }[case]
    )


def test_bad_names_and_existing_dirs_are_one_line_errors(cli, tmp_path: Path):
    for args in (
        ["tasks", "export", "gsm8k-nope", "--out", str(tmp_path)],
        ["tasks", "show", "nope"],
        ["tasks", "export", "--out", str(tmp_path)],
    ):
        result = cli(*args)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert re.fullmatch(r"error: .+\n", result.stderr)
    assert cli("tasks", "export", "gsm8k-tiny", "--out", str(tmp_path)).returncode == 0
    again = cli("tasks", "export", "gsm8k-tiny", "--out", str(tmp_path))
    assert again.returncode == 2 and "--force" in again.stderr
    assert cli("tasks", "export", "gsm8k-tiny", "--out", str(tmp_path), "--force").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gsm8k-tiny"]  # no staging leftovers


def test_list_and_show(cli):
    listing = cli("tasks", "list")
    assert listing.returncode == 0
    assert "frogs-single-tiny" in listing.stdout and "gsm8k-qwen3-1.7b" in listing.stdout
    shown = cli("tasks", "show", "gsm8k-tiny")
    assert TaskSpec.model_validate_json(shown.stdout) == catalog()["gsm8k-tiny"]
    assert "## Goal" in cli("tasks", "show", "gsm8k-tiny", "--instruction").stdout


def test_frogs_heldout_boards_only_in_tests(exported: Path):
    from ptbench.catalog.frogs_text import example_board
    from ptbench.frogs.records import parse_manifest, read_heldout

    for name in ("frogs-single-tiny", "frogs-multi-qwen3-8b-hinted"):
        spec = catalog()[name]
        records = read_heldout(exported / name / "tests" / "heldout.jsonl")  # checks the manifest's sha256
        assert len(records) == spec.heldout_count
        assert {r.tier for r in records} == set(spec.tiers)
        assert parse_manifest(exported / name / "tests" / "heldout.manifest.json").seed == int(HELDOUT_SEED)
        visible = [p for p in (exported / name).rglob("*") if "heldout" in p.name and p.parent.name != "tests"]
        assert visible == []
        assert example_board(spec).canonical_hash not in {r.canonical_hash for r in records}
    same = [
        read_heldout(exported / n / "tests" / "heldout.jsonl")[0].id
        for n in ("frogs-single-qwen3-8b", "frogs-multi-qwen3-8b-hinted")
    ]
    assert same[0] == same[1]


def test_hinted_schema_examples_behave_as_stated(exported: Path):
    from ptbench.frogs.parsers import parse_strict

    text = (exported / "frogs-single-qwen3-8b-hinted" / "instruction.md").read_text()
    examples = re.findall(r"^  - (valid|invalid)[^:]*: `(.*)`$", text, flags=re.M)
    assert [kind for kind, _ in examples] == ["valid", "valid", "invalid", "invalid", "invalid"]
    for kind, example in examples:
        assert parse_strict(example).ok == (kind == "valid"), example


def test_single_turn_example_answer_solves_the_shown_board(exported: Path):
    from ptbench.catalog.frogs_text import example_board
    from ptbench.frogs.prompts import render_prompt
    from ptbench.frogs.verifier import verify_placement

    spec = catalog()["frogs-single-qwen3-8b"]
    example = example_board(spec)
    text = (exported / spec.name / "instruction.md").read_text()
    assert render_prompt(example.board, spec.rules) in text
    answer = parse_answer_block(text)
    assert verify_placement(example.board, answer, spec.rules).valid


def parse_answer_block(text: str) -> list[list[int]]:
    block = text.split("the correct answer to that board is:", 1)[1].split("~~~text\n", 1)[1].split("\n~~~", 1)[0]
    return json.loads(block)["frogs"]


def test_the_network_policy_reaches_task_toml_and_the_instruction(exported: Path):
    from harbor.models.task.task import Task

    from ptbench.egress.hosts import TINKER_HOST
    from ptbench.sandbox.support import check_task_supported

    expected = {
        "frogs-single-qwen3-8b": [TINKER_HOST],
        "frogs-multi-qwen3-8b-hinted": [TINKER_HOST],
        "frogs-single-tinker-tiny": [],
        "frogs-single-tiny": None,
        "gsm8k-qwen3-1.7b": None,
    }
    for name, hosts in expected.items():
        config = Task(exported / name).config
        # the agent phase alone: the environment (and the separate verifier, with its judge) stay public
        assert config.environment.network_mode.value == "public" and config.verifier.network_mode is None
        assert (config.agent.allowed_hosts if config.agent.network_mode else None) == hosts, name
        line = next(
            line
            for line in (exported / name / "instruction.md").read_text().splitlines()
            if line.startswith("Network access:")
        )
        assert line.startswith("Network access: only" if hosts is not None else "Network access: yes"), line
    assert "`tinker.thinkingmachines.dev`" in (exported / "frogs-single-qwen3-8b" / "instruction.md").read_text()
    assert "api.openai.com" in catalog()["gsm8k-qwen3-1.7b"].forbidden_hosts
    assert not catalog()["frogs-single-qwen3-8b"].forbidden_hosts  # the allowlist forbids the rest already
    assert check_task_supported(exported / "frogs-single-tinker-tiny") == []


def test_every_task_is_clean_under_harbors_own_lint(exported: Path):
    """Harbor 0.26's task schema and `harbor lint`: no invalid or unknown field, no missing file, no overlapping
    artifacts (the overlap 0.24 warned of at every trial). Left on purpose: the agent's logs are an artifact (the one
    way a separate verifier gets them, for the integrity checks), the image is the task's own base, the agent is
    root."""
    from harbor.lint.models import LintRule
    from harbor.lint.task import lint_task
    from harbor.models.task.config import TaskConfig

    accepted = {LintRule.ARTIFACT_LOG_OVERLAP, LintRule.UNPINNED_IMAGE, LintRule.ROOT_AGENT}
    dirs = sorted(exported.iterdir())
    assert len(dirs) >= 40
    for task_dir in dirs:
        assert TaskConfig.model_validate_toml((task_dir / "task.toml").read_text()).schema_version == "1.4"
        findings = lint_task(task_dir)
        assert [f for f in findings if f.rule not in accepted] == [], task_dir.name
        overlap = [f.message for f in findings if f.rule == LintRule.ARTIFACT_LOG_OVERLAP]
        assert overlap == [
            "artifacts[1]: Artifact source overlaps protected verifier or agent logs; choose a separate output path."
        ], task_dir.name  # the agent-logs entry alone
