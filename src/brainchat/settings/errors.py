"""The one error a configuration value can raise: what is wrong, where, and what is allowed."""

from __future__ import annotations

from collections.abc import Mapping

from brainchat import redact


class ConfigError(ValueError):
    """A configuration value that cannot be used, with what would be accepted; never a secret."""

    def __init__(
        self,
        variable: str,
        value: object,
        allowed: str,
        *,
        secret: bool = False,
        said: tuple[str, Mapping[str, object]] | None = None,
    ) -> None:
        # `value` keeps only the masked form: the exception may be logged or shown anywhere.
        self.variable, self.allowed = variable, allowed
        # `allowed` as a brainchat.i18n key and its values, for the settings panel's message
        self.said = said
        self.value = redact.HIDDEN if secret else redact.show(value)
        super().__init__(f"{variable}: {self.value} is not valid; {allowed}")
