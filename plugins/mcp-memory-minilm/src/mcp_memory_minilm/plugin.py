"""pluggy registration of the ``minilm`` embedder (entry point ``minilm`` in group ``mcp_memory``).

Importing this module is cheap: it does not import onnxruntime or tokenizers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

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
    precision: Literal["fp32", "int8"] = Field(
        default="fp32",
        description=(
            "fp32: the shipped model (exact). int8: per-channel dynamic quantization of it, made locally "
            "on first use and cached (~2x faster; needs `mcp-memory-minilm[int8]`). The two give "
            "different model_ids: a store made with one refuses the other."
        ),
    )
    cache_dir: Path | None = Field(
        default=None,
        description="where the int8 model is cached (default: <user cache dir>/mcp-memory/minilm)",
    )


def _make(settings: Settings) -> MiniLMEmbedder:
    own = MiniLMSettings()
    return MiniLMEmbedder(threads=own.threads, precision=own.precision, cache_dir=own.cache_dir)


@hookimpl
def mcp_memory_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="minilm",
        factory=_make,
        description="all-MiniLM-L6-v2 (384-d) on onnxruntime; model shipped in the package",
        settings_model=MiniLMSettings,
    )
