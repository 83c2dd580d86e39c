"""Private link tokens at rest: looked up by a hash, kept for a reprint sealed with the site key.

A token is 128 random bits (``new_token``); the database keeps only

- ``token_hash``: its SHA-256, unique, which the phone pages look a link up by. A copy of the
  table (a backup, a leaked dump, a read-only SQL injection) holds no working credential: the hash
  of a 128-bit secret cannot be turned back or guessed.
- ``token_sealed``: the token encrypted with a key derived from ``SECRET_KEY``, so the desk can
  print a card again (a reprint must show the same token: the card already handed out, and a
  sheet still queued on a phone, keep working). Without the key the sealed token is noise.

The seal is ``nonce || token XOR HMAC-SHA256(key, nonce || counter)``, base64url, with a fresh
16-byte nonce each time; the hash checks what is opened, so a wrong key gives ``None``, never a
wrong token. ``SECRET_KEY_FALLBACKS`` open seals made before a key rotation; a seal that no key
opens (every old key dropped) loses the reprint only: the card still works, the desk re-issues it
for a new one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from django.conf import settings

NONCE_BYTES = 16
_SALT = b"scoresheets.PrivateLink.token_sealed"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _key(secret: str) -> bytes:
    return hmac.new(secret.encode(), _SALT, hashlib.sha256).digest()


def _stream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (
        hmac.new(key, nonce + counter.to_bytes(4, "big"), hashlib.sha256).digest()
        for counter in range(-(-length // 32))
    )
    return b"".join(blocks)[:length]


def _xor(data: bytes, stream: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, stream, strict=True))


def seal(token: str, secret: str | None = None) -> str:
    """``token`` encrypted with the site key (``SECRET_KEY`` unless ``secret``)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    data = token.encode()
    key = _key(secret if secret is not None else settings.SECRET_KEY)
    return base64.urlsafe_b64encode(nonce + _xor(data, _stream(key, nonce, len(data)))).decode()


def unseal(sealed: str, hashed: str, secrets_to_try=None) -> str | None:
    """The token of ``sealed`` if one of the site's keys opens it to a token of hash ``hashed``."""
    if not sealed:
        return None
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
    except (ValueError, TypeError):
        return None
    nonce, body = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    if secrets_to_try is None:
        secrets_to_try = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    for secret in secrets_to_try:
        opened = _xor(body, _stream(_key(secret), nonce, len(body)))
        try:
            token = opened.decode()
        except UnicodeDecodeError:
            continue
        if hmac.compare_digest(token_hash(token), hashed):
            return token
    return None
