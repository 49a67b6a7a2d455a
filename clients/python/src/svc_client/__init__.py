"""Python client library of the geospatial conversion service (``/api/v1``).

>>> from svc_client import Client
>>> with Client() as svc:               # SVC_URL / SVC_TOKEN, or `svc auth login`
...     ws = svc.workspaces.upload("parcels.gpkg")
"""

from __future__ import annotations

__version__ = "0.1.0"

from .client import Client  # noqa: E402
from .errors import (  # noqa: E402
    AuthenticationError,
    AuthorizationError,
    ConfigError,
    LocalFileExistsError,
    MissingCredentialsError,
    NetworkError,
    NotFoundError,
    ServerError,
    SvcError,
    ValidationError,
    WaitTimeoutError,
)
from .jobs_helpers import (  # noqa: E402
    JOB_BODY_FIELDS,
    STAGES,
    job_body,
    job_pipeline,
    job_write_body,
    pipeline_stages,
    stage_included,
)
from .resources.base import Page  # noqa: E402
from .resources.jobs import FINISHED_STATUSES  # noqa: E402
from .workspaces import Workspace  # noqa: E402

__all__ = [
    "__version__",
    "Client",
    "Workspace",
    "Page",
    "FINISHED_STATUSES",
    "SvcError",
    "AuthenticationError",
    "AuthorizationError",
    "NotFoundError",
    "ValidationError",
    "NetworkError",
    "ServerError",
    "WaitTimeoutError",
    "ConfigError",
    "MissingCredentialsError",
    "LocalFileExistsError",
    "STAGES",
    "pipeline_stages",
    "job_pipeline",
    "stage_included",
    "job_write_body",
    "JOB_BODY_FIELDS",
    "job_body",
]
