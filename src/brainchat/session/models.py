"""The models in force: the mode, the configured settings, the panel's overrides, the user's
connections, and what that makes of each role. No tools, no history."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from brainchat.connections import Connection
from brainchat.settings import MODEL_VARS, ConfigError, ModelSpec, Settings, with_overrides


@dataclass
class ModelsInForce:
    """Which settings and models the next turn uses, and why (base, overrides, connections)."""

    base: Settings
    settings: Settings = field(init=False)
    mode: Literal["chat", "agent"] = field(init=False)
    overrides: dict[str, Any] = field(default_factory=dict)
    connections: dict[str, Connection] = field(default_factory=dict)  # the user's, by name

    def __post_init__(self) -> None:
        self.settings = self.base
        self.mode = self.base.default_mode

    def set_mode(self, mode: str) -> None:
        if mode not in ("chat", "agent"):
            raise ValueError(f"mode {mode!r} is not valid; allowed: chat, agent")
        self.mode = "chat" if mode == "chat" else "agent"

    def use_data_folder(self, folder: Path) -> None:
        """The user's own data folder, in the base and the effective settings."""
        self.base = replace(self.base, data_dir=folder)
        self.settings = replace(self.settings, data_dir=folder)

    def apply(self, overrides: Mapping[str, Any]) -> Settings:
        """Apply settings-panel values from the next message on; a bad value changes nothing."""
        merged = {**self.overrides, **{k: v for k, v in overrides.items() if v is not None}}
        settings = with_overrides(self.base, merged, self.connection_models())
        self.overrides, self.settings = merged, settings  # with_overrides raised if it was bad
        return settings

    def restore(self, saved: Mapping[str, Any]) -> list[str]:
        """Re-apply saved panel values; a pick of a connection model that is gone (the
        connection was removed, or its key no longer decrypts) is dropped, not the whole set.
        Returns the dropped picks."""
        known = self.connection_models()
        gone = [
            f"{k}={v}"
            for k, v in saved.items()
            if k.endswith("_model") and " @ " in str(v) and str(v) not in known
        ]
        self.apply({k: v for k, v in saved.items() if f"{k}={v}" not in gone})
        return gone

    def connection_models(self) -> dict[str, ModelSpec]:
        """Every model of the user's connections, by the name the settings panel shows."""
        return {label: spec for c in self.connections.values() for label, spec in c.specs().items()}

    def add_connection(self, conn: Connection) -> None:
        """Add (or replace, by name) a connection; a role using one of its models gets the new
        URL and key from the next turn, and a role whose model it no longer lists keeps the
        model it had before that choice."""
        self.connections[conn.name] = conn
        pool = {**self.base.models, **self.connection_models()}
        for role in ("function_call", "answer", "chat"):
            name = self.overrides.get(f"{role}_model")
            if str(name) not in pool and str(name).endswith(conn.label("")):
                self.overrides.pop(f"{role}_model")
        self._reapply()

    def remove_connection(self, name: str) -> Connection | None:
        """Forget a connection; a role that used one of its models goes back to the configured
        model (or to none, which the next turn says)."""
        conn = self.connections.pop(name, None)
        if conn is None:
            return None
        gone = set(conn.specs())
        self.overrides = {k: v for k, v in self.overrides.items() if str(v) not in gone}
        self._reapply()
        return conn

    def _reapply(self) -> None:
        try:
            self.settings = with_overrides(self.base, self.overrides, self.connection_models())
        except ConfigError:  # an override that no longer fits: start from the base settings
            self.overrides, self.settings = {}, self.base

    def roles(self) -> dict[str, str]:
        """Which model plays which role, by name."""
        out = {}
        for role in ("function_call", "answer"):
            spec = self.settings.model_for(role)
            out[role] = spec.name if spec else "(none)"
        return out

    def export_settings(self) -> dict[str, Any]:
        """The model and agent settings an exported report shows: names, never keys or
        credentials (a server's address without its user, password and query)."""
        from brainchat.redact import mask_url

        models = {}
        for role in ("chat", "function_call", "answer"):
            spec = self.settings.model_for(role)
            if spec is not None:
                models[role] = {
                    "model": spec.name,
                    "provider": spec.provider,
                    "server": mask_url(spec.base_url, drop_query=True) if spec.base_url else None,
                    "temperature": spec.temperature,
                    "max_tokens": spec.max_tokens,
                }
        return {"mode": self.mode, "models": models, "limits": asdict(self.settings.limits)}

    def config_problem(self) -> str | None:
        """The message a user sees instead of an answer when the configuration is unusable.

        A bad model variable (CHAT_MODEL, OPENAI_MODEL...) stops mattering once every model this
        mode uses is one the user picked from a connection of theirs: the newcomer who fixes a
        broken set-up in the browser can chat without a restart. Other problems still count.
        """
        errors = self.settings.errors
        if errors and self._models_picked_from_connections():
            errors = tuple(e for e in errors if not _model_variable(e.variable))
        return self.settings.problem(errors)

    def _models_picked_from_connections(self) -> bool:
        picked = list(self.connection_models().values())
        roles = ("chat",) if self.mode == "chat" else ("function_call", "answer")
        return bool(picked) and all(self.settings.model_for(r) in picked for r in roles)


def _model_variable(variable: str) -> bool:
    """A variable (or one of its fields, `CHAT_MODEL.timeout`) that configures a model."""
    return variable.split(".")[0] in (
        *MODEL_VARS,
        "OPENAI_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    )
