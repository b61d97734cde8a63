"""The agent's regular expressions (read_log's pattern) are RE2's: they match in time linear in
the text, and what RE2 cannot match so (backreferences, lookaround) is refused as the agent's
bad input, naming what is unsupported. Python's ``re`` took exponential time on
``(.|.)*QQQQ`` with the GIL held, and wedged the harness (the second outside attack)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from dbabench.tools.errors import ToolError
from dbabench.tools.patterns import MAX_PATTERN_CHARS, MAX_PROGRAM_SIZE, AgentPattern

# What read_log searches: a server log line as tools.logs renders it, and the application's.
LINES = [
    "2026-12-06 10:15:02.114 UTC [4121] app=checkout ERROR: 57014 canceling statement due to"
    " statement timeout STATEMENT: UPDATE orders SET status = 'paid' WHERE id = 1842",
    '{"ts":"2026-12-06T10:15:02.120+00:00","service":"shop","request_id":"r1842",'
    '"operation":"checkout","latency_ms":30012.5,"outcome":"timeout","sqlstate":"57014"}',
] * 2000


@pytest.mark.timeout(60)
def test_a_pattern_that_backtracks_without_end_finds_no_match() -> None:
    # re would try 2**n ways on each line of n characters before giving up
    pattern = AgentPattern("(.|.)*QQQQ", ignore_case=True)
    assert not any(pattern.search(line) for line in LINES)
    # the same shape still finds what is there
    assert sum(AgentPattern("(.|.)*TIMEOUT", ignore_case=True).search(line)
               for line in LINES) == len(LINES)


def test_matching_lets_other_threads_run() -> None:
    """RE2 releases the GIL while it matches: a slow search (a pattern whose states outgrow
    RE2's DFA) holds up no other thread, the tool server's event loop or signal handling."""
    pattern = AgentPattern("a.{100}c")
    assert pattern.search("x" * 5 + "a" + "b" * 100 + "c")
    text = "".join(random.Random(1).choice("ab") for _ in range(100_000))
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)
        before, started = ticks, time.monotonic()
        while time.monotonic() - started < 0.3:
            assert not pattern.search(text)
        during = ticks - before
    finally:
        done.set()
        counter.join()
    assert during >= 5, during


def test_case_and_syntax() -> None:
    assert AgentPattern("timeout", ignore_case=True).search("statement TIMEOUT")
    assert not AgentPattern("timeout").search("statement TIMEOUT")
    assert AgentPattern(r"\bduration: \d{4,}\.\d+ ms").search("LOG: duration: 2315.7 ms")
    assert AgentPattern(r"(?P<op>checkout|browse)").search('"operation":"browse"')
    assert AgentPattern("état").search("l'état")
    # a lone surrogate in the text breaks nothing
    assert AgentPattern("ab").search("\ud800ab")
    assert not AgentPattern("ba").search("\ud800ab")


@pytest.mark.parametrize(("pattern", "named"), [
    (r"(timeout)\1", "backreferences (\\1) are not supported"),
    (r"(?P<o>ok)(?P=o)", "named backreferences (?P=name) are not supported"),
    (r"checkout(?=.*timeout)", "lookahead assertions (?=...) are not supported"),
    (r"checkout(?!.*ok)", "lookahead assertions (?!...) are not supported"),
    (r"(?<=app=)checkout", "lookbehind assertions (?<=...) are not supported"),
    (r"(?<!app=)checkout", "lookbehind assertions (?<!...) are not supported"),
    (r"(?>a+)b", "atomic groups"),
    (r"a*+b", "possessive quantifiers"),
    (r"timeout\Z", "use \\z"),
])
def test_what_re2_cannot_match_in_linear_time_is_refused_naming_it(pattern: str,
                                                                   named: str) -> None:
    with pytest.raises(ToolError) as refused:
        AgentPattern(pattern)
    message = str(refused.value)
    assert message.startswith("pattern is not a valid regular expression in RE2 syntax")
    assert named in message and "linear time" in message, message


def test_a_plain_syntax_error_names_the_problem_alone() -> None:
    with pytest.raises(ToolError, match=r"not a valid regular expression .*: missing \)") as e:
        AgentPattern("(unclosed", field="query")
    assert str(e.value).startswith("query ") and "backreferences" not in str(e.value)


def test_patterns_past_the_bounds_are_refused() -> None:
    with pytest.raises(ToolError, match="too large: RE2 compiles it to"):
        AgentPattern("a.{500}b")
    AgentPattern("a.{50}b")  # well within MAX_PROGRAM_SIZE
    with pytest.raises(ToolError, match=f"at most {MAX_PATTERN_CHARS}"):
        AgentPattern("a" * (MAX_PATTERN_CHARS + 1))
    with pytest.raises(ToolError, match="not a valid regular expression"):
        AgentPattern("a{1001}")  # past RE2's own bound on a repetition
    with pytest.raises(ToolError, match="lone surrogate"):
        AgentPattern("\ud800")
    assert MAX_PROGRAM_SIZE >= 300  # an alternation of a dozen server messages fits
