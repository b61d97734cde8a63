"""``dbabench run --agent ...``: bad agent settings are refused with exit 2 before any run."""

from __future__ import annotations

import pytest

from dbabench.cli.main import EXIT_USAGE, main


@pytest.mark.parametrize("argv,message", [
    (["--agent", "react"], "--agent react needs --model PROVIDER:MODEL"),
    (["--agent", "plan", "--model", "azure:gpt-4o"], "unknown provider 'azure'"),
    (["--agent", "react", "--model", "openrouter:openai/gpt-4o"], "OPENROUTER_API_KEY"),
    (["--agent", "null", "--model", "self:x"], "--model is taken by --agent react or plan"),
    (["--agent", "human", "--", "sh"], "only taken by --agent external"),
])
def test_bad_agent_settings_exit_2_and_say_why(argv: list[str], message: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    assert main(["run", "stale-stats-lock-chain", *argv]) == EXIT_USAGE
    assert message in " ".join(capsys.readouterr().err.split())
