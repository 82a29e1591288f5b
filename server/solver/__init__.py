"""The solver's infrastructure, below the features: the worker process every search runs in
(:mod:`~server.solver.pool`, :mod:`~server.solver.worker`), the gate of background solves
(:mod:`~server.solver.spare`) and the answers kept in the server's process
(:mod:`~server.solver.deals`, :mod:`~server.solver.cache`).

Dailies, plain play, solutions and screening use it; the composition root
builds one pool per server and hands it to each.
"""
