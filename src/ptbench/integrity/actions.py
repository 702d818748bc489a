"""From an agent's logs and code to what it ran (`Use`s), telling what was run from what was only said.

A log is a trajectory (JSON or JSON lines: every string in it is read, argv lists as commands, tool calls' `file_path`
arguments as reads or writes, the model's thoughts and a step's message beside its tool calls not; text lines between
the JSON lines, as Codex prints its warnings, read as text) or plain text (terminal prompts stripped). A text is Python
when it parses as Python that calls something, else shell; a shell line is a command only when its first word is one
(`shell_words.is_command`): a plan, a restated rule or a tool's output is prose, and prose runs nothing. What a command
hands on is read in turn: `bash -c`, `eval`, `python -c`, heredocs, command substitutions, base64 or escaped text piped
to a shell (decoded), and the shell texts of Python's `subprocess`.
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
import re
from collections.abc import Iterator

from ptbench.integrity.budget import SHELL_EXPANSION, spend
from ptbench.integrity.python_uses import python_uses
from ptbench.integrity.shell_words import (
    COMMAND_LINE,
    DEFAULT_ENV,
    Statement,
    is_command,
    join,
    parse,
    printed,
    unescape,
)
from ptbench.integrity.uses import Use

MAX_DEPTH = 4
"""Texts handed on inside texts (base64 in bash -c in python -c ...) are read this deep."""
MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 64
"""A trajectory's nesting is read this deep (Harbor's is under 10)."""
MAX_CHUNK_LINES = 2000
"""A command with its continuation lines (heredocs, open quotes) is read at most this long."""
_HEREDOC = re.compile(r"<<-?[ \t]*['\"]?([A-Za-z_][\w-]*)")
_PROMPT = re.compile(r"^[ \t]*(?:\([\w.-]+\)[ \t]+)?(?:[\w.-]+@[\w.-]+:[^\n#$]*[#$]|\$|>>>|In \[\d+\]:)[ \t]+",
                     re.MULTILINE)
_XARGS_VALUED = {"-n", "-L", "-P", "-d", "-s", "-E", "-a", "--max-args", "--max-procs", "--delimiter"}
"""xargs options that take a value (the command starts after them)."""
_PREFIXES = {"sudo", "env", "timeout", "nohup", "time", "nice", "exec", "command", "xargs", "stdbuf", "watch"}
_ASSIGNED = re.compile(r"[A-Za-z_]\w*=")
_SHELLS = {"bash", "sh", "zsh", "dash"}
_WRITE_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
_THOUGHTS = {"reasoning_content", "reasoning", "thinking"}
"""A trajectory's keys for the model's thoughts: what it considered, never what it ran."""
_TOOL_ARGUMENTS = {"arguments", "input", "args", "parameters", "tool_input"}
_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "filepath", "filename")
_CONTENT_KEYS = ("content", "new_string", "new_source", "file_text", "new_str", "insert_text")


def uses_in(text: str, where: str, depth: int = 0, quoted: str = "") -> list[Use]:
    """Everything `text` (a log, a file's content, a command) runs; `quoted` (the task's instruction, which a
    trajectory quotes) is blanked out of every string first."""
    if depth > MAX_DEPTH:
        return []
    if quoted and quoted in text:
        text = text.replace(quoted, " ")
    if depth == 0 and len(text) <= MAX_JSON_BYTES and (parts := json_parts(text)) is not None:
        return [use for part in parts
                for use in (uses_in(part, where, 1, quoted) if isinstance(part, str)
                            else _json_uses(part, where, "", quoted))]
    found = python_uses(text)
    if found is None:
        found = _shell_uses(_PROMPT.sub("", text))
    uses, nested = found
    for inner in nested:
        uses.extend(uses_in(inner, where, depth + 1))
    return uses


def json_parts(text: str) -> list[object] | None:
    """A JSON document, or a JSON-lines log: its documents in order, each run of text lines between them as one
    string (a JSON line is an object or array); None for any other text (fewer than half its lines JSON)."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return [json.loads(text)]
        except (ValueError, RecursionError):
            pass
    parts: list[object] = []
    loose: list[str] = []
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        document = _json_line(line)
        if document is None:
            loose.append(line)
            continue
        if loose:
            parts.append("\n".join(loose))
            loose = []
        parts.append(document)
    if loose:
        parts.append("\n".join(loose))
    documents = sum(not isinstance(part, str) for part in parts)
    return parts if documents and 2 * documents >= len(lines) else None


def _json_line(line: str) -> object | None:
    """The object or array a line holds, if it is one."""
    if line.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _json_uses(value: object, where: str, key: str, quoted: str, depth: int = 0) -> Iterator[Use]:
    """The uses in a JSON value: strings as texts, argv lists as commands, tool calls' paths as reads/writes."""
    if depth > MAX_JSON_DEPTH:
        return
    if isinstance(value, str):
        yield from uses_in(value, where, 1, quoted)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) for v in value) and is_command(str(value[0])):
            yield from uses_in(join([str(v) for v in value]), where, 1)
            return
        for item in value:
            yield from _json_uses(item, where, key, quoted, depth + 1)
    elif isinstance(value, dict):
        if value.get("tool_calls"):  # the step's commands are its tool calls; its message is commentary
            value = {k: v for k, v in value.items() if not (k == "message" and isinstance(v, str))}
        value = {k: v for k, v in value.items() if k not in _THOUGHTS}
        if key in _TOOL_ARGUMENTS:
            path = next((value[k] for k in _PATH_KEYS if isinstance(value.get(k), str)), None)
            if path is not None:
                writes = (path,) if any(k in value for k in _CONTENT_KEYS) else ()
                yield Use("tool", "file", (path,), writes, shown=json.dumps(value)[:160])
        for name, item in value.items():
            yield from _json_uses(item, where, str(name), quoted, depth + 1)


def _shell_uses(text: str) -> tuple[list[Use], list[str]]:
    """The commands of a shell text and the texts they hand on (prose and output lines skipped, a repeated
    command read once)."""
    uses: list[Use] = []
    nested: list[str] = []
    env, cwd, seen = dict(DEFAULT_ENV), DEFAULT_ENV["PWD"], set()
    for chunk in command_chunks(text):
        if chunk in seen:
            continue
        seen.add(chunk)
        pipeline: list[Statement] = []
        for statement in parse(chunk, env):
            pipeline.append(statement)
            use, inner = _command(statement, cwd)
            nested.extend(inner)
            if use is not None:
                uses.append(use)
                if use.name in ("cd", "pushd") and use.args:
                    cwd = posixpath.normpath(posixpath.join(cwd, use.args[-1]))
            if not statement.piped:
                nested.extend(_piped_text(pipeline))
                pipeline = []
    return uses, nested


def command_chunks(text: str) -> Iterator[str]:
    """The parts of a text that are commands: a line that starts one, with the lines that continue it (after a
    trailing backslash, inside an open quote, a heredoc's body); the prose and output lines between are skipped."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not COMMAND_LINE.match(lines[i]):
            i += 1
            continue
        single = double = 0
        pending: list[str] = []
        j = i
        while True:
            line = lines[j]
            if pending:
                if line.strip() == pending[0]:
                    pending.pop(0)
            else:
                single += line.count("'")
                double += line.count('"') - line.count('\\"')
                pending += _HEREDOC.findall(line)
            j += 1
            if j >= len(lines) or j - i >= MAX_CHUNK_LINES:
                break
            if not (pending or line.endswith("\\") or single % 2 or double % 2):
                break
        yield "\n".join(lines[i:j])
        i = j


def _command(statement: Statement, cwd: str) -> tuple[Use | None, list[str]]:
    """A statement as a use (None when it is prose), and what it hands on."""
    nested = list(statement.substitutions)
    words = list(statement.words)
    while words and _ASSIGNED.match(words[0]):
        words.pop(0)
    while words and posixpath.basename(words[0]) in _PREFIXES:
        words.pop(0)
        while words and (words[0].startswith("-") or "=" in words[0] or words[0][:1].isdigit()):
            words.pop(0)
    if not words or not is_command(words[0], words[1] if len(words) > 1 else ""):
        return None, nested
    name, args = posixpath.basename(words[0]), words[1:]
    writes = [target for op, target in statement.redirects if op in _WRITE_REDIRECTS]
    writes += _written(name, args)
    if name in _SHELLS or name.startswith("python"):
        script = _option_value(args, "c")
        nested.append(script if script is not None else statement.body)
        args = [a for a in args if a is not script]
    elif name == "eval":
        nested.append(" ".join(args))
        args = []
    elif statement.body:
        nested.append(statement.body)
    shown = join(words)[:160]
    return Use("command", name, tuple(args), tuple(writes), cwd, shown), [text for text in nested if text]


def _option_value(args: list[str], letter: str) -> str | None:
    """The argument after a short option cluster holding `letter` (`-c CODE`, `-lc CODE`), or None."""
    for index, arg in enumerate(args[:-1]):
        if arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]:
            return args[index + 1]
    return None


def _written(name: str, args: list[str]) -> list[str]:
    """The files a command writes (in place edits, copies' targets, removals)."""
    files = [a for a in args if not a.startswith("-")]
    if name == "sed" and any(a.startswith(("-i", "--in-place")) or re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z]*", a)
                             for a in args):
        scripted = any(a in ("-e", "-f") or a.startswith("--expression") for a in args)
        return files if scripted else files[1:]
    if name == "perl" and any(re.fullmatch(r"-[a-zA-Z]*i\S*", a) for a in args):
        return files[1:]
    if name in ("cp", "mv", "install", "rsync", "ln", "scp") and len(files) >= 2:
        return files[-1:] + (files[:-1] if name == "mv" else [])
    if name in ("tee", "rm", "touch", "chmod", "truncate", "patch", "chown"):
        return files[1:] if name in ("chmod", "chown") else files
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    return []


def _piped_text(pipeline: list[Statement]) -> list[str]:
    """Text a pipeline decodes or feeds to an interpreter: `echo B64 | base64 -d | sh`, `base64 -d <<< B64`,
    `printf '\\x63at ...' | bash`; and the command xargs runs on what is piped to it (`echo PATH | xargs cat`)."""
    if len(pipeline) < 2 and not any(s.body for s in pipeline):
        return []
    names = [posixpath.basename(s.words[0]) if s.words else "" for s in pipeline]
    source = pipeline[0]
    data = source.body or printed(source.words) if names[0] in ("echo", "printf") else source.body
    if not data:
        return []
    found = [_xargs(s.words[1:], data) for s, name in zip(pipeline[1:], names[1:], strict=True) if name == "xargs"]
    if any(s.words[:1] and names[i] == "base64" and any(a in ("-d", "-D", "--decode") for a in s.words)
           for i, s in enumerate(pipeline)):
        decoded = _b64(data)
        if decoded is not None:
            found.append(decoded)
    elif names[-1] in _SHELLS or names[-1].startswith("python"):
        found.append(unescape(data))
    return found


def _xargs(words: list[str], data: str) -> str:
    """The command `xargs WORDS` runs on `data` piped to it: its command with the data's words after it, or put in
    place of -I's placeholder."""
    placeholder = None
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option in ("-I", "-i", "--replace"):
            placeholder = words.pop(0) if option == "-I" and words else "{}"
        elif option.startswith("-I") and len(option) > 2:
            placeholder = option[2:]
        elif option in _XARGS_VALUED and words:
            words.pop(0)
    items = data.split()
    command = len(join(words or ["echo"])) + 1
    spend(SHELL_EXPANSION, (command * len(items) if placeholder is not None else command) + len(data))
    if placeholder is not None:
        return "\n".join(join([w.replace(placeholder, item) for w in words]) for item in items)
    return join((words or ["echo"]) + items)


def _b64(data: str) -> str | None:
    compact = "".join(data.split())
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4)).decode("utf-8", "replace")
    except (ValueError, binascii.Error):
        return None
