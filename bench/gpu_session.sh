#!/usr/bin/env bash
# The one device check of issue 29, for a session lent a GPU machine (no network there; torch and transformers
# preinstalled; the working tree travels, with the ignored paths a session carries).
#
#   bash bench/gpu_session.sh prepare   here: copy into build/gpu-site the packages bench_gpu.py imports that a CUDA
#                                       image lacks (torch, transformers and their own dependencies stay the image's)
#   bash bench/gpu_session.sh           there (carry build/gpu-site): a preflight, then bench_gpu.py's generation table
#                                       (1.7B shape, batch 64 x 256) and its Tinker table (the Qwen3-8B-shaped
#                                       16k-token step), each under its own time limit, written under $OUT
#
# The copied packages include compiled ones built for this machine's Python: the device's python3 must be the same
# minor release (the preflight says which import failed if not). About 5 minutes of device time in all.
set -uo pipefail
cd "$(dirname "$0")/.."
SITE=build/gpu-site

if [[ "${1:-}" == prepare ]]; then
    rm -rf "$SITE" && mkdir -p "$SITE"
    .venv/bin/python - "$SITE" <<'EOF'
import importlib.metadata as metadata, shutil, sys
from pathlib import Path

site = Path(sys.argv[1])
import runpy

before = set(sys.modules)
sys.argv = ["bench/bench_gpu.py", "--repeats", "1"]
try:  # the CPU run imports what the GPU run will (its lazy imports included)
    runpy.run_path("bench/bench_gpu.py", run_name="__main__")
except SystemExit:
    pass
image = {"torch", "transformers", "triton", "nvidia", "cuda", "torchgen", "functorch", "sympy", "mpmath", "networkx",
         "jinja2", "markupsafe", "filelock", "fsspec", "typing_extensions", "numpy", "huggingface_hub", "tokenizers",
         "safetensors", "regex", "yaml", "tqdm", "packaging", "hf_xet", "requests", "urllib3", "certifi", "idna",
         "charset_normalizer", "ptbench"}
optional = {"PIL", "boto3", "botocore", "s3transfer", "jmespath", "dateutil", "six", "dill"}  # tried, not needed
imported = set(sys.modules) - before
tops = {m.split(".")[0] for m in imported} - set(sys.stdlib_module_names) - image - optional
root = Path(sys.prefix) / "lib/python3.12/site-packages"
skip = shutil.ignore_patterns("__pycache__", "tests", "_cffi*.so")  # zstandard's C backend is the one used
for top in sorted(tops):
    namespace = (root / top).is_dir() and not (root / top / "__init__.py").exists()
    names = {m.split(".")[1] for m in imported if m.startswith(f"{top}.") and m.count(".")} if namespace else {top}
    for name in names:  # a namespace package (google): only its parts that were imported
        rel = Path(top, name) if namespace else Path(name)
        for path in (root / rel, root / f"{rel}.py", *root.glob(f"{rel}*.so"), *root.glob(f"{rel}.libs")):
            if path.is_dir():
                shutil.copytree(path, site / path.relative_to(root), ignore=skip)
            elif path.is_file():
                (site / path.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, site / path.relative_to(root))
for dist in {d for top in tops for d in metadata.packages_distributions().get(top, [])}:  # versions checked at import
    for info in root.glob(f"{dist.replace('-', '_')}-*.dist-info"):
        shutil.copytree(info, site / info.name, ignore=shutil.ignore_patterns("RECORD"))
print(f"{site}: {', '.join(sorted(p.name for p in site.iterdir()))}")
EOF
    du -sh "$SITE"
    exit 0
fi

OUT="${OUT:-build/gpu-out}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src:$PWD/$SITE" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
PY="${PYTHON:-python3}"
{ nvidia-smi; "$PY" -c "import sys, torch, transformers; print(sys.version); print('torch', torch.__version__,
'cuda', torch.version.cuda, torch.cuda.is_available()); print('transformers', transformers.__version__)"; } \
    > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
if ! "$PY" -c "import torch, peft, ptbench.models.backends, ptbench.tinker_server.trainer; assert torch.cuda.is_available(), 'torch sees no GPU'" \
        > "$OUT/preflight.txt" 2>&1; then
    cat "$OUT/preflight.txt"
    echo "preflight failed: nothing run (see $OUT/preflight.txt)"
    exit 1
fi
timeout 330 "$PY" bench/bench_gpu.py --only generation > "$OUT/generation.txt" 2>&1
echo "generation exit $?"
timeout 180 "$PY" bench/bench_gpu.py --only tinker > "$OUT/tinker.txt" 2>&1
echo "tinker exit $?"
grep -v -i warn "$OUT/generation.txt" "$OUT/tinker.txt"
