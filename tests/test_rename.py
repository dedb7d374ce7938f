"""A session follows its notebook's life, whoever acts on the notebook: the server's contents
"rename" event moves the live session, its sidecar and its kernel lookups; its "delete" event
closes the session and removes its sidecar."""

from __future__ import annotations

import json
from types import SimpleNamespace

import nbformat
import pytest
from test_server_sessions import LEAKY_FRAME, get_session, kernel_client, post, start_notebook_kernel, wait_for
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.server_sessions import HostedSession, NotebookKernelProbe, SessionRegistry, _renamed, _within

pytestmark = pytest.mark.timeout(180)
API = ("dcpilot", "api", "sessions")


@pytest.fixture
def jp_server_config():
    # folders are deleted for good (no desktop trash in a test), non-empty ones included
    return {"ServerApp": {"jpserver_extensions": {"jupyter_dcpilot": True}},
            "FileContentsManager": {"delete_to_trash": False, "always_delete_dir": True}}


def write_notebook(root, path: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), str(target))


async def rename(jp_fetch, jp_serverapp, old: str, new: str, settle: bool = True) -> None:
    """PATCH /api/contents/<old> {path: new}, as any client may; then let the listeners finish."""
    await jp_fetch("api", "contents", *old.split("/"), method="PATCH", body=json.dumps({"path": new}))
    if settle:
        await jp_serverapp.event_logger.gather_listeners()


async def listed(jp_fetch, path: str) -> list[str]:
    return [s["id"] for s in json.loads((await jp_fetch(*API, params={"path": path})).body)["sessions"]]


async def live_session(jp_fetch, jp_serverapp, jp_root_dir, path: str) -> tuple[str, str, object]:
    """A notebook file with a kernel holding ``df`` and a co-pilot session on it."""
    write_notebook(jp_root_dir, path)
    kernel_id = await start_notebook_kernel(jp_fetch, path)
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    created = await post(jp_fetch, *API, body={"path": path, "frame": "df", "target": "churned"})
    return created["id"], kernel_id, client


@pytest.mark.slow
async def test_a_renamed_notebook_keeps_its_live_session(jp_fetch, jp_serverapp, jp_root_dir, registry,
                                                         no_llm) -> None:
    sid, kernel_id, client = await live_session(jp_fetch, jp_serverapp, jp_root_dir, "old.ipynb")
    events: list[dict] = []
    registry.get(sid).session.subscribe(events.append)
    try:
        # moved before the rename's answer: a panel asking right after it finds the session
        await rename(jp_fetch, jp_serverapp, "old.ipynb", "new.ipynb", settle=False)
        assert await listed(jp_fetch, "new.ipynb") == [sid]
        assert await listed(jp_fetch, "old.ipynb") == []
        await jp_serverapp.event_logger.gather_listeners()
        assert not sidecar_path(jp_root_dir / "old.ipynb").exists()
        moved = Session.load(sidecar_path(jp_root_dir / "new.ipynb"))
        assert moved.notebook == str(jp_root_dir / "new.ipynb") and moved.frame == "df"
        renamed = [e for e in events if e["type"] == "renamed"]
        assert [(e["path"], e["source_path"]) for e in renamed] == [("new.ipynb", "old.ipynb")]
        # the notebook's kernel is found under the new name: the diagnosis runs and blocks
        assert await registry.bridge.kernel_id_for("new.ipynb") == kernel_id
        assert registry.get(sid).coordinator.kernel.path == "new.ipynb"

        async def blocked():
            state = await get_session(jp_fetch, sid)
            return state if state["state"] == "blocked" else None

        state = await wait_for(blocked, "the moved session to block at a decision")
        assert state["path"] == "new.ipynb" and state["findings"]
        assert any(e["kind"] == "rename" and "old.ipynb to new.ipynb" in e["text"] for e in state["transcript"])

        # a new notebook taking the old name starts with no session
        write_notebook(jp_root_dir, "old.ipynb")
        assert await listed(jp_fetch, "old.ipynb") == []
        assert not sidecar_path(jp_root_dir / "old.ipynb").exists()
    finally:
        await registry.close()
        client.stop_channels()
    assert Session.load(sidecar_path(jp_root_dir / "new.ipynb")).state == "blocked"  # saved on close


@pytest.mark.slow
async def test_a_renamed_folder_moves_the_sessions_of_its_notebooks(jp_fetch, jp_serverapp, jp_root_dir,
                                                                     registry, no_llm) -> None:
    sid, _, client = await live_session(jp_fetch, jp_serverapp, jp_root_dir, "proj/sub/a.ipynb")
    try:
        await rename(jp_fetch, jp_serverapp, "proj", "work")
        assert await listed(jp_fetch, "work/sub/a.ipynb") == [sid]
        assert await listed(jp_fetch, "proj/sub/a.ipynb") == []
        assert sidecar_path(jp_root_dir / "work/sub/a.ipynb").exists()
        assert not (jp_root_dir / "proj").exists()  # no save re-created the old folder
        assert await registry.bridge.kernel_id_for("work/sub/a.ipynb")
        await registry.discard(sid)
        assert Session.load(sidecar_path(jp_root_dir / "work/sub/a.ipynb")).notebook == \
            str(jp_root_dir / "work/sub/a.ipynb")
        assert not (jp_root_dir / "proj").exists()
    finally:
        await registry.close()
        client.stop_channels()


async def test_a_saved_session_follows_its_notebook_while_not_live(jp_fetch, jp_serverapp, jp_root_dir,
                                                                    registry) -> None:
    write_notebook(jp_root_dir, "idle.ipynb")
    Session(notebook=str(jp_root_dir / "idle.ipynb"), path=str(sidecar_path(jp_root_dir / "idle.ipynb")),
            frame="visits").save()
    await rename(jp_fetch, jp_serverapp, "idle.ipynb", "renamed.ipynb")
    assert not sidecar_path(jp_root_dir / "idle.ipynb").exists()
    reloaded = Session.for_notebook(jp_root_dir / "renamed.ipynb")
    assert reloaded.frame == "visits" and reloaded.trusted  # reloads there, signed for its new name
    assert reloaded.notebook == str(jp_root_dir / "renamed.ipynb")


async def test_the_new_name_never_inherits_an_orphan_session(tmp_path) -> None:
    registry = SessionRegistry(bridge=None, root_dir=str(tmp_path))
    write_notebook(tmp_path, "b.ipynb")  # renamed on disk already, as the event reports
    orphan = sidecar_path(tmp_path / "b.ipynb")
    Session(notebook=str(tmp_path / "b.ipynb"), path=str(orphan), frame="gone").save()  # a deleted b's
    assert await registry.follow_rename("a.ipynb", "b.ipynb") == []
    assert not orphan.exists()


def test_renamed_paths_follow_a_file_or_a_folder() -> None:
    assert _renamed("a.ipynb", "a.ipynb", "b.ipynb") == "b.ipynb"
    assert _renamed("/d/x/a.ipynb", "d", "e/f") == "e/f/x/a.ipynb"
    assert _renamed("dd/a.ipynb", "d", "e") is None  # a sibling whose name starts alike
    assert _renamed("a.ipynb", "", "e") is None


class FakeKernelSessions:
    """The server's kernel sessions (path -> id), as the session manager answers."""

    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths

    async def list_sessions(self) -> list[dict]:
        return [{"id": i, "path": p} for p, i in self.paths.items()]

    async def update_session(self, session_id: str, path: str) -> None:
        self.paths = {(path if i == session_id else p): i for p, i in self.paths.items()}


def hosted_at(root, path: str, frame: str) -> HostedSession:
    session = Session(notebook=str(root / path), path=str(sidecar_path(root / path)), frame=frame)
    session.save()
    probe = NotebookKernelProbe(bridge=None, path=path)
    return HostedSession(frame, path, session, SimpleNamespace(kernel=probe), host=None)


async def test_a_moved_notebook_replaces_a_live_session_whose_notebook_was_deleted(tmp_path) -> None:
    kernels = FakeKernelSessions({"a.ipynb": "k-a", "other.ipynb": "k-o"})
    registry = SessionRegistry(bridge=SimpleNamespace(session_manager=kernels), root_dir=str(tmp_path))
    moving, stale = hosted_at(tmp_path, "a.ipynb", "mine"), hosted_at(tmp_path, "sub/b.ipynb", "gone")
    for hosted in (moving, stale):
        registry._by_id[hosted.id] = hosted
        registry._by_path[hosted.path] = hosted.id
    write_notebook(tmp_path, "sub/b.ipynb")  # b was deleted, then a moved onto its name
    moved = await registry.follow_rename("/a.ipynb", "sub/b.ipynb")
    assert moved == [moving] and [h.id for h in registry.sessions()] == ["mine"]
    assert registry.sessions("sub/b.ipynb") == [moving] and moving.coordinator.kernel.path == "sub/b.ipynb"
    assert Session.load(sidecar_path(tmp_path / "sub/b.ipynb")).frame == "mine"  # not the stale one's
    assert not sidecar_path(tmp_path / "a.ipynb").exists()
    assert kernels.paths == {"sub/b.ipynb": "k-a", "other.ipynb": "k-o"}  # the moved notebook's kernel


async def test_a_save_that_raced_a_folder_rename_leaves_no_old_folder_behind(tmp_path) -> None:
    kernels = FakeKernelSessions({"proj/sub/a.ipynb": "k-a"})
    registry = SessionRegistry(bridge=SimpleNamespace(session_manager=kernels), root_dir=str(tmp_path))
    hosted = hosted_at(tmp_path, "proj/sub/a.ipynb", "df")
    registry._by_id[hosted.id] = hosted
    registry._by_path[hosted.path] = hosted.id
    write_notebook(tmp_path, "proj/sub/a.ipynb")
    (tmp_path / "proj").rename(tmp_path / "work")  # what the contents manager did
    hosted.session.save()  # the co-pilot saved before the event arrived: re-creates proj/sub/
    (tmp_path / "keep").mkdir()  # an empty folder of the user's, outside the renamed one
    await registry.follow_rename("proj", "work")
    assert not (tmp_path / "proj").exists() and (tmp_path / "keep").is_dir()
    assert Session.load(sidecar_path(tmp_path / "work/sub/a.ipynb")).notebook == str(tmp_path / "work/sub/a.ipynb")
    assert kernels.paths == {"work/sub/a.ipynb": "k-a"}


async def delete(jp_fetch, jp_serverapp, path: str) -> None:
    """DELETE /api/contents/<path>, as any client may; then let the listeners finish."""
    await jp_fetch("api", "contents", *path.split("/"), method="DELETE")
    await jp_serverapp.event_logger.gather_listeners()


async def test_a_deleted_notebook_closes_its_session_and_removes_its_sidecar(jp_fetch, jp_serverapp, jp_root_dir,
                                                                            registry, no_llm) -> None:
    sid, _, client = await live_session(jp_fetch, jp_serverapp, jp_root_dir, "gone.ipynb")
    hosted = registry.get(sid)
    events: list[dict] = []
    hosted.session.subscribe(events.append)
    sidecar = sidecar_path(jp_root_dir / "gone.ipynb")
    try:
        hosted.session.instruct("a note of the deleted notebook's session")  # saved in its sidecar
        assert sidecar.exists() and hosted.task is not None
        await delete(jp_fetch, jp_serverapp, "gone.ipynb")
        assert await listed(jp_fetch, "gone.ipynb") == []
        with pytest.raises(HTTPClientError) as missing:
            await get_session(jp_fetch, sid)
        assert missing.value.code == 404
        assert not sidecar.exists() and hosted.task.done() and hosted.closed
        assert [e["reason"] for e in events if e["type"] == "closed"] == ["the notebook was deleted"]
        hosted.session.changed("state", state="running")  # a late event writes nothing
        assert not sidecar.exists()
        # a new notebook of the same name starts afresh, not from the deleted one's state
        write_notebook(jp_root_dir, "gone.ipynb")
        again = await post(jp_fetch, *API, body={"path": "gone.ipynb", "frame": "df", "target": "churned"})
        assert again["id"] != sid and again["instructions"] == []
    finally:
        await registry.close()
        client.stop_channels()


async def test_a_deleted_folder_closes_the_sessions_of_its_notebooks(jp_fetch, jp_serverapp, jp_root_dir,
                                                                     registry, no_llm) -> None:
    sid, _, client = await live_session(jp_fetch, jp_serverapp, jp_root_dir, "proj/sub/a.ipynb")
    write_notebook(jp_root_dir, "projection.ipynb")  # a sibling whose name starts alike
    Session(notebook=str(jp_root_dir / "projection.ipynb"),
            path=str(sidecar_path(jp_root_dir / "projection.ipynb")), frame="keep").save()
    try:
        await delete(jp_fetch, jp_serverapp, "proj")
        assert await listed(jp_fetch, "proj/sub/a.ipynb") == [] and registry.sessions() == []
        assert not (jp_root_dir / "proj").exists()  # closing did not re-create the folder
        assert Session.load(sidecar_path(jp_root_dir / "projection.ipynb")).frame == "keep"
    finally:
        await registry.close()
        client.stop_channels()


async def test_a_deleted_notebook_with_no_live_session_loses_its_sidecar(tmp_path) -> None:
    registry = SessionRegistry(bridge=None, root_dir=str(tmp_path))
    saved = sidecar_path(tmp_path / "old.ipynb")
    Session(notebook=str(tmp_path / "old.ipynb"), path=str(saved), frame="visits").save()  # a past server's
    other = hosted_at(tmp_path, "other.ipynb", "df")
    registry._by_id[other.id] = other
    registry._by_path[other.path] = other.id
    assert await registry.follow_delete("/old.ipynb") == []
    assert not saved.exists() and registry.sessions() == [other]
    assert sidecar_path(tmp_path / "other.ipynb").exists()
    assert await registry.follow_delete("data.csv") == [] and registry.sessions() == [other]


def test_within_means_the_path_itself_or_inside_it() -> None:
    assert _within("a.ipynb", "a.ipynb") and _within("/d/x/a.ipynb", "d")
    assert not _within("dd/a.ipynb", "d") and not _within("a.ipynb", "")


@pytest.mark.parametrize("jp_server_config", [
    {"ServerApp": {"jpserver_extensions": {"jupyter_dcpilot": True}}, "ContentsManager": {"allow_hidden": True}},
])
async def test_sidecars_are_never_listed_even_with_hidden_files_shown(jp_fetch, jp_root_dir, jp_server_config) -> None:
    """Issue 29, 7: renaming 'Untitled.ipynb' failed in the file browser with 'Directory not found:
    ""': with hidden files shown, a listing of the folder met the sidecar the rename had just
    moved away. The co-pilot's files are its state, never listed."""
    write_notebook(jp_root_dir, "Untitled.ipynb")
    (jp_root_dir / ".Untitled.ipynb.dcpilot.json").write_text("{}")
    (jp_root_dir / ".dcpilot-abc.tmp").write_text("{}")
    (jp_root_dir / ".hidden_user_file").write_text("mine")
    listing = json.loads((await jp_fetch("api", "contents", params={"content": "1"})).body)["content"]
    names = {item["name"] for item in listing}
    assert {"Untitled.ipynb", ".hidden_user_file"} <= names  # hidden files are shown ...
    assert not {n for n in names if n.endswith(".dcpilot.json") or n.startswith(".dcpilot-")}  # ... not ours
