"""The generation turn (spec §7): credential route, model fallback x key rotation."""
