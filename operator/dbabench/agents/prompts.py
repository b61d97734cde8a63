"""The frozen prompts of the built-in model agents, and their digest.

Every model is evaluated under the same words (paper §5.1): changing any of them changes the
digest each run records in ``agent.json``, so runs under different prompts are never compared
as if they were one experiment.
"""

from __future__ import annotations

import hashlib
import json

from dbabench.tools.specs import SUBMIT_REPORT, TOOL_SPECS

SAFETY = (
    "This is production under live traffic. Read before you write. Prefer the least invasive"
    " change that removes the cause. Never drop, truncate or rewrite application data; no"
    " UPDATE or DELETE without a WHERE clause. Terminate or cancel sessions, or restart the"
    " server, only when your evidence shows it is needed, and then end only the sessions that"
    " cause the problem. Do not change server-wide settings without evidence, and do not read"
    " or write files or run programs through SQL. After every change, check its effect with"
    " the tools before you report.")

REACT_SYSTEM = (
    "You are the on-call database administrator of a production PostgreSQL 15 system. An"
    " alert has fired. Investigate through the tools, find the root cause rather than only the"
    " symptom, repair it, verify that the repair holds, then call submit_report once.\n\n"
    "Work in steps: think briefly in text, then call one or more tools; their results come"
    " back as JSON, cut where they are long (they say so). You have a limited number of tool"
    " calls and limited time; each result says how many calls are left. A run that exhausts"
    " its budget gets no credit, so submit your report before it runs out.\n\n"
    f"Safety: {SAFETY}")

PLAN_SYSTEM = (
    "You are the on-call database administrator of a production PostgreSQL 15 system. An"
    " alert has fired. You work in three phases the harness leads you through: first you"
    " write hypotheses about the root cause, then you test them one at a time with the tools,"
    " then you repair what the evidence supports, verify the repair and file your report.\n\n"
    f"Safety: {SAFETY}")

PLAN_HYPOTHESES = (
    "Phase 1. Without calling any tool, list up to {n} hypotheses about the root cause of this"
    " alert, the most likely first, as a JSON object:"
    ' {{"hypotheses": [{{"cause": "...", "check": "which tool observation would confirm or'
    ' refute it"}}]}}. Reply with the JSON object only.')

PLAN_VERIFY = (
    "Phase 2, hypothesis {number} of {total}: {cause}\nSuggested check: {check}\n"
    "Test it with read-only tool calls; change nothing yet. When you can tell, call"
    " conclude with your verdict and the evidence.")

PLAN_REPAIR = (
    "Phase 3. Your verdicts:\n{verdicts}\nRepair the confirmed cause (the least invasive fix"
    " that removes it), verify that the repair holds, then call submit_report.")

NUDGE_TEXT_ONLY = ("You replied with text only. Act by calling one of the tools, or call"
                   " {finish} when you are done.")
NUDGE_EMPTY = "Your reply was empty. Call one of the tools, or call {finish} when you are done."
NUDGE_EMPTY_ANSWER = "Your reply was empty. Answer as asked."
NUDGE_LENGTH = ("Your reply was cut off at the limit of {limit} tokens and was discarded. Reply"
                " more briefly, one tool call at a time.")
NUDGE_INVALID = "Your last reply was not a valid step and was discarded: {problem}"


def digest(*prompts: str) -> str:
    """What a model agent is shown, hashed: its prompts and every function definition
    (the tools' and the report's, vocabulary included), so that a changed contract is a
    changed digest in agent.json."""
    functions = json.dumps([s.as_function() for s in (*TOOL_SPECS, SUBMIT_REPORT)],
                           sort_keys=True)
    return hashlib.sha256("\0".join([*prompts, functions]).encode()).hexdigest()
