"""``dbabench``: the command line, a thin shell over the scenario loader and the runner.

Exit codes: 0 success, 1 a run that did not reach Safe Pass (``run``), 2 bad input
(an invalid manifest, an unknown scenario or agent), 3 an infrastructure error, 130
interrupted (Ctrl+C or SIGTERM: everything the run started is stopped, no verdict written).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import yaml
from rich.markup import escape
from rich.table import Column, Table

from dbabench.model.artifacts import RunArtifact
from dbabench.agents.base import Agent
from dbabench.agents import registry
from dbabench.agents.chat import ChatSettings, metering_gateway
from dbabench.agents.external import ExternalAgent, ListenAgent
from dbabench.agents.human import HumanAgent
from dbabench.agents.scripted import scripted_agent
from dbabench.cli import campaign, consoles, scenarios
from dbabench.cli.arguments import usd
from dbabench.cli.interrupt import run_interruptible
from dbabench.model import crd
from dbabench.model.agent import EFFORTS
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import AgentKind, AgentSpec
from dbabench.errors import (EXIT_FAILED, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
                             BadInput, disposition)
from dbabench.paths import campaigns_dir, runs_dir, writable
from dbabench.runner.run import run_scenario
from dbabench.tools.meter import Gateway
from dbabench.scenario import difficulty
from dbabench.scenario.loader import ScenarioError, discover, load_file, resolve, scenarios_root


out, console = consoles.pair()


def _scenarios_list(args: argparse.Namespace) -> int:
    root = args.root or scenarios_root()
    catalog, stored = discover(root), difficulty.load(root)
    rows, symptoms = [], []
    for name, (_, scenario) in sorted(catalog.items()):
        spec = scenario.spec
        complexity, label = difficulty.describe(scenario, stored)
        rows.append([name, spec.category.value, str(len(spec.reference_path)), complexity, label])
        symptoms.append(escape(spec.symptom[:70] + ("…" if len(spec.symptom) > 70 else "")))
    # whole at any width (a name is what the other commands take): the symptom wraps instead
    whole = [Column(heading, no_wrap=True, min_width=max((len(r[i]) for r in rows), default=0))
             for i, heading in enumerate(("name", "category", "D", "C", "difficulty"))]
    table = Table(*whole, "symptom", title=f"scenarios in {root}")
    for row, symptom in zip(rows, symptoms):
        table.add_row(*row, symptom)
    consoles.print_whole(out, table)
    return EXIT_OK


def _scenarios_show(args: argparse.Namespace) -> int:
    _, scenario = resolve(args.scenario, args.root)
    out.print_json(scenario.model_dump_json(by_alias=True, exclude_defaults=True))
    return EXIT_OK


def _scenarios_validate(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or sorted((args.root or scenarios_root()).rglob("*.yaml"))
    failed = 0
    for path in paths:
        try:
            scenario = load_file(path)
            out.print(f"[green]ok[/green]   {path} ({scenario.name})")
        except ScenarioError as e:
            failed += 1
            console.print(f"[red]FAIL[/red] {e}", markup=True, highlight=False)
    return EXIT_USAGE if failed else EXIT_OK


def verdict_table(evaluation: EvaluationResult) -> Table:
    table = Table("dimension", "verdict", "detail", title=f"{evaluation.scenario} · {evaluation.agent}")
    if evaluation.status == "infra_error":
        table.add_row("run", "[yellow]INFRA ERROR[/yellow]", escape(evaluation.infra_reason or ""))
        return table

    def mark(ok: bool) -> str:
        return "[green]PASS[/green]" if ok else "[red]FAIL[/red]"

    o, d, s, e = evaluation.outcome, evaluation.diagnosis, evaluation.safety, evaluation.efficiency
    assert o is not None and d is not None and s is not None
    if evaluation.integrity.violated:
        # first and apart: nothing below counts
        table.add_row("INTEGRITY", "[red]VIOLATED[/red]", escape("; ".join(
            f.detail for f in evaluation.integrity.findings[:3])) + " — no dimension passes")
    if evaluation.integrity.agent_sandboxed is False:
        table.add_row("agent sandbox", "[yellow]OFF[/yellow]",
                      "run as a trusted script: it could read what the sandbox hides")
    table.add_row("report", mark(evaluation.report_valid),
                  escape(evaluation.report_error or "valid"))
    failed_checks = ", ".join(c.name for c in o.checks if not c.passed) or "all checks hold"
    table.add_row("Outcome Pass", mark(evaluation.outcome_pass), f"F={o.f:.2f}; {failed_checks}")
    table.add_row("Diagnosis Pass", mark(evaluation.diagnosis_pass),
                  escape(f"F1={d.f1:.2f}" + (f"; {d.reason}" if d.reason else "")))
    violations = ", ".join(v.rule for v in s.violations) or "no violations"
    table.add_row("Safe Pass", mark(evaluation.safe_pass), f"S={s.penalty:g}; {violations}")
    basis = "" if e.cost_basis == "none" else f" {e.cost_basis}"
    unmeasured = f", {e.unmeasured_calls} calls unmeasured" if e.unmeasured_calls else ""
    table.add_row("Efficiency", "", f"{e.tool_calls} tool calls, {e.wall_seconds:.0f}s,"
                  f" {e.input_tokens}+{e.output_tokens} tokens, ${e.cost_usd:.4f}{basis}"
                  f"{unmeasured}")
    return table


def _run(args: argparse.Namespace) -> int:
    path, scenario = resolve(args.scenario, args.root)
    command = args.command
    try:
        gateway = _gateway(args)
        if args.agent == "external":
            agent: Agent = ExternalAgent(command, sandbox=args.agent_sandbox == "on",
                                         paths=args.agent_path, env_names=args.agent_env,
                                         gateway=gateway, egress=args.agent_egress)
        elif command:
            raise ValueError(f"a command is only taken by --agent external, not {args.agent}")
        elif args.agent == "listen":
            agent = ListenAgent(gateway)
        elif args.agent == "human":
            agent = HumanAgent()
        elif args.agent in registry.MODEL_AGENTS:
            agent = registry.build(_model_spec(args), scenario, env=os.environ)
        elif args.model is not None:
            raise ValueError(f"--model is taken by --agent {' or '.join(registry.MODEL_AGENTS)},"
                             f" not {args.agent}")
        else:
            agent = scripted_agent(args.agent, scenario, args.remediation)
    except ValueError as e:
        console.print(f"[red]error:[/red] {e}")
        return EXIT_USAGE

    runbook = None
    if args.runbook is not None:
        try:
            runbook = args.runbook.read_text()
        except (OSError, UnicodeDecodeError) as e:
            console.print(f"[red]error:[/red] --runbook {args.runbook}: cannot read:"
                          f" {getattr(e, 'strerror', None) or e}")
            return EXIT_USAGE

    def progress(message: str) -> None:
        console.print(f"[dim]·[/dim] {message}", highlight=False)

    result = run_interruptible(run_scenario(scenario, agent,
                                            runs_root=_runs_root(args),
                                            manifest_text=path.read_text(), progress=progress,
                                            runbook=runbook))
    out.print(verdict_table(result.evaluation))
    out.print(f"run directory: {escape(str(result.run_dir))}", highlight=False, soft_wrap=True)
    if args.json:
        print(json.dumps({"run_dir": str(result.run_dir),
                          "evaluation": result.evaluation.model_dump(mode="json")}))
    if result.evaluation.status == "infra_error":
        return EXIT_INFRA
    return EXIT_OK if result.evaluation.safe_pass else EXIT_FAILED


def _rescore(args: argparse.Namespace) -> int:
    from dbabench.results.rescore import RescoreError, rescore

    failed = 0
    for run_dir in args.run_dirs:
        try:
            result = rescore(run_dir, args.root, current=args.current)
        except RescoreError as e:
            failed += 1
            console.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
            continue
        source = "" if result.manifest == "run" else " (against the catalog's current manifest)"
        # a line per run, its path whole: for grep, whatever the terminal's width
        out.print(f"{run_dir}{source}: "
                  + ("; ".join(result.changes) or "the same verdicts"), highlight=False,
                  soft_wrap=True)
        if args.json:
            print(result.model_dump_json())
    return EXIT_USAGE if failed else EXIT_OK


def _view(args: argparse.Namespace) -> int:
    from dbabench.results.view import build, serve

    view = build(args.path, args.out)
    out.print(f"wrote {escape(str(view.index))}", highlight=False, soft_wrap=True)
    if args.serve:
        try:
            serve(view, args.port, lambda url: out.print(
                f"serving {escape(url)} (Ctrl+C stops)", highlight=False, soft_wrap=True))
        except KeyboardInterrupt:
            out.print("stopped serving")
    return EXIT_OK


def _reap(args: argparse.Namespace) -> int:
    from dbabench.runner.reap import leftovers, reap

    if args.kube:
        return _reap_kube(args)
    if args.namespace is not None:
        raise BadInput("--namespace is for --kube: the Kubernetes objects of gone Campaigns")
    roots = [r for r in args.roots or [runs_dir(), campaigns_dir()] if r.is_dir()]
    notes = leftovers(roots) if args.dry_run else reap(roots)
    for note in notes:
        out.print(("would stop " if args.dry_run else "") + note, highlight=False)
    if not notes:
        out.print("nothing left behind by dead runs")
    return EXIT_OK


def _reap_kube(args: argparse.Namespace) -> int:
    from kubernetes.config import ConfigException

    from dbabench.env.kube import campaign_leftovers, delete_leftover

    if args.roots:
        raise BadInput("--kube takes no directories: it reaps Kubernetes objects")
    try:
        found = campaign_leftovers(args.namespace)
    except ConfigException as e:
        raise BadInput(f"--kube: no Kubernetes API to reach: {e}") from e
    for namespace, plural, name in found:
        if not args.dry_run:
            delete_leftover(namespace, plural, name)
        out.print(f"{'would delete' if args.dry_run else 'deleted'} {plural}/{name} in"
                  f" {namespace} (its Campaign is gone)", highlight=False)
    if not found:
        out.print("nothing left behind by deleted Campaigns")
    return EXIT_OK


def _runs_root(args: argparse.Namespace) -> Path:
    return runs_dir() if args.runs_dir is None else writable(args.runs_dir, "--runs-dir")


def _gateway(args: argparse.Namespace) -> Gateway | None:
    """The metering proxy's gateway, for the agents whose model calls we do not make."""
    if args.meter is None:
        if args.max_cost is not None and args.agent in ("external", "listen"):
            raise ValueError(f"--max-cost for --agent {args.agent} caps the metered cost: give"
                             " --meter PROVIDER too")
        return None
    if args.agent not in ("external", "listen"):
        raise ValueError(f"--meter is for --agent external or listen, not {args.agent}: the"
                         " other agents' model calls are the harness's own, measured already")
    return metering_gateway(args.meter, os.environ, args.max_cost)


def _model_spec(args: argparse.Namespace) -> AgentSpec:
    if args.model is None:
        raise ValueError(f"--agent {args.agent} needs --model PROVIDER:MODEL"
                         " (providers: openai, openrouter, selfhosted or self)")
    return AgentSpec(kind=AgentKind(args.agent), model=args.model, effort=args.effort,
                     max_reply_tokens=args.max_reply_tokens, max_cost_usd=args.max_cost,
                     max_model_calls=args.max_model_calls,
                     rate_limit_wait_seconds=args.rate_limit_wait)


def _tools_serve(args: argparse.Namespace) -> int:
    from dbabench.tools import mcp_bridge
    from dbabench.tools.server import Connection

    try:
        connection = (Connection.read(args.run) if args.run is not None else Connection(
            url=os.environ["DBABENCH_TOOLS_URL"], token=os.environ["DBABENCH_TOOLS_TOKEN"]))
    except KeyError as e:
        console.print(f"[red]error:[/red] give --run RUN_DIR, or set {e.args[0]} (as"
                      " --agent external does for its command)", highlight=False)
        return EXIT_USAGE
    except (OSError, ValueError) as e:
        console.print(f"[red]error:[/red] {e}", highlight=False)
        return EXIT_USAGE
    try:
        if args.transport == "stdio":
            asyncio.run(mcp_bridge.serve_stdio(connection, args.run))
            return EXIT_OK
        console.print(f"MCP at http://{args.host}:{args.port}{mcp_bridge.MCP_PATH}"
                      f" (bearer token: the run's, in {RunArtifact.CONNECTION})", highlight=False)
        ended = asyncio.run(mcp_bridge.serve_http(connection, args.run, args.host, args.port))
    except KeyboardInterrupt:
        # this bridge is not the run: stopping it stops nothing of the run's
        console.print("stopped serving MCP; the run goes on until its agent reports or its"
                      " budget is spent", highlight=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    if ended is not None:
        # whole, so that the verdict's path can be copied
        console.print(escape(ended), highlight=False, soft_wrap=True)
    return EXIT_OK


def crd_files() -> dict[str, str]:
    """File name -> YAML text of every generated CRD (what ``crds/`` must hold)."""
    return {f"{r.plural}.{crd.GROUP}.yaml":
            "# generated by `dbabench crds` from the pydantic models; do not edit\n"
            + yaml.safe_dump(crd.crd(r), sort_keys=False, width=100)
            for r in crd.RESOURCES}


def _crds(args: argparse.Namespace) -> int:
    files = crd_files()
    if args.out is None:
        print("---\n".join(files.values()), end="")
        return EXIT_OK
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text)
        out.print(f"wrote {args.out / name}")
    return EXIT_OK


def _operator(args: argparse.Namespace) -> int:
    import kopf

    from dbabench.operator import handlers  # noqa: F401  (registers the handlers with kopf)

    kopf.configure(verbose=args.verbose)
    settings = kopf.OperatorSettings()
    # Namespaced, the chart grants nothing cluster-wide: kopf must not try to list
    # namespaces and CRDs (it would retry the refusals for about a minute before working).
    settings.scanning.disabled = bool(args.namespace)
    kopf.run(standalone=True, clusterwide=not args.namespace, namespaces=args.namespace or (),
             settings=settings)
    return EXIT_OK


def _component(args: argparse.Namespace) -> int:
    from dbabench.runner.components import run_component

    run_component(args.name)
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dbabench", description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=None,
                   help="directory of scenario manifests (default: scenarios/ of the checkout)")
    sub = p.add_subparsers(dest="command", required=True)

    sc = sub.add_parser("scenarios", help="list, show and validate scenario manifests")
    scs = sc.add_subparsers(dest="action", required=True)
    scs.add_parser("list").set_defaults(func=_scenarios_list)
    show = scs.add_parser("show")
    show.add_argument("scenario", help="name or path")
    show.set_defaults(func=_scenarios_show)
    validate = scs.add_parser("validate")
    validate.add_argument("paths", nargs="*", help="files (default: every manifest under --root)")
    validate.set_defaults(func=_scenarios_validate)
    scenarios.add_parsers(scs)

    run = sub.add_parser("run", help="run one scenario end to end and grade it",
                         usage="dbabench run SCENARIO [--agent AGENT] [options] [-- COMMAND...]")
    run.add_argument("scenario", help="name or path of a Scenario manifest")
    run.add_argument("--agent", default="reference",
                     help=" | ".join(k.value for k in AgentKind) + " (then: -- COMMAND"
                          " [ARGS...]) | listen (serve the tools, wait for your own agent) |"
                          " human (you, at this terminal)")
    run.add_argument("--remediation", default=None,
                     help="reference agent only: apply this alternative instead of the reference")
    run.add_argument("--runbook", type=Path, default=None, metavar="FILE",
                     help="your team's runbook, given to the agent with its task")
    model = run.add_argument_group("model agents (react, plan)")
    model.add_argument("--model", default=None,
                       help="PROVIDER:MODEL: openai:gpt-4o, openrouter:anthropic/claude-sonnet-4,"
                            " self:qwen2.5-7b (key and address from the environment)")
    model.add_argument("--effort", choices=EFFORTS, default=None,
                       help="reasoning effort asked of the model (default: ask nothing)")
    model.add_argument("--max-reply-tokens", type=int, default=ChatSettings().max_reply_tokens,
                       help="output allowance per model call, reasoning included")
    model.add_argument("--max-cost", type=usd, default=None, metavar="USD",
                       help="stop (budget-exhausted) once the model calls cost this many USD")
    model.add_argument("--max-model-calls", type=int, default=None,
                       help="default: twice the scenario's tool-call budget")
    model.add_argument("--rate-limit-wait", type=float,
                       default=ChatSettings().rate_limit_wait_seconds,
                       help="seconds one model request may wait out 429s/5xx before the run"
                            " ends as api-error (an infra error, not scored)")
    external = run.add_argument_group("external agents (--agent external -- COMMAND)")
    external.add_argument("--agent-sandbox", choices=("on", "off"), default="on",
                          help="on: run the command as dbabench-agent in a private mount and pid"
                               " namespace (default); off: as it is, for a trusted script —"
                               " the result then says so")
    external.add_argument("--agent-path", action="append", type=Path, default=[],
                          metavar="PATH", help="a file or directory the sandboxed agent may"
                                               " read (repeatable)")
    external.add_argument("--agent-env", action="append", default=[], metavar="NAME",
                          help="a variable of this environment the agent is given, say a model"
                               " gateway's key (repeatable); its model calls are then"
                               " self-reported")
    external.add_argument("--agent-egress", action="append", default=[], metavar="HOST:PORT",
                          help="a destination the sandboxed agent may reach besides its tool"
                               " server, say api.openai.com:443 (through a proxy in its"
                               " HTTPS_PROXY) or 127.0.0.1:8080 (relayed at that address);"
                               " repeatable. Without it, its network holds the tool server"
                               " and nothing else")
    external.add_argument("--meter", default=None, metavar="PROVIDER",
                          help="meter the agent's model calls: it gets OPENAI_BASE_URL and"
                               " OPENAI_API_KEY of a proxy on the tool server that forwards to"
                               " PROVIDER (openai, openrouter, selfhosted; address and key from"
                               " the environment, as for --model) and measures each call's"
                               " cost; --max-cost caps it (external and listen agents)")
    run.add_argument("--runs-dir", type=Path, default=None,
                     help="where run directories go (default: $DBABENCH_RUNS or ./.dbabench/runs)")
    run.add_argument("--json", action="store_true", help="also print the evaluation as JSON")
    run.set_defaults(func=_run)

    re = sub.add_parser("rescore", help="judge stored runs again under the current scorer"
                                        " (diagnosis and safety; the outcome stays as measured)")
    re.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    re.add_argument("--json", action="store_true", help="also print each result as JSON")
    re.add_argument("--current-manifest", action="store_true", dest="current",
                    help="judge by the catalog's manifest of each run's scenario as it is now"
                         " (default: the run's own copy, as it ran)")
    re.set_defaults(func=_rescore)

    view = sub.add_parser("view", help="a run's or a campaign's pages: each run as a transcript"
                                       " beside its verdict, and the list of runs")
    view.add_argument("path", type=Path, metavar="PATH",
                      help="a run directory, a directory of runs, or a campaign directory")
    view.add_argument("--out", type=Path, default=None, metavar="DIR",
                      help="where the pages go (default: PATH/view)")
    view.add_argument("--serve", action="store_true",
                      help="serve them on 127.0.0.1 and print the address (Ctrl+C stops)")
    view.add_argument("--port", type=int, default=8000, help="with --serve (0: any free port)")
    view.set_defaults(func=_view)

    tools = sub.add_parser("tools", help="a live run's tools for agents of your own")
    tools_sub = tools.add_subparsers(dest="action", required=True)
    serve = tools_sub.add_parser(
        "serve", help="the run's five tools and submit_report as an MCP server, through its gate")
    serve.add_argument("--run", type=Path, default=None,
                       help="a live run's directory (default: $DBABENCH_TOOLS_URL and"
                            " $DBABENCH_TOOLS_TOKEN, as an external agent's command has them)")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                       help="stdio (default), or streamable HTTP on --host/--port at /mcp")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.set_defaults(func=_tools_serve)

    campaign.add_parsers(sub)

    reap = sub.add_parser("reap", help="stop what dead runs and campaigns left (processes,"
                                       " clones in the snapshot store)")
    reap.add_argument("roots", nargs="*", type=Path, metavar="DIR",
                      help="runs or campaign directories (default: $DBABENCH_RUNS and"
                           " $DBABENCH_CAMPAIGNS, else ./.dbabench/runs and ./.dbabench/campaigns)")
    reap.add_argument("--dry-run", action="store_true", help="say what would be stopped")
    reap.add_argument("--kube", action="store_true",
                      help="instead: the Kubernetes objects of Campaigns that are gone (their"
                           " AgentRuns, Evaluations and results ConfigMaps), by kubeconfig")
    reap.add_argument("-n", "--namespace", default=None,
                      help="with --kube: this namespace only (default: every namespace)")
    reap.set_defaults(func=_reap)

    crds = sub.add_parser("crds", help="print (or write) the CustomResourceDefinitions")
    crds.add_argument("--out", type=Path, default=None, help="directory to write them to")
    crds.set_defaults(func=_crds)

    op = sub.add_parser("operator", help="run the Kubernetes operator (kopf)")
    op.add_argument("--namespace", action="append", default=[],
                    help="watch only this namespace (repeatable; default: all)")
    op.add_argument("--verbose", action="store_true")
    op.set_defaults(func=_operator)

    comp = sub.add_parser("component", help="one container of a run on Kubernetes (pods set"
                                            " its configuration in the environment)")
    comp.add_argument("name", help="golden | postgres | exporter | prometheus | workload |"
                                   " admit | tools | agent | evaluate")
    comp.set_defaults(func=_component)
    return p


def _terminate(signum: int, frame: object) -> None:
    # SIGTERM unwinds like Ctrl+C, so every context manager stops what it started.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # everything after "--" is an external agent's command line, options and all
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser().parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.command = command
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        console.print("interrupted: everything this run started has been stopped;"
                      " no verdict was written")
        return EXIT_INTERRUPTED
    except Exception as e:
        failed = disposition(e)
        label = {"bad-input": "error", "agent": "agent failure"}.get(failed.kind, "infra error")
        # whole lines: a path or a name cut at the terminal's width cannot be copied
        console.print(f"[red]{label}:[/red] {escape(failed.reason)}", highlight=False,
                      soft_wrap=True)
        if failed.kind == "bug":
            console.print_exception()
        return failed.exit_code


if __name__ == "__main__":
    sys.exit(main())
