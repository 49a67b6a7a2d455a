"""``svc``: the command line, a thin wrapper over :class:`svc_client.Client`.

Output is JSON on stdout (``--table`` for a readable table); errors go to stderr and set the
exit code of their class (see ``EXIT_CODES``). Progress bars appear only on a terminal.
"""

from __future__ import annotations

# Importing the command modules registers their groups on ``cli``.
from . import auth, automation, catalogs, connections, jobs, recipes, workspaces  # noqa: F401
from .app import EXIT_CODES, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, State, cli, exit_code_for, main

__all__ = ["cli", "main", "State", "EXIT_CODES", "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "exit_code_for"]
