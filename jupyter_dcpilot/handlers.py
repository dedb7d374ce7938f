"""REST handlers of the server extension, all behind Jupyter's authentication."""

from __future__ import annotations

import json
from typing import Any

import tornado
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from . import __version__
from .config import load_llm_config
from .kernel_bridge import KernelBridge, KernelBusyError, NoKernelError, ProbeError

API = "dcpilot/api"


class BaseHandler(APIHandler):
    """Common plumbing: the shared kernel bridge and uniform JSON errors."""

    @property
    def bridge(self) -> KernelBridge:
        return self.settings["dcpilot_bridge"]

    def required_argument(self, name: str) -> str:
        value = self.get_argument(name, default="")
        if not value:
            raise tornado.web.HTTPError(400, f"missing query argument {name!r}")
        return value

    async def probe(self, path: str, function: str, *args: Any) -> Any:
        try:
            return await self.bridge.evaluate(path, function, *args)
        except NoKernelError as error:
            raise tornado.web.HTTPError(404, str(error)) from error
        except KernelBusyError as error:
            raise tornado.web.HTTPError(503, str(error)) from error
        except ProbeError as error:
            status = 404 if error.ename == "KeyError" else 500
            raise tornado.web.HTTPError(status, str(error)) from error


class StatusHandler(BaseHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        llm = load_llm_config()
        planners = ["rules"] + (["claude"] if llm.configured else [])
        self.finish(
            json.dumps(
                {
                    "version": __version__,
                    "planners": planners,
                    "llm_configured": llm.configured,
                    "model": llm.model if llm.configured else None,
                }
            )
        )


class FramesHandler(BaseHandler):
    """GET /dcpilot/api/frames?path=<notebook> → the DataFrames in its kernel."""

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.required_argument("path")
        self.finish(json.dumps(await self.probe(path, "frames_json")))


class ProfileHandler(BaseHandler):
    """GET /dcpilot/api/profile?path=<notebook>&name=<variable> → its compact profile."""

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.required_argument("path")
        name = self.required_argument("name")
        if not name.isidentifier():
            raise tornado.web.HTTPError(400, f"{name!r} is not a Python variable name")
        self.finish(json.dumps(await self.probe(path, "profile_json", name)))


def setup_handlers(web_app: Any) -> None:
    """Mount the handlers under the server's base URL and create the shared kernel bridge."""
    settings = web_app.settings
    settings["dcpilot_bridge"] = KernelBridge(settings["session_manager"], settings["kernel_manager"])
    base_url = settings["base_url"]
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, API, "status"), StatusHandler),
            (url_path_join(base_url, API, "frames"), FramesHandler),
            (url_path_join(base_url, API, "profile"), ProfileHandler),
        ],
    )
