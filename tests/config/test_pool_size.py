"""The database pool follows the admission bound (MAX_CONCURRENT_ANSWERS) unless the
operator set DATABASE_POOL_SIZE."""

from __future__ import annotations

from bot.db.engine import pool_size_for


def test_the_pool_follows_the_admission_bound_within_its_limits() -> None:
    assert pool_size_for(500) == 25  # one connection per twenty admitted answers
    assert pool_size_for(1) == 5 and pool_size_for(5000) == 50
    assert pool_size_for(500, configured=7) == 7  # the operator's choice wins


async def test_the_bot_sizes_its_pool_from_its_settings(bot_factory) -> None:
    for env, expected in (({"MAX_CONCURRENT_ANSWERS": "200"}, (10, 10)),
                          ({"MAX_CONCURRENT_ANSWERS": "200", "DATABASE_POOL_SIZE": "3"}, (3, 3))):
        bot = bot_factory(**env)
        try:
            assert (bot.engine.pool.size(), bot.engine.pool._max_overflow) == expected
        finally:
            await bot.engine.dispose()
