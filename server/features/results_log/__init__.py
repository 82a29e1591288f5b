"""The results log: every daily result and moderation of a daily board in a signed Merkle tree."""
