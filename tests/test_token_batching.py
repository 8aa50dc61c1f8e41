"""TokenBatcher: every streamed token reaches the sink, in order, in few sends; flush sends the rest."""

from __future__ import annotations

import asyncio

from brainchat.ui.batching import TokenBatcher


class Sink:
    """A fake socket: records each send; optionally slow, to overlap sends with new tokens."""

    def __init__(self, delay: float = 0.0) -> None:
        self.sent: list[str] = []
        self.delay = delay

    async def __call__(self, text: str) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)
        self.sent.append(text)


async def test_a_burst_is_joined_and_nothing_is_lost_or_reordered() -> None:
    sink = Sink()
    batch = TokenBatcher(sink, interval=60.0)  # nothing but the first token goes out on its own
    tokens = [f"t{i} " for i in range(200)]
    for token in tokens:
        await batch.add(token)
    assert sink.sent == ["t0 "]  # the stream starts at once
    await batch.close()  # step end: the rest in one send
    assert "".join(sink.sent) == "".join(tokens)
    assert len(sink.sent) == 2 and batch.sends == 2


async def test_the_timer_sends_a_batch_when_the_stream_pauses() -> None:
    sink = Sink()
    batch = TokenBatcher(sink, interval=0.02)
    await batch.add("a")
    await batch.add("b")
    await batch.add("c")
    assert sink.sent == ["a"]
    async with asyncio.timeout(5):  # no more tokens come: the timer delivers "bc" by itself
        while len(sink.sent) < 2:
            await asyncio.sleep(0.005)
    assert sink.sent == ["a", "bc"]
    await batch.close()
    assert sink.sent == ["a", "bc"]  # nothing queued: no empty send


async def test_interleaved_tokens_timers_and_slow_sends_keep_the_order() -> None:
    sink = Sink(delay=0.003)
    batch = TokenBatcher(sink, interval=0.005)
    tokens = [f"{i}," for i in range(300)]
    for i, token in enumerate(tokens):
        await batch.add(token)
        if i % 7 == 0:
            await asyncio.sleep(0.004)  # let timers fire between tokens
    await batch.close()
    assert "".join(sink.sent) == "".join(tokens)
    assert len(sink.sent) < len(tokens)  # batched, not one send per token
    assert all(sink.sent)


async def test_empty_tokens_are_not_sent() -> None:
    sink = Sink()
    batch = TokenBatcher(sink)
    await batch.add("")
    await batch.close()
    assert sink.sent == [] and batch.sends == 0
