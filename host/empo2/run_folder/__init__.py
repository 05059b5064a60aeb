"""The run folder: everything a run produces, and the source of truth for every reader
(`folder.py`; docs/run-folder.md has the record formats). It writes through the crash-safe kit
(`empo2/atomic.py`) and imports nothing else of the package."""
