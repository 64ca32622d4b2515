"""Which addresses stay on this machine. Light on purpose: the CLI needs it at start-up,
before (or without) loading the MCP or OpenAI SDKs."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

MCP_TOKEN_ENV = "RH_MCP_TOKEN"  # the bearer token of `roundhouse serve` off loopback


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def is_loopback_url(url: str) -> bool:
    return is_loopback_host(urlsplit(url).hostname or "")
