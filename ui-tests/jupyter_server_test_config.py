"""Configuration of the JupyterLab server the browser tests start (see galata)."""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821
c.ServerApp.allow_root = True  # CI runs as root  # noqa: F821
c.ServerApp.port = 8888  # noqa: F821
# jupyter-ai's MCP server would otherwise hold port 3001 for every test server
c.MCPExtensionApp.mcp_port = 0  # noqa: F821

# Claude for the tests that pick it in the panel: the fake Messages API in this process (no
# request leaves the machine, whatever key the developer's environment holds)
import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_claude import start  # noqa: E402

os.environ["ANTHROPIC_API_KEY"] = "sk-browser-tests"
os.environ["ANTHROPIC_BASE_URL"] = start().url
c.DCPilot.base_url = os.environ["ANTHROPIC_BASE_URL"]  # noqa: F821 (over a developer's own setting)
