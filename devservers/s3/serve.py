"""
An S3 API for the connector suites: moto's server on loopback, with IAM authentication switched
on, so wrong keys are refused like AWS refuses them. Prints one JSON line (port and the keys of
two users: one may use S3, one may not), then serves until stdin closes (the suite ended).

Usage: serve.py PORT [ADDRESS]   (ADDRESS: where to listen, 127.0.0.1 unless given)
"""
import json
import os
import sys

# Requests skip authentication this many times, then every request is checked: exactly the
# setup calls below (create two users, one policy, two access keys).
SETUP_CALLS = 5
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_CALLS)
os.environ.setdefault("MOTO_ALLOW_NONEXISTENT_REGION", "true")

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

port = int(sys.argv[1])
address = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
server = ThreadedMotoServer(ip_address=address, port=port, verbose=False)
server.start()

iam = boto3.client(
    "iam",
    endpoint_url=f"http://{address}:{port}",
    region_name="us-east-1",
    aws_access_key_id="setup",
    aws_secret_access_key="setup",
)
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.create_user(UserName="writer")
iam.put_user_policy(UserName="writer", PolicyName="s3", PolicyDocument=json.dumps(policy))
writer = iam.create_access_key(UserName="writer")["AccessKey"]
iam.create_user(UserName="nobody")
nobody = iam.create_access_key(UserName="nobody")["AccessKey"]

print(
    json.dumps(
        {
            "port": port,
            "writer": {"access_key": writer["AccessKeyId"], "secret_key": writer["SecretAccessKey"]},
            "nobody": {"access_key": nobody["AccessKeyId"], "secret_key": nobody["SecretAccessKey"]},
        }
    ),
    flush=True,
)
sys.stdin.read()
server.stop()
