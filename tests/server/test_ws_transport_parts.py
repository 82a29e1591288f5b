"""The WebSocket transport's small stand-ins for asyncio's queue and event, without a server:
what uvicorn's protocol relies on (order, a waiting reader woken, a cancelled wait
harmless, writers held while the transport is paused), and the upgrade's leftovers let go."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from server.edge import http_transport
from server.edge.ws_transport import Gate, Inbox

WAIT_S = 2.0  # far above what a wake-up on an idle loop takes


async def test_inbox_keeps_order_and_wakes_its_reader() -> None:
    inbox = Inbox()
    inbox.put_nowait({"type": "websocket.connect"})
    assert inbox.qsize() == 1
    assert await inbox.get() == {"type": "websocket.connect"}
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)  # the reader waits on an empty inbox
    inbox.put_nowait({"type": "websocket.receive", "text": "a"})
    inbox.put_nowait({"type": "websocket.receive", "text": "b"})
    assert await asyncio.wait_for(reader, WAIT_S) == {"type": "websocket.receive", "text": "a"}
    assert inbox.qsize() == 1
    assert await inbox.get() == {"type": "websocket.receive", "text": "b"}
    assert inbox.qsize() == 0


async def test_a_cancelled_get_loses_nothing() -> None:
    inbox = Inbox()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(inbox.get(), 0.01)
    inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
    assert (await asyncio.wait_for(inbox.get(), WAIT_S))["type"] == "websocket.disconnect"


async def test_gate_holds_writers_while_closed() -> None:
    gate = Gate()
    assert gate.is_set()
    await asyncio.wait_for(gate.wait(), WAIT_S)  # open: no wait
    gate.clear()
    writers = [asyncio.create_task(gate.wait()) for _ in range(3)]
    await asyncio.sleep(0.01)
    assert not any(w.done() for w in writers)
    gate.set()
    await asyncio.wait_for(asyncio.gather(*writers), WAIT_S)


async def test_the_http_protocol_is_freed_at_the_upgrade_without_the_collector() -> None:
    """Its parser refers back to it: left alone, only a full collection would free it."""

    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError

    config = uvicorn.Config(app, lifespan="off", log_level="warning")
    config.load()
    guarded = http_transport.guarded_http(10, 100)
    protocol = guarded(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    assert isinstance(protocol, HttpToolsProtocol)
    protocol.ws_protocol_class = None  # nothing to hand over to here
    HttpToolsProtocol.handle_websocket_upgrade, original = (  # type: ignore[method-assign]
        lambda self: None,
        HttpToolsProtocol.handle_websocket_upgrade,
    )
    try:
        protocol.handle_websocket_upgrade()
    finally:
        HttpToolsProtocol.handle_websocket_upgrade = original  # type: ignore[method-assign]
    gone = weakref.ref(protocol)
    gc.disable()
    try:
        del protocol
        assert gone() is None
    finally:
        gc.enable()
