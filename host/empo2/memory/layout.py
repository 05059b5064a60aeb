"""The files of a memory folder, named once.

Apart from persistence.py, which needs numpy, so that code that only names or copies a memory
folder (branching a run, the idle server) does not load it: the host's ready line waits for every
module the server imports.
"""

EVENTS_FILE = "events.jsonl"
KEYS_FILE = "keys.f32"
