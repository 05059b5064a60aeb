"""The wire protocol as the host sees it: the schema file, its error codes, its validators.

protocol/empo2-protocol.schema.json is the single source of truth; this module only reads it.
Error codes are looked up by their schema title (`ProtocolError("RunBusy", ...)`), so a code is
written down once, and the protocol version is the schema's `ProtocolVersion` constant.

Validation failures become one sentence that names the field (`params.filter.returnMin must be a
number`), never jsonschema's own message: that message quotes the offending value, and a fuzzer's
megabyte string must not be echoed back.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

SCHEMA_ENV = "EMPO2_PROTOCOL_SCHEMA"
SCHEMA_NAME = "empo2-protocol.schema.json"


def schema_path() -> Path:
    """The schema file: $EMPO2_PROTOCOL_SCHEMA, else protocol/ of the source tree.

    The host is installed editable from the repository (scripts/setup-host.sh), so the schema is
    found next to the package rather than copied into it (a copy would be a second truth).
    """
    override = os.environ.get(SCHEMA_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[4] / "protocol" / SCHEMA_NAME


@functools.cache
def load_schema() -> dict:
    path = schema_path()
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RuntimeError(f"the protocol schema {path} is missing; set {SCHEMA_ENV} to its path") from None


def protocol_version() -> str:
    return load_schema()["$defs"]["ProtocolVersion"]["const"]


@functools.cache
def param_defaults(name: str) -> dict:
    """What a handler takes for a field its params (the definition `name`) leave out: each
    property's `default` in the schema."""
    properties = load_schema()["$defs"][name]["properties"]
    return {field: p["default"] for field, p in properties.items() if "default" in p}


@functools.cache
def error_codes() -> dict[str, int]:
    """Error name (the schema's title) → code."""
    return {c["title"]: c["const"] for c in load_schema()["$defs"]["ErrorCode"]["oneOf"]}


class ProtocolError(Exception):
    """A JSON-RPC error to send back: a code named in the schema, one sentence, optional data."""

    def __init__(self, name: str, message: str, data: dict | None = None):
        super().__init__(message)
        self.name = name
        self.code = error_codes()[name]  # KeyError here is a bug: a name the schema lacks
        self.message = message
        self.data = data

    def to_error(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def request_methods() -> dict[str, str]:
    """Method name → its `...Request` definition name, from the schema's ClientMessage list."""
    return _methods_listed_in("ClientMessage")


def notification_methods() -> dict[str, str]:
    """Notification method → its `...Notification` definition name."""
    return _methods_listed_in("Notification")


def _methods_listed_in(union: str) -> dict[str, str]:
    """Method → definition name for every message definition the `oneOf` of `union` lists."""
    defs = load_schema()["$defs"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in defs[union]["oneOf"]]
    return {defs[name]["properties"]["method"]["const"]: name for name in names}


class Validators:
    """Compiled validators for `#/$defs/<Name>`, built once per name and shared."""

    def __init__(self, schema: dict | None = None):
        self.schema = schema or load_schema()
        resource = Resource.from_contents(self.schema)
        self.registry = Registry().with_resource(self.schema["$id"], resource)
        self._cache: dict[str, Draft202012Validator] = {}

    def get(self, name: str) -> Draft202012Validator:
        validator = self._cache.get(name)
        if validator is None:
            if name not in self.schema["$defs"]:
                raise KeyError(f"the protocol schema has no definition {name!r}")
            validator = Draft202012Validator({"$ref": f"{self.schema['$id']}#/$defs/{name}"}, registry=self.registry)
            self._cache[name] = validator
        return validator

    def errors(self, name: str, instance) -> list:
        return list(self.get(name).iter_errors(instance))

    def check_params(self, name: str, params: dict) -> None:
        """Raises InvalidParams with one sentence naming the first offending field."""
        error = best_match(self.get(name).iter_errors(params))
        if error is not None:
            field, sentence = describe(error)
            raise ProtocolError("InvalidParams", sentence, {"field": field})


def _field(path) -> str:
    text = "params"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


_TYPE_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def describe(error) -> tuple[str, str]:
    """(field path, one sentence) for a jsonschema error, without quoting the value."""
    # Descend to the most specific cause of a oneOf/anyOf failure when there is one.
    while error.context:
        deeper = best_match(error.context)
        if deeper is None or len(deeper.absolute_path) < len(error.absolute_path):
            break
        error = deeper
    path = list(error.absolute_path)
    field = _field(path)
    kind, spec = error.validator, error.validator_value
    if kind == "required":
        missing = [k for k in spec if isinstance(error.instance, dict) and k not in error.instance]
        name = missing[0] if missing else spec[0]
        field = _field(path + [name])
        return field, f"{field} is required."
    if kind == "additionalProperties" or kind == "unevaluatedProperties":
        known = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in known) if isinstance(error.instance, dict) else []
        name = extra[0] if extra else "?"
        field = _field(path + [name])
        allowed = ", ".join(sorted(known)) or "none"
        return field, f"{field} is not a known field (known: {allowed})."
    if kind == "type":
        kinds = spec if isinstance(spec, list) else [spec]
        return field, f"{field} must be {' or '.join(_TYPE_WORDS.get(k, k) for k in kinds)}."
    if kind in ("enum", "const"):
        options = spec if kind == "enum" else [spec]
        return field, f"{field} must be one of {', '.join(json.dumps(o) for o in options)}."
    if kind == "not":
        together = spec.get("required", []) if isinstance(spec, dict) else []
        if together:
            return field, f"{field} may not give {' and '.join(together)} together."
        return field, f"{field} is not allowed here."
    bounds = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "more than",
        "exclusiveMaximum": "less than",
    }
    if kind in bounds:
        return field, f"{field} must be {bounds[kind]} {spec}."
    if kind in ("minLength", "maxLength", "minItems", "maxItems"):
        unit = "characters" if kind.endswith("Length") else "items"
        side = "at least" if kind.startswith("min") else "at most"
        return field, f"{field} must have {side} {spec} {unit}."
    if kind == "pattern":
        return field, f"{field} does not have the expected form ({spec})."
    if kind in ("oneOf", "anyOf"):
        return field, f"{field} does not match any allowed form."
    return field, f"{field} is invalid ({kind})."


__all__ = [
    "ProtocolError",
    "Validators",
    "load_schema",
    "protocol_version",
    "error_codes",
    "request_methods",
    "notification_methods",
    "describe",
]
