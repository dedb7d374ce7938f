"""Which sidecar files this user's co-pilot wrote: an HMAC signature with a per-user secret.

A sidecar (``.<notebook>.dcpilot.json``) holds decisions and code an expert approved. A file
planted next to a notebook (a cloned repository, a shared drive) could claim approvals nobody
gave, so a sidecar is trusted only when it carries the HMAC-SHA256 of its content under a
secret that only this user can read: ``dcpilot_secret`` in the Jupyter data directory
(``jupyter --data-dir``, where Jupyter keeps its own notebook-signing secret), created on first
use with mode 0600. Every writer of sidecars (the server, ``jupyter dcpilot run``, the magics)
signs; see :meth:`jupyter_dcpilot.engine.session.Session.load` for what an unsigned file
becomes. Deleting the secret revokes every signature at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import stat
import uuid
from pathlib import Path
from typing import Any

SIGNATURE_KEY = "signature"
SCHEME = "hmac-sha256"
SECRET_NAME = "dcpilot_secret"
log = logging.getLogger(__name__)


def secret_path() -> Path:
    """Where the per-user secret lives (honours ``JUPYTER_DATA_DIR``, like Jupyter's own)."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / SECRET_NAME


SECRET_BYTES = (32, 4096)  # a shorter secret is guessable; a longer file is not one we wrote


class SecretInvalid(Exception):
    """The file under the secret's name cannot serve as one (why, in words)."""


def _read_secret(path: Path) -> bytes:
    """The secret's bytes when the file is one: a regular file of this user, 32 to 4096 bytes,
    mode 0600 (group or other bits are taken away, with a warning); else :class:`SecretInvalid`.
    An empty secret would let anyone sign with the empty key; a link to ``/dev/null`` is one."""
    from .sidecar_io import SidecarRefused, read_regular

    try:
        secret = read_regular(path, SECRET_BYTES[1], what="the signing secret")
    except SidecarRefused as error:
        raise SecretInvalid(str(error)) from None
    info = os.stat(path, follow_symlinks=False)
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise SecretInvalid(f"the signing secret {path} belongs to another user")
    if len(secret.strip()) < SECRET_BYTES[0]:
        raise SecretInvalid(f"the signing secret {path} is empty or too short ({len(secret)} bytes)")
    if info.st_mode & 0o077:
        try:
            os.chmod(path, 0o600, follow_symlinks=False)
        except (OSError, NotImplementedError):
            raise SecretInvalid(f"the signing secret {path} is readable by others (mode "
                                f"{stat.S_IMODE(info.st_mode):o}) and cannot be made 0600") from None
        log.warning("dcpilot: the signing secret %s was readable by others (mode %o); it is now 0600. If "
                    "someone may have read it, delete it: a new one revokes every signature.", path,
                    stat.S_IMODE(info.st_mode))
    return secret


def user_secret(create: bool = True) -> bytes | None:
    """This user's signing secret; made on first use when ``create`` (else None if absent or
    unusable). A file that cannot be a secret (see :func:`_read_secret`) is replaced by a new
    one when ``create`` (every earlier signature is then revoked: those sidecars open as history).

    Created under a temporary name and linked into place, so two processes starting at once
    agree on one secret instead of each overwriting the other's."""
    path = secret_path()
    try:
        return _read_secret(path)
    except FileNotFoundError:
        if not create:
            return None
        return _new_secret(path, replace=False)
    except SecretInvalid as problem:
        if not create:
            return None
        log.warning("dcpilot: %s; a new secret replaces it (sidecars signed before open as history)", problem)
        return _new_secret(path, replace=True)


def _new_secret(path: Path, replace: bool) -> bytes:
    from jupyter_core.paths import secure_write

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{SECRET_NAME}-{uuid.uuid4().hex}")
    try:
        with secure_write(str(tmp), binary=True) as f:  # 0600 before a byte is written
            f.write(base64.b64encode(os.urandom(64)))
        if replace:  # a link, a FIFO, an empty file: replaced, never written through
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:  # another process made it first: use theirs
                pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_secret(path)


def serialize(state: dict[str, Any]) -> str:
    """The JSON text a signature covers: compact, keys in their order. A sidecar is written in
    this form and parsing keeps the order, so a verifier re-creates the same text from the
    parsed file (no second, sorted serialisation of a large session at every save)."""
    return json.dumps(state, separators=(",", ":"))


def signature(text: str, secret: bytes) -> str:
    """``hmac-sha256:<hex>`` of a session's JSON text (see :func:`serialize`)."""
    return f"{SCHEME}:{hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()}"


def signed(text: str) -> str:
    """A session's JSON text (an object) with its signature as one more member; unsigned (so
    it will load as untrusted, the safe side) when no secret can be written, e.g. a read-only
    home."""
    try:
        secret = user_secret()
    except (OSError, SecretInvalid) as error:
        log.warning("dcpilot: the session file is saved unsigned (it will open as history): %s", error)
        return text
    assert secret is not None  # made when absent
    if not text.endswith("}") or text == "{}":
        raise ValueError("only a non-empty JSON object can be signed")
    return f'{text[:-1]},"{SIGNATURE_KEY}":"{signature(text, secret)}"}}'


def verify(data: dict[str, Any]) -> str | None:
    """Take the signature out of a parsed sidecar; None when this user's co-pilot signed the
    rest, else why the file cannot be trusted (in words, for the user)."""
    claimed = data.pop(SIGNATURE_KEY, None)
    if not isinstance(claimed, str):
        return "it carries no signature of this user's co-pilot"
    secret = user_secret(create=False)
    if secret is None or not hmac.compare_digest(claimed, signature(serialize(data), secret)):
        return ("its signature does not match: it was changed outside the co-pilot, or written "
                "by another user or on another machine")
    return None


__all__ = ["SIGNATURE_KEY", "SecretInvalid", "secret_path", "serialize", "signature", "signed", "user_secret", "verify"]
