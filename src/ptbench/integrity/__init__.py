"""Integrity checks: contamination (workspace, trace, model), tampering, forbidden reads, model substitution.

Each check is one module returning a `CheckResult`; `checks.run_checks` runs them all for the verifier.
"""
