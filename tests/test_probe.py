"""jupyter_dcpilot.probe: silent probe expressions and their replies."""

from __future__ import annotations

import json

import pytest

from jupyter_dcpilot.probe import ProbeError, execute_request_content, parse_reply, probe_expression


def test_expression_quotes_arguments_as_literals() -> None:
    expression = probe_expression("profile_json", "df'); import os; os.system('x')#")
    # the hostile name stays inside one string literal
    assert expression.count("profile_json(") == 1
    assert expression.endswith(repr("df'); import os; os.system('x')#") + ")")


def test_expression_refuses_non_literals() -> None:
    with pytest.raises((ValueError, SyntaxError)):
        probe_expression("frames_json", object())


def test_request_is_silent() -> None:
    content = execute_request_content("1+1")
    assert content["silent"] is True and content["store_history"] is False and content["code"] == ""


def test_parse_reply_decodes_json_repr() -> None:
    value = [{"name": "df", "rows": 3}]
    text = repr(json.dumps(value))
    reply = {"status": "ok", "user_expressions": {"dcpilot": {"status": "ok", "data": {"text/plain": text}}}}
    assert parse_reply(reply) == value


def test_parse_reply_explains_missing_kernel_tools() -> None:
    reply = {
        "status": "ok",
        "user_expressions": {
            "dcpilot": {"status": "error", "ename": "ModuleNotFoundError", "evalue": "No module named 'kernel_tools'"}
        },
    }
    with pytest.raises(ProbeError, match="not installed"):
        parse_reply(reply)
