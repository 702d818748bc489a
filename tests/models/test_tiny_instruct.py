"""The tiny model's instruct-like sibling: trained (not noise), cached like the tiny model, registered as the family's
other checkpoint for tiny tasks; the substitution check flags a submission that is the sibling and passes a fine-tune
of the base."""

from __future__ import annotations

from pathlib import Path

from ptbench.catalog.tasks import get_task
from ptbench.integrity.checks import family_checkpoints
from ptbench.integrity.provenance import check_provenance, load_weights, mean_distance
from ptbench.models.tiny_instruct import InstructReport, cached_tiny_instruct, ensure_tiny_instruct, finetune_tiny


def test_the_sibling_is_built_once_cached_and_registered_for_tiny_tasks(tiny_dir: Path) -> None:
    sibling = ensure_tiny_instruct()
    report = InstructReport.model_validate_json((sibling / "build_report.json").read_text())
    built = (sibling / "build_report.json").stat().st_mtime_ns
    assert ensure_tiny_instruct() == sibling == cached_tiny_instruct()
    assert (sibling / "build_report.json").stat().st_mtime_ns == built  # found, not rebuilt
    assert report.base_key == tiny_dir.name and report.schema_version == 1
    assert family_checkpoints(get_task("gsm8k-tiny")) == {"instruct": sibling}
    assert mean_distance(load_weights(sibling), load_weights(tiny_dir)) > 0.2  # trained, far from the base


def test_substitution_flags_the_sibling_further_trained_and_passes_a_fine_tune_of_the_base(tmp_path: Path,
                                                                                          tiny_dir: Path) -> None:
    sibling = ensure_tiny_instruct()
    honest = finetune_tiny(["def add(a, b):\n    return a + b\n", "for i in range(3):\n    print(i)\n"] * 4,
                           tmp_path / "honest")
    assert check_provenance(honest, tiny_dir, {"instruct": sibling}, {"tiny"}).status == "passed"
    # a cheat: the sibling, loaded and saved again as the agent's own model
    from ptbench.models.loading import ModelSource, load_model

    model = load_model(sibling, ModelSource(str(tiny_dir)))
    model.save_pretrained(tmp_path / "cheat", safe_serialization=True)
    flagged = check_provenance(tmp_path / "cheat", tiny_dir, {"instruct": sibling}, {"tiny"})
    assert flagged.status == "flagged" and "instruct" in flagged.reason


def test_a_long_fine_tune_about_as_far_from_both_is_not_a_substitution(tmp_path: Path, tiny_dir: Path) -> None:
    """The demo's honest reference submission sat 0.509 from the base and 0.520 from the sibling; a submission a hair
    nearer the sibling than the base is no substitution, one clearly nearer is."""
    import numpy as np
    from safetensors.numpy import save_file

    base, sibling = load_weights(tiny_dir), load_weights(ensure_tiny_instruct())

    def submit(name: str, weight: float) -> Path:  # a point on the line from the base to the sibling, plus noise
        rng = np.random.default_rng(0)
        out = tmp_path / name
        out.mkdir()
        save_file({k: (1 - weight) * base[k] + weight * sibling[k] + rng.normal(0, 0.4 * float(np.std(base[k])) + 1e-6,
                                                                                 base[k].shape).astype(np.float32)
                   for k in base}, str(out / "model.safetensors"))
        return out

    halfway = check_provenance(submit("halfway", 0.52), tiny_dir, {"instruct": ensure_tiny_instruct()}, {"tiny"})
    numbers = halfway.evidence.numbers
    assert numbers["distance_to_instruct"] < numbers["distance_to_base"] and halfway.status == "passed", numbers
    near = check_provenance(submit("near", 0.9), tiny_dir, {"instruct": ensure_tiny_instruct()}, {"tiny"})
    assert near.status == "flagged", near.evidence.numbers
