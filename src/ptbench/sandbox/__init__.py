"""The sandbox: the local Harbor environment (a task as processes in bubblewrap: `local`, its layout,
processes, limits, network, seccomp, file transfers, roots) and the code sandbox for model-written code
(`code`, `pycall`, `codec`), on one set of host tools (`host`).

Kept import-free; import `ptbench.sandbox.local` for the environment class."""
