"""The protocol schema: valid, complete, in step with the host's method table and docs, and every
line of every example transcript valid against it."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from empo2.server.methods import METHODS
from empo2.server.transport.fanout import MERGE_FIELDS
from empo2.server.transport.protocol import (
    Validators,
    error_codes,
    load_schema,
    notification_methods,
    param_defaults,
    protocol_version,
    request_methods,
    schema_path,
)

PROTOCOL = schema_path().parent
SERVER = Path(__file__).resolve().parents[1] / "empo2" / "server"
SCHEMA = load_schema()
DEFS = SCHEMA["$defs"]
EXAMPLES = sorted((PROTOCOL / "examples").glob("*.jsonl"))
REJECTED = {"ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams"}


def test_the_schema_is_valid_draft_2020_12_and_every_ref_resolves():
    Draft202012Validator.check_schema(SCHEMA)
    refs = re.findall(r'"\$ref":\s*"([^"]+)"', schema_path().read_text())
    assert refs
    for ref in refs:
        assert ref.startswith("#/$defs/"), ref
        assert ref.split("/")[-1] in DEFS, ref
    assert re.fullmatch(r"\d+\.\d+\.\d+", protocol_version())


def test_every_method_is_declared_once_and_paired_with_params_result_and_handler():
    requests = request_methods()
    table = {m.name: m for m in METHODS}
    assert len(table) == len(METHODS) and set(table) == set(requests)
    for name, request in requests.items():
        stem = request[: -len("Request")]
        assert (
            DEFS[request]["properties"]["params"]["$ref"] == f"#/$defs/{stem}Params" == f"#/$defs/{table[name].params}"
        )
        assert f"{stem}Result" in DEFS
        assert DEFS[f"{stem}Response"]["properties"]["result"]["$ref"] == f"#/$defs/{stem}Result"


def test_every_notification_has_an_event_with_seq_and_merging_knows_its_lists():
    notifications = notification_methods()
    for method, name in notifications.items():
        event = DEFS[name]["properties"]["params"]["$ref"].split("/")[-1]
        assert event.endswith("Event") and "seq" in DEFS[event]["required"], method
    assert set(MERGE_FIELDS) <= set(notifications)
    for method, field in MERGE_FIELDS.items():
        if field != "replace":
            event = DEFS[notifications[method]]["properties"]["params"]["$ref"].split("/")[-1]
            assert DEFS[event]["properties"][field]["type"] == "array", method


def test_error_codes_are_unique_and_every_name_the_host_raises_exists():
    codes = DEFS["ErrorCode"]["oneOf"]
    assert len({c["const"] for c in codes}) == len(codes) == len(error_codes())
    standard = {
        "ParseError": -32700,
        "InvalidRequest": -32600,
        "MethodNotFound": -32601,
        "InvalidParams": -32602,
        "InternalError": -32603,
    }
    assert all(error_codes()[name] == code for name, code in standard.items())
    raised = set()
    for source in SERVER.rglob("*.py"):
        raised |= set(re.findall(r'ProtocolError\(\s*"([A-Za-z]+)"', source.read_text()))
    assert raised and raised <= set(error_codes()), raised - set(error_codes())


def test_update_rerun_defaults_in_the_schema_are_the_ones_the_rerun_applies():
    """What the extension offers (the schema's `default`s) is what RerunSettings applies to a
    param the request leaves out."""
    from empo2.rerun.runner import RerunSettings  # imports torch
    from empo2.server.methods.update import PARAM_FIELDS

    applied = {
        f.name: f.default
        for f in dataclasses.fields(RerunSettings)
        if f.default is not dataclasses.MISSING and f.default is not None
    }
    assert {PARAM_FIELDS[name]: value for name, value in param_defaults("UpdateRerunParams").items()} == applied


def test_the_readme_documents_every_method_notification_and_error():
    readme = (PROTOCOL / "README.md").read_text()
    for name in [*request_methods(), *notification_methods(), *error_codes()]:
        assert f"`{name}`" in readme or f"| {name} |" in readme, name


def transcript(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_there_are_transcripts_for_every_flow():
    assert {p.stem for p in EXAMPLES} >= {"handshake", "run-lifecycle", "browse", "tips", "errors", "resync"}
    used = {
        line["message"].get("method")
        for p in EXAMPLES
        for line in transcript(p)
        if isinstance(line.get("message"), dict) and line["direction"] == "client→host"
    }
    assert set(request_methods()) - {"shutdown"} <= used
    sent = {
        line["message"].get("method")
        for p in EXAMPLES
        for line in transcript(p)
        if isinstance(line.get("message"), dict) and line["direction"] == "host→client"
    }
    assert set(notification_methods()) <= sent


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_line_of_the_example_transcripts_is_valid(path):
    """Host lines against the schema (a response against the ...Response of the request with
    its id on the same connection); client lines too, unless the host rejected them."""
    validators = Validators(SCHEMA)
    responses = {m: r.replace("Request", "Response") for m, r in request_methods().items()}
    lines = transcript(path)
    assert lines
    pending: dict[tuple, dict] = {}
    for number, line in enumerate(lines, 1):
        assert line["direction"] in ("client→host", "host→client"), number
        assert set(line) <= {"direction", "message", "raw", "connection"} and ("message" in line) != ("raw" in line)
        connection = line.get("connection", 1)
        if line["direction"] == "client→host":
            message = line.get("message")
            if isinstance(message, dict) and "id" in message:
                pending[(connection, json.dumps(message["id"]))] = message
            continue
        message = line["message"]
        if isinstance(message, dict) and "id" in message:
            request = pending.pop((connection, json.dumps(message["id"])), None)
            if "error" in message:
                name = "ErrorResponse"
                code = message["error"]["code"]
                if request is not None and code not in {error_codes()[n] for n in REJECTED}:
                    assert not validators.errors("ClientMessage", request), (number, request)
            else:
                assert request is not None, f"line {number}: a response to no request"
                assert not validators.errors("ClientMessage", request), (number, request)
                name = responses[request["method"]]
        else:
            name = "Notification"
        errors = validators.errors(name, message)
        assert not errors, f"{path.name} line {number}: {errors[0].message[:300]}"
    assert not pending, f"requests without a response: {list(pending)[:3]}"
