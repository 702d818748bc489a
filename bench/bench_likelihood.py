"""Calibration of the likelihood contamination test (integrity/likelihood.py) on the tiny model.

Fine-tunes the tiny base model (`finetune_tiny`: AdamW, 4 texts a batch) honestly and on test items, at several
strengths, and runs the test on each: its effect (test items' gain minus the references' gain, nats/token) and p.
Honest: HumanEval with the standard library's code (the references' own source, the hard case of the issue: lr 3e-3)
and with other packages' Python (code the references are not); GSM8K on word problems of its kind that are neither
test nor dev items. Cheats: the test items alone, and the test items one in four among honest data. GSM8K runs on a
data directory of generated word problems (64 test, 200 dev), as the fixtures hold only 4 test items.

    .venv/bin/python bench/bench_likelihood.py [--seeds 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

STRENGTHS = ((1e-3, 60), (3e-3, 60), (3e-3, 150))
TOWNS = ["Oslo", "Lima", "Perth", "Quito", "Dakar", "Hanoi", "Porto", "Cusco", "Tunis", "Malmo", "Leeds", "Turku"]
HOBBIES = ["chess", "rowing", "baking", "knitting", "hiking", "drawing", "fishing", "singing", "gardening", "poetry"]


def python_functions(package_dir: Path, limit: int = 400) -> list[str]:
    """Chunks of `def ...` from the .py files under `package_dir` (600 characters each at most)."""
    code: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        code += ["def " + chunk[:600] for chunk in path.read_text(errors="ignore").split("\ndef ")[1:20]]
        if len(code) >= limit:
            break
    return code[:limit]


def word_problems(count: int, seed: int) -> list[dict[str, str]]:
    """GSM8K-shaped records (question, answer with a calculation and '#### N') from a few templates."""
    rng = random.Random(seed)
    names, things = ["Tom", "Ana", "Lee", "Mia", "Raj", "Zoe"], ["pens", "cards", "apples", "books", "coins"]
    out = []
    for _ in range(count):
        name, thing, a, b = rng.choice(names), rng.choice(things), rng.randint(2, 60), rng.randint(2, 30)
        question, work, result = rng.choice([
            (f"{name} has {a} {thing} and buys {b} more. How many {thing} does {name} have?", f"{a} + {b}", a + b),
            (f"{name} has {a + b} {thing} and gives away {b}. How many are left?", f"{a + b} - {b}", a),
            (f"{name} fills {b} boxes with {a} {thing} each. How many {thing} in all?", f"{b} * {a}", a * b),
            (f"{name} shares {a * b} {thing} among {b} friends. How many does each get?", f"{a * b} / {b}", a),
        ])
        town, hobby = rng.choice(TOWNS), rng.choice(HOBBIES)
        question = f"{name} lives in {town} and likes {hobby} on day {rng.randint(1, 28)}. {question}"
        out.append({"question": question, "answer": f"{work} = <<{work.replace(' ', '')}={result}>>{result}\n"
                                                    f"#### {result}"})
    return out


def gsm8k_data(root: Path) -> tuple[Path, list[str]]:
    """A data directory of generated problems (test 64; train whose last 200 are dev) and honest training texts."""
    from ptbench.integrity.items import heldout_samples, item_text

    problems = word_problems(1064, 1)
    data = root / "gsm8k"
    data.mkdir(parents=True)
    for name, rows in (("test.jsonl", problems[:64]), ("train.jsonl", problems[264:] + problems[64:264])):
        (data / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    tests = {item_text(sample) for sample in heldout_samples("gsm8k", data)}
    honest = [f"{row['question']}\n{row['answer']}" for row in problems[264:1064 - 200]]
    assert not tests & set(honest)
    return data, honest


def runs(seeds: int, root: Path) -> list[tuple[str, str, Path | None, list[str], float, int, int]]:
    """(benchmark, case, data_dir, training texts, lr, steps, seed) of every fine-tune."""
    import numpy

    from ptbench.integrity.items import heldout_samples, item_text

    stdlib = python_functions(Path(inspect.getfile(random)).parent)
    other = python_functions(Path(numpy.__file__).parent)
    gsm_dir, gsm_honest = gsm8k_data(root)
    humaneval_tests = [item_text(s) for s in heldout_samples("humaneval", None)[:20]]
    gsm_tests = [item_text(s) for s in heldout_samples("gsm8k", gsm_dir)[:20]]
    honest = [("humaneval", "honest: stdlib code", None, stdlib), ("humaneval", "honest: numpy code", None, other),
              ("gsm8k", "honest: word problems", gsm_dir, gsm_honest)]
    cheats = [("humaneval", "cheat: 20 test items", None, humaneval_tests),
              ("humaneval", "cheat: 20 test items in stdlib", None, humaneval_tests + stdlib[:60]),
              ("gsm8k", "cheat: 20 test items", gsm_dir, gsm_tests),
              ("gsm8k", "cheat: 20 test items in problems", gsm_dir, gsm_tests + gsm_honest[:60])]
    out = []  # the strongest honest fine-tunes and the weakest cheats first
    for seed in range(seeds):
        for (lr, steps), (cheat_lr, cheat_steps) in zip(STRENGTHS[::-1], STRENGTHS, strict=True):
            out += [(*case, lr, steps, seed) for case in honest]
            out += [(*case, cheat_lr, cheat_steps, seed) for case in cheats] if seed == 0 else []
    return out


def main() -> None:
    import torch

    from ptbench.integrity.likelihood import ALPHA, check_likelihood
    from ptbench.models.registry import TINY
    from ptbench.models.tiny_instruct import finetune_tiny

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    table = Table(title=f"likelihood test on the tiny model (flag: p < {ALPHA} and effect > the references' floor)")
    columns = ("benchmark", "case", "lr", "steps", "seed", "test gain", "reference gain", "effect", "p", "flagged",
               "s")
    for column in columns:
        table.add_column(column)
    with tempfile.TemporaryDirectory() as tmp:
        for benchmark, case, data_dir, texts, lr, steps, seed in runs(args.seeds, Path(tmp)):
            start = time.perf_counter()
            model = finetune_tiny(texts, Path(tmp) / "model", steps, seed, lr)
            result = check_likelihood(benchmark, data_dir, model, TINY)
            n = result.evidence.numbers
            row = {"benchmark": benchmark, "case": case, "lr": lr, "steps": steps, "seed": seed,
                   "status": result.status, "seconds": round(time.perf_counter() - start, 1), **n}
            rows.append(row)
            print(json.dumps(row), flush=True)
            table.add_row(benchmark, case, f"{lr:g}", str(steps), str(seed), f"{n.get('test_gain', 0):+.3f}",
                          f"{n.get('reference_gain', 0):+.3f}",
                          f"{n.get('effect', 0):+.3f}", f"{n.get('p_value', 1):.4f}", result.status,
                          f"{row['seconds']:.0f}")
    Console().print(table)
    honest = [r for r in rows if r["case"].startswith("honest")]
    cheats = [r for r in rows if r["case"].startswith("cheat")]
    caught = sum(r["status"] == "flagged" for r in cheats)
    print(f"honest flagged {sum(r['status'] == 'flagged' for r in honest)}/{len(honest)}, max effect "
          f"{max(r.get('effect', 0) for r in honest):+.3f}; cheats caught {caught}/{len(cheats)}, min effect "
          f"{min(r.get('effect', 0) for r in cheats):+.3f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
