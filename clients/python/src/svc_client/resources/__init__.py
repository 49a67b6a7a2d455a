"""Collection attributes of :class:`svc_client.Client`."""
