"""The state folder (database file, stored elements, auth secret) and each user's data folder."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from brainchat.store.config import LOCAL_USER

SECRET_FILE = "auth_secret"
MODELS_FOLDER = "models"


def ensure_state_dir(path: Path) -> Path:
    """Create the state folder, readable by this user only (it holds the auth secret)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        path.chmod(0o700)
    except OSError:
        pass  # a folder we do not own (a shared mount): keep its mode
    return path


def auth_secret(state_dir: Path) -> str:
    """The secret that signs login cookies: made once, kept in the state folder, never logged.

    Two processes starting together on a fresh folder agree: the file appears whole (written
    aside, then hard-linked into place, which fails if the other process got there first).
    """
    target = ensure_state_dir(state_dir) / SECRET_FILE
    if not target.exists():
        fd, tmp = tempfile.mkstemp(dir=state_dir, prefix=".secret-")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(48))
            os.chmod(tmp, 0o600)
            os.link(tmp, target)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    value = target.read_text().strip()
    if len(value) < 32:
        raise RuntimeError(
            f"the auth secret in the state folder is too short; delete {SECRET_FILE} "
            "there to make a new one (everyone will have to log in again)"
        )
    return value


def user_data_dir(data_root: Path, identifier: str, auth: str) -> Path:
    """The EEG data folder of a user: the whole data folder for the local user, else their own.

    With password login each account gets `<data folder>/users/<name>/`; account names are
    checked (letters, digits, . _ - @), so a name never climbs out of that folder.
    """
    if auth == "local" and identifier == LOCAL_USER:
        return data_root
    from brainchat.store.accounts import check_name

    return data_root / "users" / check_name(identifier)


def models_dir(user_data: Path, thread_id: str) -> Path:
    """Where the trained models of one conversation are saved."""
    from brainchat.store.threads import check_id

    return user_data / MODELS_FOLDER / check_id(thread_id)
