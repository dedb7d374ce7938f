"""The co-pilot's settings: traitlets on DCPilot in Jupyter's config files (JUPYTER_CONFIG_DIR
honoured), the API key from the environment or the keyring and never from a config file, the
migration of the old dcpilot.json, and the server extension reading the same settings."""

from __future__ import annotations

import json
import logging
import os

import keyring
import pytest
from keyring.backend import KeyringBackend

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.config import DCPilot, load_llm_config, load_settings

SPILL_ENV = "KERNEL_TOOLS_SPILL_DIR"


class MemoryKeyring(KeyringBackend):
    """A keyring that keeps passwords in memory (the system's has no backend on a server)."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


@pytest.fixture
def config_dir(monkeypatch, tmp_path):
    """An empty Jupyter config folder (JUPYTER_CONFIG_DIR), no API key in the environment."""
    folder = tmp_path / "jupyter-config"
    folder.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(folder))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DCPILOT_MODEL", "DCPILOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def test_settings_come_from_jupyter_server_config_in_the_jupyter_config_dir(config_dir, monkeypatch) -> None:
    (config_dir / "jupyter_server_config.py").write_text(
        'c.DCPilot.model = "claude-haiku-4-5"\n'
        'c.DCPilot.default_approve = "recommended"\n'
        "c.DCPilot.budget = 30.0\n"
        'c.DCPilot.spill_dir = "off"\n')
    settings = load_settings()
    assert (settings.model, settings.default_approve, settings.budget, settings.spill_dir) == \
        ("claude-haiku-4-5", "recommended", 30.0, "off")
    assert load_llm_config().available is False  # no key anywhere: the rule planner
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    llm = load_llm_config(model="claude-opus-4-5")
    assert (llm.api_key, llm.model, llm.timeout) == ("env-key", "claude-opus-4-5", 60.0)
    # JSON config files count too, and the user's folder wins over the defaults
    (config_dir / "jupyter_server_config.json").write_text(json.dumps({"DCPilot": {"timeout": 7}}))
    assert load_llm_config().timeout == 7


def test_a_bad_setting_is_a_clear_error(config_dir) -> None:
    (config_dir / "jupyter_server_config.py").write_text('c.DCPilot.default_approve = "sometimes"\n')
    with pytest.raises(Exception, match="default_approve"):
        load_settings()


def test_the_api_key_never_comes_from_a_config_file(config_dir, caplog) -> None:
    (config_dir / "dcpilot.json").write_text(json.dumps({"api_key": "file-key", "model": "claude-x"}))
    (config_dir / "jupyter_server_config.json").write_text(json.dumps({"DCPilot": {"api_key": "cfg-key"}}))
    with caplog.at_level(logging.WARNING):
        settings = load_settings()
    assert settings.llm_config().available is False
    assert settings.model != "claude-x"  # the old file is not read at all ...
    assert "migrate-config" in caplog.text  # ... and the log says how to move it
    assert "api_key" not in DCPilot.class_trait_names()


def test_the_api_key_comes_from_the_keyring_and_the_environment_wins(config_dir, memory_keyring,
                                                                       monkeypatch) -> None:
    memory_keyring.set_password("jupyter-dcpilot", "anthropic", "ring-key")
    assert load_llm_config().api_key == "ring-key"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    assert load_llm_config().api_key == "env-key"


def test_migrate_config_moves_settings_and_key_then_deletes_the_file(config_dir, memory_keyring, capsys) -> None:
    old = config_dir / "dcpilot.json"
    old.write_text(json.dumps({"api_key": "sk-old", "model": "claude-opus-4-5", "max_retries": 1,
                               "colour": "blue"}))
    assert main(["migrate-config"]) == 0
    out = capsys.readouterr().out
    assert not old.exists() and "keyring" in out and "ignored 'colour'" in out
    assert json.loads((config_dir / "jupyter_server_config.json").read_text()) == \
        {"DCPilot": {"model": "claude-opus-4-5", "max_retries": 1}}
    llm = load_llm_config()
    assert (llm.api_key, llm.model, llm.max_retries) == ("sk-old", "claude-opus-4-5", 1)


def test_migrate_config_keeps_the_key_where_no_keyring_can_hold_it(config_dir, capsys) -> None:
    old = config_dir / "dcpilot.json"
    old.write_text(json.dumps({"api_key": "sk-old", "model": "claude-opus-4-5"}))
    assert main(["migrate-config"]) == 1  # not done: the key still sits in the old file
    assert "NOT moved" in capsys.readouterr().out
    assert json.loads(old.read_text()) == {"api_key": "sk-old"}  # nothing lost, settings moved
    assert load_settings().model == "claude-opus-4-5"
    old.write_text("{not json")
    assert main(["migrate-config"]) == 1
    assert "not valid JSON" in capsys.readouterr().err


# -- the server extension reads the same settings ---------------------------------------------

@pytest.fixture
def jp_server_config(monkeypatch, tmp_path):
    monkeypatch.setenv(SPILL_ENV, "restored after the test")  # the extension sets it
    return {"ServerApp": {"jpserver_extensions": {"jupyter_dcpilot": True}},
            "DCPilot": {"model": "claude-test-3", "default_approve": "recommended", "budget": 12.5,
                        "spill_dir": str(tmp_path / "spill")}}


async def test_the_server_extension_takes_its_settings_from_the_server_config(
        jp_fetch, jp_serverapp, registry, monkeypatch, tmp_path) -> None:
    from test_server_sessions_api import API, notebook_with_frame, post

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    status = json.loads((await jp_fetch("dcpilot", "api", "status")).body)
    assert (status["model"], status["default_approve"], status["budget"]) == ("claude-test-3", "recommended", 12.5)
    assert os.environ[SPILL_ENV] == str(tmp_path / "spill")  # kernels started from now on spill there
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "s.ipynb")
    try:
        created = await post(jp_fetch, *API, body={"path": "s.ipynb", "frame": "df", "target": "churned"})
        assert created["settings"]["approve"] == "recommended"
        assert created["settings"]["budgets"]["train_evaluate"] == created["settings"]["budgets"]["*"] == 12.5
    finally:
        await registry.close()
        client.stop_channels()
