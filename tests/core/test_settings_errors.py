"""ptbench.settings reads every PTBENCH_* variable; ptbench.errors cuts errors to one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

import ptbench
from ptbench.errors import UserError, first_line, validation_line
from ptbench.settings import Settings, env_name, settings

# Each variable with a good value and what the reader gets: the typed value, so no reader parses it again.
READINGS = {
    "cache": ("/c", Path("/c")),
    "workdir": ("rel/work", Path("rel/work")),
    "heldout_seed": ("42", 42),
    "timer_stamp": ("/ptbench/s.json", Path("/ptbench/s.json")),
    "reference_config": ("r.json", Path("r.json")),
    "reference_max_steps": ("2", 2),
    "verify_max_tokens": ("64", 64),
    "judge_model": ("openai/gpt-5-mini", "openai/gpt-5-mini"),
    "integrity_judge_model": ("mockllm/model", "mockllm/model"),
    "tinker_url": ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    "sandbox_dir": ("/tmp/sb", Path("/tmp/sb")),
    "data_dir": ("/data", Path("/data")),
    "dev_dir": ("/fake/dev", Path("/fake/dev")),
    "slurm_partition": ("gpu", "gpu"),
    "seed": ("0", 0),
    "code_sandbox": ("landlock", "landlock"),
    "scan_memory_mb": ("512", 512),
    "sandbox_storage_mb": ("2048", 2048),
    "stop_others": ("1", True),
}
UNSET = {"code_sandbox": "auto", "stop_others": False}


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_settings_reads_each_variable_typed(field: str, monkeypatch) -> None:
    name = env_name(field)
    assert name == "PTBENCH_" + field.upper()
    text, reading = READINGS[field]
    monkeypatch.setenv(name, text)
    value = getattr(settings(), field)
    assert value == reading and type(value) is type(reading)
    monkeypatch.setenv(name, "")  # empty is unset
    assert getattr(settings(), field) == UNSET.get(field)
    monkeypatch.delenv(name)
    assert getattr(settings(), field) == UNSET.get(field)


BAD = [
    ("heldout_seed", "forty-two"),
    ("heldout_seed", "1.5"),
    ("heldout_seed", "0x10"),
    ("seed", "three"),
    ("seed", "-1"),
    ("verify_max_tokens", "0"),
    ("verify_max_tokens", "-64"),
    ("verify_max_tokens", "lots"),
    ("scan_memory_mb", "0"),
    ("scan_memory_mb", "2G"),
    ("sandbox_storage_mb", "10G"),
    ("sandbox_storage_mb", "0"),
    ("code_sandbox", "nsjail"),
    ("code_sandbox", "BWRAP "),
    ("stop_others", "maybe"),
]


def test_the_known_variable_names_are_unchanged() -> None:
    assert {env_name(f) for f in Settings.model_fields} == {
        "PTBENCH_CACHE",
        "PTBENCH_WORKDIR",
        "PTBENCH_HELDOUT_SEED",
        "PTBENCH_TIMER_STAMP",
        "PTBENCH_REFERENCE_CONFIG",
        "PTBENCH_REFERENCE_MAX_STEPS",
        "PTBENCH_VERIFY_MAX_TOKENS",
        "PTBENCH_JUDGE_MODEL",
        "PTBENCH_SANDBOX_DIR",
        "PTBENCH_SANDBOX_STORAGE_MB",
        "PTBENCH_SEED",
        "PTBENCH_DATA_DIR",
        "PTBENCH_INTEGRITY_JUDGE_MODEL",
        "PTBENCH_TINKER_URL",
        "PTBENCH_DEV_DIR",
        "PTBENCH_SLURM_PARTITION",
        "PTBENCH_CODE_SANDBOX",
        "PTBENCH_SCAN_MEMORY_MB",
        "PTBENCH_STOP_OTHERS",
    }


@pytest.mark.parametrize(("field", "value"), BAD)
def test_a_bad_value_is_one_line_naming_the_variable(field: str, value: str, monkeypatch) -> None:
    monkeypatch.setenv(env_name(field), value)
    with pytest.raises(UserError) as info:
        settings()
    message = str(info.value)
    assert message.startswith(f"{env_name(field)}={value!r}: ") and "\n" not in message


def test_a_bad_value_reaches_the_cli_as_one_line(cli, tmp_path: Path) -> None:
    env = {"PTBENCH_WORKDIR": str(tmp_path), "PTBENCH_CACHE": str(tmp_path), "PTBENCH_HELDOUT_SEED": "forty-two"}
    result = cli("tasks", "export", "frogs-single-tiny", "--out", str(tmp_path / "out"), env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["error: PTBENCH_HELDOUT_SEED='forty-two': " + PARSE_INT]


PARSE_INT = "Input should be a valid integer, unable to parse string as an integer"


def test_no_module_reads_a_ptbench_variable_itself() -> None:
    """Every PTBENCH_* variable is read in settings.py and nowhere else: no os.environ, getenv or typer envvar= names
    one, by its text, by env_name() or by a constant bound to either."""
    source = Path(ptbench.__file__).parent
    assert readers_of_ptbench_variables(source) == []


def readers_of_ptbench_variables(source: Path) -> list[str]:
    """`file:line` of each read of a PTBENCH_* variable outside settings.py."""
    found = []
    for path in sorted(source.rglob("*.py")):
        if path.name == "settings.py":
            continue
        text = path.read_text()
        names = ["PTBENCH_", "env_name("] + re.findall(r"^\s*(\w+)\s*=\s*(?:env_name\(|\"PTBENCH_)", text, re.M)
        for number, line in enumerate(text.splitlines(), 1):
            if re.search(r"\benviron\b|getenv|envvar=", line) and any(name in line for name in names):
                found.append(f"{path.relative_to(source)}:{number}")
    return found


def test_first_line_handles_an_empty_message() -> None:
    assert first_line(ValueError("")) == "ValueError"
    assert first_line(ValueError("\n\nsecond\nthird")) == "second"
    assert first_line("") == ""


class Point(BaseModel):
    x: int


def test_validation_line() -> None:
    with pytest.raises(ValidationError) as info:
        Point.model_validate({"x": "nope"})
    assert validation_line(info.value).startswith("x: Input should be a valid integer")
    with pytest.raises(ValidationError) as info:
        Point.model_validate_json("{not json")
    assert validation_line(info.value).startswith("malformed JSON: ")
    with pytest.raises(ValidationError) as info:
        Point.model_validate(3)
    assert validation_line(info.value).startswith("input: ")
