"""The service-account keys the stand-in issues at start: `writer` may do anything, `nobody` nothing, `stranger`'s key is unknown to it."""

import uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .store import PROJECT


def make_key(name):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    public = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    key_id = uuid.uuid4().hex
    email = f"{name}@{PROJECT}.iam.gserviceaccount.com"
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": key_id,
        "private_key": pem,
        "client_email": email,
        "client_id": str(abs(hash(name))),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return info, key_id, public


KEYS = {}  # key id -> (email, public PEM)
ALLOWED = set()  # emails with permission
accounts = {}
for name in ("writer", "nobody", "stranger"):
    info, key_id, public = make_key(name)
    accounts[name] = info
    if name != "stranger":
        KEYS[key_id] = (info["client_email"], public)
ALLOWED.add(accounts["writer"]["client_email"])
