"""Python client library of the geospatial conversion service (``/api/v1``).

>>> from svc_client import Client
>>> with Client() as svc:               # SVC_URL / SVC_TOKEN, or `svc auth login`
...     ws = svc.workspaces.upload("parcels.gpkg")
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import errors as _errors, jobs_helpers as _jobs_helpers  # noqa: E402
from .client import Client  # noqa: E402
from .errors import *  # noqa: E402,F403  (every exception class)
from .jobs_helpers import *  # noqa: E402,F403  (building Job bodies)
from .resources.base import Page  # noqa: E402
from .resources.jobs import FINISHED_STATUSES  # noqa: E402
from .workspaces import Workspace  # noqa: E402

# The package's names: the client, the exceptions (errors.py) and the Job body helpers
# (jobs_helpers.py), each module's list said once, in that module.
__all__ = [
    "__version__",
    "Client",
    "Workspace",
    "Page",
    "FINISHED_STATUSES",
    *(name for name in _errors.__all__ if name != "error_from_response"),
    *(name for name in _jobs_helpers.__all__ if name != "STAGE_FIELDS"),
]
