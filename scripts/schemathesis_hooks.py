"""Hooks for scripts/schemathesis: how to send an NDJSON body (POST /v1/batch), and a cap on the event feed's long poll."""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return "".join(json.dumps(item) + "\n" for item in value).encode()
    return (json.dumps(value) + "\n").encode()


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    """GET /v1/events long-polls for up to `wait` seconds (0 to 60) when no event is new, which
    passes schemathesis' 30 s request timeout: a wait over one second is sent as one second. The
    wait itself is tested in Swift (EventRouteTests); here the answers' conformance is."""
    if case.path == "/v1/events" and isinstance(case.query, dict):
        wait = case.query.get("wait")
        if isinstance(wait, int) and not isinstance(wait, bool) and wait > 1:
            case.query["wait"] = 1
    return None
