"""Go's ``net/url.Parse``, as far as the platform chart's ``urlParse`` needs it: the host it returns
and, byte for byte, the error it fails with (Sprig wraps it: ``error calling urlParse: unable to
parse url: parse "<url>": <error>``).

One parser for the chart model (PLT-13) and the Hubble feature (``hubble.ownership: own`` rebuilds
``cilium.k8sServiceHost`` from the same endpoint), so the two never disagree. Reproduced from the Go
standard library's documented behaviour (``net/url``: ``Parse``, ``getScheme``, ``parseAuthority``,
``parseHost``, ``validOptionalPort``, ``unescape``, ``shouldEscape``); checked against real helm in
``tests/platform_chart/test_model.py``.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from typing import NamedTuple


class GoURL(NamedTuple):
    host: str
    error: str | None  # Go's error text after `parse "<url>": `, or None when it parses


def _quote(value: str) -> str:
    from renderer.platform_chart.gotemplate import go_quote

    return go_quote(value)


def parse(raw: str) -> GoURL:
    """``url.Parse(raw)``: the host, or the error Go returns."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return GoURL("", "net/url: invalid control character in URL")
    text, _, fragment = raw.partition("#")
    found = _parse(text)
    if found.error is None and fragment:
        bad = _unescape_error(fragment, "fragment")
        if bad:
            return GoURL("", bad)
    return found


def _parse(raw: str) -> GoURL:
    if raw == "*":
        return GoURL("", None)
    scheme, rest, error = _scheme(raw)
    if error:
        return GoURL("", error)
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]  # RawQuery is kept as written: Parse does not validate it
    if not rest.startswith("/"):
        if scheme:
            return GoURL("", None)  # opaque ("api.example.org:6443": scheme api.example.org, no host)
        colon, first_slash = rest.find(":"), rest.find("/")
        if colon >= 0 and (first_slash < 0 or colon < first_slash):
            return GoURL("", "first path segment in URL cannot contain colon")
    host = ""
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, rest = rest[2:].partition("/")
        rest = slash + rest
        host, error = _authority(authority)
        if error:
            return GoURL("", error)
    bad = _unescape_error(rest, "path")
    return GoURL(host, bad) if bad else GoURL(host, None)


def _scheme(raw: str) -> tuple[str, str, str | None]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw, None
            continue
        if c == ":":
            if i == 0:
                return "", "", "missing protocol scheme"
            return raw[:i].lower(), raw[i + 1:], None
        return "", raw, None  # an invalid character before any ":": no scheme at all
    return "", raw, None


_USERINFO_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@")


def _authority(authority: str) -> tuple[str, str | None]:
    at = authority.rfind("@")
    host_part = authority[at + 1:] if at >= 0 else authority
    if at >= 0 and any(c not in _USERINFO_OK for c in authority[:at] if c.isascii()):
        return "", "net/url: invalid userinfo"
    return _host(host_part)


def _host(host: str) -> tuple[str, str | None]:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            return "", "missing ']' in host"
        port = host[end + 1:]
        if not _valid_optional_port(port):
            return "", f"invalid port {_quote(port)} after host"
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_optional_port(host[colon:]):
            return "", f"invalid port {_quote(host[colon:])} after host"
    bad = _unescape_error(host, "host")
    if bad is not None:
        return "", bad
    from urllib.parse import unquote

    return unquote(host, errors="surrogateescape"), None  # url.Host is the unescaped host


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port.startswith(":") and all("0" <= c <= "9" for c in port[1:]))


_HEX = set("0123456789abcdefABCDEF")
# shouldEscape(c, encodeHost) is false for these ASCII characters (RFC 3986 sub-delims, the IPv6 and
# port separators, and the characters Go lets through for cgo hosts).
_HOST_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$&'()*+,;=:[]<>\"")


def _unescape_error(text: str, mode: str) -> str | None:
    """The error ``unescape(text, mode)`` returns: a bad ``%`` escape, or (host) a character a host
    may not hold."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            chunk = text[i:i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                return f"invalid URL escape {_quote(chunk)}"
            if mode == "host" and int(chunk[1], 16) < 8 and chunk != "%25":
                return f"invalid URL escape {_quote(chunk)}"
            i += 3
            continue
        if mode == "host" and c.isascii() and c not in _HOST_OK:
            return f"invalid character {_quote(c)} in host name"
        i += 1
    return None
