"""Edge: the WebSocket session (sans-I/O core and socket plumbing), the uvicorn protocols under
it, and the HTTP pieces every feature's routes share (one module per concern)."""
