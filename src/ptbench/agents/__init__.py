"""Third-party agent CLIs (Codex, Claude Code, Gemini CLI, OpenCode): which ones ptbench knows, installing them from
npm into a ptbench-managed prefix that the local environment shows read-only on PATH, and a scripted model API to
run them offline."""
