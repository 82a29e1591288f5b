"""The cluster layer: several instances on one PostgreSQL database, coordinated through Redis.

Redis holds nothing durable; it carries four things between instances:

- **Pushes.** Each hub topic is a Redis channel (``<prefix>:t:<topic>``). An
  instance subscribes to a topic's channel while it has a local subscriber of
  it (but not to those of the games it holds, whose pushes all start here),
  and once Redis confirms the subscription announces that on
  ``<prefix>:ctl``; a game's owner answers by sending the game's last update
  (or its end) again, which the newcomer may have missed while it
  subscribed. A publish is serialized once, queued to the instance's own
  subscribers and written to Redis at once (:mod:`server.cluster.link`:
  one connection publishes, one is subscribed). A topic whose last publish
  reached no other instance is not sent again until an instance announces
  interest in it, so an unwatched game costs no Redis traffic.
- **Moves of games.** Taking a game (:mod:`server.storage.leases`) is announced
  on the control channel, so its previous owner drops its copy at once; the
  fencing token in PostgreSQL, not this message, is what keeps that owner
  from ever committing for the game again.
- **The leader** of once-per-cluster jobs: ``<prefix>:leader`` set with NX and
  a time to live, renewed by its holder while it runs.
- **Ended sessions.** Logging out (or revoking, or a new password) is
  announced on the control channel with the ended tokens' hashes, and every
  instance closes its own sockets on them.

Failed logins are counted in Redis too, by :mod:`server.cluster.backoff`.

When a link breaks (Redis restarted or unreachable, or silent past a ping),
the instance keeps serving (commits need only PostgreSQL), drops what it
would publish meanwhile, reconnects every ``RETRY_S``, subscribes again, and
then says goodbye to its clients: they may have missed pushes, and
reconnecting makes them read every state again.

The layer's modules: :mod:`~server.cluster.control` (the control messages, a typed enum),
:mod:`~server.cluster.hub` (the fan-out), :mod:`~server.cluster.leases` (moves of games),
:mod:`~server.cluster.leader`, :mod:`~server.cluster.link` (Redis connections written and
parsed in place), :mod:`~server.cluster.backoff` (the fleet's failure counts),
:mod:`~server.cluster.health` (the fleet's database) and :mod:`~server.cluster.node` (one
instance's link to the others, composing them). Core defines the ports they implement
(:mod:`server.core.cluster`); only the composition (``server/app.py``) imports this layer.
"""
