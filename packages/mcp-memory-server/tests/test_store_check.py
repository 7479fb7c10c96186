"""A store plugin whose factory builds something that is not a Store is refused when the engine is
built, in one sentence naming the plugin and what its object lacks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_memory_core import PluginError, Settings, StoreSpec
from mcp_memory_core.plugins import PluginManager, module_plugin, plugin_manager_from_settings
from mcp_memory_server.runtime.assembly import build_engine


class HalfAStore:
    """Has a location and nothing else a store needs."""

    location = ":nowhere:"


def stores() -> Iterator[StoreSpec]:
    yield StoreSpec(name="half", factory=lambda settings: HalfAStore(), description="Not a store")


def with_half_a_store() -> PluginManager:
    manager = plugin_manager_from_settings()
    manager.register(module_plugin("half", mcp_memory_stores=stores), name="half", package="half-pkg")
    return manager


def test_a_store_factory_that_builds_no_store_is_refused_in_one_sentence() -> None:
    settings = Settings(store="half", db_path=":memory:")
    with pytest.raises(PluginError) as refused:
        build_engine(settings, with_half_a_store())
    message = str(refused.value)
    assert "'half'" in message and "HalfAStore" in message and "not a Store" in message
    assert "knn" in message and "location" not in message.split("lacks", 1)[1]
