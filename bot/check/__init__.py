"""Checking a live route: one small request per capability a turn may use (`probes`),
sent at once (`run`) on the route a turn would take (`route`), shown as a table on
Discord (`command`, `reply`) or in a terminal (`terminal`)."""
