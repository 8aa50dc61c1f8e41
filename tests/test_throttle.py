"""The login throttle: per name at a client and per client, increasing waits, bounded tables."""

from __future__ import annotations

from brainchat.store.throttle import NAME_CHARS, LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_name_backs_off_with_doubling_waits_then_its_password_is_checked_again():
    clock = Clock()
    throttle = LoginThrottle(name_limit=3, client_limit=100, base=10, cap=60, clock=clock)
    for _ in range(2):
        throttle.failed("ana", "10.0.0.66")
        assert throttle.wait("ana", "10.0.0.66") == 0
    throttle.failed("ana", "10.0.0.66")
    assert throttle.wait("ana", "10.0.0.66") == 10
    assert throttle.wait("ana", "10.0.0.5") == 0  # her own desk is not held
    assert throttle.wait("bob", "10.0.0.66") == 0
    clock.now += 10
    assert throttle.wait("ana", "10.0.0.66") == 0  # the wait is over: the password is checked
    waits = []
    for _ in range(4):
        throttle.failed("ana", "10.0.0.66")
        waits.append(throttle.wait("ana", "10.0.0.66"))
        clock.now += waits[-1]
    assert waits == [20, 40, 60, 60]  # doubled, up to the cap
    throttle.succeeded("ana", "10.0.0.66")
    assert throttle.wait("ana", "10.0.0.66") == 0


def test_a_client_trying_name_after_name_backs_off():
    clock = Clock()
    throttle = LoginThrottle(name_limit=5, client_limit=4, base=10, clock=clock)
    for i in range(4):
        assert throttle.wait(f"user{i}", "10.0.0.77") == 0
        throttle.failed(f"user{i}", "10.0.0.77")
    assert throttle.wait("anyone", "10.0.0.77") == 10
    assert throttle.wait("anyone", "10.0.0.78") == 0
    throttle.succeeded("bob", "10.0.0.77")  # his own account does not clear the client's count
    assert throttle.wait("anyone", "10.0.0.77") == 10


def test_the_tables_stay_small_whatever_is_sent():
    clock = Clock()
    throttle = LoginThrottle(max_entries=50, forget=600, cap=300, clock=clock)
    for i in range(1000):
        throttle.failed("n" * 100_000 + str(i), f"10.0.{i // 250}.{i % 250}")
    assert len(throttle.names) == 50 and len(throttle.clients) == 50
    assert all(len(name) <= NAME_CHARS for name, _ in throttle.names.entries)
    clock.now += 601
    throttle.failed("ana", "10.9.9.9")  # the old ones are forgotten
    assert len(throttle) == 2
