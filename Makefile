# The two set-up commands: `make demo` (the main job) and `make test` (the tests). Each sets up .venv first.
.PHONY: demo test setup bench

setup:
	@scripts/setup-venv

demo: setup
	.venv/bin/ptbench demo

# pytest: one worker more than the cores, since the heaviest files wait on the clock as much as they compute (agent
# budgets, Slurm's scheduling, sandboxes starting): with two workers on 2 cores the suite's processes kept the cores
# busy about 60% of its wall time (bench/README.md, "The test suite's workers")
# compileall: ptbench's own modules byte-compiled once (the sandboxes see the checkout read-only and cannot write
# them; with PYTHONDONTWRITEBYTECODE set nothing does, and every test process, CLI and verifier compiled them)
# mypy beside pytest, its report after the tests; with no cache (a new clone) it checks for about a minute on one
# core, while the suite's start (three workers collecting) leaves room; either failing fails the target
test: setup
	.venv/bin/ruff check src tests bench
	.venv/bin/ruff format --check src tests bench
	.venv/bin/lint-imports --no-cache
	.venv/bin/python -m compileall -q src
	@echo ".venv/bin/mypy (beside the tests; its report follows them)"
	@.venv/bin/mypy > .venv/mypy.log 2>&1 & mypy=$$!; \
	  .venv/bin/python -m pytest -q -n $$(( $$(nproc) + 1 )) --dist loadfile --no-loadscope-reorder --durations=20 tests; \
	  tests=$$?; wait $$mypy; checked=$$?; echo "mypy:"; cat .venv/mypy.log; [ $$tests = 0 ] && [ $$checked = 0 ]

bench:
	@scripts/setup-venv dev,bench
	.venv/bin/python bench/run_all.py
