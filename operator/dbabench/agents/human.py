"""Human mode: a person at a terminal is the agent, with the same tools, budget, trace and
report form as any model (the paper's human DBA baseline).

Each of the five tools is a command; leading ``--field value`` options set any other argument
of its schema (``--range-seconds 300``), and the rest of the line fills its main argument:

    sql SELECT ...                        execute_sql
    metrics [--range-seconds N] PROMQL    query_metrics
    instance ACTION [NAME [VALUE]]        manage_instance
    log [--tail N] [--pattern RE] postgresql|business
    docs WORDS                            query_knowledge_base
    call TOOL {json}                      any tool, arguments as JSON
    think TEXT   budget   report   help   quit
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from dbabench.model import taxonomy
from dbabench.model.task import AgentTask
from dbabench.model.taxonomy import ObjectKind
from dbabench.model.tool import ToolName
from dbabench.tools.gate import ToolGate
from dbabench.tools.specs import SUBMIT_REPORT, TOOL_SPECS

PROMPT = "dba> "
_OPTION = re.compile(r'\s*--([a-z][a-z0-9-]*)\s+("(?:[^"\\]|\\.)*"|\S+)')
_EVIDENCE = re.compile(r"(?P<tool>[a-z_]+)\s*:\s*(?P<text>.*?)(?:\s+#(?P<seq>\d+))?\s*$")


@dataclass(frozen=True)
class Command:
    tool: ToolName
    fields: tuple[str, ...]
    """What the rest of the line fills: one field takes it whole, several take a word each."""


COMMANDS = {
    "sql": Command(ToolName.execute_sql, ("sql",)),
    "metrics": Command(ToolName.query_metrics, ("query",)),
    "instance": Command(ToolName.manage_instance, ("action", "name", "value")),
    "log": Command(ToolName.read_log, ("source",)),
    "docs": Command(ToolName.query_knowledge_base, ("query",)),
}


def parse_arguments(command: Command, rest: str) -> dict[str, Any]:
    """``--field value`` options first, then the command's positional fields."""
    args: dict[str, Any] = {}
    while match := _OPTION.match(rest):
        raw = match.group(2)
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        args[match.group(1).replace("-", "_")] = value
        rest = rest[match.end():]
    rest = rest.strip()
    if len(command.fields) == 1:
        if rest:
            args[command.fields[0]] = rest
    else:
        args.update(zip(command.fields, rest.split(None, len(command.fields) - 1)))
    return args


def render(result: dict[str, Any]) -> str:
    head = f"[seq {result['seq']}{' · cut to its bounds' if result.get('truncated') else ''}]"
    if not result["ok"]:
        return f"{head} error: {result['error']}"
    observation = result["observation"]
    if isinstance(observation, dict) and "results" in observation:
        parts = [_table(r) for r in observation["results"]]
        parts += [f"NOTICE: {n}" for n in observation.get("notices", [])]
        return "\n".join([head, *parts])
    return f"{head}\n{json.dumps(observation, indent=2, default=str)}"


def _table(result: dict[str, Any]) -> str:
    lines = []
    if result.get("columns"):
        rows = [[("" if v is None else str(v)) for v in row] for row in result.get("rows", [])]
        widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
                  for i, c in enumerate(result["columns"])]
        lines.append(" | ".join(c.ljust(w) for c, w in zip(result["columns"], widths)))
        lines.append("-+-".join("-" * w for w in widths))
        lines += [" | ".join(v.ljust(w) for v, w in zip(row, widths)) for row in rows]
    if result.get("error"):
        error = result["error"]
        lines.append(f"ERROR {error.get('sqlstate') or ''}: {error['message']}")
    else:
        lines.append(f"({result.get('status') or ''}{', cut' if result.get('truncated') else ''})")
    return "\n".join(lines)


def usage() -> str:
    lines = ["Commands (the five tools, then the rest):"]
    for name, command in COMMANDS.items():
        spec = next(s for s in TOOL_SPECS if s.name == command.tool)
        options = [f"--{f.replace('_', '-')}" for f in spec.parameters()["properties"]
                   if f not in command.fields]
        lines.append(f"  {name} {' '.join(f.upper() for f in command.fields)}"
                     f"  ({command.tool}{'; ' + ' '.join(options) if options else ''})")
    lines += ["  call TOOL {json}  any tool with JSON arguments",
              "  think TEXT        a note for the trace",
              "  budget            tool calls and seconds left",
              "  report            fill in and file the report (ends your work)",
              "  quit              stop without a report"]
    return "\n".join(lines)


class HumanAgent:
    name = "human"

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        reader, restore = await self._reader()
        try:
            self.say(f"\n{task.as_text()}\n\n{usage()}\n")
            while True:
                line = await self.ask(reader, PROMPT)
                if line is None or line.strip() == "quit":
                    return
                if await self.handle(line.strip(), reader, gate):
                    return
        finally:
            restore()

    async def _reader(self) -> tuple[asyncio.StreamReader, Any]:
        """Lines from stdin without a thread (a blocked read could not be cancelled when the
        time budget ends); stdin is left blocking again afterwards, for the shell's sake."""
        fd = self.stdin.fileno()
        reader = asyncio.StreamReader()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            # commands from a file (< commands.txt): asyncio has no transport for one, and
            # reading it never waits on anyone, so it is taken whole
            with os.fdopen(os.dup(fd), "rb") as commands:
                reader.feed_data(commands.read())
            reader.feed_eof()
            return reader, lambda: None
        blocking = os.get_blocking(fd)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fd), "rb", 0))

        def restore() -> None:
            transport.close()
            os.set_blocking(fd, blocking)
        return reader, restore

    def say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    async def ask(self, reader: asyncio.StreamReader, prompt: str) -> str | None:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = await reader.readline()
        text = line.decode(errors="replace").rstrip("\n")
        if not self.stdin.isatty():
            # no terminal echoes what a file or a pipe typed: without it the transcript is
            # prompts after prompts
            self.say(text)
        return text if line else None

    async def handle(self, line: str, reader: asyncio.StreamReader, gate: ToolGate) -> bool:
        """Run one command; True once the report is filed."""
        word, _, rest = line.partition(" ")
        if not word:
            return False
        if word in COMMANDS:
            command = COMMANDS[word]
            self.say(render(await gate.call(command.tool, parse_arguments(command, rest))))
        elif word == "call":
            tool, _, text = rest.strip().partition(" ")
            try:
                args = json.loads(text or "{}")
            except ValueError as e:
                self.say(f"the arguments are not JSON: {e}")
                return False
            self.say(render(await gate.call(tool, args if isinstance(args, dict) else {})))
        elif word == "think":
            gate.think(rest)
        elif word == "budget":
            status = gate.budget.status(gate.exhausted)
            self.say(f"{status.steps_left} tool calls and {status.seconds_left:.0f}s left")
        elif word == "report":
            return await self.report(reader, gate)
        else:
            self.say(usage())
        return False

    async def report(self, reader: asyncio.StreamReader, gate: ToolGate) -> bool:
        """The report form: the fields of submit_report, asked one at a time; causes and
        objects are checked as they are typed, and ``words?`` lists the ids that fit."""
        self.say(SUBMIT_REPORT.description)

        async def field(label: str) -> str:
            return (await self.ask(reader, f"{label}: ") or "").strip()

        async def lines(label: str) -> list[str]:
            self.say(f"{label}, one per line, an empty line to end")
            found = []
            while entry := await field("  >"):
                found.append(entry)
            return found

        async def checked(label: str, check: Callable[[str], list[str]]) -> list[str]:
            while True:
                text = await field(label)
                if text.endswith("?"):
                    self.say(completions(text[:-1]))
                    continue
                values = [item.strip() for item in text.split(",") if item.strip()]
                problems = [p for v in values for p in check(v)]
                if not problems:
                    return values
                self.say("\n".join(problems))

        root: list[str] = []
        while len(root) != 1:
            root = await checked("root cause type (words? lists ids)", _cause_problems)
            if len(root) != 1:
                self.say("one root cause, please")
        objects = await checked("affected objects as KIND NAME, comma-separated (? lists kinds)",
                                _object_problems)
        factors = await checked("causal factors, comma-separated ids (words? lists ids)",
                                _cause_problems)
        payload: dict[str, Any] = {
            "root_cause_type": root[0],
            "affected_objects": [_object(o) for o in objects],
            "causal_factors": factors,
            "evidence": [],
        }
        for entry in await lines("evidence as TOOL: what you saw [#SEQ]"):
            match = _EVIDENCE.match(entry)
            payload["evidence"].append(
                {"tool": match["tool"], "observation": match["text"],
                 "trace_seq": match["seq"] and int(match["seq"])} if match else
                {"tool": "unknown", "observation": entry})
        payload["actions"] = [{"description": a} for a in await lines("actions you took")]
        payload["verification"] = await field("verification")
        payload["narrative"] = await field("narrative")
        result = gate.submit_report(payload)
        if result["ok"]:
            self.say("report filed.")
            return True
        self.say(f"{result['error']}\ntype report to fill it in again")
        return False


KINDS = ObjectKind.__args__  # type: ignore[attr-defined]


def completions(text: str) -> str:
    """What ``text?`` answers in the report form: kinds for objects, ids for causes."""
    if not text.strip():
        return "object kinds: " + ", ".join(KINDS)
    vocabulary = taxonomy.taxonomy()
    found = vocabulary.complete(text)
    if not found:
        return f"no id fits {text!r}; nearest: {', '.join(vocabulary.nearest(text))}"
    return "\n".join(f"  {i}: {vocabulary.cause(i).definition}" for i in found)


def _cause_problems(value: str) -> list[str]:
    try:
        taxonomy.resolve_cause(value)
    except taxonomy.UnknownCause as e:
        return [str(e)]
    return []


def _object(text: str) -> dict[str, str]:
    kind, _, name = text.replace(":", " ", 1).partition(" ")
    return {"kind": kind.strip().lower(), "name": name.strip()}


def _object_problems(text: str) -> list[str]:
    obj = _object(text)
    if obj["kind"] not in KINDS:
        return [f"{text!r}: the kind comes first, one of {', '.join(KINDS)}"]
    if not obj["name"]:
        return [f"{text!r}: a name after the kind, e.g. table public.orders"]
    return []
