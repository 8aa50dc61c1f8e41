"""Which addresses the server may reach for a user: the guard against server-side request forgery.

A base URL a user types (a model connection, an MCP server from the plug button) makes the server
send requests, so with accounts it must not reach what only the server can: loopback, the lab's
private network, the cloud's metadata address (169.254.169.254). `Policy` says what is open: with
accounts, public addresses, plus the hosts and networks the operator lists in
BRAINCHAT_CONNECTION_ALLOW; the local user (no login) may reach anything, as Ollama users need.

The check runs where the connection is made, not on the URL's text: `GuardedBackend` resolves the
host, refuses unless every address it resolves to is open, and connects to the address it checked
(so a name re-pointed between the check and the connect, DNS rebinding, cannot switch it), on
every new connection of every request. Spellings of an address (0x7f000001, 127.1, [::ffff:...])
are resolved before they are judged. The refusal says the same for every closed address, whether
or not anything listens there, and no connection is attempted. No Chainlit here.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from brainchat.redact import get_logger, show

ALLOW_ENV = "BRAINCHAT_CONNECTION_ALLOW"
log = get_logger("brainchat.netguard")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]  # (host, port) -> IP addresses; blocking
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """A user's URL points at an address the policy keeps closed; the message says so, the same
    for every closed address (it never tells whether something listens there)."""

    def __init__(self, host: str) -> None:
        self.host = host
        super().__init__(
            f"{host} is not a public internet address (or does not resolve to one only): servers "
            "that users add must be on the internet; an internal model server can be opened by "
            f"the operator in {ALLOW_ENV}"
        )


def public(address: Address) -> bool:
    """An address on the public internet: not loopback, private, link-local, CGNAT, multicast,
    reserved or documentation, nor an IPv6 form that embeds such an IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address):
        teredo = address.teredo
        embedded = address.ipv4_mapped or address.sixtofour or (teredo[1] if teredo else None)
        if embedded is None and address in NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and not public(embedded):
            return False
        if address.is_site_local:
            return False
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


@dataclass(frozen=True)
class Policy:
    """What a user's connection may reach. `anywhere`: the local user (no accounts)."""

    anywhere: bool = False
    hosts: frozenset[str] = frozenset()  # names the operator opened (any address they resolve to)
    networks: tuple[Network, ...] = ()  # addresses the operator opened (under any name)

    def allows(self, host: str, address: Address) -> bool:
        if self.anywhere or _host_key(host) in self.hosts or public(address):
            return True
        mapped = getattr(address, "ipv4_mapped", None)
        return any(a in net for a in (address, mapped) if a is not None for net in self.networks)


def _host_key(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def parse_allow(value: str | None) -> tuple[frozenset[str], tuple[Network, ...], list[str]]:
    """BRAINCHAT_CONNECTION_ALLOW's hosts and networks, and one error line per bad entry."""
    hosts: set[str] = set()
    networks: list[Network] = []
    errors: list[str] = []
    for entry in (value or "").split(","):
        if not (entry := entry.strip()):
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        name = _host_key(entry)
        if (
            name
            and all(part and len(part) < 64 for part in name.split("."))
            and all(c.isalnum() or c in "-." for c in name)
        ):
            hosts.add(name)
        else:
            errors.append(
                f"{ALLOW_ENV}: {show(entry, 60)} is neither a host name nor an address or CIDR "
                "network; list e.g. 'gpu-box.lab, 10.0.0.5, 192.168.10.0/24', comma-separated "
                "(no scheme, port or path); it is ignored"
            )
    return frozenset(hosts), tuple(networks), errors


def policy_from(env: Mapping[str, str], *, accounts: bool) -> Policy:
    """The policy of an app with accounts (or the local user), logging bad allow entries."""
    hosts, networks, errors = parse_allow(env.get(ALLOW_ENV))
    for error in errors:
        log.error("configuration: %s", error)
    return Policy(anywhere=not accounts, hosts=hosts, networks=networks)


# The process's policy. A process that never sets one has no accounts (`brainchat ask`, a
# headless Session): its one user may reach anything, like the app's local user.
_ACTIVE: list[Policy] = [Policy(anywhere=True)]


def configure(policy: Policy) -> None:
    _ACTIVE[0] = policy


def active() -> Policy:
    return _ACTIVE[0]


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Guard:
    """A policy with its resolver (a test gives its own)."""

    policy: Policy
    resolve: Resolver = system_resolver

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses `host` resolves to, every one open, or AddressRefused (blocking)."""
        key = _host_key(host)
        try:
            found = [key] if _literal(key) else self.resolve(key, port)
            parsed = [ipaddress.ip_address(a.split("%")[0]) for a in found]
        except (OSError, ValueError, UnicodeError):
            if self.policy.anywhere or key in self.policy.hosts:
                raise
            raise AddressRefused(host) from None  # an unknown name reads as a closed one
        if not parsed or not all(self.policy.allows(key, a) for a in parsed):
            raise AddressRefused(host)
        return found

    async def addresses_async(self, host: str, port: int) -> list[str]:
        if _literal(_host_key(host)):
            return self.addresses(host, port)
        return await asyncio.to_thread(self.addresses, host, port)

    def check_url(self, url: str) -> None:
        """AddressRefused unless the URL's host is open (blocking: resolves)."""
        host, port = _host_port(url)
        self.addresses(host, port)

    async def check_url_async(self, url: str) -> None:
        host, port = _host_port(url)
        await self.addresses_async(host, port)


def current() -> Guard:
    return Guard(active())


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _host_port(url: str) -> tuple[str, int]:
    import httpx

    parsed = httpx.URL(url)
    return parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)


def refused(exc: BaseException) -> AddressRefused | None:
    """The AddressRefused behind an HTTP client's error (httpx and openai wrap it), if any."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, AddressRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _connect_error(exc: Exception) -> Exception:
    """The error httpx expects from a backend (it maps it to httpx.ConnectError), caused by exc."""
    import httpcore

    error = httpcore.ConnectError(str(exc))
    error.__cause__ = exc
    return error


class GuardedBackend:
    """An httpcore network backend that connects only to addresses the guard opened, pinned."""

    def __init__(self, inner: Any, guard: Guard) -> None:
        self.inner, self.guard = inner, guard

    async def connect_tcp(self, host: str, port: int, **kwargs: Any) -> Any:
        try:
            addresses = await self.guard.addresses_async(host, port)
        except (AddressRefused, OSError, ValueError, UnicodeError) as exc:  # refused, or no DNS
            raise _connect_error(exc) from exc
        for i, address in enumerate(addresses):
            try:
                return await self.inner.connect_tcp(address, port, **kwargs)
            except Exception:
                if i == len(addresses) - 1:
                    raise
        raise AssertionError("unreachable: addresses is never empty")

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise _connect_error(AddressRefused("a unix socket"))

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class SyncGuardedBackend:
    """GuardedBackend for httpx's blocking client."""

    def __init__(self, inner: Any, guard: Guard) -> None:
        self.inner, self.guard = inner, guard

    def connect_tcp(self, host: str, port: int, **kwargs: Any) -> Any:
        try:
            addresses = self.guard.addresses(host, port)
        except (AddressRefused, OSError, ValueError, UnicodeError) as exc:
            raise _connect_error(exc) from exc
        for i, address in enumerate(addresses):
            try:
                return self.inner.connect_tcp(address, port, **kwargs)
            except Exception:
                if i == len(addresses) - 1:
                    raise
        raise AssertionError("unreachable: addresses is never empty")

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise _connect_error(AddressRefused("a unix socket"))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def async_client(guard: Guard | None = None, **kwargs: Any) -> Any:
    """An httpx.AsyncClient for a user's URL: no redirects; unless the policy opens everything,
    no proxy from the environment (it would connect for us, unchecked) and every connection
    through the guard."""
    import httpx

    guard = guard or current()
    if guard.policy.anywhere:
        return httpx.AsyncClient(follow_redirects=False, **kwargs)
    transport = httpx.AsyncHTTPTransport()  # (its trust_env reads SSL_CERT_FILE only)
    pool: Any = transport._pool  # httpcore's pool builds each connection with this backend
    pool._network_backend = GuardedBackend(pool._network_backend, guard)
    kwargs.update(follow_redirects=False, trust_env=False)
    return httpx.AsyncClient(transport=transport, **kwargs)


def sync_client(guard: Guard | None = None, **kwargs: Any) -> Any:
    """async_client's blocking twin."""
    import httpx

    guard = guard or current()
    if guard.policy.anywhere:
        return httpx.Client(follow_redirects=False, **kwargs)
    transport = httpx.HTTPTransport()
    pool: Any = transport._pool
    pool._network_backend = SyncGuardedBackend(pool._network_backend, guard)
    kwargs.update(follow_redirects=False, trust_env=False)
    return httpx.Client(transport=transport, **kwargs)


def describe(policy: Policy) -> str:
    """One line for the start-up log: what users' connections may reach."""
    if policy.anywhere:
        return "users' connections may reach any address (local user, no accounts)"
    opened: Iterable[str] = [*sorted(policy.hosts), *(str(n) for n in policy.networks)]
    extra = f", and {', '.join(opened)} ({ALLOW_ENV})" if policy.hosts or policy.networks else ""
    return f"users' connections may reach public addresses only{extra}"
