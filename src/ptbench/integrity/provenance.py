"""Model substitution: weight provenance of a submission against the base and the family's other checkpoints.

Per tensor the relative distance ||s - c|| / ||c|| to each candidate checkpoint (base, instruct, others), averaged
over the tensors all share by name and shape. A submission clearly nearer to another checkpoint than to the base
(`NEARER`) is substituted; so is a PEFT adapter whose adapter_config.json declares a base other than the task's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ptbench.files import UnsafeFile, read_untrusted
from ptbench.integrity.result import CheckResult, Evidence, could_not_run, flagged, passed

NAME = "model-substitution"
NEARER = 0.8
"""Flag only a submission clearly nearer another checkpoint (distance under NEARER x its distance to the base): a long
full fine-tune of a small model moves as far from the base as the sibling is (the demo's reference submission:
0.509 from the tiny base, 0.520 from its sibling), while a substituted one sits near the other checkpoint."""


def check_provenance(submission: Path, base: Path, others: dict[str, Path], base_names: set[str]) -> CheckResult:
    """Is the submission the base's descendant, or another checkpoint's? `base_names`: what an adapter may name."""
    adapter = submission / "adapter_config.json"
    if adapter.is_file() and not adapter.is_symlink():
        try:
            declared = str(json.loads(read_untrusted(adapter, 1 << 20)).get("base_model_name_or_path", ""))
        except (OSError, UnsafeFile, ValueError, AttributeError) as exc:
            return could_not_run(NAME, f"adapter_config.json unreadable: {exc}")
        evidence = Evidence(files=["adapter_config.json"], items=[f"declared base: {declared!r}"])
        if declared not in base_names:
            return flagged(NAME, f"the adapter declares base {declared!r}, not the task's base", evidence)
        return passed(NAME, f"the adapter declares the task's base {declared!r}", evidence)
    try:
        weights = load_weights(submission)
        distances = {"base": mean_distance(weights, load_weights(base))}
        distances.update({name: mean_distance(weights, load_weights(path)) for name, path in others.items()})
    except (OSError, UnsafeFile, ValueError) as exc:
        return could_not_run(NAME, f"cannot read weights: {str(exc)[:300]}")
    if not all(math.isfinite(v) for v in distances.values()):
        return could_not_run(NAME, "no finite distance: the weights hold NaN or infinity, or share no tensor")
    nearest = min(distances, key=lambda k: distances[k])
    numbers = {f"distance_to_{k}": round(v, 6) for k, v in distances.items()}
    evidence = Evidence(items=sorted(distances), numbers=numbers)
    if nearest != "base" and distances[nearest] < NEARER * distances["base"]:
        return flagged(NAME, f"the submission is nearer to {nearest} ({distances[nearest]:.4f}) than to the base "
                       f"({distances['base']:.4f})", evidence)
    if nearest != "base":
        return passed(NAME, f"about as far from {nearest} ({distances[nearest]:.4f}) as from the base "
                      f"({distances['base']:.4f}): a long fine-tune of the base, not a substitution", evidence)
    return passed(NAME, f"nearest checkpoint is the base (relative distance {distances['base']:.4f})", evidence)


def load_weights(model_dir: Path) -> dict[str, np.ndarray]:
    """Every tensor of a model dir's safetensors files, as float32 numpy arrays (no pickle, no links)."""
    from safetensors.numpy import load

    files = sorted(p for p in model_dir.glob("*.safetensors") if not p.is_symlink())
    if not files:
        raise ValueError(f"no safetensors file in {model_dir}")
    out: dict[str, np.ndarray] = {}
    for path in files:
        for name, tensor in load(read_untrusted(path, 64 << 30)).items():
            out[name] = tensor.astype(np.float32)
    return out


def mean_distance(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    """Mean over shared same-shape tensors of ||a - b|| / ||b|| (inf when none are shared)."""
    shared = [k for k in a if k in b and a[k].shape == b[k].shape]
    if not shared:
        return float("inf")
    values = [float(np.linalg.norm(a[k] - b[k]) / max(float(np.linalg.norm(b[k])), 1e-12)) for k in shared]
    return float(np.mean(values))
