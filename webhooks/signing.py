"""The signature a receiver checks: HMAC-SHA256 over ``"<timestamp>.<body>"`` with the secret.

The timestamp is signed with the body so an old delivery replayed later fails the receiver's
freshness check; ``docs/webhooks.md`` shows the check in a few lines of Python.
"""

import hashlib
import hmac

SIGNATURE_HEADER = "X-Scopa-Signature"
TIMESTAMP_HEADER = "X-Scopa-Timestamp"
DELIVERY_HEADER = "X-Scopa-Delivery"
EVENT_HEADER = "X-Scopa-Event"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def headers(
    *, secret: str, timestamp: int, body: bytes, delivery_id: str, event: str
) -> dict[str, str]:
    return {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": "scopa-tornei-webhooks/1",
        EVENT_HEADER: event,
        DELIVERY_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret, timestamp, body),
    }
