"""Features, each its own package or module, none importing another.

Each exports a class holding its service, with ``routes()`` (HTTP) and
``handlers()`` (WebSocket requests); :mod:`server.app` composes them, and
passes one feature's object to another that names what it needs in a small
protocol.
"""
