"""Calling a receiver without being turned against our own network (SSRF).

Only ``http``/``https`` URLs; the host name is resolved once and every address it resolves to
must be public (no loopback, private, link-local, multicast, reserved or unspecified address)
unless ``WEBHOOK_ALLOW_PRIVATE_NETWORKS`` is set. The connection then goes to the address that
was checked (the host name is still sent as ``Host`` and as TLS server name), so a name that
resolves differently a moment later cannot slip through. Redirects are not followed.
"""

import http.client
import ipaddress
import logging
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

from webhooks.exceptions import WebhookURLError

logger = logging.getLogger(__name__)

SCHEMES = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]
    path: str


def _refuse(reason: str) -> WebhookURLError:
    return WebhookURLError(
        _("This address cannot receive webhooks: %(reason)s") % {"reason": reason}
    )


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: mapped (::ffff:0:0/96),
# compatible (::/96, deprecated), SIIT (::ffff:0:0:0/96, RFC 2765) and NAT64's well-known prefix
# (64:ff9b::/96, RFC 6052). A packet to one of them reaches the embedded IPv4 address (through
# the host's own stack or a translator), so that address is the one judged.
_EMBEDDING_LAST_32 = tuple(
    ipaddress.IPv6Network(prefix)
    for prefix in ("::ffff:0:0/96", "::/96", "::ffff:0:0:0/96", "64:ff9b::/96")
)
# NAT64's local-use prefix (RFC 8215) embeds the address where its operator chooses: refused.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, SIIT, NAT64, 6to4), if any."""
    for network in _EMBEDDING_LAST_32:
        if ip in network:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour  # 2002:AABB:CCDD::/48 carries AA.BB.CC.DD


def _is_public(address: str) -> bool:
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64 or ip.teredo is not None:
            return False
        inner = embedded_ipv4(ip)
        if inner is not None:
            ip = inner
    return ip.is_global and not ip.is_multicast


def resolve(url: str) -> Target:
    """The checked address to call for ``url``; ``WebhookURLError`` if it is refused."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise _refuse(_("only http and https URLs are accepted."))
    if parts.username or parts.password:
        raise _refuse(_("credentials in the URL are not accepted."))
    host = parts.hostname
    if not host:
        raise _refuse(_("the URL has no host."))
    try:
        port = parts.port or SCHEMES[scheme]
    except ValueError as error:
        raise _refuse(_("the port is not valid.")) from error
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise _refuse(_("the host name does not resolve.")) from error
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise _refuse(_("the host name does not resolve."))
    if not settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS and not all(map(_is_public, addresses)):
        raise _refuse(_("it is a private, loopback or link-local address."))
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(
        scheme=scheme, host=host, port=port, addresses=tuple(dict.fromkeys(addresses)), path=path
    )


def _connect_to_checked(
    addresses: tuple[str, ...], port: int, timeout: float | None
) -> socket.socket:
    """A socket to the first of the checked addresses that answers."""
    error: OSError = OSError("no address")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout)
        except OSError as failure:
            error = failure
    raise error


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """HTTP to the checked addresses only (never a fresh lookup of the host name)."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._addresses = target.addresses

    def connect(self) -> None:
        self.sock = _connect_to_checked(self._addresses, self.port, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to the checked addresses, verifying the certificate for the URL's host name."""

    def __init__(self, target: Target, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=timeout, context=self._tls)
        self._addresses = target.addresses

    def connect(self) -> None:
        sock = _connect_to_checked(self._addresses, self.port, self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body`` to ``url`` (checked as above); the HTTP status code."""
    target = resolve(url)
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(target, timeout)
    else:
        connection = _PinnedHTTPConnection(target, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)
        return response.status
    finally:
        connection.close()
