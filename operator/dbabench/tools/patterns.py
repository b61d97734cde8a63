"""Regular expressions the agent writes, compiled with RE2, never with Python's ``re``.

Python's ``re`` backtracks: a pattern such as ``(.|.)*QQQQ`` takes time exponential in the
line, holding the GIL, and wedged the whole harness (tool server, event loop, signal handling)
until it was killed. RE2 matches in time linear in the text, and releases the GIL while it
does. What it cannot do in linear time it does not accept: backreferences, lookahead and
lookbehind, atomic groups, possessive quantifiers. Such a pattern is the agent's bad input,
refused with what is unsupported; the run goes on.

Linear in the text is not yet cheap: RE2's work per byte grows with the size of the compiled
program when its DFA runs out of states (``a.{999}c`` on random text), so the program is held
to ``MAX_PROGRAM_SIZE`` instructions, far beyond any log search.
"""

from __future__ import annotations

import re2

from dbabench.tools.errors import ToolError

MAX_PATTERN_CHARS = 1000
"""The longest pattern an argument may carry."""
MAX_PROGRAM_SIZE = 1000
"""RE2 instructions: ``deadlock|lock timeout|could not serialize`` is about 50, an alternation
of a dozen PostgreSQL messages about 300, ``.{200}`` about 1,600. At the limit a search of
random text costs RE2 some microseconds a byte, without the GIL."""
SYNTAX = "RE2 syntax (https://github.com/google/re2/wiki/Syntax)"

# What RE2's parser says (after the colon it names the piece) -> what the agent is told.
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead assertions (?=...) are not supported"),
    ("invalid perl operator: (?!", "lookahead assertions (?!...) are not supported"),
    ("invalid perl operator: (?<=", "lookbehind assertions (?<=...) are not supported"),
    ("invalid perl operator: (?<!", "lookbehind assertions (?<!...) are not supported"),
    ("invalid perl operator: (?>", "atomic groups (?>...) are not supported"),
    ("invalid perl operator: (?#", "comments (?#...) are not supported"),
    ("bad repetition operator: *+", "possessive quantifiers (*+, ++, ?+) are not supported"),
    ("bad repetition operator: ++", "possessive quantifiers (*+, ++, ?+) are not supported"),
    ("bad repetition operator: ?+", "possessive quantifiers (*+, ++, ?+) are not supported"),
    ("invalid escape sequence: \\Z", "\\Z is not supported: use \\z for the end of the text"),
)


def _unsupported(problem: str, pattern: str) -> str | None:
    """What of Perl's or Python's syntax RE2 lacks that ``problem`` is about, if it is."""
    if problem.startswith("invalid escape sequence: \\") and problem[-1:].isdigit():
        return "backreferences (\\1) are not supported"
    if problem == "invalid perl operator: (?P" and "(?P=" in pattern:
        return "named backreferences (?P=name) are not supported"
    return next((why for prefix, why in _UNSUPPORTED if problem.startswith(prefix)), None)


class AgentPattern:
    """An agent's pattern, compiled by RE2 for searching (its groups do not capture: only
    whether a text matches is asked, and capturing would take a slower engine)."""

    def __init__(self, pattern: str, *, ignore_case: bool = False,
                 field: str = "pattern") -> None:
        """Raises ToolError naming ``field`` for a pattern RE2 refuses or that is too large."""
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ToolError(f"{field} is {len(pattern)} characters long; at most"
                            f" {MAX_PATTERN_CHARS} are accepted")
        try:
            encoded = pattern.encode()
        except UnicodeEncodeError:
            raise ToolError(f"{field} holds a lone surrogate (\\ud800-\\udfff): write"
                            " characters as UTF-8") from None
        options = re2.Options()
        options.log_errors = False  # the refusal is the agent's observation, not our log
        options.never_capture = True
        options.case_sensitive = not ignore_case
        try:
            self._regex = re2.compile(encoded, options)
        except re2.error as e:
            raw = e.args[0] if e.args else ""
            problem = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            why = _unsupported(problem, pattern)
            if why is None:
                raise ToolError(f"{field} is not a valid regular expression in {SYNTAX}:"
                                f" {problem}") from e
            raise ToolError(f"{field} is not a valid regular expression in {SYNTAX}: {problem}:"
                            f" {why}; RE2 matches in linear time, so it has no backreferences,"
                            " lookaround, atomic groups or possessive quantifiers") from e
        finally:
            # re2.compile keeps its last 128 patterns, each with DFA caches of up to 8 MiB:
            # patterns an agent chose would hold a gigabyte of our memory; ours lives for a call
            re2.purge()
        size = self._regex.programsize
        if size > MAX_PROGRAM_SIZE:
            raise ToolError(f"{field} is too large: RE2 compiles it to {size} instructions, at"
                            f" most {MAX_PROGRAM_SIZE} are accepted (a counted repetition such"
                            " as .{200} is copied that many times)")

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``. The text goes to RE2 as UTF-8
        bytes (a lone surrogate as its own bytes, which match no character)."""
        return self._regex.search(text.encode("utf-8", "surrogatepass")) is not None
