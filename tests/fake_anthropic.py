"""A small fake of the Anthropic Messages API on 127.0.0.1, with scripted responses.

Used by the real ``anthropic`` SDK through ``base_url``, so requests go over real HTTP. Each
POST /v1/messages pops the next scripted item:

- ``tool_use(name, input)`` / ``tool_uses([...])``: a 200 answer with tool_use blocks;
- ``text("...")``: a 200 answer with only text (a malformed answer for a tool-use caller);
- ``status(429)`` / ``status(500)``: an error answer;
- ``hang(seconds)``: wait before answering (client timeouts).

When the script is empty, ``respond(body)`` (if given) builds the answer from the request, else the
server answers 500. ``requests`` keeps every parsed JSON body, ``headers`` their headers (lower-case
names: the SDK's ``x-stainless-retry-count`` tells a retry) and ``times`` when each arrived.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"input_tokens": 120, "output_tokens": 40, "cache_creation_input_tokens": 100,
         "cache_read_input_tokens": 0}


def _message(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {"kind": "answer", "status": 200, "body": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
        "content": content, "stop_reason": stop, "stop_sequence": None, "usage": dict(USAGE)}}


def tool_uses(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return _message([{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": inp}
                     for i, (n, inp) in enumerate(calls)])


def tool_use(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return tool_uses([(name, input)])


def text(message: str) -> dict[str, Any]:
    return _message([{"type": "text", "text": message}], stop="end_turn")


def status(code: int, retry_after: float | None = None) -> dict[str, Any]:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return {"kind": "answer", "status": code, "headers": headers, "body": {
        "type": "error", "error": {"type": "overloaded_error" if code >= 500 else "rate_limit_error",
                                   "message": f"scripted {code}"}}}


def hang(seconds: float, then: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "hang", "seconds": seconds, "then": then or status(500)}


class FakeAnthropic:
    """Start with ``with FakeAnthropic(script) as fake:``; ``fake.url`` is the base_url."""

    def __init__(self, script: list[dict[str, Any]] | None = None,
                 respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.script = list(script or [])
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []  # when each request arrived (time.monotonic)
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.times.append(time.monotonic())
                    if fake.script:
                        item = fake.script.pop(0)
                    else:
                        item = fake.respond(body) if fake.respond else status(500)
                if item["kind"] == "hang":
                    time.sleep(item["seconds"])
                    item = item["then"]
                data = json.dumps(item["body"]).encode()
                try:
                    self.send_response(item["status"])
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in item.get("headers", {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def tool_names(self, index: int = -1) -> list[str]:
        return [t["name"] for t in self.requests[index].get("tools", [])]
