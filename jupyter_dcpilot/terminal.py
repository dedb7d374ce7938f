"""Text from the data, made safe to print on a terminal.

Column names, values and anything derived from them reach the command line's progress lines
and prompts. A name holding an escape sequence (``"\\x1b[2J"`` clears the screen, ``"\\x1b]8;;"``
makes a link, ``"\\r"`` overwrites the line) would be obeyed by the terminal; printed through
:func:`printable` it is shown as the characters it is made of instead.
"""

from __future__ import annotations

from typing import Any

# C0 controls but newline and tab, DEL, C1 controls (0x9b is a one-byte CSI), and the
# bidirectional overrides that reorder what is shown ("Trojan Source")
_UNSAFE = [c for c in range(0x20) if c not in (0x09, 0x0A)] + [0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {c: f"\\x{c:02x}" for c in _UNSAFE} | {c: f"\\u{c:04x}" for c in _BIDI}


def printable(text: str) -> str:
    """``text`` with every terminal control character written out (``\\x1b``), lines kept."""
    return text.translate(_ESCAPES)


_LINE_BREAKS = {0x0A: "\\n", 0x0B: "\\x0b", 0x0C: "\\x0c", 0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text: str) -> str:
    """``text`` as one printable line: :func:`printable`, and line breaks written out too. A
    column name holding a newline would otherwise print a line of its own choosing (a forged
    ``[ 99.9s] valid model: yes``)."""
    return printable(str(text)).translate(_LINE_BREAKS)


class TerminalStream:
    """A text stream that writes everything through :func:`printable` (progress lines,
    prompts and errors are built from column names the data chose)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(printable(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())


__all__ = ["TerminalStream", "one_line", "printable"]
