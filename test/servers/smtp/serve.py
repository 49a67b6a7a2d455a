"""An SMTP server for the notification suites, on aiosmtpd.

    serve.py PORT MODE CERT KEY USER PASSWORD OUTDIR [TEMPFAIL]

MODE is `starttls` (plain, STARTTLS required before MAIL and AUTH) or `tls` (TLS from the first
byte). AUTH PLAIN/LOGIN accepts only USER/PASSWORD. Each accepted message is written to OUTDIR
as one JSON file (envelope, authenticated user, whether TLS was on, the raw message). The first
TEMPFAIL messages are answered `451` (a greylisting server), so retries can be seen. Prints
`ready` once it listens; stops when its stdin closes.
"""

import email
import email.policy
import json
import os
import ssl
import sys
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, mode, cert, key, user, password, outdir = sys.argv[1:8]
tempfail = int(sys.argv[8]) if len(sys.argv) > 8 else 0
lock = threading.Lock()
state = {"refused": 0, "n": 0}


class Handler:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            if state["refused"] < tempfail:
                state["refused"] += 1
                return "451 4.7.1 Try again later"
            state["n"] += 1
            n = state["n"]
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        body = message.get_body(("plain",))
        record = {
            "subject": str(message["subject"]),
            "headers": {k.lower(): str(v) for k, v in message.items()},
            "text": body.get_content() if body is not None else "",
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "auth_user": (session.auth_data.decode() if isinstance(session.auth_data, bytes) else str(session.auth_data)) if session.authenticated else None,
            "tls": session.ssl is not None,
            "data": envelope.content.decode("utf8", "replace") if isinstance(envelope.content, bytes) else envelope.content,
            "received_at": time.time(),
        }
        path = os.path.join(outdir, f"{n:05d}.json")
        with open(path + ".part", "w") as f:
            json.dump(record, f)
        os.rename(path + ".part", path)
        return "250 OK: queued"


def authenticator(server, session, envelope, mechanism, auth_data):
    if isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password:
        return AuthResult(success=True, auth_data=auth_data.login)
    return AuthResult(success=False, handled=False)


context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)
common = dict(hostname="127.0.0.1", port=int(port), server_hostname="localhost", authenticator=authenticator, auth_require_tls=True)
if mode == "tls":
    controller = Controller(Handler(), ssl_context=context, **common)
else:
    controller = Controller(Handler(), tls_context=context, require_starttls=True, **common)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
