"""Text from a trial shown on a terminal: `visible` turns every character a terminal would act on into a visible
escape, so nothing a trial wrote (a request path, a model name, an exception message, a file name) can erase a line,
set the window title, plant an OSC 8 link or reorder text.

What is escaped: the C0 controls but newline and tab (ESC starts every CSI and OSC sequence; CR and BS overwrite),
DEL, the C1 controls (U+0080 to U+009F: 0x9B is a one-character CSI, 0x9D an OSC), and the invisible format and
separator characters (Unicode categories Cf, Zl, Zp: bidirectional overrides, zero-width characters). Each becomes
`\\xNN` or `\\uNNNN`, and a backslash stays itself: the escape is for a reader, not to be decoded. The CLI's console
(`cli/options.console`) applies it to every piece of text it renders, whatever the table or message."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_KEPT = frozenset("\n\t")


@lru_cache(maxsize=4096)
def _escape(char: str) -> str:
    code = ord(char)
    if char in _KEPT:
        return char
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if unicodedata.category(char) in ("Cf", "Zl", "Zp", "Cs", "Co", "Cn") and code > 0x7F:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def visible(text: str) -> str:
    """`text` with every character a terminal would act on shown as an escape (newline and tab kept)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(map(_escape, text))


def one_line(text: str) -> str:
    """`visible`, with newlines and tabs escaped too: for a message that must stay on one line."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")
