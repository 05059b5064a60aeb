"""How the command line tells a user's mistake from a fault: the one sentence each prints."""

from __future__ import annotations

import sys

from ..config import ConfigError

EXIT_USAGE = 2


class UserError(Exception):
    """Something the user can fix; its message is the one sentence they see."""


# User errors raised by modules that import torch: named, not imported, so that a mistake in a
# config is reported before (and without) the seconds torch takes to load. An error of one of
# these classes can only come from its module, which is then loaded already.
LATE_USER_ERRORS = (
    ("empo2.policy.model", "PolicyLoadError"),
    ("empo2.run_folder.folder", "RunFolderError"),
    ("empo2.export.plain", "ExportError"),
    ("empo2.training.plan", "PlanError"),
    ("empo2.envs.plugin", "EnvironmentFault"),
)


def is_user_error(err: Exception) -> bool:
    if isinstance(err, (UserError, ConfigError, FileNotFoundError, NotADirectoryError, PermissionError)):
        return True
    return any(
        isinstance(err, getattr(sys.modules[module], name))
        for module, name in LATE_USER_ERRORS
        if module in sys.modules
    )
