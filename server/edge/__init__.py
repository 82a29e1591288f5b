"""Edge: the WebSocket session (sans-I/O core and socket plumbing) and the HTTP basics."""
