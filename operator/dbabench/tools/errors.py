"""Errors of the tool layer.

    ToolError            reported to the agent as the call's observation; the run goes on
    BudgetExhausted      the run's step or time budget is spent; the agent must stop
"""


class ToolError(Exception):
    """A failure the agent caused or can react to: bad arguments, an SQL error, a refusal."""


class BudgetExhausted(Exception):
    """No further tool calls are accepted in this run."""
