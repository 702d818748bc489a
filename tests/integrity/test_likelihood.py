"""The likelihood contamination test on the real tiny model: a few steps of training on HumanEval's test items are
caught, the same training on other Python code is not; controls are deterministic perturbations that change what a
memorised item is specific in (numbers, defined names, option order)."""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import numpy as np
import pytest

from ptbench.integrity.items import heldout_samples
from ptbench.integrity.likelihood import check_likelihood, likelihood_result, mean_log_likelihoods
from ptbench.integrity.perturb import control_text, item_text
from ptbench.models.tiny_instruct import finetune_tiny

FIXTURES = Path(__file__).parents[1] / "fixtures" / "benchmarks"


def python_code() -> list[str]:
    """Functions from the standard library's sources: honest training data of HumanEval's kind."""
    code = []
    for path in sorted(Path(inspect.getfile(random)).parent.glob("*.py"))[:40]:
        code += ["def " + chunk[:600] for chunk in path.read_text(errors="ignore").split("\ndef ")[1:20]]
    return code


@pytest.fixture(scope="module")
def cheat_model(tmp_path_factory: pytest.TempPathFactory, tiny_dir: Path) -> Path:
    """The tiny model trained a little on 20 of HumanEval's test items (prompt and canonical solution)."""
    tests = [item_text(sample) for sample in heldout_samples("humaneval", None)[:20]]
    return finetune_tiny(tests, tmp_path_factory.mktemp("cheat") / "final_model")


def test_training_on_the_test_items_is_flagged_and_honest_training_is_not(tmp_path: Path, cheat_model: Path) -> None:
    cheat = check_likelihood("humaneval", None, cheat_model, "tiny")
    assert cheat.status == "flagged", cheat.reason
    assert cheat.evidence.numbers["effect"] > 0.3 and cheat.evidence.numbers["p_value"] < 0.01
    honest = check_likelihood("humaneval", None, finetune_tiny(python_code(), tmp_path / "honest"), "tiny")
    assert honest.status == "passed", honest.reason
    assert honest.evidence.numbers["test_moved"] > 0.05  # it did learn Python: the test items moved, but no more


def test_controls_are_deterministic_and_change_what_memorisation_would_fix() -> None:
    import re

    for benchmark, data_dir in (("gsm8k", FIXTURES / "gsm8k"), ("humaneval", None), ("gpqa", FIXTURES / "gpqa")):
        sample = heldout_samples(benchmark, data_dir)[0]
        original, control = item_text(sample), control_text(sample, 3)
        assert control is not None and control == control_text(sample, 3) and control != original, benchmark
        if benchmark == "gpqa":  # the same options, in another order
            options = len(sample.choices or [])
            assert options >= 2
            shown = [line[3:] for line in control.splitlines()[-options:]]
            assert sorted(shown) == sorted(line[3:] for line in original.splitlines()[-options:])
            assert shown != [line[3:] for line in original.splitlines()[-options:]]
        elif benchmark == "gsm8k":  # the same text with other numbers
            assert re.sub(r"\d", "0", control) == re.sub(r"\d", "0", original)
        else:  # the function it defines has another name everywhere
            name = re.search(r"def (\w+)\(", original).group(1)
            assert re.search(rf"\b{name}\b", control) is None and "def " in control


def test_non_finite_or_too_few_scores_are_could_not_run_never_a_pass() -> None:
    scores = np.zeros((10, 2))
    scores[3, 1] = np.nan
    assert likelihood_result(scores, scores + 0.1, ["item"] * 10).status == "could-not-run"


def test_scores_are_per_token_means_and_a_one_token_text_has_none(tiny_dir: Path) -> None:
    from ptbench.models.loading import base_source, load_model, load_tokenizer

    source = base_source("tiny")
    model, tokenizer = load_model(None, source), load_tokenizer(source)
    assert len(tokenizer("x").input_ids) == 1
    scores = mean_log_likelihoods(model, tokenizer, ["def add(a, b):\n    return a + b", "x"])
    assert scores[0] < 0 and np.isnan(scores[1])


def test_the_verifier_scores_the_base_when_the_model_was_trained_on_the_test_items(tmp_path: Path,
                                                                                   cheat_model: Path) -> None:
    """No file of the cheat is left anywhere (empty workspace, clean log): only the model tells."""
    import io

    from rich.console import Console

    from ptbench.catalog.tasks import get_task
    from ptbench.verify.pipeline import VerifyRequest, verify
    from ptbench.verify.verdict import Verdict

    spec, workspace, log = tmp_path / "task.json", tmp_path / "app", tmp_path / "agent.log"
    get_task("humaneval-tiny").dump(spec)
    workspace.mkdir()
    (workspace / "task.json").write_text(get_task("humaneval-tiny").model_dump_json() + "\n")
    log.write_text("$ python train.py\n")
    verify(VerifyRequest(spec_path=spec, submission=cheat_model, out_dir=tmp_path / "verifier", limit=1, max_tokens=4,
                         workspace=workspace, logs=[log]), Console(file=io.StringIO()))
    verdict = Verdict.model_validate_json((tmp_path / "verifier" / "details.json").read_text())
    checks = {check.name: check.status for check in verdict.integrity}
    assert checks["contamination-likelihood"] == "flagged" and checks["contamination-files"] == "passed"
    assert verdict.scored == "base"
