"""The Prometheus metrics endpoint, served when METRICS_PORT is set."""

from __future__ import annotations

import logging

from prometheus_client import start_http_server

from bot.settings import Settings

log = logging.getLogger(__name__)


def start_metrics(settings: Settings) -> None:
    if settings.METRICS_PORT:
        start_http_server(settings.METRICS_PORT)
        log.info("metrics on port %d", settings.METRICS_PORT)
