"""Running under load: the answers in progress, the turn queue, the configuration cache, batched writes, metrics and health."""
