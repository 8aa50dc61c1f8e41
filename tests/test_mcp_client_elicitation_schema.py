"""The requested schema of an MCP elicitation (#25): what the specification allows becomes a form;
answers are typed and checked against it; secrets stay out of the summary."""

from __future__ import annotations

import pytest

from brainchat.tools.mcp_elicit import (
    BadSchema,
    Form,
    InvalidAnswer,
    Reply,
    parse_schema,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "seen": {"type": "string", "format": "date-time"},
        "mail": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "gain": {"type": "number", "minimum": 0.5},
        "ok": {"type": "boolean", "default": False},
        "band": {"type": "string", "enum": ["mu", "beta"], "enumNames": ["Mu", "Beta"]},
        "side": {"type": "string", "oneOf": [{"const": "C3", "title": "Left"}]},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "apiToken": {"type": "string"},
    },
    "required": ["name", "age"],
}


def form() -> Form:
    return Form(server="s", message="m", fields=parse_schema(SCHEMA))


def test_good_answers_are_typed():
    answers = {
        "name": "Ada",
        "site": "https://example.org/x",
        "born": "1990-01-31",
        "seen": "2026-11-25T08:00:00Z",
        "mail": "ada@example.org",
        "age": "36",
        "gain": "2.5",
        "ok": "yes",
        "band": "Beta",
        "side": "1",
        "tags": "a, b",
        "apiToken": "t0k",
        "unknown": "dropped",
    }
    assert form().validate(answers) == {
        "name": "Ada",
        "site": "https://example.org/x",
        "born": "1990-01-31",
        "seen": "2026-11-25T08:00:00Z",
        "mail": "ada@example.org",
        "age": 36,
        "gain": 2.5,
        "ok": True,
        "band": "beta",
        "side": "C3",
        "tags": ["a", "b"],
        "apiToken": "t0k",
    }


def test_each_broken_rule_is_named_without_the_value():
    answers = {
        "name": "A",
        "site": "not a uri",
        "born": "31/01/1990",
        "seen": "yesterday",
        "mail": "ada@",
        "age": 17.5,
        "gain": "0.1",
        "ok": "maybe",
        "band": "gamma",
        "tags": ["c"],
    }
    with pytest.raises(InvalidAnswer) as caught:
        form().validate(answers)
    errors = caught.value.errors
    assert errors == {
        "name": "must have at least 2 characters",
        "site": "must be a URI (https://example.org/...)",
        "born": "must be a date (YYYY-MM-DD)",
        "seen": "must be a date and time (YYYY-MM-DDTHH:MM:SS)",
        "mail": "must be an email address (name@example.org)",
        "age": "must be a whole number",
        "gain": "must be at least 0.5",
        "ok": "must be yes or no",
        "band": "must be one of: Mu, Beta",
        "tags": "must be one or more of: a, b",
    }
    with pytest.raises(InvalidAnswer) as caught:
        form().validate({"age": True, "gain": "nan"})
    assert caught.value.errors == {
        "name": "is required",
        "age": "must be a number",
        "gain": "must be a finite number",
    }


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ([], "requestedSchema is not an object"),
        ({"type": "array"}, "has type 'array', not 'object'"),
        ({"properties": {"a": {"type": "object"}}}, "property 'a' has type 'object'"),
        ({"properties": {"a": {"type": "string", "format": "ipv4"}}}, "format 'ipv4'"),
        ({"properties": {"a": {"type": "string", "enum": [1, 2]}}}, "options must be"),
        (
            {"properties": {"a": {"type": "string", "enum": ["x"], "enumNames": []}}},
            "enumNames and enum differ",
        ),
        ({"properties": {"a": {"type": "integer", "minimum": "0"}}}, "minimum must be a number"),
        ({"properties": {}, "required": ["b"]}, "required names 'b'"),
        ({"properties": {"a": {"type": "array", "items": {"type": "string"}}}}, "array of any"),
        ({"properties": {str(i): {"type": "string"} for i in range(51)}}, "51 fields"),
    ],
)
def test_schemas_the_specification_forbids_are_refused_with_a_reason(schema, reason):
    with pytest.raises(BadSchema, match=reason.replace("(", r"\(")):
        parse_schema(schema)


def test_the_summary_hides_secret_fields():
    f = form()
    content = f.validate({"name": "Ada", "age": 40, "apiToken": "s3cret-value", "band": "mu"})
    text = f.summary(Reply("accept", content))
    assert text == "you accepted (name: Ada; age: 40; band: mu; apiToken: •••)"
    assert f.summary(Reply("decline")) == "you declined"
    assert [x.name for x in f.fields if x.secret] == ["apiToken"]


def test_a_servers_message_shows_in_the_chat_as_text_not_markup():
    from brainchat.ui.mcp_elicit import quoted

    shown = quoted("Hi ![x](https://evil.example/p.png)\n<img src=x> **now**")
    assert shown == (
        "> Hi \\!\\[x\\]\\(https://evil\\.example/p\\.png\\)\n> \\<img src=x\\> \\*\\*now\\*\\*"
    )
