"""IPv6 addresses that carry an internal IPv4 address are refused.

Python calls ``::127.0.0.1``, ``64:ff9b::7f00:1`` (NAT64), ``2002:7f00:1::1`` (6to4) and
``::ffff:0:7f00:1`` (SIIT) global; a packet to them reaches 127.0.0.1 all the same, so the
receiver's address check unwraps them and judges the IPv4 address inside."""

import ipaddress

import pytest

from webhooks import network
from webhooks.exceptions import WebhookURLError

INTERNAL = ["127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1"]


def _forms(v4: str) -> list[str]:
    """Every IPv6 spelling of ``v4`` that the check must see through."""
    n = int(ipaddress.IPv4Address(v4))
    hi, lo = f"{n >> 16:x}", f"{n & 0xFFFF:x}"
    return [
        f"::{v4}",  # IPv4-compatible
        f"::{hi}:{lo}",
        f"::ffff:{v4}",  # IPv4-mapped
        f"::ffff:{hi}:{lo}",
        f"::ffff:0:{v4}",  # SIIT
        f"::ffff:0:{hi}:{lo}",
        f"64:ff9b::{v4}",  # NAT64, well-known prefix
        f"64:ff9b::{hi}:{lo}",
        f"2002:{hi}:{lo}::1",  # 6to4
        f"2002:{hi}:{lo}:ffff::",
    ]


@pytest.mark.parametrize("address", [form for v4 in INTERNAL for form in _forms(v4)])
def test_an_internal_ipv4_address_inside_ipv6_is_not_public(address, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    assert not network._is_public(address)
    with pytest.raises(WebhookURLError):
        network.resolve(f"http://[{address}]/hook")


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b:1::a00:1",  # NAT64 local-use prefix: the embedding is the operator's
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "::",
        "::1",
        "fe80::1",
        "fc00::1",
        "ff02::1",
    ],
)
def test_other_internal_ipv6_forms_are_refused(address):
    assert not network._is_public(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2606:4700:4700::1111",
    ],
)
def test_public_addresses_stay_accepted(address):
    assert network._is_public(address)


def test_the_embedded_address_is_the_one_judged():
    v6 = ipaddress.IPv6Address
    assert network.embedded_ipv4(v6("64:ff9b::7f00:1")) == ipaddress.IPv4Address("127.0.0.1")
    assert network.embedded_ipv4(v6("2002:7f00:1::1")) == ipaddress.IPv4Address("127.0.0.1")
    assert network.embedded_ipv4(v6("2606:4700:4700::1111")) is None
