"""The settings panel (cl.ChatSettings): widgets from the session, values back to overrides."""

from __future__ import annotations

from typing import Any

import chainlit as cl
from chainlit.input_widget import NumberInput, Select, Tab, TextInput
from pydantic.dataclasses import dataclass

from brainchat.session import Session
from brainchat.settings import ConfigError, with_overrides
from brainchat.settings.declared import LimitVars
from brainchat.settings.fields import bounds, extra, number, panel_label
from brainchat.settings.spec import SpecVars

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
TOOL_CALLING = {
    "Native (the server's tool calls)": "native",
    "Prompt (tools in the system prompt, calls as JSON in the text)": "prompt",
    "Auto (native, and JSON calls in the text)": "auto",
}
GUIDANCE = {
    "Auto (guided when it calls tools through the prompt)": "auto",
    "Minimal (limits, approvals and the answer check only)": "minimal",
    "Guided (a record of the request, the next step, checks of its calls)": "guided",
}
STREAMED_CALLS = {
    "Streamed": "true",
    "Not streamed (servers that cannot stream tool calls)": "false",
}
REMOVE_FIELD, KEEP_ALL = "connection_remove", "(keep them all)"
NONE = "(none configured)"
TEMPERATURE = "–".join(number(b) for b in bounds(SpecVars.model_fields["temperature"]))


@dataclass
class RangeInput(NumberInput):
    """A number box with min/max/step: the browser marks a value out of range, and
    brainchat.js refuses to save the panel while one is (Chainlit's NumberInput has no range)."""

    min: float | None = None
    max: float | None = None
    step: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "min": self.min, "max": self.max, "step": self.step}


def sections(session: Session, custom: dict[str, str] | None = None) -> list[Tab]:
    """The panel as three short tabs showing the settings in force now: the model picks, the
    agent's limits, and the rest (other model ids, temperatures, tool calling). Adding a model
    connection is its own form (ui/connect_form.py), not fields here."""
    custom = custom or {}
    return [
        Tab(id="models", label="Models", inputs=model_widgets(session)),
        Tab(id="agent", label="Agent", inputs=limit_widgets(session)),
        Tab(id="advanced", label="Advanced", inputs=advanced_widgets(session, custom)),
    ]


def widgets(session: Session, custom: dict[str, str] | None = None) -> list[Any]:
    """Every input of the panel, section after section."""
    return [w for tab in sections(session, custom) for w in tab.inputs]


def model_widgets(session: Session) -> list[Any]:
    """One picker per role: configured models and the models of the user's connections."""
    s = session.settings
    choices = {**session.base_settings.models, **s.models, **session.connection_models()}
    names = list(choices) or [NONE]
    out: list[Any] = []
    for role, label in ROLES:
        spec = s.model_for(role)
        current = spec.name if spec else names[0]
        values = names if current in names else [*names, current]
        out.append(Select(id=f"{role}_model", label=label, values=values, initial_value=current))
    out[-1].description = (
        'A connection\'s models are listed as "model @ name". To connect another server, use '
        "Add a model connection (the button on the first message, or type /connect)."
    )
    if session.connections:
        have = "; ".join(
            f"{c.name} ({c.shown_url}, {len(c.models)} models)"
            for c in session.connections.values()
        )
        out.append(
            Select(
                id=REMOVE_FIELD,
                label="Remove a connection (asks first; its saved key is deleted)",
                values=[KEEP_ALL, *session.connections],
                initial_value=KEEP_ALL,
                description=f"Your connections: {have}.",
            )
        )
    return out


def limit_widgets(session: Session) -> list[Any]:
    lim = session.settings.limits
    return [
        range_input("max_iterations", lim.max_iterations),
        range_input("max_execution_time", lim.max_execution_time),
        Select(
            id="execution_mode",
            label=panel_label(LimitVars, "execution_mode"),
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


def range_input(key: str, initial: float) -> RangeInput:
    """A limit's number box: its label, unit and range as declared (settings LimitVars)."""
    field = LimitVars.model_fields[key]
    lo, hi = bounds(field)
    unit = extra(field)["unit"]
    return RangeInput(
        id=key,
        label=f"{panel_label(LimitVars, key)}{f', {unit}' if unit else ''} ({number(lo)}–{number(hi)})",
        initial=initial,
        min=lo,
        max=hi,
        step=1,
    )


def advanced_widgets(session: Session, custom: dict[str, str]) -> list[Any]:
    """How the function-call model calls tools; per role, another model id and a temperature."""
    s = session.settings
    out: list[Any] = tool_calling_widgets(s.model_for("function_call"))
    for role, _ in ROLES:
        spec = s.model_for(role)
        temp = spec.temperature if spec else None
        name = role.replace("_", "-").capitalize()
        out += [
            TextInput(
                id=f"{role}_model_custom",
                label=f"{name} model: another id on the same provider",
                initial=custom.get(role, ""),
                placeholder="e.g. gpt-4o or deepseek-chat (wins over the pick in Models)",
            ),
            TextInput(  # text, not a number box: empty must mean "the model's default"
                id=f"{role}_temperature",
                label=f"{name} temperature ({TEMPERATURE}, empty = model default)",
                initial="" if temp is None else f"{temp:g}",
                placeholder="model default",
            ),
        ]
    return out


def tool_calling_widgets(spec: Any) -> list[Any]:
    """How the function-call model calls tools, and whether that request is streamed."""
    return [
        Select(
            id="function_call_tool_calling",
            label="Function-call model: tool calling",
            items=TOOL_CALLING,
            initial_value=spec.tool_calling if spec else "native",
        ),
        Select(
            id="function_call_guidance",
            label="Function-call model: guidance",
            items=GUIDANCE,
            initial_value=spec.guidance if spec else "auto",
        ),
        Select(
            id="function_call_stream_tool_calls",
            label="Function-call model: stream the tool-call request",
            items=STREAMED_CALLS,
            initial_value="true" if spec is None or spec.stream_tool_calls else "false",
        ),
    ]


async def send_panel(session: Session, custom: dict[str, str] | None = None) -> None:
    await cl.ChatSettings(sections(session, custom)).send()


def overrides_from(values: dict[str, Any]) -> dict[str, Any]:
    """Panel values -> `Session.apply_settings` keys (a custom model id wins over the picker)."""
    out: dict[str, Any] = {}
    for role, _ in ROLES:
        custom = str(values.get(f"{role}_model_custom") or "").strip()
        out[f"{role}_model"] = custom or values.get(f"{role}_model")
        temp = str(values.get(f"{role}_temperature") or "").strip()
        out[f"{role}_temperature"] = temp or None
    for key in (
        "function_call_tool_calling",
        "function_call_guidance",
        "function_call_stream_tool_calls",
    ):
        out[key] = values.get(key) or None
    for key in ("max_iterations", "max_execution_time", "execution_mode", "plan_mode"):
        out[key] = values.get(key)
    return {k: v for k, v in out.items() if v is not None and v != NONE}


def summary(session: Session) -> str:
    s = session.settings
    lim = s.limits
    parts = []
    for role, _ in ROLES:
        spec = s.model_for(role)
        if spec:
            temp = "default" if spec.temperature is None else f"{spec.temperature:g}"
            calling = ""
            if role == "function_call":
                streamed = "" if spec.stream_tool_calls else ", not streamed"
                calling = f", tool calling {spec.tool_calling}{streamed}, guidance {spec.guidance}"
            parts.append(f"{role.replace('_', '-')}: `{spec.name}` (temperature {temp}{calling})")
    parts.append(
        f"max iterations {lim.max_iterations}, max time {lim.max_execution_time:g} s, "
        f"execution mode {lim.execution_mode.replace('_', '-')}, plan {lim.plan_mode}"
    )
    return "; ".join(parts)


def problems(session: Session, overrides: dict[str, Any]) -> list[ConfigError]:
    """Every bad value, each checked on its own so that all of them are reported at once."""
    found = []
    for key, value in overrides.items():
        try:
            with_overrides(session.base_settings, {key: value}, session.connection_models())
        except ConfigError as exc:
            found.append(exc)
    return found


async def apply(session: Session, values: dict[str, Any], custom: dict[str, str]) -> bool:
    """Apply panel values; bad ones are all named in one message and nothing changes."""
    overrides = overrides_from(values)
    errors = problems(session, overrides)
    if not errors:
        try:
            session.apply_settings(overrides)
        except ConfigError as exc:  # a combination no single value shows
            errors = [exc]
    if errors:
        listed = "\n".join(f"- {err}" for err in errors)
        await cl.Message(
            content=(
                f"⚠️ **Settings not applied:** {len(errors)} value"
                f"{'s are' if len(errors) > 1 else ' is'} not allowed.\n{listed}\n\n"
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
