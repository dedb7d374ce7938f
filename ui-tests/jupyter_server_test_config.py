"""Configuration of the JupyterLab server the browser tests start (see galata)."""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821
c.ServerApp.allow_root = True  # CI runs as root  # noqa: F821
c.ServerApp.port = 8888  # noqa: F821
# jupyter-ai's MCP server would otherwise hold port 3001 for every test server
c.MCPExtensionApp.mcp_port = 0  # noqa: F821
