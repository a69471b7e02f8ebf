"""How a tablet joins the table: the addresses it can open, and a QR code of the first.

A tablet on the table's Wi-Fi cannot open 127.0.0.1 (that is itself), so a daemon listening on every interface
names the Pi's LAN address and its mDNS `.local` name; one listening on a single address names that one.
"""

from __future__ import annotations

import io
import ipaddress
import socket

import segno

EVERYWHERE = ("0.0.0.0", "::", "")


def lan_address() -> str | None:
    """The address this machine's default route leaves by, or None without a network. (A UDP socket's connect
    sends nothing: it only picks the interface; 192.0.2.1 is a documentation address nobody answers.)"""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address


def urls(host: str, port: int) -> list[str]:
    """The addresses a tablet can open, best first; only loopback ones when the daemon listens there alone."""
    if host not in EVERYWHERE:
        shown = f"[{host}]" if ":" in host else host
        return [f"http://{shown}:{port}"]
    found = []
    address = lan_address()
    if address:
        found.append(f"http://{address}:{port}")
    name = socket.gethostname().split(".")[0]
    if name and name != "localhost":
        found.append(f"http://{name}.local:{port}")
    return found or [f"http://127.0.0.1:{port}"]


def reachable_from_wifi(host: str) -> bool:
    """Whether other machines can reach a daemon listening on `host`."""
    if host in EVERYWHERE:
        return True
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host != "localhost"


def qr_svg(url: str) -> str:
    """A QR code of `url` as an SVG document, dark on white with its quiet zone (phones read it from across a table)."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=8, border=4, dark="#000", light="#fff", xmldecl=False,
                                    title=f"QR code of {url}")
    return out.getvalue().decode()
