"""The server extension as a Jupyter ``ExtensionApp``: handlers on load, sessions saved on shutdown.

An ExtensionApp (rather than a bare ``_load_jupyter_server_extension``) is what the server
calls back when it stops (``stop_extension``), so every hosted session is written to its
sidecar and its coordinator closed before the kernels go away.
"""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp

from .handlers import setup_handlers


class DCPilotApp(ExtensionApp):
    """Registers the co-pilot's REST/WebSocket handlers; saves and closes sessions on shutdown."""

    name = "jupyter_dcpilot"
    load_other_extensions = True

    def initialize_handlers(self) -> None:
        setup_handlers(self.serverapp.web_app)
        self.log.info("jupyter_dcpilot server extension loaded")

    async def stop_extension(self) -> None:
        registry = self.serverapp.web_app.settings.get("dcpilot_sessions")
        if registry is not None:
            count = len(registry.sessions())
            await registry.close()
            self.log.info("jupyter_dcpilot: saved and closed %d co-pilot session(s)", count)
