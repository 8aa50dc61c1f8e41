"""Each user's disk quota: what brainchat writes for them, counted on disk (BRAINCHAT_USER_QUOTA_MB).

Counted: the folders brainchat writes in a user's data folder (uploads with unpacked zips and
upload staging, saved models, exports, the demo set, public data sets fetched), plus what callers add: the files a user has
uploaded but not yet sent, and the bytes of uploads still arriving. Files placed in the data folder
by an administrator are not counted. A file with several names (uploads are hard-linked into
place) counts once.
"""

from __future__ import annotations

import os
from pathlib import Path

from brainchat.settings import QUOTA_ENV

COUNTED = ("uploads", "models", "exports", "demo", "public")  # under the user's data folder
MB = 2**20


def used_bytes(data_dir: Path) -> int:
    """Bytes of the files brainchat wrote in this data folder (each file once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for name in COUNTED:
        top = Path(data_dir) / name
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, _dirs, files in os.walk(top):  # os.walk does not follow folder links
            for f in files:
                try:
                    st = os.lstat(os.path.join(folder, f))
                except OSError:
                    continue  # removed meanwhile
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_size
    return total


def over_quota(quota_mb: int, used: int, what: str = "this upload") -> str:
    """Why a write is refused: the quota, what is used, and what to do."""
    return (
        f"{what} would take your files past your disk quota of {quota_mb} MB "
        f"({used / MB:,.1f} MB in use); delete uploads, models or exports you no longer need "
        f"from the data folder, or ask the administrator to raise {QUOTA_ENV}"
    )
