"""pluggy registration of the ``minilm`` embedder (entry point ``minilm`` in group ``mcp_memory``).

Importing this module is cheap: it does not import onnxruntime or tokenizers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import EmbedderSpec, hookimpl

from .embedder import MiniLMEmbedder

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


class MiniLMSettings(BaseSettings):
    """Settings of the minilm embedder, from environment variables prefixed ``MCP_MEMORY_MINILM_``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_MINILM_", extra="ignore")

    threads: int | None = Field(
        default=None, ge=1, description="onnxruntime intra-op threads (default: min(2, CPU count))"
    )


def _make(settings: Settings) -> MiniLMEmbedder:
    own = MiniLMSettings()
    return MiniLMEmbedder(threads=own.threads)


@hookimpl
def mcp_memory_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="minilm",
        factory=_make,
        description="all-MiniLM-L6-v2 (384-d) on onnxruntime; model shipped in the package",
        settings_model=MiniLMSettings,
    )
