"""Mirrors of a run in the trackers researchers already use: TensorBoard, Weights & Biases, trackio.

`report_to` (config.py) names them; mirror.py follows the run folder in a thread of its own and
sinks.py speaks each tracker's API. metrics.jsonl stays the record (docs/trackers.md).
"""

from .mirror import STATE_FILE, TrackerMirror, mirrored

__all__ = ["mirrored", "TrackerMirror", "STATE_FILE"]
