"""server/edge/ws_transport.py and server/edge/http_transport.py subclass uvicorn's private protocols
(its sans-I/O WebSocket protocol, its httptools HTTP protocol).

Private API can change in any release: the installed uvicorn must be one the
transport was tested with (``TESTED_UVICORN``, the range pyproject.toml pins),
and every private name the transport relies on must still be there. A newer
uvicorn fails here first, not as a hang or a wrong frame under load.
"""

from __future__ import annotations

import asyncio
import importlib
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
import uvicorn
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from uvicorn.server import ServerState

from server.edge import http_transport, ws_transport
from server.edge.ws_transport import (
    TESTED_UVICORN,
    UVICORN_PRIVATE_NAMES,
    UVICORN_PROTOCOL_ATTRIBUTES,
    BufferedWebSocketProtocol,
)

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_installed_uvicorn_is_in_the_tested_range() -> None:
    installed = version("uvicorn")
    tested = SpecifierSet(",".join(TESTED_UVICORN))
    assert installed in tested, (
        f"uvicorn {installed} is outside {tested}, the range server/edge/ws_transport.py was tested with: "
        "run tests/server/test_ws_transport.py on it, then widen TESTED_UVICORN and pyproject.toml"
    )


def test_pyproject_pins_the_tested_range() -> None:
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    (pinned,) = [Requirement(dep) for dep in dependencies if Requirement(dep).name == "uvicorn"]
    assert pinned.specifier == SpecifierSet(",".join(TESTED_UVICORN))


@pytest.mark.parametrize("dotted", UVICORN_PRIVATE_NAMES + http_transport.UVICORN_PRIVATE_NAMES)
def test_private_names_still_exist(dotted: str) -> None:
    module, name = dotted.rsplit(".", 1)
    assert hasattr(importlib.import_module(module), name), f"{dotted} is gone"


async def test_protocol_attributes_still_exist() -> None:
    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError

    config = uvicorn.Config(app, ws=ws_transport.IMPL_PATH, lifespan="off", log_level="warning")
    protocol = BufferedWebSocketProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    missing = [name for name in UVICORN_PROTOCOL_ATTRIBUTES if not hasattr(protocol, name)]
    assert not missing, f"uvicorn's WebSocketsSansIOProtocol no longer has {missing}"
    for method in ("send_receive_event_to_app", "receive", "handle_connect"):  # overridden: still below
        base = BufferedWebSocketProtocol.__mro__[1]
        assert callable(getattr(base, method, None)), f"{base.__name__}.{method} is gone"
    assert not protocol.send_text_now("too early")  # before the handshake: the app must use send


async def test_http_protocol_attributes_still_exist() -> None:
    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError

    config = uvicorn.Config(app, lifespan="off", log_level="warning")
    guarded = http_transport.guarded_http(10, 100)
    protocol = guarded(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    missing = [name for name in http_transport.UVICORN_PROTOCOL_ATTRIBUTES if not hasattr(protocol, name)]
    assert not missing, f"uvicorn's HttpToolsProtocol no longer has {missing}"
    base = http_transport.GuardedHttpProtocol.__mro__[1]
    for method in (
        "on_message_begin",
        "on_message_complete",
        "on_response_complete",
        "handle_websocket_upgrade",
    ):
        assert callable(getattr(base, method, None)), f"{base.__name__}.{method} is gone"
