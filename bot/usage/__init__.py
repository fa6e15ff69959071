"""What answers cost and who may ask for more: token counts per answer (`tokens`), the
record written after each answer (`record`), the limits checked before a provider is asked
(`limits`) and the server's generation settings put on every request (`params`)."""
