"""An agent for the browser tests: it proposes an answer to the decision a notebook's co-pilot
waits for, through the co-pilot's MCP tools, as any MCP client would (its client name is the
agent's name the panel shows).

    python agents/propose.py NOTEBOOK AGENT [CHOICE] [RATIONALE]

CHOICE defaults to the decision's first option that is not the recommended one. Prints the
tool's answer (JSON). The Jupyter server is the one galata started on port 8888; its MCP
extension writes its port to the runtime directory.
"""

import asyncio
import json
import sys

from jupyter_server.serverapp import list_running_servers
from jupyter_server_mcp.runtime import list_running_mcp_servers
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import Implementation

PORT = 8888


def mcp_url() -> str:
    """The MCP server of the running Jupyter server on :data:`PORT` (files of servers that
    ended are skipped)."""
    pids = {server["pid"] for server in list_running_servers() if server.get("port") == PORT}
    for mcp in list_running_mcp_servers():
        if mcp.get("pid") in pids:
            return str(mcp["url"])
    raise SystemExit(f"no running Jupyter server with an MCP server on port {PORT}")


async def call(session: ClientSession, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    if result.isError:
        raise SystemExit(f"{tool}: {result.content[0].text}")
    return result.structuredContent or json.loads(result.content[0].text)


async def propose(notebook: str, agent: str, choice: str | None, rationale: str) -> dict:
    async with streamablehttp_client(mcp_url()) as (read, write, _):
        async with ClientSession(read, write, client_info=Implementation(name=agent, version="1")) as session:
            await session.initialize()
            listed = await call(session, "dcpilot_notebooks", {})
            live = next(n["session"] for n in listed["notebooks"] if n["path"] == notebook and n["session"])
            status = await call(session, "dcpilot_status", {"session_id": live["session_id"]})
            waiting = next(d for d in status["decisions"] if d["id"] in status["waiting_for"])
            if choice is None:
                choice = next(o["id"] for o in waiting["options"] if o["id"] != waiting["recommended"])
            return await call(session, "dcpilot_answer_decision", {
                "session_id": live["session_id"], "decision_id": waiting["id"], "choice": choice,
                "rationale": rationale})


if __name__ == "__main__":
    path, name = sys.argv[1], sys.argv[2]
    wanted = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    why = sys.argv[4] if len(sys.argv) > 4 else ""
    print(json.dumps(asyncio.run(propose(path, name, wanted, why))))
