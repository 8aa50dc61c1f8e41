"""Configuration parsing: every bad input becomes one clear ConfigError, never a crash or a clamp."""

from __future__ import annotations

import json

import pytest

from brainchat import redact
from brainchat.session import NOT_CONFIGURED, Session
from brainchat.settings import (
    ConfigError,
    ModelSpec,
    load_settings,
    parse_model_spec,
    with_overrides,
)


def spec(**kw: object) -> str:
    return json.dumps(
        {
            "provider": "openai-compatible",
            "model": "m",
            "base_url": "http://127.0.0.1:1/v1",
            "api_key": "k",
            **kw,
        }
    )


def test_full_spec_is_parsed_with_model_name_alias() -> None:
    raw = json.dumps(
        {
            "provider": "deepseek",
            "model_name": "deepseek-chat",
            "temperature": 0.2,
            "max_tokens": 500,
            "timeout": 30,
            "stream_usage": False,
            "input_price": 0.27,
            "output_price": 1.1,
        }
    )
    parsed = parse_model_spec("CHAT_MODEL", raw, {"DEEPSEEK_API_KEY": "sk-ds"})
    assert parsed.model == "deepseek-chat"
    assert parsed.base_url == "https://api.deepseek.com/v1"
    assert parsed.api_key == "sk-ds" and "sk-ds" not in repr(parsed)
    assert parsed.stream_usage is False and parsed.temperature == 0.2
    assert parsed.cost(1_000_000, 1_000_000) == pytest.approx(1.37)


def test_presets_and_key_env() -> None:
    ollama = parse_model_spec("V", {"provider": "ollama", "model": "llama3.1"}, {})
    assert ollama.base_url == "http://localhost:11434/v1"
    custom = parse_model_spec(
        "V",
        {
            "provider": "openai-compatible",
            "model": "x",
            "base_url": "http://h:1/v1",
            "api_key_env": "MY_KEY",
        },
        {"MY_KEY": "s"},
    )
    assert custom.api_key == "s"


@pytest.mark.parametrize(
    ("env", "variable", "fragment"),
    [
        ({"CHAT_MODEL": '{"model": "x",'}, "CHAT_MODEL", "broken JSON"),
        (
            {"CHAT_MODEL": spec(provider="acme")},
            "CHAT_MODEL.provider",
            "allowed: openai, deepseek, ollama",
        ),
        (
            {"CHAT_MODEL": '{"provider": "openai", "model": "gpt-4o"}'},
            "CHAT_MODEL.api_key",
            "OPENAI_API_KEY",
        ),
        ({"CHAT_MODEL": spec(temperature=3)}, "CHAT_MODEL.temperature", "0 to 2"),
        ({"CHAT_MODEL": spec(base_url="ftp://x")}, "CHAT_MODEL.base_url", "http://"),
        ({"CHAT_MODEL": spec(colour="red")}, "CHAT_MODEL.colour", "known keys"),
        ({"CHAT_MODEL": spec(model="")}, "CHAT_MODEL.model", "model name is required"),
        ({"AGENT_MAX_ITERATIONS": "31"}, "AGENT_MAX_ITERATIONS", "1 to 30"),
        ({"AGENT_MAX_ITERATIONS": "five"}, "AGENT_MAX_ITERATIONS", "expected a int"),
        ({"AGENT_MAX_EXECUTION_TIME": "5"}, "AGENT_MAX_EXECUTION_TIME", "10 to 300"),
        ({"DEFAULT_MODE": "turbo"}, "DEFAULT_MODE", "chat, agent"),
        ({"AGENT_VERBOSE": "maybe"}, "AGENT_VERBOSE", "true or false"),
        (
            {"AGENT_FUNCTION_CALL_MODEL": spec(tool_calling="json")},
            "AGENT_FUNCTION_CALL_MODEL.tool_calling",
            "allowed: native",
        ),
        (
            {"AGENT_FUNCTION_CALL_MODEL": spec(stream_tool_calls="sometimes")},
            "AGENT_FUNCTION_CALL_MODEL.stream_tool_calls",
            "true or false",
        ),
        ({"BRAINCHAT_UPLOAD_MAX_MB": "0"}, "BRAINCHAT_UPLOAD_MAX_MB", "1 to 100000"),
        ({"BRAINCHAT_UPLOAD_MAX_MB": "big"}, "BRAINCHAT_UPLOAD_MAX_MB", "expected a int"),
    ],
)
def test_bad_values_name_variable_value_and_allowed(
    env: dict[str, str], variable: str, fragment: str
) -> None:
    settings = load_settings({"OPENAI_API_KEY": "", **env}, dotenv=False)
    assert len(settings.errors) == 1, settings.errors
    err = settings.errors[0]
    assert err.variable == variable
    assert fragment in str(err)
    assert Session(settings).config_problem() and variable in Session(settings).config_problem()


@pytest.mark.parametrize(
    ("window", "max_tokens", "ok"), [(4096, 8192, False), (4096, 2049, False), (4096, 2048, True)]
)
def test_max_tokens_must_leave_half_the_window_for_input(
    window: int, max_tokens: int, ok: bool
) -> None:
    # input + max_tokens must fit the window: a reply allowed most of it leaves no room to ask
    settings = load_settings(
        {"CHAT_MODEL": spec(context_window=window, max_tokens=max_tokens)}, dotenv=False
    )
    if ok:
        assert settings.errors == () and settings.chat_model.max_tokens == max_tokens
        return
    assert len(settings.errors) == 1, settings.errors
    err = settings.errors[0]
    assert err.variable == "CHAT_MODEL.max_tokens"
    assert f"{max_tokens}" in str(err) and "4,096" in str(err) and "at most 2,048" in str(err)


def test_a_max_tokens_over_the_default_window_says_the_window_was_not_set() -> None:
    """max_tokens 16,384 on a 128k model whose spec gives no context_window: the user must learn
    that the 16,000 default is what refused it, and how to state the model's window."""
    settings = load_settings({"CHAT_MODEL": spec(max_tokens=16384)}, dotenv=False)
    (err,) = settings.errors
    assert "16,000 tokens, the default when the spec sets none" in str(err)
    assert "set context_window" in str(err)


def test_out_of_range_is_refused_not_clamped() -> None:
    settings = load_settings({"AGENT_MAX_ITERATIONS": "0"}, dotenv=False)
    assert settings.limits.max_iterations == 10  # the default stays; the error is reported
    assert settings.errors


def test_defaults_and_roles() -> None:
    settings = load_settings({"AGENT_FUNCTION_CALL_MODEL": spec(model="fc")}, dotenv=False)
    assert settings.errors == ()
    assert settings.limits.max_iterations == 10 and settings.limits.max_execution_time == 60
    assert settings.model_for("answer").model == "fc"  # one model plays both roles
    assert settings.default_mode == "chat"


def test_openai_key_alone_gives_a_default_model() -> None:
    settings = load_settings(
        {"OPENAI_API_KEY": "sk-x", "OPENAI_MODEL": "gpt-4.1-mini"}, dotenv=False
    )
    assert settings.chat_model is not None and settings.chat_model.model == "gpt-4.1-mini"
    assert settings.chat_model.base_url == "https://api.openai.com/v1"


def test_nothing_configured_says_what_to_set() -> None:
    settings = load_settings({}, dotenv=False)
    assert not settings.configured and settings.errors == ()
    assert Session(settings).config_problem() == NOT_CONFIGURED
    assert "CHAT_MODEL" in NOT_CONFIGURED and "OPENAI_API_KEY" in NOT_CONFIGURED


def test_dotenv_is_read(tmp_path, monkeypatch) -> None:
    (tmp_path / ".env").write_text(f"CHAT_MODEL='{spec(model='from-dotenv')}'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHAT_MODEL", raising=False)
    assert load_settings().chat_model.model == "from-dotenv"


def test_ui_overrides_refuse_bad_values_and_keep_previous() -> None:
    base = load_settings(
        {"AGENT_FUNCTION_CALL_MODEL": spec(model="fc"), "AGENT_ANSWER_MODEL": spec(model="ans")},
        dotenv=False,
    )
    session = Session(base)
    session.apply_settings(
        {"max_iterations": 3, "answer_model": "other-model", "answer_temperature": 0.5}
    )
    assert session.settings.limits.max_iterations == 3
    assert session.settings.model_for("answer").model == "other-model"
    assert session.settings.model_for("answer").temperature == 0.5
    with pytest.raises(ConfigError, match="Max iterations"):
        session.apply_settings({"max_iterations": 42})
    assert session.settings.limits.max_iterations == 3  # previous valid settings stay
    with pytest.raises(ConfigError):
        with_overrides(base, {"execution_mode": "turbo"})


def test_key_never_in_error_text() -> None:
    settings = load_settings(
        {"CHAT_MODEL": spec(api_key="sk-secret-123", temperature=9)}, dotenv=False
    )
    assert "sk-secret-123" not in str(settings.errors[0])


def test_model_spec_repr_hides_key() -> None:
    assert "sekrit" not in repr(ModelSpec(model="m", api_key="sekrit"))


def test_tool_calling_and_streamed_calls_per_model() -> None:
    settings = load_settings(
        {
            "AGENT_FUNCTION_CALL_MODEL": spec(
                model="small", tool_calling="Prompt", stream_tool_calls=False
            ),
            "AGENT_ANSWER_MODEL": spec(model="ans"),
        },
        dotenv=False,
    )
    assert settings.errors == ()
    fc = settings.model_for("function_call")
    assert (fc.tool_calling, fc.stream_tool_calls) == ("prompt", False)
    ans = settings.model_for("answer")
    assert (ans.tool_calling, ans.stream_tool_calls) == ("native", True)  # the defaults
    session = Session(settings)
    session.apply_settings(
        {"function_call_tool_calling": "auto", "function_call_stream_tool_calls": "true"}
    )
    fc = session.settings.model_for("function_call")
    assert (fc.model, fc.tool_calling, fc.stream_tool_calls) == ("small", "auto", True)
    with pytest.raises(ConfigError, match="function_call tool calling"):
        session.apply_settings({"function_call_tool_calling": "xml"})
    assert session.settings.model_for("function_call").tool_calling == "auto"


def test_settings_panel_offers_tool_calling_for_the_function_call_model() -> None:
    from brainchat.ui import panel

    settings = load_settings({"AGENT_FUNCTION_CALL_MODEL": spec(model="fc")}, dotenv=False)
    session = Session(settings)
    inputs = {w.id: w for w in panel.widgets(session)}
    choice = inputs["function_call_tool_calling"]
    assert set(choice.items.values()) == {"native", "prompt", "auto"}
    assert choice.initial_value == "native"
    assert inputs["function_call_stream_tool_calls"].initial_value == "true"
    values = {
        "function_call_model": "fc",
        "function_call_tool_calling": "prompt",
        "function_call_stream_tool_calls": "false",
    }
    overrides = panel.overrides_from(values)
    assert panel.problems(session, overrides) == []
    session.apply_settings(overrides)
    fc = session.settings.model_for("function_call")
    assert (fc.tool_calling, fc.stream_tool_calls) == ("prompt", False)
    assert "tool calling prompt, not streamed" in panel.summary(session)
    again = {w.id: w for w in panel.widgets(session)}
    assert again["function_call_tool_calling"].initial_value == "prompt"


NUMERIC_FIELDS = (
    "temperature",
    "max_tokens",
    "timeout",
    "max_retries",
    "input_price",
    "output_price",
    "context_window",
)


@pytest.mark.parametrize("field", NUMERIC_FIELDS)
@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_an_infinite_or_nan_number_is_one_config_error_not_a_crash(field, number) -> None:
    # raw JSON text: Python's json reads 1e999 as inf and NaN as nan, and int(inf) overflows
    raw = spec()[:-1] + f', "{field}": {number}}}'
    settings = load_settings({"CHAT_MODEL": raw}, dotenv=False)
    assert settings.chat_model is None
    assert [e.variable for e in settings.errors] == [f"CHAT_MODEL.{field}"]
    assert "expected" in str(settings.errors[0]) or "range" in str(settings.errors[0])


@pytest.mark.parametrize("number", ["1e999", "-1e999", "nan", "inf"])
def test_an_infinite_or_nan_environment_number_is_a_config_error(number) -> None:
    settings = load_settings(
        {"AGENT_MAX_EXECUTION_TIME": number, "AGENT_MAX_ITERATIONS": number}, dotenv=False
    )
    assert {e.variable for e in settings.errors} == {
        "AGENT_MAX_EXECUTION_TIME",
        "AGENT_MAX_ITERATIONS",
    }
    assert settings.limits.max_execution_time == 60.0 and settings.limits.max_iterations == 10


@pytest.mark.parametrize("value", [12345678901234, ["sk-a", "sk-b"], {"k": "v"}, True])
def test_an_api_key_that_is_not_a_string_is_refused_without_showing_it(value) -> None:
    with pytest.raises(ConfigError) as err:
        parse_model_spec("CHAT_MODEL", spec(api_key=value), {})
    assert err.value.variable == "CHAT_MODEL.api_key" and "string" in str(err.value)
    assert "12345678901234" not in str(err.value) and "sk-a" not in str(err.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("label", 5),
        ("label", ["a"]),
        ("prompt_variant", 5),
        ("prompt_variant", "../../etc/passwd"),
        ("prompt_variant", "short/../x"),
        ("base_url", "http://"),
        ("base_url", "http://h/v1 extra"),
        ("base_url", "http://h:notaport/v1"),
        ("base_url", 8000),
        ("base_url", "ftp://h/v1"),
    ],
)
def test_a_spec_field_of_the_wrong_type_or_shape_names_the_field(field, value) -> None:
    with pytest.raises(ConfigError) as err:
        parse_model_spec("CHAT_MODEL", spec(**{field: value}), {})
    assert err.value.variable == f"CHAT_MODEL.{field}"


def test_a_safe_prompt_variant_and_label_are_kept() -> None:
    parsed = parse_model_spec("CHAT_MODEL", spec(prompt_variant="short_v-2", label="Lab"), {})
    assert parsed.prompt_variant == "short_v-2" and parsed.name == "Lab"


@pytest.mark.parametrize("raw", ['["gpt-4o-mini"]', '"gpt-4o-mini"', "[gpt-4o]", "gpt{4}"])
def test_a_json_array_or_string_is_not_taken_as_a_bare_model_name(raw) -> None:
    settings = load_settings({"CHAT_MODEL": raw}, dotenv=False)
    assert settings.chat_model is None and [e.variable for e in settings.errors] == ["CHAT_MODEL"]


@pytest.mark.parametrize("pasted", ["violet-harbor-42", "my key 123", "abc.def"])
def test_a_key_pasted_into_api_key_env_is_not_echoed(pasted) -> None:
    raw = json.dumps({"provider": "openai", "model": "gpt-4o-mini", "api_key_env": pasted})
    settings = load_settings({"CHAT_MODEL": raw}, dotenv=False)
    [error] = settings.errors
    assert error.variable == "CHAT_MODEL.api_key_env" and pasted not in str(error)
    assert "name of an environment variable" in str(error)


def test_an_unset_api_key_env_with_a_valid_name_is_named() -> None:
    raw = json.dumps({"provider": "openai", "model": "gpt-4o-mini", "api_key_env": "lab_key_2"})
    [error] = load_settings({"CHAT_MODEL": raw}, dotenv=False).errors
    assert error.variable == "CHAT_MODEL.api_key" and "lab_key_2" in str(error)


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"OPENAI_API_KEY": "plain-default-key-31"}, "plain-default-key-31"),
        (
            {
                "CHAT_MODEL": json.dumps({"model": "m", "api_key_env": "LAB_KEY"}),
                "LAB_KEY": "plain-named-key-32",
            },
            "plain-named-key-32",
        ),
        (
            {"CHAT_MODEL": json.dumps({"provider": "deepseek", "model": "deepseek-chat"})}
            | {"DEEPSEEK_API_KEY": "plain-provider-key-33"},
            "plain-provider-key-33",
        ),
    ],
)
def test_a_key_from_the_environment_is_masked_from_then_on(env, key) -> None:
    settings = load_settings(env, dotenv=False)
    assert settings.errors == () and settings.chat_model is not None
    assert key not in redact.mask(f"server said: key {key} is not allowed")


def test_settings_panel_sets_the_function_call_models_guidance() -> None:
    """The guidance level (auto, minimal, guided) is the user's to set per function-call model;
    an unknown level is refused with the allowed ones and changes nothing."""
    from brainchat.ui import panel

    settings = load_settings({"AGENT_FUNCTION_CALL_MODEL": spec(model="fc")}, dotenv=False)
    session = Session(settings)
    inputs = {w.id: w for w in panel.widgets(session)}
    assert set(inputs["function_call_guidance"].items.values()) == {"auto", "minimal", "guided"}
    assert inputs["function_call_guidance"].initial_value == "auto"
    overrides = panel.overrides_from({"function_call_model": "fc", "function_call_guidance": "guided"})  # fmt: skip
    assert panel.problems(session, overrides) == []
    session.apply_settings(overrides)
    assert session.settings.model_for("function_call").guidance == "guided"
    assert "guidance guided" in panel.summary(session)
    assert {w.id: w for w in panel.widgets(session)}["function_call_guidance"].initial_value == "guided"  # fmt: skip
    with pytest.raises(ConfigError, match="guidance"):
        session.apply_settings({"function_call_guidance": "strict"})
    assert session.settings.model_for("function_call").guidance == "guided"
