"""brainchat's configuration: environment variables (+ .env) and the settings panel's values.

- declared.py: every variable, once: its type, range, default and help (pydantic models); the
  settings panel's ranges and README's configuration table (table.py) come from there, and
  fields.py checks a raw value against a declared field.
- spec.py: a model spec (JSON) -> ModelSpec, its keys declared the same way.
- load.py: `load_settings` (never raises: problems are in `settings.errors`) and
  `with_overrides` (the panel's values; raises ConfigError, settings unchanged).

Every problem is a `ConfigError` naming the variable, the bad value (masked, or not shown when it
may be a secret) and what is allowed.
"""

from brainchat.settings.errors import ConfigError
from brainchat.settings.load import (
    MODEL_VARS,
    OPERATION_ENV,
    QUOTA_ENV,
    UPLOAD_MAX_ENV,
    AgentLimits,
    Evaluation,
    ExecutionMode,
    Mode,
    PlanMode,
    Settings,
    load_settings,
    read_env,
    with_overrides,
)
from brainchat.settings.spec import (
    DEFAULT_REPLY_TOKENS,
    KEY_AS_MODEL,
    PROVIDERS,
    SPEC_EXAMPLE,
    SPEC_KEYS,
    Guidance,
    ModelSpec,
    ToolCalling,
    parse_model_spec,
    parse_tool_calling,
)

__all__ = [
    "DEFAULT_REPLY_TOKENS",
    "KEY_AS_MODEL",
    "MODEL_VARS",
    "OPERATION_ENV",
    "PROVIDERS",
    "QUOTA_ENV",
    "SPEC_EXAMPLE",
    "SPEC_KEYS",
    "UPLOAD_MAX_ENV",
    "AgentLimits",
    "ConfigError",
    "Evaluation",
    "ExecutionMode",
    "Guidance",
    "Mode",
    "ModelSpec",
    "PlanMode",
    "Settings",
    "ToolCalling",
    "load_settings",
    "parse_model_spec",
    "parse_tool_calling",
    "read_env",
    "with_overrides",
]
