"""Features: dailies, leaderboards, races, replays, solutions and plain play.

Each exports a class holding its service, with ``routes()`` (HTTP) and
``handlers()`` (WebSocket requests); :mod:`server.app` composes them.
"""
