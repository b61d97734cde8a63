"""The five tools of the paper, backend-agnostic, behind one gate that records the trace.

Tools return bounded observations and say so when they cut something. A ``ToolError`` is an
observation for the agent (bad arguments, SQL errors) and the episode goes on; anything else is
an infrastructure failure of the harness.
"""
