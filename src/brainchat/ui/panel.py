"""The settings panel (cl.ChatSettings): widgets from the session, values back to overrides."""

from __future__ import annotations

from typing import Any

import chainlit as cl
from chainlit.input_widget import NumberInput, Select, Tab, TextInput
from pydantic.dataclasses import dataclass

from brainchat import i18n
from brainchat.session import Session
from brainchat.settings import ConfigError, with_overrides
from brainchat.settings.declared import LimitVars
from brainchat.settings.fields import bounds, extra, number, panel_label
from brainchat.settings.spec import SpecVars
from brainchat.ui.language import CHOICE

ROLES = (  # the role, and the key of its picker's label (brainchat.i18n.settings)
    ("function_call", "settings.role.function_call"),
    ("answer", "settings.role.answer"),
    ("chat", "settings.role.chat"),
)
EXEC_MODES = ("auto", "single_step")
PLAN_MODES = ("off", "auto", "always")
TOOL_CALLING = ("native", "prompt", "auto")
GUIDANCE = ("auto", "minimal", "guided")
STREAMED_CALLS = ("true", "false")
LANGUAGES = ("auto", *i18n.LANGS)  # the Interface language choices (ui/language.CHOICE)
REMOVE_FIELD, KEEP_ALL = "connection_remove", "(keep them all)"
NONE = "(none configured)"
TEMPERATURE = "–".join(number(b) for b in bounds(SpecVars.model_fields["temperature"]))


def items(area: str, values: tuple[str, ...]) -> dict[str, str]:
    """A picker's choices, label (in the current language) -> value."""
    return {i18n.t(f"settings.{area}.{value}"): value for value in values}


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
        Tab(id="models", label=i18n.t("settings.tab.models"), inputs=model_widgets(session)),
        Tab(id="agent", label=i18n.t("settings.tab.agent"), inputs=limit_widgets(session)),
        Tab(
            id="advanced",
            label=i18n.t("settings.tab.advanced"),
            inputs=advanced_widgets(session, custom),
        ),
        Tab(id="interface", label=i18n.t("settings.tab.interface"), inputs=[language_widget()]),
    ]


def chosen_language() -> str:
    """The user's Interface language choice ("auto" when none, or outside a chat)."""
    try:
        value = cl.user_session.get(CHOICE)
    except Exception:  # noqa: BLE001 - no Chainlit context (a test, the CLI)
        value = None
    return str(value) if value in LANGUAGES else "auto"


def language_widget() -> Select:
    """Auto (the browser's language) / English / 简体中文 / 繁體中文; each language by its own name."""
    labels = {"auto": i18n.t("common.language_auto"), **i18n.NAMES}
    return Select(
        id=CHOICE,
        label=i18n.t("common.language"),
        items={labels[value]: value for value in LANGUAGES},
        initial_value=chosen_language(),
        description=i18n.t("settings.language_help"),
    )


def widgets(session: Session, custom: dict[str, str] | None = None) -> list[Any]:
    """Every input of the panel, section after section."""
    return [w for tab in sections(session, custom) for w in tab.inputs]


def model_widgets(session: Session) -> list[Any]:
    """One picker per role: configured models and the models of the user's connections."""
    s = session.settings
    choices = {**session.base_settings.models, **s.models, **session.connection_models()}
    names = list(choices) or [NONE]
    shown = {name: name for name in names} if choices else {i18n.t("settings.none"): NONE}
    out: list[Any] = []
    for role, label in ROLES:
        spec = s.model_for(role)
        current = spec.name if spec else names[0]
        options = shown if current in names else {**shown, current: current}
        out.append(
            Select(id=f"{role}_model", label=i18n.t(label), items=options, initial_value=current)
        )
    out[-1].description = i18n.t("settings.models_help")
    if session.connections:
        have = "; ".join(
            f"{c.name} ({c.shown_url}, {i18n.t('settings.connection_models', count=len(c.models))})"
            for c in session.connections.values()
        )
        out.append(
            Select(
                id=REMOVE_FIELD,
                label=i18n.t("settings.remove"),
                items={
                    i18n.t("settings.keep_all"): KEEP_ALL,
                    **{n: n for n in session.connections},
                },
                initial_value=KEEP_ALL,
                description=i18n.t("settings.your_connections", have=have),
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
            label=i18n.t("settings.field.execution_mode"),
            items=items("exec", EXEC_MODES),
            initial_value=lim.execution_mode,
        ),
        Select(
            id="plan_mode",
            label=i18n.t("settings.plan_label", replans=lim.max_replans),
            items=items("plan", PLAN_MODES),
            initial_value=lim.plan_mode,
        ),
    ]


def range_input(key: str, initial: float) -> RangeInput:
    """A limit's number box: its label, unit and range as declared (settings LimitVars)."""
    field = LimitVars.model_fields[key]
    lo, hi = bounds(field)
    unit = extra(field)["unit"]
    said = i18n.t(f"settings.unit.{unit}") if unit else ""
    name = i18n.t(f"settings.field.{key}")
    return RangeInput(
        id=key,
        label=i18n.t(
            "settings.range_unit" if said else "settings.range",
            name=name,
            unit=said,
            range=f"{number(lo)}–{number(hi)}",
        ),
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
        name = i18n.t(f"settings.name.{role}")
        out += [
            TextInput(
                id=f"{role}_model_custom",
                label=i18n.t("settings.custom_label", name=name),
                initial=custom.get(role, ""),
                placeholder=i18n.t("settings.custom_placeholder"),
            ),
            TextInput(  # text, not a number box: empty must mean "the model's default"
                id=f"{role}_temperature",
                label=i18n.t("settings.temperature_label", name=name, range=TEMPERATURE),
                initial="" if temp is None else f"{temp:g}",
                placeholder=i18n.t("settings.model_default"),
            ),
        ]
    return out


def tool_calling_widgets(spec: Any) -> list[Any]:
    """How the function-call model calls tools, and whether that request is streamed."""
    return [
        Select(
            id="function_call_tool_calling",
            label=i18n.t("settings.tool_calling"),
            items=items("calling", TOOL_CALLING),
            initial_value=spec.tool_calling if spec else "native",
        ),
        Select(
            id="function_call_guidance",
            label=i18n.t("settings.guidance"),
            items=items("guidance", GUIDANCE),
            initial_value=spec.guidance if spec else "auto",
        ),
        Select(
            id="function_call_stream_tool_calls",
            label=i18n.t("settings.stream_calls"),
            items=items("streamed", STREAMED_CALLS),
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
            temp = (
                i18n.t("settings.summary.default")
                if spec.temperature is None
                else f"{spec.temperature:g}"
            )
            calling = ""
            if role == "function_call":
                streamed = "" if spec.stream_tool_calls else i18n.t("settings.summary.not_streamed")
                calling = i18n.t(
                    "settings.summary.calling",
                    how=spec.tool_calling,
                    streamed=streamed,
                    guidance=spec.guidance,
                )
            parts.append(
                i18n.t(
                    "settings.summary.model",
                    role=i18n.t(f"settings.summary.role.{role}"),
                    name=spec.name,
                    temp=temp,
                    calling=calling,
                )
            )
    parts.append(
        i18n.t(
            "settings.summary.limits",
            iterations=lim.max_iterations,
            time=f"{lim.max_execution_time:g}",
            mode=lim.execution_mode.replace("_", "-"),
            plan=lim.plan_mode,
        )
    )
    return "; ".join(parts)


def error_line(err: ConfigError) -> str:
    """A refused value as the panel's message lists it, in the user's language where the error
    says what is allowed in words of its own (settings/fields.py)."""
    if err.said is None or i18n.current() == "en":
        return str(err)
    key, values = err.said
    return i18n.t(
        "settings.bad_value",
        name=field_name(err.variable),
        value=err.value,
        allowed=i18n.t(key, **values),
    )


def field_name(variable: str) -> str:
    """The panel's name for the variable a ConfigError names (a limit's label, a role's field)."""
    for key in ("max_iterations", "max_execution_time", "execution_mode", "plan_mode"):
        if variable == panel_label(LimitVars, key):
            return i18n.t(f"settings.field.{key}")
    role, _, what = variable.partition(" ")
    if role in (r for r, _ in ROLES):
        name = i18n.t(f"settings.name.{role}")
        fields = {
            "temperature": i18n.t("settings.temperature_name", name=name),
            "model": i18n.t("settings.model_name", name=name),
            "tool calling": i18n.t("settings.tool_calling"),
            "guidance": i18n.t("settings.guidance"),
            "streamed tool calls": i18n.t("settings.stream_calls"),
        }
        return fields.get(what, variable)
    return variable


def problems(session: Session, overrides: dict[str, Any]) -> list[ConfigError]:
    """Every bad value, each checked on its own so that all of them are reported at once."""
    found = []
    for key, value in overrides.items():
        try:
            with_overrides(session.base_settings, {key: value}, session.connection_models())
        except ConfigError as exc:
            found.append(exc)
    return found


def take_language(values: dict[str, Any]) -> bool:
    """Keep the Interface language choice (taken out of the values) for this chat's next
    messages; True when it changed (the panel and the mode picker are then sent again)."""
    value = values.pop(CHOICE, None)
    if value not in LANGUAGES or value == chosen_language():
        return False
    cl.user_session.set(CHOICE, value)
    return True


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
        listed = "\n".join(f"- {error_line(err)}" for err in errors)
        key = "settings.not_applied.many" if len(errors) > 1 else "settings.not_applied.one"
        await cl.Message(
            content=i18n.t(key, count=len(errors), listed=listed, summary=summary(session)),
            author="brainchat",
        ).send()
        await send_panel(session, custom)  # put the panel back to the values in force
        return False
    for role, _ in ROLES:  # keep the custom ids so the panel shows them next time
        custom[role] = str(values.get(f"{role}_model_custom") or "").strip()
    await cl.Message(
        content=i18n.t("settings.saved", summary=summary(session)), author="brainchat"
    ).send()
    return True
