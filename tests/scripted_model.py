"""A scripted OpenAI-compatible chat-completions server, run as its own process by the tests.

    python scripted_model.py SCRIPT.json PORT_FILE REQUESTS.jsonl

SCRIPT.json is a list of steps, served one per ``POST /v1/chat/completions`` in order (a step
with ``"times": N`` is served N times; after the last step the last one repeats):

    {"reply": {"content": "...", "tool_calls": [{"name": "...", "arguments": "{...}"}],
               "finish_reason": "stop", "usage": {"prompt_tokens": 10, ...}}}
    {"status": 429, "headers": {"retry-after": "0"}, "body": {...}}   # any status and body
    {"raw": "not json"}                                                # a 200 that is not JSON

Any step may add ``"delay": SECONDS`` before it is answered (a slow server), and
``"chunk_delay": SECONDS`` between the chunks of a stream. A request with
``"stream": true`` gets a reply as server-sent events, one chunk per word of its content, then
its tool calls and finish reason, then (with ``stream_options.include_usage``) a usage chunk
with no choices, as OpenAI sends them.

Every request body is appended to REQUESTS.jsonl; the bound port is written to PORT_FILE once
the server listens. It stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from aiohttp import web


def expand(script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [step for step in script for _ in range(step.get("times", 1))]


def completion(reply: dict[str, Any], number: int) -> dict[str, Any]:
    calls = [{"id": f"call_{number}_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": c["arguments"]}}
             for i, c in enumerate(reply.get("tool_calls", []))]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.get("finish_reason",
                                                    "tool_calls" if calls else "stop")}],
            "usage": reply.get("usage", {"prompt_tokens": 100, "completion_tokens": 20,
                                         "total_tokens": 120})}


def chunks(reply: dict[str, Any], number: int, include_usage: bool) -> list[dict[str, Any]]:
    whole = completion(reply, number)
    message, base = whole["choices"][0]["message"], {"id": whole["id"],
                                                     "object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    words = (message["content"] or "").split(" ")
    deltas += [{"content": word + " "} for word in words[:-1]] + [{"content": words[-1]}]
    deltas += [{"tool_calls": [{"index": i, **call}]}
               for i, call in enumerate(message.get("tool_calls", []))]
    out = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**base, "choices": [{"index": 0, "delta": {},
                                     "finish_reason": whole["choices"][0]["finish_reason"]}]})
    if include_usage:
        out.append({**base, "choices": [], "usage": whole["usage"]})
    return out


async def main(script_path: Path, port_file: Path, requests_log: Path) -> None:
    steps = expand(json.loads(script_path.read_text()))
    served = 0

    async def chat(request: web.Request) -> web.StreamResponse:
        nonlocal served
        body = await request.json()
        with requests_log.open("a") as log:
            log.write(json.dumps({"auth": request.headers.get("Authorization"),
                                  "body": body}) + "\n")
        step = steps[min(served, len(steps) - 1)]
        served += 1
        await asyncio.sleep(step.get("delay", 0))
        if "raw" in step:
            return web.Response(text=step["raw"], content_type="text/plain")
        if "status" in step:
            return web.json_response(step.get("body", {"error": {"message": "scripted"}}),
                                     status=step["status"], headers=step.get("headers"))
        if body.get("stream"):
            include_usage = (body.get("stream_options") or {}).get("include_usage") is True
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for chunk in chunks(step["reply"], served, include_usage):
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
                await asyncio.sleep(step.get("chunk_delay", 0))
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response
        return web.json_response(completion(step["reply"], served))

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port_file.write_text(str(runner.addresses[0][1]))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
