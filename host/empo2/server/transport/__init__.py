"""The server's transport: who may connect (`auth`), one client's connection (`connection`),
from a frame to a handler (`dispatch`), notifications to every client (`fanout`), the wire
protocol's schema and errors (`protocol`), host records as protocol objects (`wire`), and a
small synchronous client (`client`). Nothing here imports the server's runs or methods
(host/tests/test_import_graph.py)."""
