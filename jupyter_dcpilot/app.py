"""The server extension as a Jupyter ``ExtensionApp``: settings and handlers on load, renames and
deletions followed, sessions saved on shutdown.

An ExtensionApp (rather than a bare ``_load_jupyter_server_extension``) is what the server
calls back when it stops (``stop_extension``), so every hosted session is written to its
sidecar and its coordinator closed before the kernels go away.
"""

from __future__ import annotations

import os
from typing import Any

from jupyter_server.extension.application import ExtensionApp

from .config import DCPilot, warn_legacy_file
from .engine.session import SIDECAR_GLOBS
from .handlers import setup_handlers

SPILL_ENV = "KERNEL_TOOLS_SPILL_DIR"  # kernel_tools.checkpoints reads it in the kernel


class DCPilotApp(ExtensionApp):
    """Registers the co-pilot's REST/WebSocket handlers; moves a session with its renamed
    notebook and closes it with its deleted one; saves and closes sessions on shutdown."""

    name = "jupyter_dcpilot"
    load_other_extensions = True
    classes = [DCPilot]  # c.DCPilot.* in jupyter_server_config.py, --DCPilot.* on the command line

    def initialize_settings(self) -> None:
        self.dcpilot = DCPilot(parent=self)
        warn_legacy_file()
        if self.dcpilot.spill_dir is not None:
            # kernels inherit the server's environment: those started from now on spill there
            os.environ[SPILL_ENV] = self.dcpilot.spill_dir
            self.log.info("jupyter_dcpilot: kernels spill checkpoints to %s", self.dcpilot.spill_dir)

    def initialize_handlers(self) -> None:
        setup_handlers(self._server.web_app, self.dcpilot)
        self._hide_sidecars()
        # the server's contents events, not a frontend hook: a rename through the REST API or
        # any other client moves the session too
        self._server.event_logger.add_listener(schema_id=self._contents_schema,
                                                 listener=self._on_contents_event)
        self.log.info("jupyter_dcpilot server extension loaded")

    def _hide_sidecars(self) -> None:
        """The co-pilot's sidecars (and their temporary files while saved) are its state, not the
        user's files: never listed, even with hidden files shown. Listed, a folder read while a
        rename moved a sidecar (or a save replaced one) failed whole: JupyterLab's file browser
        said 'Directory not found: ""' (the server looked for '.Untitled.ipynb.dcpilot.json')."""
        contents = self._server.contents_manager
        globs = list(getattr(contents, "hide_globs", None) or [])
        contents.hide_globs = globs + [g for g in SIDECAR_GLOBS if g not in globs]

    @property
    def _server(self) -> Any:
        """The server this extension was loaded into (set before any of these run)."""
        assert self.serverapp is not None
        return self.serverapp

    @property
    def _contents_schema(self) -> str:
        return self._server.contents_manager.event_schema_id

    async def _on_contents_event(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        registry = self._server.web_app.settings.get("dcpilot_sessions")
        action, path = data.get("action"), data.get("path")
        if registry is None or not path:
            return
        if action == "rename" and data.get("source_path"):
            moved = await registry.follow_rename(data["source_path"], path)
            if moved:
                self.log.info("jupyter_dcpilot: %d co-pilot session(s) followed %s -> %s",
                              len(moved), data["source_path"], path)
        elif action == "delete":
            closed = await registry.follow_delete(path)
            if closed:
                self.log.info("jupyter_dcpilot: %d co-pilot session(s) closed with %s, deleted",
                              len(closed), path)

    async def stop_extension(self) -> None:
        """Save and close every session. Never raises: the server stops its kernels and its
        loop only after every extension stopped, so an error here would keep it running."""
        try:
            self._server.event_logger.remove_listener(schema_id=self._contents_schema,
                                                        listener=self._on_contents_event)
            registry = self._server.web_app.settings.get("dcpilot_sessions")
            if registry is None:
                return
            count = len(registry.sessions())
            failures = await registry.close()
        except Exception:
            self.log.exception("jupyter_dcpilot: closing the co-pilot sessions failed")
            return
        for failure in failures:
            self.log.error("jupyter_dcpilot: could not save co-pilot session of %s", failure)
        self.log.info("jupyter_dcpilot: saved and closed %d of %d co-pilot session(s)",
                      count - len(failures), count)
