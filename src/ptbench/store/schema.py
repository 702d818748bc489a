"""Opening the results store: SQLite in WAL mode, the tables, and the schema-version check."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from ptbench.errors import UserError
from ptbench.store.models import SCHEMA_VERSION, TRIAL_STATUSES, StoreMeta

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE jobs (
    job_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    environment TEXT,
    n_total_trials INTEGER,
    started_at TEXT,
    finished_at TEXT,
    ingested_at TEXT NOT NULL
);
CREATE TABLE trials (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL,
    job_id TEXT NOT NULL REFERENCES jobs(job_id) ON DELETE CASCADE,
    trial_name TEXT NOT NULL,
    trial_id TEXT,
    status TEXT NOT NULL CHECK (status IN ({statuses})),
    reason TEXT,
    score REAL,
    scored TEXT CHECK (scored IN ('submission', 'base')),
    verifier_status TEXT NOT NULL,
    verifier_reason TEXT,
    agent_exit_code INTEGER,
    task_name TEXT,
    task_path TEXT,
    task_checksum TEXT,
    task_spec TEXT,
    budget_hours REAL,
    gpus INTEGER,
    agent TEXT,
    model_name TEXT,
    seed INTEGER,
    exception_type TEXT,
    exception_message TEXT,
    started_at TEXT,
    finished_at TEXT,
    trial_dir TEXT NOT NULL,
    trajectory_path TEXT,
    log_path TEXT,
    verifier_log_path TEXT,
    details_path TEXT,
    inspect_log_path TEXT,
    agent_log_path TEXT,
    reference_report_path TEXT,
    egress TEXT,
    UNIQUE (job_id, trial_name)
);
CREATE INDEX trials_by_trial_id ON trials(trial_id);
CREATE TABLE metrics (
    trial INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (trial, source, name)
);
CREATE TABLE phases (
    trial INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    phase TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    PRIMARY KEY (trial, phase)
);
""".replace("{statuses}", ", ".join(f"'{status}'" for status in TRIAL_STATUSES))


def open_store(path: Path, *, create: bool) -> sqlite3.Connection:
    """Open (and with `create`, initialise) the store; a foreign or newer file is a UserError."""
    if not path.exists() and not create:
        raise UserError(f"no results store at {path} (run `ptbench run` or `ptbench runs ingest` first)")
    if path.exists() and not path.is_file():
        raise UserError(f"results store {path} is not a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _ensure_schema(conn, path)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UserError(f"{path} is not a ptbench results store: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _has_table(conn, "meta"):
            if _has_any_table(conn):
                raise UserError(f"{path} is an SQLite file but not a ptbench results store")
            for statement in filter(str.strip, _TABLES.split(";")):
                conn.execute(statement)
            meta = StoreMeta(created_at=datetime.now(UTC))
            conn.execute("INSERT INTO meta VALUES ('store', ?)", (meta.model_dump_json(),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    _check_version(conn, path)


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'store'").fetchone()
    try:
        meta = StoreMeta.model_validate_json(row["value"]) if row else None
    except ValidationError:
        meta = None
    if meta is None:
        raise UserError(f"results store {path} has no readable schema version")
    if meta.schema_version < SCHEMA_VERSION:
        raise UserError(
            f"results store {path} has schema version {meta.schema_version}, from an older ptbench; this ptbench "
            f"reads version {SCHEMA_VERSION} (trial outcomes are classified anew): move the file away and ingest "
            "the job dirs again with `ptbench runs ingest JOB_DIR` (the job dirs are the source of truth)"
        )
    if meta.schema_version != SCHEMA_VERSION:
        raise UserError(
            f"results store {path} has schema version {meta.schema_version}; "
            f"this ptbench reads version {SCHEMA_VERSION}"
        )


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def _has_any_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'").fetchone() is not None
