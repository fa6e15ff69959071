"""Pure text guards: no I/O, no clock, no module state."""
