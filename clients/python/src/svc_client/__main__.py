"""``python -m svc_client`` runs the ``svc`` CLI."""

from .cli import main

main()
