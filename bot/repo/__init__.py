"""Async repository: every read and write of configuration, keys and key health.

Nothing here caches in process memory: every read goes to the database. Settings writes
(`@config_write`, `bot.repo.versions`) stamp their server or member in the same
transaction, which is how the processes' configuration caches (`bot.load.config_cache`) learn
that their copies are stale.
"""

from bot.repo.common import RepositoryError, ensure_server
from bot.repo.keys import (
    KeyHealth,
    KeyInfo,
    KeyLease,
    KeyRef,
    add_server_key,
    environment_key_health,
    list_server_keys,
    record_key_failure,
    record_key_success,
    remove_server_key,
    usable_environment_keys,
    usable_server_keys,
)
from bot.repo.personal import (
    PersonalInfo,
    effective_personal,
    get_personal,
    remove_personal_key,
    set_personal_key,
    set_personal_model,
    set_personal_override,
    set_personal_server_fallback,
    usable_personal_key,
)
from bot.repo.routes import (
    ActiveRoute,
    ServerRoute,
    resolve_active_route,
    resolve_server_route,
    server_key_pool,
)
from bot.repo.servers import (
    ModelTarget,
    ServerSettings,
    add_fallback,
    check_model,
    check_provider,
    get_server_settings,
    list_fallbacks,
    remove_fallback,
    set_custom_endpoint,
    set_member_keys_required,
    set_text_model,
    set_thought_log_channel,
    set_verbatim_tool_calling,
)

__all__ = [
    "ActiveRoute", "KeyHealth", "KeyInfo", "KeyLease", "KeyRef", "ModelTarget", "PersonalInfo",
    "RepositoryError", "ServerRoute", "ServerSettings", "add_fallback", "add_server_key", "check_model", "check_provider",
    "effective_personal", "ensure_server", "environment_key_health", "get_personal",
    "get_server_settings", "list_fallbacks", "list_server_keys", "record_key_failure",
    "record_key_success", "remove_fallback", "remove_personal_key", "remove_server_key",
    "resolve_active_route", "resolve_server_route", "server_key_pool", "set_custom_endpoint",
    "set_member_keys_required", "set_personal_key", "set_personal_model", "set_personal_override",
    "set_personal_server_fallback", "set_text_model", "set_thought_log_channel",
    "set_verbatim_tool_calling", "usable_environment_keys", "usable_personal_key",
    "usable_server_keys",
]
