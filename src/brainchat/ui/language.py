"""Which language brainchat's own text is shown in, chosen as Chainlit chooses its own.

In order: the user's choice in the settings panel ("Interface language"), the app's forced
language (`language` under [UI] in .chainlit/config.toml, which Chainlit's chrome follows too),
then the browser's (`Accept-Language` of the socket handshake, Chainlit's `session.language`).
"""

from __future__ import annotations

import chainlit as cl

from brainchat import i18n

CHOICE = "interface_language"  # the user_session key the settings panel writes


def resolve() -> str | None:
    from chainlit.config import config

    chosen = cl.user_session.get(CHOICE)
    if chosen and chosen != "auto":
        return str(chosen)
    if config.ui.language:
        return str(config.ui.language)
    return getattr(cl.context.session, "language", None)  # an HTTP context has none


def install() -> None:
    i18n.set_resolver(resolve)
