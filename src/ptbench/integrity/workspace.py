"""The agent's workspace and logs as the checks read them: every file, no link followed, size- and count-capped,
with compressed, archived, notebook, base64 and columnar copies opened up as further texts.

Nothing here is trusted: a file is read with O_NOFOLLOW (`read_untrusted`), a directory entry that is a link is
skipped and recorded, decompression is capped, and anything unreadable is recorded as skipped, never raised.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import gzip
import io
import json
import lzma
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ptbench.files import UnsafeFile, read_untrusted

MAX_FILES = 20_000
MAX_FILE_BYTES = 256 << 20
MAX_TOTAL_BYTES = 2 << 30
MAX_DEPTH = 3
"""Nesting of decoded copies (a zip in a gzip in base64)."""
B64_MIN = 80
_B64_CHARS = bytes(int(chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+/")) for b in range(256))
_B64_RUN = b"\x01" * B64_MIN
_COLUMNAR = (".parquet", ".arrow", ".feather")


@dataclass
class Text:
    """One readable payload: `where` names the file and the copy inside it (file.zip!a.json, file:base64@120)."""

    where: str
    data: bytes


@dataclass
class Walk:
    """What a walk read and what it skipped (links, unreadable or over-cap files), for the evidence."""

    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)
    excluded: frozenset[str] = frozenset()
    """Absolute paths not read (the submission: its weights are the model checks' input, not text)."""

    @classmethod
    def excluding(cls, paths: list[Path] | None) -> Walk:
        """A fresh walk that skips these paths."""
        return cls(excluded=frozenset(os.path.abspath(path) for path in paths or []))


def texts(roots: list[Path], walk: Walk) -> Iterator[Text]:
    """Every payload under `roots` (files or dirs), decoded copies included, within the caps."""
    for root in roots:
        for path, shown in _files(root, walk):
            if walk.files >= MAX_FILES or walk.bytes >= MAX_TOTAL_BYTES:
                walk.skipped.append(f"{shown}: cap of {MAX_FILES} files / {MAX_TOTAL_BYTES} bytes reached")
                return
            try:
                data = read_untrusted(path, MAX_FILE_BYTES)
            except (OSError, UnsafeFile) as exc:
                walk.skipped.append(f"{shown}: {exc}")
                continue
            walk.files += 1
            walk.bytes += len(data)
            yield from _expand(shown, data, 0, walk)


def _files(root: Path, walk: Walk) -> Iterator[tuple[Path, str]]:
    """Regular files under root, depth first, links skipped (and recorded)."""
    if root.is_symlink():
        walk.skipped.append(f"{root}: a link, not followed")
        return
    if root.is_file():
        yield root, root.name
        return
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            walk.skipped.append(f"{current}: {exc.strerror}")
            continue
        for entry in entries:
            shown = os.path.relpath(entry.path, root)
            if entry.is_symlink():
                walk.skipped.append(f"{shown}: a link, not followed")
            elif os.path.abspath(entry.path) in walk.excluded:
                walk.skipped.append(f"{shown}: the submission, not scanned")
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path), shown


def _expand(where: str, data: bytes, depth: int, walk: Walk) -> Iterator[Text]:
    """The payload itself (or what it decodes to), then what is inside it."""
    lower = where.lower()
    inner = _decoded(where, lower, data, walk) if depth < MAX_DEPTH else None
    if inner is None:
        yield Text(where, _notebook(data) if lower.endswith(".ipynb") else data)
        if depth < MAX_DEPTH:
            for start, end in _b64_runs(data):
                blob = _b64(data[start:end])
                if blob is not None:
                    yield from _expand(f"{where}:base64@{start}", blob, depth + 1, walk)
        return
    for name, payload in inner:
        yield from _expand(name, payload, depth + 1, walk)


def _decoded(where: str, lower: str, data: bytes, walk: Walk) -> list[tuple[str, bytes]] | None:
    """The contents of a compressed, archived or columnar file; None when it is none of those."""
    try:
        if data[:2] == b"\x1f\x8b":
            return [(f"{where}!gunzip", _capped(gzip.GzipFile(fileobj=io.BytesIO(data))))]
        if data[:3] == b"BZh":
            return [(f"{where}!bunzip2", _capped(bz2.BZ2File(io.BytesIO(data))))]
        if data[:6] == b"\xfd7zXZ\x00":
            return [(f"{where}!unxz", _capped(lzma.LZMAFile(io.BytesIO(data))))]
        if data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = [m for m in archive.infolist() if not m.is_dir()][:MAX_FILES]
                return [(f"{where}!{m.filename}", _capped(archive.open(m))) for m in members]
        if lower.endswith(_COLUMNAR) or data[:4] == b"PAR1" or data[:6] == b"ARROW1":
            return [(f"{where}!columns", _columnar(data))]
    except (OSError, EOFError, ValueError, ImportError, zipfile.BadZipFile, lzma.LZMAError, RuntimeError) as exc:
        walk.skipped.append(f"{where}: cannot decode: {type(exc).__name__}")
        return []
    return None


def _capped(stream: IO[bytes] | gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile) -> bytes:
    """A decompressed stream's bytes, at most MAX_FILE_BYTES (a bomb stops there)."""
    with stream:
        return stream.read(MAX_FILE_BYTES)


def _notebook(data: bytes) -> bytes:
    """A notebook's cell sources and text outputs, one cell a paragraph (the JSON itself when it is not one)."""
    try:
        cells = json.loads(data).get("cells", [])
        parts = []
        for cell in cells:
            parts.append("".join(cell.get("source", [])))
            for output in cell.get("outputs", []):
                parts.append("".join(output.get("text", [])))
        return "\n\n".join(parts).encode()
    except (ValueError, AttributeError, TypeError):
        return data


def _b64_runs(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every run of at least B64_MIN base64 characters (padding '=' included): a byte search over
    the text mapped to 0/1, so text without such runs costs one translate and one find."""
    mask = data.translate(_B64_CHARS)
    runs = []
    start = mask.find(_B64_RUN)
    while start >= 0:
        end = mask.find(b"\x00", start + B64_MIN)
        end = len(data) if end < 0 else end
        while end < len(data) and data[end:end + 1] == b"=" and data[end - 2:end] != b"==":
            end += 1
        runs.append((start, end))
        start = mask.find(_B64_RUN, end)
    return runs


def _b64(blob: bytes) -> bytes | None:
    """A base64 run decoded, when it decodes to something mostly printable or compressed."""
    try:
        decoded = base64.b64decode(blob + b"=" * (-len(blob) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    if decoded[:2] == b"\x1f\x8b" or decoded[:4] == b"PK\x03\x04":
        return decoded
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in decoded[:512])
    return decoded if printable >= 0.9 * min(len(decoded), 512) else None


def _columnar(data: bytes) -> bytes:
    """Every string column of a parquet or arrow file as text, one value a line (needs pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = pa.BufferReader(data)
    if data[:4] == b"PAR1":
        table = pq.read_table(buffer)
    else:
        try:
            table = pa.ipc.open_file(buffer).read_all()
        except pa.ArrowInvalid:
            table = pa.ipc.open_stream(pa.BufferReader(data)).read_all()
    lines: list[str] = []
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            lines.extend(str(v) for v in column.to_pylist() if v is not None)
    return "\n".join(lines).encode()
