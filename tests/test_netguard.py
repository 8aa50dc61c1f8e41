"""The address guard of users' URLs (issue #21): what is public, what the operator opens, and a
client that connects only where the check said, pinned against DNS rebinding.

Resolution is injected (`Guard(policy, resolve)`): no test needs the network. "Public" servers
are stood in for by a real server on 127.0.0.1 that the policy opens by address, or by a
resolver that answers a public address for a name and records that it was asked.
"""

from __future__ import annotations

import ipaddress
import logging

import httpx
import pytest

from brainchat import netguard
from brainchat.connections import ConnectionFailed, checked, probe
from brainchat.netguard import AddressRefused, Guard, Policy
from brainchat.testing.scripted_server import ScriptedServer

ACCOUNTS = Policy()  # an app with accounts, nothing opened
LOOPBACK_OPEN = Policy(networks=(ipaddress.ip_network("127.0.0.1/32"),))

CLOSED = [
    "127.0.0.1", "127.8.9.10", "10.0.0.7", "172.16.0.1", "192.168.1.20", "169.254.169.254",
    "100.64.0.1", "0.0.0.0", "224.0.0.251", "255.255.255.255", "240.0.0.1", "192.0.2.1",
    "::1", "::", "fe80::1", "fd00::1", "fec0::1", "ff02::1", "::ffff:127.0.0.1",
    "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "2001:db8::1",
]  # fmt: skip
OPEN = ["8.8.8.8", "1.1.1.1", "151.101.1.69", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", CLOSED)
def test_internal_addresses_are_not_public(address: str) -> None:
    assert not netguard.public(ipaddress.ip_address(address))
    with pytest.raises(AddressRefused, match="not a public internet address"):
        Guard(ACCOUNTS, resolve=_never).addresses(address, 80)


@pytest.mark.parametrize("address", OPEN)
def test_public_addresses_are(address: str) -> None:
    assert netguard.public(ipaddress.ip_address(address))
    assert Guard(ACCOUNTS, resolve=_never).addresses(address, 443) == [address]


def _never(host: str, port: int) -> list[str]:
    raise AssertionError(f"an address literal was sent to the resolver: {host}")


def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    answers = {"api.example": ["151.101.1.69"], "mixed.example": ["151.101.1.69", "10.0.0.7"],
               "meta.example": ["169.254.169.254"]}  # fmt: skip
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        if host not in answers:
            raise OSError("Name or service not known")
        return answers[host]

    guard = Guard(ACCOUNTS, resolve=resolve)
    assert guard.addresses("API.example.", 443) == ["151.101.1.69"]
    for host in ("mixed.example", "meta.example", "nowhere.example"):
        with pytest.raises(AddressRefused) as refused:
            guard.addresses(host, 443)
        # one message, whatever the address is or whether the name exists
        assert str(refused.value) == str(AddressRefused(host))
    assert asked == ["api.example", "mixed.example", "meta.example", "nowhere.example"]


def test_the_operator_opens_hosts_and_networks_and_the_local_user_reaches_anything() -> None:
    hosts, networks, errors = netguard.parse_allow(
        " gpu-box.lab , 10.0.0.0/24,[fd00::5], 127.0.0.1, http://x:1/y, *"
    )
    assert hosts == {"gpu-box.lab"} and errors and len(errors) == 2
    assert all("BRAINCHAT_CONNECTION_ALLOW" in e and "ignored" in e for e in errors)
    policy = Policy(hosts=hosts, networks=networks)
    guard = Guard(
        policy, resolve=lambda host, port: {"gpu-box.lab": ["10.9.9.9"]}.get(host, ["10.0.1.1"])
    )
    assert guard.addresses("gpu-box.lab", 8000) == ["10.9.9.9"]  # the name is opened
    assert guard.addresses("10.0.0.42", 8000) == ["10.0.0.42"]  # the network is
    assert guard.addresses("::ffff:127.0.0.1", 80) == ["::ffff:127.0.0.1"]
    assert guard.addresses("fd00::5", 80) == ["fd00::5"]
    for closed in ("other.lab", "10.0.1.1", "127.0.0.2"):
        with pytest.raises(AddressRefused):
            guard.addresses(closed, 8000)
    anywhere = Guard(Policy(anywhere=True), resolve=_never)
    assert anywhere.addresses("127.0.0.1", 11434) == ["127.0.0.1"]


def test_bad_allow_entries_are_logged_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, "brainchat.netguard"):
        policy = netguard.policy_from(
            {"BRAINCHAT_CONNECTION_ALLOW": "lab.local, a b"}, accounts=True
        )
    assert policy.hosts == {"lab.local"} and not policy.anywhere
    assert "BRAINCHAT_CONNECTION_ALLOW" in caplog.text
    assert netguard.policy_from({}, accounts=False).anywhere


async def test_a_rebound_name_is_refused_before_any_connection(
    scripted_server: ScriptedServer,
) -> None:
    """DNS rebinding: the name answered an open address for the probe, then an internal one.
    Each new connection resolves and checks again and connects to the address it checked."""
    scripted_server.models = ["m1"]
    port = scripted_server.base_url.split(":")[2].split("/")[0]
    answers = [["127.0.0.1"], ["169.254.169.254"]]
    guard = Guard(LOOPBACK_OPEN, resolve=lambda host, p: answers.pop(0))
    url = f"http://models.example:{port}/v1/models"
    async with netguard.async_client(guard, timeout=5) as client:
        assert (await client.get(url)).status_code == 200  # pinned: 127.0.0.1 was connected
    async with netguard.async_client(guard, timeout=5) as client:
        with pytest.raises(httpx.ConnectError) as refused:
            await client.get(url)
    assert netguard.refused(refused.value) is not None
    assert answers == []


async def test_the_probe_refuses_a_closed_address_without_connecting() -> None:
    import asyncio

    accepted: list[int] = []

    async def models(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        await reader.readuntil(b"\r\n\r\n")
        body = b'{"data": [{"id": "m1"}, {"id": "<b>not-an-id</b>"}]}'
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)  # fmt: skip
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(models, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    conn = checked("lab", f"http://127.0.0.1:{port}/v1", None)
    with pytest.raises(ConnectionFailed, match="not a public internet address"):
        await probe(conn, guard=Guard(ACCOUNTS))
    assert accepted == []  # refused before any connection
    assert (await probe(conn, guard=Guard(LOOPBACK_OPEN))).models == ("m1",)
    assert accepted == [1]
    server.close()


def test_the_blocking_client_is_guarded_too(scripted_server: ScriptedServer) -> None:
    with netguard.sync_client(Guard(ACCOUNTS), timeout=5) as client:
        with pytest.raises(httpx.ConnectError) as refused:
            client.get(scripted_server.base_url + "/models")
    assert netguard.refused(refused.value) is not None
    with netguard.sync_client(Guard(LOOPBACK_OPEN), timeout=5) as client:
        assert client.get(scripted_server.base_url + "/models").status_code == 200


async def test_an_opened_name_that_does_not_resolve_is_an_ordinary_connect_error() -> None:
    import socket

    def resolve(host: str, port: int) -> list[str]:
        raise socket.gaierror(-2, "Name or service not known")

    guard = Guard(Policy(hosts=frozenset({"gpu-box.lab"})), resolve=resolve)
    async with netguard.async_client(guard, timeout=5) as client:
        with pytest.raises(httpx.ConnectError, match="not known") as failed:
            await client.get("http://gpu-box.lab:8000/v1/models")
    assert netguard.refused(failed.value) is None  # not a refusal: the name has no address
