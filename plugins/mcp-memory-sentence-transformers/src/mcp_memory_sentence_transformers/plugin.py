"""pluggy registration of the ``sentence-transformers`` embedder (entry point group ``mcp_memory``).

Importing this module does not import torch or sentence-transformers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import EmbedderSpec, hookimpl

from .embedder import SentenceTransformerEmbedder

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


class SentenceTransformersSettings(BaseSettings):
    """Settings from environment variables prefixed ``MCP_MEMORY_SENTENCE_TRANSFORMERS_``, except the
    model itself: ``MCP_MEMORY_MODEL``, the variable it has always been read from."""

    # No populate_by_name: it would also read MCP_MEMORY_SENTENCE_TRANSFORMERS_MODEL, a name the doctor
    # does not know (it lists the alias).
    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_SENTENCE_TRANSFORMERS_", extra="ignore")

    model: str = Field(
        default="all-MiniLM-L6-v2",
        validation_alias="MCP_MEMORY_MODEL",
        description="A model name of the Hugging Face hub (all-MiniLM-L6-v2), an org/name id, or a local directory",
    )
    device: str = Field(default="cpu", description="torch device: cpu, cuda, cuda:1, mps …")
    batch_size: int = Field(default=32, ge=1, description="texts per forward pass")


def _make(settings: Settings) -> SentenceTransformerEmbedder:
    own = SentenceTransformersSettings()
    return SentenceTransformerEmbedder(own.model, device=own.device, batch_size=own.batch_size)


@hookimpl
def mcp_memory_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="sentence-transformers",
        factory=_make,
        description="Any sentence-transformers model on torch (MCP_MEMORY_MODEL, default all-MiniLM-L6-v2)",
        settings_model=SentenceTransformersSettings,
    )
