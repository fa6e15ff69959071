from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.fake_provider_server import ProviderReplayServer  # noqa: E402


@pytest.fixture
async def provider_server():
    async with ProviderReplayServer() as server:
        yield server
