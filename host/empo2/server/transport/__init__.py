"""The server's transport: who may connect (`auth`), one client's connection (`connection`),
from a frame to a handler (`dispatch`), notifications to every client (`fanout`), the wire
protocol's schema and errors (`protocol`), and host records as protocol objects (`wire`).
Nothing here imports the server's runs or methods (host/tests/test_import_graph.py); a client of
the host is `empo2.client`."""
