"""Shared pytest configuration: the Jupyter server fixtures from pytest-jupyter."""

from __future__ import annotations

pytest_plugins = ["pytest_jupyter.jupyter_server"]
