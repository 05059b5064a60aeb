"""The host server: EMPO²'s training host behind a versioned JSON-RPC 2.0 protocol on WebSocket.

    EMPO2_HOST_TOKEN=$(openssl rand -hex 32) empo2-host serve --port 0 --run-root .empo2/runs

The protocol is protocol/empo2-protocol.schema.json (flows in protocol/README.md). By feature:
`transport/` (token and Origin, connections, dispatch, fan-out, the schema, wire objects),
`runs/` (the run manager and its live run, followed runs, stored runs, one
writer per tip store), `methods/` (one module per protocol family), the rerun jobs are
`empo2.rerun.jobs`; beside them `device` (what the host trains on, found without torch),
`logs` (training logs as notifications), `debug_sessions` (who owns which debug session),
`settings`, `app` (wiring and shutdown), `main` (the CLI command), `embedded` (a host in a
background thread).
"""
