"""The LLM client: configuration, tool calls with strict schemas, usage and audit.

An :class:`LLMConfig` is built from the co-pilot's settings (``jupyter_dcpilot.config``:
Jupyter's config files for the model and the API's address, the environment or the system
keyring for the API key).

Transport failures are the ``anthropic`` SDK's business: it retries 408 / 409 / 429 / 5xx,
timeouts and connection errors ``max_retries`` times, with exponential backoff and the
server's ``retry-after``. This module only handles what the SDK cannot judge: an answer whose
tool calls are missing or do not match their schema is sent back with the problem, at most
``corrections`` times. Tools are declared ``strict`` (see :func:`strict_tool`), so the API
itself keeps Claude's inputs to their schemas; the local check stays for models and proxies
without strict mode. Only what the caller passes is sent; every payload is handed to
``on_payload`` for the session's audit log, with its time, model and size in bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-5"

# USD per million tokens: input, output, cache write, cache read (by model-name prefix)
PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.5),
    "claude-opus": (15.0, 75.0, 18.75, 1.5),
    "claude-sonnet": (3.0, 15.0, 3.75, 0.3),
    "claude-haiku-4": (1.0, 5.0, 1.25, 0.1),
    "claude-haiku": (0.8, 4.0, 1.0, 0.08),
}


class LLMError(RuntimeError):
    """The LLM could not give a usable answer within the retry budget."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass
class LLMConfig:
    model: str = DEFAULT_MODEL
    api_key: str | None = None
    base_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 3  # the SDK's retries of one request (rate limits, overload, timeouts)
    corrections: int = 2  # answers with malformed tool calls sent back for another try
    max_tokens: int = 2048

    @property
    def available(self) -> bool:
        return bool(self.api_key)


def cost_usd(model: str, usage: Mapping[str, Any]) -> float:
    price = next((p for prefix, p in PRICES.items() if model.startswith(prefix)), PRICES["claude-sonnet"])
    return round((usage.get("input_tokens", 0) * price[0] + usage.get("output_tokens", 0) * price[1]
                  + usage.get("cache_creation_input_tokens", 0) * price[2]
                  + usage.get("cache_read_input_tokens", 0) * price[3]) / 1e6, 6)


@dataclass
class ToolCall:
    """The tool calls of one successful response, with its token usage."""

    calls: list[tuple[str, dict[str, Any]]]
    usage: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1

    def first(self, name: str) -> dict[str, Any] | None:
        return next((inp for n, inp in self.calls if n == name), None)


def strict_tool(name: str, description: str, properties: dict[str, Any],
                required: list[str]) -> dict[str, Any]:
    """A tool definition for strict tool use: ``strict`` set, and every object in its schema
    closed (``additionalProperties: false``), as the API requires for grammar-constrained
    inputs. Nested objects in ``properties`` must be closed by the caller (see ``closed``)."""
    return {"name": name, "description": description, "strict": True,
            "input_schema": closed(properties, required)}


def closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A JSON-schema object with exactly these properties (no others allowed)."""
    return {"type": "object", "properties": properties, "required": list(required or []),
            "additionalProperties": False}


class LLMClient:
    """Tool-use calls to Claude; see the module docstring."""

    def __init__(self, config: LLMConfig, *,
                 on_usage: Callable[[dict[str, Any]], None] | None = None,
                 on_payload: Callable[[dict[str, Any]], None] | None = None) -> None:
        if not config.available:
            raise ValueError("no API key: set ANTHROPIC_API_KEY (or store one in the system keyring)")
        import anthropic

        self.config = config
        self.on_usage = on_usage
        self.on_payload = on_payload
        self._anthropic = anthropic
        self.client = anthropic.AsyncAnthropic(api_key=config.api_key, base_url=config.base_url,
                                               timeout=config.timeout, max_retries=config.max_retries)

    async def call_tools(self, *, system: str, messages: list[dict[str, Any]],
                         tools: list[dict[str, Any]], required: str,
                         purpose: str, step_id: str | None = None) -> ToolCall:
        """Ask for tool calls until a ``required`` call with schema-valid input arrives.

        LLMError when the API fails (after the SDK's own retries) or every correction
        still comes back malformed; ``attempts`` counts the answers asked for."""
        system_blocks = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        cached_tools = [dict(t) for t in tools]
        cached_tools[-1]["cache_control"] = {"type": "ephemeral"}
        schemas = {t["name"]: t["input_schema"] for t in tools}
        convo = list(messages)
        problems: list[str] = []
        attempts = self.config.corrections + 1
        for attempt in range(1, attempts + 1):
            payload: dict[str, Any] = {"model": self.config.model, "max_tokens": self.config.max_tokens,
                       "system": system_blocks, "tools": cached_tools, "messages": convo,
                       "tool_choice": {"type": "any"}}
            if self.on_payload:
                sent = json.dumps(payload, default=str)
                self.on_payload({"at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                                 "purpose": purpose, "attempt": attempt, "step_id": step_id,
                                 "model": self.config.model, "bytes": len(sent.encode()),
                                 "payload": json.loads(sent)})
            try:
                response = await self.client.messages.create(**payload)
            except self._anthropic.APIStatusError as exc:
                raise LLMError(f"{purpose}: API error {exc.status_code}: {exc.message}", attempt) from exc
            except (self._anthropic.APITimeoutError, self._anthropic.APIConnectionError) as exc:
                raise LLMError(f"{purpose}: {type(exc).__name__} after {self.config.max_retries} "
                               f"retries: {exc}", attempt) from exc
            usage = self._record_usage(response, purpose, step_id)
            calls = [(b.name, b.input) for b in response.content if b.type == "tool_use"]
            problem = _check_calls(calls, schemas, required)
            if problem is None:
                return ToolCall(calls=calls, usage=usage, attempts=attempt)
            problems.append(problem)
            convo = list(messages) + [
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]},
                {"role": "user", "content": _correction(response, problem)},
            ]
        raise LLMError(f"{purpose}: no usable answer after {attempts} attempts (malformed: "
                       f"{'; '.join(problems)})", attempts)

    def _record_usage(self, response: Any, purpose: str, step_id: str | None) -> dict[str, Any]:
        u = response.usage
        usage = {
            "purpose": purpose, "step_id": step_id, "model": self.config.model,
            "input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
            "cache_creation_input_tokens": getattr(u, "cache_creation_input_tokens", 0) or 0,
            "cache_read_input_tokens": getattr(u, "cache_read_input_tokens", 0) or 0,
        }
        usage["cost_usd"] = cost_usd(self.config.model, usage)
        if self.on_usage:
            self.on_usage(usage)
        return usage


def _check_calls(calls: list[tuple[str, Any]], schemas: dict[str, Any], required: str) -> str | None:
    import jsonschema  # slow to import here (rfc3987 grammar): only when an answer arrives

    if not calls:
        return "no tool call in the answer"
    for name, inp in calls:
        if name not in schemas:
            return f"unknown tool {name!r}"
        try:
            jsonschema.validate(inp, schemas[name])
        except jsonschema.ValidationError as exc:
            return f"{name}: {exc.message}"
    if required not in [n for n, _ in calls]:
        return f"the answer must call {required!r}"
    return None


def _correction(response: Any, problem: str) -> list[dict[str, Any]]:
    """Tool results telling the model what was wrong (each tool_use needs a result)."""
    blocks = [{"type": "tool_result", "tool_use_id": b.id, "is_error": True,
               "content": f"Rejected: {problem}. Call the tools again with valid input."}
              for b in response.content if b.type == "tool_use"]
    return blocks or [{"type": "text", "text": f"Rejected: {problem}. Answer with tool calls only."}]
