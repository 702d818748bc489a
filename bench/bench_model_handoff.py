"""The hand-off of a large `final_model/` from the agent's environment to a separate verifier's, through Harbor's
artifact path or (`--route mount`, podman) the exported tasks' `--handoff-mount` route: time, the host's peak memory
and disk, and whether anything was gzipped on the way.

One Harbor trial per size: the agent (Harbor's oracle) writes N GB of random bf16 safetensors (not sparse: random
bytes from os.urandom, so no copy can shortcut holes, and gzip gains nothing) in shards of at most 4 GiB, with an
index and SHA256SUMS; the task's collect hook records the model as exported tasks do (`ptbench handoff-record`);
the verifier checks every shard's SHA-256 and its own copy's size (reward 1 when whole). Measured:
- hand-off: from the end of solve.sh to the start of test.sh (the collect hook, Harbor's collection to the trial dir,
  the verifier's environment start and the upload into it); the verifier's SHA-256 pass separately;
- peak RSS of the process that runs the job (where Harbor's host-side copies run), sampled with every child's
  (on podman's artifact route it is nearly all the job's own Python: Harbor's upload fallback holds the artifact as
  a tar in memory, twice; each podman CLI process stays near 35 MiB);
- peak disk used on the work dir's filesystem above the start (every copy on the way that is alive at once);
- gzip: any gzip/pigz process seen during the trial (sampled every 0.2 s), and whether a `.gz` file appeared.

Run: .venv/bin/python bench/bench_model_handoff.py --env local --sizes 1 4 8   (or --env podman: Harbor's podman
environment on an image that must exist, `--image`, default the container test's base image; add --route mount for
the submission through the trial's agent/ dir, with Harbor's log mounts on). Needs root and about 5x the largest
size free on the work dir's filesystem (about 2x with --route mount); everything is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ptbench.catalog import handoff_mount
from ptbench.catalog.submission import FINAL_MODEL

ROOT = Path(__file__).resolve().parents[1]
SHARD_BYTES = 4 << 30
DEFAULT_IMAGE = "localhost/ptbench-python-deps:3.12"

WRITER = r"""
import json, os, struct, sys
total, out, shard_max = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
count = -(-total // shard_max)
weight_map = {}
for index in range(count):
    size = min(shard_max, total - index * shard_max) // 2 * 2
    name = f"model-{index + 1:05d}-of-{count:05d}.safetensors"
    tensor = f"layers.{index}.weight"
    header = json.dumps({tensor: {"dtype": "BF16", "shape": [size // 2], "data_offsets": [0, size]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(os.path.join(out, name), "wb") as handle:
        handle.write(struct.pack("<Q", len(header)) + header)
        left = size
        while left:
            chunk = os.urandom(min(left, 64 << 20))
            handle.write(chunk)
            left -= len(chunk)
    weight_map[tensor] = name
with open(os.path.join(out, "model.safetensors.index.json"), "w") as handle:
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, handle)
"""

SOLVE = """#!/bin/bash
set -e
python3 - {size} /app/final_model {shard} <<'PY'
{writer}
PY
cd /app/final_model && sha256sum *.safetensors > SHA256SUMS
date +%s.%N > /logs/agent/solve-end
"""

TEST = """#!/bin/bash
start=$(date +%s.%N)
reward=0
if cd {model} 2>/dev/null && sha256sum -c --quiet SHA256SUMS; then reward=1; fi
end=$(date +%s.%N)
echo "{{\\"reward\\": $reward}}" > /logs/verifier/reward.json
echo "{{\\"start\\": $start, \\"end\\": $end}}" > /logs/verifier/times.json
"""


@dataclass
class Row:
    env: str
    size_gb: int
    reward: float | None
    handoff_s: float | None
    check_s: float | None
    rss_mib: float
    disk_gib: float
    gzip: str
    error: str | None


def write_task(root: Path, size: int, env: str, image: str, route: str) -> Path:
    task = root / f"handoff-{size >> 30}g"
    (task / "environment").mkdir(parents=True)
    (task / "solution").mkdir()
    (task / "tests").mkdir()
    hook = (
        "ptbench handoff-record /app/final_model /logs/artifacts/ptbench-handoff.json" if env == "local" else "true"
    )  # the podman image has no ptbench; the record is the local part of the measurement
    model, artifacts = str(FINAL_MODEL), '["/app/final_model"]'
    if route == "mount":  # exported tasks' --handoff-mount: the hook's copy into the trial's agent/ dir, bind-mounted
        hook, model, artifacts = (
            handoff_mount.copy_command(FINAL_MODEL),
            str(handoff_mount.verifier_path(FINAL_MODEL)),
            "[]",
        )
        (task / "environment" / "docker-compose.yaml").write_text(handoff_mount.COMPOSE)
    (task / "task.toml").write_text(f"""schema_version = "1.4"
artifacts = {artifacts}

[agent]
timeout_sec = 3600.0

[verifier]
timeout_sec = 3600.0
environment_mode = "separate"

[[verifier.collect]]
command = "{hook}"
timeout_sec = 1800.0
user = "root"

[environment]
workdir = "/app"
storage_mb = {(size >> 20) + 2048}
""")
    (task / "instruction.md").write_text("Write the model.\n")
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {image}\nWORKDIR /app\n" if env == "podman" else "FROM debian:bookworm-slim\nWORKDIR /app\n"
    )
    solve = SOLVE.format(size=size, shard=SHARD_BYTES, writer=WRITER)
    (task / "solution" / "solve.sh").write_text(solve)
    (task / "tests" / "test.sh").write_text(TEST.format(model=model))
    os.chmod(task / "solution" / "solve.sh", 0o755)  # noqa: S103 - a task's scripts run as the container's user
    os.chmod(task / "tests" / "test.sh", 0o755)  # noqa: S103 - a task's scripts run as the container's user
    return task


JOB = r"""
import asyncio, json, sys
from pathlib import Path
from harbor.job import Job
from harbor.models.job.config import JobConfig
from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig
task, jobs, env, sandboxes, mounts = sys.argv[1:6]
environment = (EnvironmentConfig(import_path="ptbench.sandbox.local:LocalEnvironment",
                                 kwargs={"sandbox_dir": sandboxes})
               if env == "local" else EnvironmentConfig(type="podman", kwargs={"auto_mounting": mounts == "mount"}))
config = JobConfig(job_name="handoff", jobs_dir=Path(jobs), n_concurrent_trials=1,
                   agents=[AgentConfig(name="oracle")], tasks=[TaskConfig(path=Path(task))], environment=environment)
async def main():
    job = await Job.create(config)
    await job.run()
asyncio.run(main())
"""


class Sampler(threading.Thread):
    """Peak RSS of a process tree, peak disk used, and gzip processes seen, every 0.2 s."""

    def __init__(self, pid: int, where: Path) -> None:
        super().__init__(daemon=True)
        self.pid, self.where = pid, where
        self.base = shutil.disk_usage(where).used
        self.disk = 0
        self.rss = 0
        self.gzip: set[str] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.disk = max(self.disk, shutil.disk_usage(self.where).used - self.base)
            self.rss = max(self.rss, self._tree_rss())

    def _tree_rss(self) -> int:
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                status = Path(f"/proc/{entry}/status").read_text()
                comm = Path(f"/proc/{entry}/comm").read_text().strip()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if comm in ("gzip", "pigz") or (comm == "tar" and "z" in _cmdline(entry)):
                self.gzip.add(comm)
            if self._descends(int(entry), fields) and "VmRSS" in fields:
                total += int(fields["VmRSS"].split()[0]) << 10
        return total

    def _descends(self, pid: int, fields: dict[str, str]) -> bool:
        seen = 0
        while pid > 1 and seen < 64:
            if pid == self.pid:
                return True
            try:
                pid = int(Path(f"/proc/{pid}/status").read_text().split("PPid:")[1].split()[0])
            except (OSError, IndexError, ValueError):
                return False
            seen += 1
        return False


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def run_one(work: Path, env: str, size_gb: int, image: str, route: str) -> Row:
    size = size_gb << 30
    case = work / f"{env}-{size_gb}"
    task = write_task(case, size, env, image, route)
    jobs = case / "jobs"
    sandboxes = case / "sandboxes"
    process = subprocess.Popen(
        [sys.executable, "-c", JOB, str(task), str(jobs), env, str(sandboxes), route],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    sampler = Sampler(process.pid, work)
    sampler.start()
    _, stderr = process.communicate()
    sampler.done.set()
    sampler.join()
    trial = next((p for p in (jobs / "handoff").iterdir() if p.is_dir()), None) if (jobs / "handoff").is_dir() else None
    reward = handoff = check = None
    error = stderr.strip().splitlines()[-1] if process.returncode else None
    gz = any(path.suffix == ".gz" for path in case.rglob("*")) if case.is_dir() else False
    if trial is not None:
        result = json.loads((trial / "result.json").read_text())
        rewards = (result.get("verifier_result") or {}).get("rewards") or {}
        reward = rewards.get("reward")
        if result.get("exception_info"):
            error = result["exception_info"].get("exception_type")
        try:
            solve_end = float((trial / "agent" / "solve-end").read_text())
            times = json.loads((trial / "verifier" / "times.json").read_text())
            handoff, check = times["start"] - solve_end, times["end"] - times["start"]
        except (OSError, ValueError, KeyError):
            pass
    shutil.rmtree(case, ignore_errors=True)
    gzip = ", ".join(sorted(sampler.gzip)) or ("a .gz file" if gz else "no")
    return Row(env, size_gb, reward, handoff, check, sampler.rss / 2**20, sampler.disk / 2**30, gzip, error)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=["local", "podman"], default="local")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--image", default=DEFAULT_IMAGE, help="the podman image the task's Dockerfile starts FROM")
    parser.add_argument(
        "--route",
        choices=["artifact", "mount"],
        default="artifact",
        help="artifact: Harbor's artifact path; mount: the exported tasks' --handoff-mount (podman only)",
    )
    parser.add_argument("--work", type=Path, default=None, help="work dir (default: a temporary dir under /tmp)")
    args = parser.parse_args()
    if args.route == "mount" and args.env != "podman":
        parser.error("--route mount is for compose environments (--env podman)")
    if args.env == "podman":
        os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "scripts" / "podman" / "containers.conf"))
        os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # podman-compose
    work = Path(tempfile.mkdtemp(prefix="ptbench-handoff-", dir=args.work))
    rows = []
    try:
        for size in args.sizes:
            rows.append(run_one(work, args.env, size, args.image, args.route))
            print(json.dumps(rows[-1].__dict__), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = Table(
        title=f"final_model/ to a separate verifier ({args.env}, {args.route} route; random bf16, not sparse)"
    )
    for column in (
        "size",
        "arrived whole",
        "hand-off s",
        "verifier sha256 s",
        "peak RSS MiB",
        "peak disk GiB",
        "gzip on the way",
        "error",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            f"{row.size_gb} GB",
            {1: "yes", 0: "no", None: "-"}.get(row.reward, str(row.reward)),
            _num(row.handoff_s),
            _num(row.check_s),
            f"{row.rss_mib:.0f}",
            f"{row.disk_gib:.1f}",
            row.gzip,
            row.error or "",
        )
    Console(width=160).print(table)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


if __name__ == "__main__":
    main()
