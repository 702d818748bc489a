"""Network policy for sandboxes: the allowlist decision, the peek at what a connection asks for, the egress record."""
