"""The co-pilot's MCP tools: what a tool call costs over the diagnosis itself, and what it shows.

    python benchmarks/bench_mcp.py --rows 100000 --runs 5 [--json out.json]

Starts a real Jupyter server (this environment, free ports) with this extension and Jupyter AI's
MCP server (``jupyter-server-mcp``), a notebook kernel holding the 40-column mixed frame of
``_frames.py`` (an identifier, categories, dates, missing values, outliers, a binary target)
with sentinel values planted in it, and the ``mcp`` SDK's streamable-HTTP client. Then, in turn:

- ``kernel``: ``kernel_tools.diagnose(df, target="y")`` timed inside the kernel;
- ``mcp``: the ``dcpilot_diagnose`` tool called by the MCP client, timed from the client (the
  probe into the kernel, the diagnosis, its JSON, the share setting applied, the answer typed,
  sent over HTTP and validated against the tool's output schema).

``overhead`` is the tool call's time less the diagnosis' own time inside that same call (its
``elapsed_s``, measured in the kernel): everything MCP and the co-pilot add — the probe, the JSON
out of the kernel, the share setting, the typed answer, HTTP (the target: under 0.3 s). The
separate kernel call is printed beside it: on a shared machine two runs of the diagnosis differ
by more than the overhead, so the overhead is not taken as a difference of two runs. The privacy audit:
every answer of the run (``dcpilot_notebooks``, ``dcpilot_list_frames``, ``dcpilot_diagnose``)
is searched for the planted values; under the default share setting ("schema") none may appear.
Beside it, how many of them the kernel's own diagnosis JSON holds (what the tool starts from):
the values were there to leak.
Prints one line per run and the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_approve import Server, free_port, kernel_client  # noqa: E402

# values that exist only in the rows: an identifier's codes, a category written two ways (the
# diagnosis quotes both), an extreme number (its evidence names it)
SENTINELS = ["SENTINEL-ID-", "Zorblax-City-77", "zorblax-city-77", "987654321"]
PLANT = f"""
import sys; sys.path.insert(0, {str(HERE)!r})
from _frames import mixed_frame
df = mixed_frame({{rows}}, 40, seed=0)
df["customer_id"] = "SENTINEL-ID-" + df["customer_id"].astype(str)
df.loc[df.index[::50], "cat_00"] = "Zorblax-City-77"
df.loc[df.index[1::50], "cat_00"] = "zorblax-city-77 "
df.loc[df.index[7::400], "num_00"] = 987654321.5
"""
IN_DIAGNOSIS = f"""
from kernel_tools.probes import diagnose_json as _d
print(sum(_s in _d("df", target="y") for _s in {SENTINELS!r}))
"""
TARGET_S = 0.3  # the overhead a tool call may add to the diagnosis
TIMED = """
import time as _t, kernel_tools as _kt
_s = _t.perf_counter(); _kt.diagnose(df, target="y"); print(_t.perf_counter() - _s)
"""


class MCPServer(Server):
    """The benchmark's Jupyter server, with Jupyter AI's MCP server on a free port serving the tools."""

    def __init__(self, root: Path) -> None:
        from jupyter_dcpilot.mcp_tools import TOOLS

        self.root, self.port, self.mcp_port = root, free_port(), free_port()
        self.token = uuid.uuid4().hex
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(root / ".runtime"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", f"--port={self.port}", "--no-browser", "--allow-root",
             f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={root}",
             "--ServerApp.jpserver_extensions={'jupyter_dcpilot': True, 'jupyter_server_mcp': True}",
             f"--MCPExtensionApp.mcp_port={self.mcp_port}", "--MCPExtensionApp.use_tool_discovery=False",
             *(f"--MCPExtensionApp.mcp_tools={spec}" for spec in TOOLS)],  # a list: the option once per item
            stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "w"), env=env)


async def kernel_number(client: Any, code: str = TIMED) -> float:
    """The number ``code`` prints last, run in the kernel."""
    printed: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            raise RuntimeError(msg["content"]["evalue"])

    await client.execute_interactive(code, output_hook=hook, timeout=600)
    return float("".join(printed).split()[-1])


async def measure(server: MCPServer, rows: int, runs: int) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    path = "bench_mcp.ipynb"
    (server.root / path).write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    nb = await server.request("POST", "api/sessions", {"path": path, "type": "notebook", "name": path,
                                                     "kernel": {"name": "python3"}})
    client = kernel_client(server, nb["kernel"]["id"])
    try:
        await client.kernel_info(reply=True, timeout=120)
        reply = await client.execute_interactive(PLANT.format(rows=rows), timeout=600)
        assert reply["content"]["status"] == "ok", reply["content"]
        async with streamablehttp_client(f"http://127.0.0.1:{server.mcp_port}/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                agent = Agent(session)
                await agent.call("dcpilot_notebooks")
                await agent.call("dcpilot_list_frames", notebook=path)
                await kernel_number(client)  # warm: imports, the first model fit
                pairs = [await one_run(agent, client, path, i) for i in range(runs)]
                parts = await breakdown(agent, path)
        in_kernel = int(await kernel_number(client, IN_DIAGNOSIS))
    finally:
        client.stop_channels()
        await server.request("DELETE", f"api/sessions/{nb['id']}")
    text = "\n".join(agent.answers)
    return {"rows": rows, "runs": pairs, "leaked": [s for s in SENTINELS if s in text],
            "answers": len(agent.answers), "in_kernel_diagnosis": in_kernel, "sentinels": len(SENTINELS),
            "breakdown": parts, "load_avg": os.getloadavg()[0], "cores": os.cpu_count()}


class Agent:
    """The MCP client session; keeps every answer (the privacy audit reads them all)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.answers: list[str] = []
        self.last: Any = None

    async def call(self, tool: str, **arguments: Any) -> Any:
        result = await self.session.call_tool(tool, arguments, read_timeout_seconds=None)
        self.answers.append(result.model_dump_json())
        if result.isError:
            raise RuntimeError(result.content)
        self.last = result.structuredContent
        return result.structuredContent


async def one_run(agent: Agent, client: Any, path: str, i: int) -> dict[str, float]:
    kernel = await kernel_number(client)
    t0 = time.perf_counter()
    found = await agent.call("dcpilot_diagnose", notebook=path, frame="df", target="y")
    over_mcp = time.perf_counter() - t0
    inside = float(found["elapsed_s"])
    print(f"mcp: run {i + 1}: in the kernel {kernel:.2f} s; through MCP {over_mcp:.2f} s, of which the diagnosis "
          f"{inside:.2f} s: overhead {(over_mcp - inside) * 1000:.0f} ms ({len(found['findings'])} findings, "
          f"{len(json.dumps(found)) / 1024:.0f} KiB answer)", file=sys.stderr, flush=True)
    return {"kernel": kernel, "mcp": over_mcp, "diagnosis_in_call": inside, "overhead": over_mcp - inside,
            "findings": len(found["findings"]), "bytes": len(json.dumps(found))}


async def breakdown(agent: Agent, path: str, repeats: int = 10) -> dict[str, float]:
    """Where the overhead goes: an MCP round trip with a tiny answer, and the client's check of the
    last diagnosis answer against the tool's output schema (the ``mcp`` SDK does it on every call)."""
    import jsonschema

    trips = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        await agent.call("dcpilot_notebooks")
        trips.append(time.perf_counter() - t0)
    answer = agent.answers[-repeats - 1]  # the last diagnosis
    schema = next(t for t in (await agent.session.list_tools()).tools if t.name == "dcpilot_diagnose").outputSchema
    structured = json.loads(answer)["structuredContent"]
    checks = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jsonschema.validate(structured, schema)
        checks.append(time.perf_counter() - t0)
    return {"round_trip_s": statistics.median(trips), "schema_check_s": statistics.median(checks),
            "answer_bytes": len(json.dumps(structured))}


async def main_async(rows: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dcpilot-mcp-") as tmp:
        server = MCPServer(Path(tmp))
        try:
            await server.wait_ready()
            return await measure(server, rows, runs)
        finally:
            server.stop()


def run(rows: int, runs: int) -> dict[str, Any]:
    """The measurement with its medians (what ``--json`` writes)."""
    result = asyncio.run(main_async(rows, runs))
    keys = ("kernel", "mcp", "diagnosis_in_call", "overhead")
    result["medians"] = {k: statistics.median(r[k] for r in result["runs"]) for k in keys}
    result["max_overhead"] = max(r["overhead"] for r in result["runs"])
    result["target_s"] = TARGET_S
    return result


def markdown(result: dict[str, Any]) -> str:
    """The docs/benchmarks.md section."""
    head = "## MCP tools: latency and privacy (`benchmarks/bench_mcp.py`)"
    if result.get("error"):
        return f"{head}\n\nNot run: {result['error']}.\n"
    m, parts = result["medians"], result["breakdown"]
    lines = [head, "",
             "`dcpilot_diagnose` called by the `mcp` SDK's streamable-HTTP client against a real Jupyter server "
             "running Jupyter AI's MCP server (`jupyter-server-mcp`) and this extension, on a notebook kernel "
             f"holding the {result['rows']:,} × 40 mixed frame of `benchmarks/_frames.py` with planted values "
             "(identifier codes, a category written two ways, an extreme number). *In the kernel*: "
             "`kernel_tools.diagnose(df, target=\"y\")` timed inside the kernel, alone; *through MCP*: the tool "
             "call timed by the client, of which *the diagnosis* is that call's own `elapsed_s` measured in the "
             "kernel; *overhead* = through MCP − the diagnosis of the same call (the probe into the kernel, its "
             "JSON, the share setting applied, the typed answer, HTTP, the client's check of the answer against "
             f"the tool's output schema). {len(result['runs'])} runs on {result['cores']} cores shared with other "
             f"work (load average {result['load_avg']:.1f} at the end).", "",
             "| run | in the kernel | through MCP | of which the diagnosis | overhead |", "|---|---|---|---|---|"]
    for i, r in enumerate(result["runs"], 1):
        lines.append(f"| {i} | {r['kernel']:.2f} s | {r['mcp']:.2f} s | {r['diagnosis_in_call']:.2f} s | "
                     f"{r['overhead'] * 1000:.0f} ms |")
    verdict = "within" if result["max_overhead"] < result["target_s"] else "OVER"
    lines += [f"| median | {m['kernel']:.2f} s | {m['mcp']:.2f} s | {m['diagnosis_in_call']:.2f} s | "
              f"**{m['overhead'] * 1000:.0f} ms** |", "",
              f"Target: overhead < {result['target_s'] * 1000:.0f} ms; the slowest run's was "
              f"{result['max_overhead'] * 1000:.0f} ms, {verdict} the target. The overhead is taken within one call, "
              "not as the difference of two runs of the diagnosis (on a shared machine two runs differ by more). "
              f"Where it goes: an MCP round trip with a tiny answer (`dcpilot_notebooks`) "
              f"{parts['round_trip_s'] * 1000:.0f} ms; the client's `jsonschema` check of the "
              f"{parts['answer_bytes'] / 1024:.0f} KiB answer against the tool's output schema "
              f"{parts['schema_check_s'] * 1000:.0f} ms, made twice (the `mcp` SDK checks every structured answer "
              "on the server before sending it and again in the client, the schema itself first each time); the "
              "rest is the probe into the kernel and the JSON out of it.", "",
              f"Privacy audit of the same run: **{len(result['leaked'])} of {result['sentinels']}** planted values in "
              f"the {result['answers']} answers (`dcpilot_notebooks`, `dcpilot_list_frames`, `dcpilot_diagnose`) "
              "under the default `c.DCPilot.agent_share = \"schema\"`, while the kernel's own diagnosis JSON, "
              f"which the tool starts from, holds {result['in_kernel_diagnosis']} of them. `tests/test_mcp.py` "
              "runs the same audit over every answer of a whole session driven to its verdict through the tools, "
              "and shows the values do appear with `agent_share = \"samples\"`."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the runs and medians here")
    parser.add_argument("--markdown", action="store_true", help="print the docs/benchmarks.md section")
    args = parser.parse_args(argv)
    result = run(args.rows, args.runs)
    m = result["medians"]
    print(f"median over {len(result['runs'])} runs on {args.rows:,} x 40: in the kernel {m['kernel']:.2f} s; "
          f"through MCP {m['mcp']:.2f} s, of which the diagnosis {m['diagnosis_in_call']:.2f} s: overhead "
          f"{m['overhead'] * 1000:.0f} ms, max {result['max_overhead'] * 1000:.0f} ms "
          f"(load average {result['load_avg']:.1f})")
    print(f"privacy audit: {len(result['leaked'])} of {len(SENTINELS)} planted values in {result['answers']} "
          f"answers under share 'schema'" + (f": {result['leaked']}" if result["leaked"] else "")
          + f" ({result['in_kernel_diagnosis']} of {len(SENTINELS)} in the kernel's own diagnosis JSON)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    if args.markdown:
        print(markdown(result))
    return result


if __name__ == "__main__":
    main()
