"""Human mode through a pseudo-terminal: ``dbabench run --agent human`` driven as a person at
a terminal would, tools as commands, the report form, the same grading."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbabench.agents.human import COMMANDS, PROMPT, parse_arguments
from dbabench.env.processes import alive, stop_pid


def test_options_then_the_main_argument() -> None:
    assert parse_arguments(COMMANDS["metrics"], "--range-seconds 300 --step-seconds 15"
                                                ' rate(x{job="a b"}[1m])') == {
        "range_seconds": 300, "step_seconds": 15, "query": 'rate(x{job="a b"}[1m])'}
    assert parse_arguments(COMMANDS["log"], '--pattern "lock wait" --tail 5 postgresql') == {
        "pattern": "lock wait", "tail": 5, "source": "postgresql"}
    assert parse_arguments(COMMANDS["instance"], "config_set work_mem 64MB") == {
        "action": "config_set", "name": "work_mem", "value": "64MB"}
    assert parse_arguments(COMMANDS["sql"], "SELECT '--x' AS y") == {"sql": "SELECT '--x' AS y"}
    assert parse_arguments(COMMANDS["docs"], "") == {}


class Terminal:
    """A process on the far side of a pseudo-terminal."""

    def __init__(self, argv: list[str]) -> None:
        pid, self.fd = pty.fork()
        if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
            os.execv(argv[0], argv)
        self.pid = pid
        self.seen = ""
        self.code: int | None = None

    def _read(self, timeout: float) -> None:
        if select.select([self.fd], [], [], timeout)[0]:
            try:
                self.seen += os.read(self.fd, 65536).decode(errors="replace")
            except OSError:  # EIO: the child closed the terminal
                time.sleep(timeout)

    def expect(self, pattern: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while not (match := re.search(pattern, self.seen)):
            assert time.monotonic() < deadline, f"no /{pattern}/ in:\n{self.seen[-3000:]}"
            self._read(0.2)
        self.seen = self.seen[match.end():]
        return match.group(0)

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while self.code is None:
            assert time.monotonic() < deadline, f"still running:\n{self.seen[-3000:]}"
            self._read(0.2)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def close(self) -> None:
        if self.code is None and alive(self.pid):
            stop_pid(self.pid)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@contextmanager
def terminal(argv: list[str]) -> Iterator[Terminal]:
    term = Terminal(argv)
    try:
        yield term
    finally:
        term.close()


@pytest.mark.integration
@pytest.mark.slow
def test_a_person_at_a_terminal_works_the_demo_scenario(tmp_path: Path) -> None:
    dbabench = str(Path(sys.executable).with_name("dbabench"))
    prompt = r"dba> "
    with terminal([dbabench, "run", "stale-stats-lock-chain", "--agent", "human",
                   "--runs-dir", str(tmp_path)]) as term:
        term.expect(r"Alert: ", timeout=600)
        term.expect(r"sql SQL", timeout=5)  # the commands are listed
        term.expect(prompt)
        term.send("sql SELECT pid, application_name, pg_blocking_pids(pid) AS by"
                  " FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
        term.expect(r"\(SELECT \d+\)")
        term.expect(prompt)
        term.send("log --tail 3 business")
        term.expect(r'"matched"')
        term.expect(prompt)
        term.send("sql SELECT s.relname, n_mod_since_analyze FROM pg_stat_user_tables s"
                  " WHERE n_mod_since_analyze > 100000")
        term.expect(r"orders\s+\| \d+")
        term.expect(prompt)
        term.send("sql ANALYZE orders; ALTER TABLE orders RESET (autovacuum_enabled)")
        term.expect(r"\(ALTER TABLE\)")
        term.expect(prompt)
        term.send("sql SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE"
                  " state = 'active' AND pid IN (SELECT unnest(pg_blocking_pids(pid))"
                  " FROM pg_stat_activity)")
        term.expect(prompt)
        term.send("budget")
        term.expect(r"\d+ tool calls and \d+s left")
        term.expect(prompt)
        term.send("report")
        for label, answer in [
                (r"root cause type \(words\? lists ids\): ", "stale planner?"),
                (r"stale_statistics: the planner's statistics", None),
                (r"root cause type \(words\? lists ids\): ", "stale_statistic"),
                (r"nearest: stale_statistics", None),
                (r"root cause type \(words\? lists ids\): ", "stale_statistics"),
                (r"affected objects as KIND NAME.*: ", "orders"),
                (r"the kind comes first", None),
                (r"affected objects as KIND NAME.*: ", "table orders"),
                (r"causal factors, comma-separated ids.*: ",
                 "cardinality_misestimate, lock_chain, autovacuum_disabled"),
                (r"  >: ", "execute_sql: n_mod_since_analyze over a million on orders #3"),
                (r"  >: ", ""),
                (r"  >: ", "ANALYZE orders"),
                (r"  >: ", ""),
                (r"verification: ", "lock waits checked after the cancel"),
                (r"narrative: ", "stale statistics, bad plan, long row lock, queued checkouts")]:
            term.expect(label)
            if answer is not None:
                term.send(answer)
        term.expect(r"report filed\.")
        assert term.wait(timeout=300) in (0, 1)

    (run_dir,) = tmp_path.iterdir()
    evaluation = json.loads((run_dir / "evaluation.json").read_text())
    assert evaluation["agent"] == "human" and evaluation["status"] == "scored"
    assert evaluation["report_valid"] and evaluation["diagnosis"]["f1"] >= 0.8
    assert evaluation["efficiency"]["tool_calls"] == 5
    report = json.loads((run_dir / "report.json").read_text())
    assert report["evidence"] == [{"tool": "execute_sql", "trace_seq": 3,
                                   "observation": "n_mod_since_analyze over a million on orders"}]
    kinds = [json.loads(line)["kind"] for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    assert kinds == ["tool"] * 5 + ["report"]


@pytest.mark.integration
@pytest.mark.slow
def test_commands_from_a_file_work_as_from_a_pipe(tmp_path: Path) -> None:
    """``< commands.txt``: asyncio has no pipe transport for a regular file; the commands and
    the report form are read from it all the same, and echoed, since no terminal does."""
    commands = tmp_path / "commands.txt"
    commands.write_text("\n".join([
        "sql SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
        "budget", "report", "stale_statistics", "table orders", "lock_chain", "",
        "ANALYZE orders", "", "looked at the lock waits", "stale statistics on orders"]) + "\n")
    runs = tmp_path / "runs-of-a-human-reading-commands-from-a-file-not-a-terminal"
    dbabench = str(Path(sys.executable).with_name("dbabench"))
    with commands.open() as stdin:
        done = subprocess.run([dbabench, "run", "stale-stats-lock-chain", "--agent", "human",
                               "--runs-dir", str(runs)], stdin=stdin, capture_output=True,
                              text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert f"{PROMPT}budget\n" in done.stdout and "report filed." in done.stdout
    (run_dir,) = runs.iterdir()
    # the path whole on its line, though stdout is no terminal and the path is long
    assert len(str(run_dir)) > 80 and f"\nrun directory: {run_dir}\n" in done.stdout
    evaluation = json.loads((run_dir / "evaluation.json").read_text())
    assert evaluation["status"] == "scored" and evaluation["report_valid"]
    assert evaluation["efficiency"]["tool_calls"] == 1
