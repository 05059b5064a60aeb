"""Host records as the protocol's objects: one mapping, whose field list is the schema's.

A protocol object (a `$defs` type of protocol/empo2-protocol.schema.json) has camelCase fields;
the host's records (a store tip's `to_dict()`, a history entry, a checkpoint's `trainer.json`)
have snake_case keys. Each field of the type is read from the key of the same name in snake_case
(`variationKey` ← `variation_key`) unless RENAMES names another key; a nullable field whose value
is missing or "" travels as null. So a field added to the schema is mapped here without a second
list, and the host's schema-validated tests fail if a record does not carry it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from .protocol import load_schema

# Where a record's key is not the field's name in snake_case.
RENAMES: dict[str, dict[str, str]] = {
    "Tip": {"entries": "n_entries"},
}


def snake_case(name: str) -> str:
    """`variationKey` → `variation_key`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.cache
def _fields(type_name: str) -> tuple[tuple[str, str, bool], ...]:
    """(field, record key, nullable) for every property of the schema type, in schema order."""
    properties = load_schema()["$defs"][type_name]["properties"]
    renames = RENAMES.get(type_name, {})
    return tuple((field, renames.get(field, snake_case(field)), _nullable(spec)) for field, spec in properties.items())


def _nullable(spec: Mapping[str, Any]) -> bool:
    kind = spec.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def to_wire(type_name: str, record: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    """The protocol's `type_name` object of a snake_case record; `fields` (camelCase) are given
    values that do not come from the record (a path, a flag the caller knows)."""
    result: dict[str, Any] = {}
    for field, key, nullable in _fields(type_name):
        if field in fields:
            result[field] = fields[field]
        elif nullable:
            value = record.get(key)
            result[field] = None if value == "" else value
        elif key in record:
            result[field] = record[key]
    return result


def tip_json(tip) -> dict:
    """A store tip (a Tip or its to_dict()) as the protocol's Tip (no history)."""
    return to_wire("Tip", tip if isinstance(tip, Mapping) else tip.to_dict())


def tip_version_json(entry: Mapping[str, Any]) -> dict:
    """One history entry of a tip as the protocol's TipVersion."""
    return to_wire("TipVersion", entry)
