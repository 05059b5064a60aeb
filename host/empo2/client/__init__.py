"""A client of the host, not a part of it: `host_client.HostClient`, a small synchronous
JSON-RPC client for scripts, benchmarks and tests (the extension has its own, in TypeScript)."""
