"""Files attached to a message -> the user's data folder: one step per upload, a note for the models.

Chainlit's attach button and drag-and-drop deliver the files as `message.elements` (each a
`cl.File` with `.name` and `.path`, a copy under Chainlit's session folder). They are checked and
placed by `brainchat.eeg.uploads.uploads.receive` in a worker thread; the step shows each
recording's
header, channels, duration and sampling rate, or why it was refused. The agent learns of the
accepted files from its per-round study context (`Study.uploads`); a Chat-mode question gets a
short note instead, since the chat model cannot open files.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.eeg.io.paths import without_server_paths
from brainchat.eeg.study.study import UPLOADS_SHOWN
from brainchat.eeg.uploads.uploads import (
    Accepted,
    Incoming,
    UploadLimits,
    UploadReport,
    agent_note,
    start_receive,
)
from brainchat.redact import get_logger, mask
from brainchat.settings import Settings
from brainchat.ui import knowledge
from brainchat.ui.format import seconds
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.session import Session

log = get_logger("brainchat.ui")
CHANNELS_SHOWN = 12


def install(settings: Settings) -> None:
    """Chainlit's own size bound (config.toml max_size_mb) never below BRAINCHAT_UPLOAD_MAX_MB,
    so a file over brainchat's limit reaches brainchat, which says which limit and how to raise it."""
    from chainlit.config import config

    feature = config.features.spontaneous_file_upload
    if feature is None or not feature.enabled:
        return
    if (feature.max_size_mb or 0) < settings.upload_max_mb:
        feature.max_size_mb = settings.upload_max_mb + 1


async def receive_attached(s: Session, message: cl.Message) -> str | None:
    """Check and place the files attached to `message`; return the note for a Chat-mode turn.

    One upload per user (data folder) is checked at a time in this process: checking is disk and
    CPU work, and one user's many tabs must not multiply it. Afterwards the files' copies in
    Chainlit's session folder are removed (what was accepted is in the data folder), so they no
    longer count against the quota."""
    attached = [e for e in message.elements or [] if getattr(e, "path", None)]
    attached, documents = knowledge.split(attached)  # PDF, Markdown, HTML, text (#41)
    if documents:
        await knowledge.receive(documents, s.settings)  # to the user's collection (#41)
    if not attached:
        return None
    key = str(s.settings.data_dir)  # one data folder per user
    files = cl.context.session.files
    if key in _checking:
        _drop(files, attached)
        await _busy(attached)
        return None
    _checking.add(key)

    def release(_: Any = None) -> None:  # when the check has ended, even after a Stop
        _checking.discard(key)
        _drop(files, attached)

    incoming = [Incoming(str(e.name or "upload"), Path(str(e.path))) for e in attached]
    try:
        limits = await asyncio.to_thread(_limits, s.settings, attached)
        thread = str(getattr(cl.context.session, "thread_id", "") or "")
        work = start_receive(incoming, s.settings.data_dir, limits, s.study.uploads, thread)
    except BaseException:
        release()
        raise
    work.add_done_callback(release)
    return await _report(s, message, work, len(incoming))


_checking: set[str] = set()  # data folders with an upload being checked now


async def _busy(attached: list[Any]) -> None:
    names = ", ".join(f"`{e.name}`" for e in attached)
    text = i18n.t("uploads.busy", names=names)
    async with cl.Step(name=i18n.t("uploads.busy_title"), type="tool") as step:
        step.output = text
    await cl.Message(content=text, author=AUTHOR).send()


def _drop(files: dict[str, Any], attached: list[Any]) -> None:
    """Remove the attached files' copies from Chainlit's session folder and its list."""
    for e in attached:
        files.pop(getattr(e, "id", ""), None)
        Path(str(e.path)).unlink(missing_ok=True)


def _limits(settings: Settings, attached: list[Any]) -> UploadLimits:
    """The size limit, and the room the user's quota leaves (blocking: walks the folder)."""
    if not settings.user_quota_mb:
        return UploadLimits(max_mb=settings.upload_max_mb)
    from brainchat.eeg.uploads.quota import MB
    from brainchat.ui.upload_route import quota_used

    user = cl.context.session.user
    who = user.identifier if user else ""
    used = quota_used(who, Path(settings.data_dir), {str(e.id) for e in attached})
    room = settings.user_quota_mb * MB - used
    return UploadLimits(settings.upload_max_mb, room=room, quota_mb=settings.user_quota_mb)


async def _report(
    s: Session, message: cl.Message, work: asyncio.Future[UploadReport], count: int
) -> str | None:
    """The step and the message about an upload being checked by `work`."""
    step = cl.Step(name=i18n.t("uploads.checking", n=count), type="tool")
    started = time.perf_counter()
    failed = False
    async with step:
        try:
            report = await asyncio.shield(work)
        except Exception as exc:  # noqa: BLE001 - an upload never breaks the conversation
            log.exception("upload failed")
            report, failed = UploadReport(), True
            step.output = failure(exc, Path(s.settings.data_dir))
        else:
            step.output = details(report)
        step.name = title(report, time.perf_counter() - started, failed=failed)
    text = (message.content or "").strip()
    reply = summary(report, s.mode, asked=bool(text), failed=failed)
    await cl.Message(content=reply, author=AUTHOR).send()
    if report.accepted and s.mode == "chat":
        return chat_note(report.accepted)
    return None


def failure(exc: BaseException, data_dir: Path) -> str:
    """The step's text for an upload that raised: no absolute path (the server's folders are not
    the user's business): a path in the data folder is shown relative to it, any other by its
    last part; secrets masked."""
    text = without_server_paths(str(exc), data_dir).strip()
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return mask(i18n.t("uploads.failed", reason=reason))


def title(report: UploadReport, took: float, *, failed: bool = False) -> str:
    if failed:
        return i18n.t("uploads.title_failed", took=seconds(took))
    parts = []
    if report.accepted:
        parts.append(i18n.t("uploads.n_accepted", n=len(report.accepted)))
    if report.refused:
        parts.append(i18n.t("uploads.n_refused", n=len(report.refused)))
    shown = ", ".join(parts) or i18n.t("uploads.nothing")
    return i18n.t("uploads.title", parts=shown, took=seconds(took))


def details(report: UploadReport) -> str:
    """The step's body: each recording's header, or the reason it was refused."""
    blocks = [_accepted_block(a) for a in report.accepted]
    blocks += [
        i18n.t("uploads.refused_block", name=r.name, reason=r.reason) for r in report.refused
    ]
    if report.ignored:
        names = ", ".join(f"`{n}`" for n in report.ignored)
        blocks.append(i18n.t("uploads.ignored_block", names=names))
    return "\n\n".join(blocks) or i18n.t("uploads.no_file")


def _accepted_block(a: Accepted) -> str:
    info = a.info
    shown = ", ".join(info.channels[:CHANNELS_SHOWN])
    more = (
        f", … (+{len(info.channels) - CHANNELS_SHOWN})"
        if len(info.channels) > CHANNELS_SHOWN
        else ""
    )
    head = i18n.t(
        "uploads.accepted_head",
        name=a.name,
        fmt=info.fmt.upper(),
        n=len(info.channels),
        seconds=f"{info.seconds:.1f}",
        sfreq=f"{info.sfreq:g}",
    )
    lines = [head, i18n.t("uploads.channels", names=shown + more)]
    if info.events:
        events = ", ".join(f"{k} {v}" for k, v in info.events.items())
        lines.append(i18n.t("uploads.events", events=events))
    if info.measured:
        lines.append(i18n.t("uploads.recorded", when=info.measured))
    if len(a.files) > 1:
        lines.append(i18n.t("uploads.files", files=", ".join(f"`{f}`" for f in a.files)))
    if a.note:
        lines.append(i18n.t("uploads.note", note=a.note))
    return "\n".join(lines)


def summary(report: UploadReport, mode: str, *, asked: bool, failed: bool = False) -> str:
    """The message under the step: what arrived, what was refused and why, what to do next."""
    if failed and not (report.accepted or report.refused or report.ignored):
        return i18n.t("uploads.failed_short")
    lines = []
    for a in report.accepted:
        said = i18n.t("uploads.uploaded", name=a.name, brief=a.info.brief())
        lines.append(said + (f": {a.note}" if a.note else ""))
    for r in report.refused:
        lines.append(i18n.t("uploads.refused", name=r.name, reason=r.reason))
    if report.ignored:
        lines.append(i18n.t("uploads.ignored", n=len(report.ignored)))
    if report.accepted and not asked:
        lines.append(i18n.t("uploads.next_chat" if mode == "chat" else "uploads.next_agent"))
    return "\n\n".join(lines) or i18n.t("uploads.no_file")


def chat_note(accepted: list[Accepted]) -> str:
    """Told to the chat model with the user's question: it cannot open the files itself. At most
    UPLOADS_SHOWN files are named (as in the agent's context), so a zip of hundreds of recordings
    cannot push the question past the model's bounds after the message-length check."""
    return (
        f"\n\n({agent_note(accepted, UPLOADS_SHOWN)}; checked and saved in the data folder. "
        "Chat mode cannot open files: to analyse them, the user can switch to Agent mode.)"
    )
