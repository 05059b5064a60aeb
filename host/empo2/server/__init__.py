"""The host server: EMPO²'s training host behind a versioned JSON-RPC 2.0 protocol on WebSocket.

    EMPO2_HOST_TOKEN=$(openssl rand -hex 32) empo2-host serve --port 0 --run-root .empo2/runs

The protocol is protocol/empo2-protocol.schema.json (flows in protocol/README.md). Modules, one
idea each: `auth` (token and Origin on the upgrade), `connection` (one client: read, admit, answer
in order, send), `dispatch` (envelope → method table → handler), `methods/` (one module per
family), `fanout` (ordered notifications, bounded per-client queues, resync), `run_manager` (the
one training run in a worker thread, run folders, paths), `memory_access` (one writer per tip store),
`wire` (host records as protocol objects), `device` (what the host trains on, found without torch),
`logs` (training logs as notifications), `app` (wiring and shutdown), `main` (the CLI command),
`embedded` (a host in a background thread), `client` (a small synchronous client).
"""
