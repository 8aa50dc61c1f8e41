"""The settings panel (cl.ChatSettings): widgets from the session, values back to overrides."""

from __future__ import annotations

from typing import Any

import chainlit as cl
from chainlit.input_widget import NumberInput, Select, TextInput

from brainchat.session import Session
from brainchat.settings import ConfigError

ROLES = (
    ("function_call", "Function-call model (thinks, calls tools)"),
    ("answer", "Answer model (writes the final answer)"),
    ("chat", "Chat-mode model"),
)
EXEC_MODES = {
    "Auto (several rounds of tools)": "auto",
    "Single step (one round of tools)": "single_step",
}
PLAN_MODES = {"Off": "off", "Auto (the model decides)": "auto", "Always": "always"}


def widgets(session: Session, custom: dict[str, str] | None = None) -> list[Any]:
    """The panel's inputs, showing the settings in force now (`custom`: typed model ids)."""
    custom = custom or {}
    s = session.settings
    names = list(s.models) or ["(none configured)"]
    out: list[Any] = []
    for role, label in ROLES:
        spec = s.model_for(role)
        current = spec.name if spec else names[0]
        values = names if current in names else [*names, current]
        out.append(Select(id=f"{role}_model", label=label, values=values, initial_value=current))
        out.append(
            TextInput(
                id=f"{role}_model_custom",
                label="…or another model id on the same provider",
                initial=custom.get(role, ""),
                placeholder="e.g. gpt-4o or deepseek-chat",
            )
        )
        temp = spec.temperature if spec else None
        out.append(
            TextInput(  # text, not a number box: empty must mean "the model's default"
                id=f"{role}_temperature",
                label=f"{role.replace('_', '-').capitalize()} temperature (0–2, empty = model default)",
                initial="" if temp is None else f"{temp:g}",
                placeholder="model default",
            )
        )
    lim = s.limits
    out += [
        NumberInput(id="max_iterations", label="Max iterations (1–30)", initial=lim.max_iterations),
        NumberInput(
            id="max_execution_time",
            label="Max execution time, seconds (10–300)",
            initial=lim.max_execution_time,
        ),
        Select(
            id="execution_mode",
            label="Execution mode",
            items=EXEC_MODES,
            initial_value=lim.execution_mode,
        ),
        Select(
            id="plan_mode",
            label=f"Plan multi-step requests (verified steps, at most {lim.max_replans} replans)",
            items=PLAN_MODES,
            initial_value=lim.plan_mode,
        ),
    ]
    return out


async def send_panel(session: Session, custom: dict[str, str] | None = None) -> None:
    await cl.ChatSettings(widgets(session, custom)).send()


def overrides_from(values: dict[str, Any]) -> dict[str, Any]:
    """Panel values -> `Session.apply_settings` keys (a custom model id wins over the picker)."""
    out: dict[str, Any] = {}
    for role, _ in ROLES:
        custom = str(values.get(f"{role}_model_custom") or "").strip()
        out[f"{role}_model"] = custom or values.get(f"{role}_model")
        temp = str(values.get(f"{role}_temperature") or "").strip()
        out[f"{role}_temperature"] = temp or None
    for key in ("max_iterations", "max_execution_time", "execution_mode", "plan_mode"):
        out[key] = values.get(key)
    return {k: v for k, v in out.items() if v is not None and v != "(none configured)"}


def summary(session: Session) -> str:
    s = session.settings
    lim = s.limits
    parts = []
    for role, _ in ROLES:
        spec = s.model_for(role)
        if spec:
            temp = "default" if spec.temperature is None else f"{spec.temperature:g}"
            parts.append(f"{role.replace('_', '-')}: `{spec.name}` (temperature {temp})")
    parts.append(
        f"max iterations {lim.max_iterations}, max time {lim.max_execution_time:g} s, "
        f"execution mode {lim.execution_mode.replace('_', '-')}, plan {lim.plan_mode}"
    )
    return "; ".join(parts)


async def apply(session: Session, values: dict[str, Any], custom: dict[str, str]) -> bool:
    """Apply panel values; a bad one is refused with a message and nothing changes."""
    try:
        session.apply_settings(overrides_from(values))
    except ConfigError as exc:
        await cl.Message(
            content=(
                f"⚠️ **Settings not applied.** {exc}.\n\n"
                f"The previous settings stay in force: {summary(session)}."
            ),
            author="brainchat",
        ).send()
        await send_panel(session, custom)  # put the panel back to the values in force
        return False
    for role, _ in ROLES:  # keep the custom ids so the panel shows them next time
        custom[role] = str(values.get(f"{role}_model_custom") or "").strip()
    await cl.Message(
        content=f"✅ **Settings saved.** They apply from your next message: {summary(session)}.",
        author="brainchat",
    ).send()
    return True
