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
    (["--agent", "react", "--model", "self:x", "--meter", "openai"],
     "--meter is for --agent external or listen, not react"),
    (["--agent", "listen", "--meter", "azure"], "unknown provider 'azure'"),
    (["--agent", "listen", "--meter", "openrouter"], "OPENROUTER_API_KEY"),
    (["--agent", "external", "--max-cost", "1", "--", "sh"], "give --meter PROVIDER too"),
    (["--agent", "external", "--meter", "self", "--agent-env", "OPENAI_API_KEY", "--", "sh"],
     "are the metering proxy's"),
])
def test_bad_agent_settings_exit_2_and_say_why(argv: list[str], message: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.setenv("DBABENCH_SELFHOSTED_BASE_URL", "http://127.0.0.1:1/v1")
    assert main(["run", "stale-stats-lock-chain", *argv]) == EXIT_USAGE
    assert message in " ".join(capsys.readouterr().err.split())
