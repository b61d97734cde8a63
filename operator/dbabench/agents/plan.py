"""Plan and verify: a second control structure on the same model client, budgets and failure
classes as ReAct, to show the agent boundary is not shaped around one loop.

1. hypotheses: the model lists likely root causes, each with the observation that would tell,
   before any tool is called;
2. verification: each hypothesis in turn is tested with tools until the model concludes it
   (confirmed, refuted or unclear); the first confirmed one ends the search;
3. repair: with the verdicts in front of it, the model fixes, verifies and files the report.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from dbabench.agents import prompts
from dbabench.agents.react import file_report
from dbabench.agents.session import ModelAgent
from dbabench.model.task import AgentTask
from dbabench.tools.gate import ToolGate
from dbabench.tools.specs import SUBMIT_REPORT, ToolSpec

PROMPT_SHA256 = prompts.digest(prompts.PLAN_SYSTEM, prompts.PLAN_HYPOTHESES,
                               prompts.PLAN_VERIFY, prompts.PLAN_REPAIR)
MAX_HYPOTHESES = 3


# Lenient on purpose (extra keys ignored): these parse what a model wrote.
class Hypothesis(BaseModel):
    cause: str = Field(min_length=1)
    check: str = ""


class Plan(BaseModel):
    hypotheses: list[Hypothesis] = Field(min_length=1)


class Verdict(BaseModel):
    verdict: Literal["confirmed", "refuted", "unclear"]
    evidence: str = Field(default="", description="the observations behind the verdict")


CONCLUDE = ToolSpec(
    "conclude",
    "End the test of the current hypothesis: verdict confirmed, refuted or unclear, and the"
    " evidence (what the tool results showed).",
    Verdict)


def _unfenced(text: str) -> str:
    """A model's JSON without the Markdown fence it may wrap it in (string operations: a
    pattern for it backtracked quadratically over a reply of whitespace)."""
    body = text.strip()
    if body.startswith("```"):
        body = body[3:]
        body = body[4:] if body.startswith("json") else body
    if body.endswith("```"):
        body = body[:-3]
    return body.strip()


def parse_plan(text: str) -> Plan:
    try:
        return Plan.model_validate(json.loads(_unfenced(text)))
    except (ValueError, ValidationError) as e:
        raise ValueError(f"the hypotheses are not the JSON object asked for ({e})") from None


def _accept_verdict(args: dict[str, Any]) -> str | None:
    try:
        Verdict.model_validate(args)
    except ValidationError as e:
        return str(e)
    return None


class PlanAgent(ModelAgent):
    control = "plan"
    prompt_sha256 = PROMPT_SHA256

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompts.PLAN_SYSTEM},
            {"role": "user", "content": task.as_text() + "\n\n"
             + prompts.PLAN_HYPOTHESES.format(n=MAX_HYPOTHESES)}]
        async with self.session(gate, task) as session:
            plan = await session.answer(messages, parse_plan)
            hypotheses = plan.hypotheses[:MAX_HYPOTHESES]
            verdicts = []
            for number, hypothesis in enumerate(hypotheses, 1):
                messages.append({"role": "user", "content": prompts.PLAN_VERIFY.format(
                    number=number, total=len(hypotheses), cause=hypothesis.cause,
                    check=hypothesis.check or "your choice")})
                verdict = Verdict.model_validate(
                    await session.act(messages, CONCLUDE, _accept_verdict))
                verdicts.append(f"- {hypothesis.cause}: {verdict.verdict} ({verdict.evidence})")
                gate.think(f"hypothesis {number} {verdict.verdict}: {hypothesis.cause}")
                if verdict.verdict == "confirmed":
                    break
            messages.append({"role": "user",
                             "content": prompts.PLAN_REPAIR.format(verdicts="\n".join(verdicts))})
            await session.act(messages, SUBMIT_REPORT, file_report(gate))
