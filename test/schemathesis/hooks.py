"""schemathesis hooks (scripts/schemathesis.ts loads this file through SCHEMATHESIS_HOOKS).

The token operations are fuzzed with a real browser session, so `DELETE /account/tokens/{id}`
really revokes: ids seen in earlier answers (GET /account/tokens lists every token of the user)
are reused as test data, and one of them is the personal access token every other operation of
the run authenticates with. Revoking it would leave the rest of the run nothing but 401s. That
one id is swapped for a well-formed id that names no token (a 404); every other id is revoked.
"""

import os

import schemathesis

OWN_TOKEN_ID = os.environ.get("SCHEMATHESIS_TOKEN_ID")
NO_SUCH_TOKEN = "tok_schemathesisNoSuchId0"


@schemathesis.hook
def map_case(context, case):
    operation = case.operation
    if (
        OWN_TOKEN_ID
        and operation.method.upper() == "DELETE"
        and operation.path.endswith("/account/tokens/{id}")
        and isinstance(case.path_parameters, dict)
        and case.path_parameters.get("id") == OWN_TOKEN_ID
    ):
        case.path_parameters["id"] = NO_SUCH_TOKEN
    return case
