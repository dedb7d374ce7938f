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
import os
import uuid
from pathlib import Path
from typing import Any

SIGNATURE_KEY = "signature"
SCHEME = "hmac-sha256"
SECRET_NAME = "dcpilot_secret"


def secret_path() -> Path:
    """Where the per-user secret lives (honours ``JUPYTER_DATA_DIR``, like Jupyter's own)."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / SECRET_NAME


def user_secret(create: bool = True) -> bytes | None:
    """This user's signing secret; made on first use when ``create`` (else None if absent).

    Created under a temporary name and linked into place, so two processes starting at once
    agree on one secret instead of each overwriting the other's."""
    path = secret_path()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
    from jupyter_core.paths import secure_write

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{SECRET_NAME}-{uuid.uuid4().hex}")
    try:
        with secure_write(str(tmp), binary=True) as f:  # 0600 before a byte is written
            f.write(base64.b64encode(os.urandom(64)))
        try:
            os.link(tmp, path)
        except FileExistsError:  # another process made it first: use theirs
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_bytes()


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
    except OSError:
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


__all__ = ["SIGNATURE_KEY", "secret_path", "serialize", "signature", "signed", "user_secret", "verify"]
