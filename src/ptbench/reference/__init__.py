"""The reference agent: ptbench's own post-training recipes (SFT, GRPO, through Tinker), time-aware, run as Harbor's
oracle (`ptbench reference`) to anchor every benchmark with a result an honest agent can reach."""
