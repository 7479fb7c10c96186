"""pluggy registration of the ``fastembed`` embedder and the ``fastembed-cross-encoder`` reranker
(entry point ``fastembed`` in group ``mcp_memory``).

Importing this module is cheap: it does not import fastembed or onnxruntime.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import EmbedderSpec, RerankerSpec, hookimpl

from .embedder import DEFAULT_MODEL, FastembedEmbedder
from .reranker import DEFAULT_DEPTH, NAME, CrossEncoderReranker
from .reranker import DEFAULT_MODEL as DEFAULT_CROSS_ENCODER

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


class FastembedSettings(BaseSettings):
    """Settings of the fastembed embedder, from environment variables prefixed ``MCP_MEMORY_FASTEMBED_``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_FASTEMBED_", extra="ignore")

    model: str = Field(
        default=DEFAULT_MODEL,
        description="fastembed's name of the embedding model (BAAI/bge-small-en-v1.5, "
        "intfloat/multilingual-e5-large, sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 …)",
    )
    path: Path | None = Field(
        default=None, description="a folder holding the model's files, instead of the cache folder"
    )
    cache_dir: Path | None = Field(
        default=None,
        description="fastembed's cache folder, where downloaded models are looked for (default: "
        "FASTEMBED_CACHE_PATH, else <user cache dir>/mcp-memory/fastembed); the cross-encoder's too",
    )
    threads: int | None = Field(
        default=None, ge=1, description="onnxruntime intra-op threads (default: min(2, CPU count))"
    )
    query_prefix: str | None = Field(
        default=None, description="what precedes a query (default: the model's own, e.g. e5's 'query: ')"
    )
    passage_prefix: str | None = Field(
        default=None,
        description="what precedes a stored text (default: the model's own, e.g. e5's 'passage: '); "
        "part of the model_id: changing it means `mcp-memory reindex`",
    )


class CrossEncoderSettings(BaseSettings):
    """Settings of the cross-encoder reranker, from variables prefixed ``MCP_MEMORY_FASTEMBED_RERANKER_``
    (its cache folder is ``MCP_MEMORY_FASTEMBED_CACHE_DIR``)."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_FASTEMBED_RERANKER_", extra="ignore")

    model: str = Field(
        default=DEFAULT_CROSS_ENCODER,
        description="fastembed's name of the cross-encoder (Xenova/ms-marco-MiniLM-L-6-v2, "
        "BAAI/bge-reranker-base, jinaai/jina-reranker-v2-base-multilingual …)",
    )
    path: Path | None = Field(
        default=None, description="a folder holding the model's files, instead of the cache folder"
    )
    depth: int = Field(
        default=DEFAULT_DEPTH, ge=1, le=1000, description="how many of the ranker's best it reads"
    )
    threads: int | None = Field(
        default=None, ge=1, description="onnxruntime intra-op threads (default: min(2, CPU count))"
    )


def _embedder(settings: Settings) -> FastembedEmbedder:
    own = FastembedSettings()
    return FastembedEmbedder(
        own.model,
        path=own.path,
        cache_dir=own.cache_dir,
        threads=own.threads,
        query_prefix=own.query_prefix,
        passage_prefix=own.passage_prefix,
    )


def _reranker(settings: Settings) -> CrossEncoderReranker:
    own = CrossEncoderSettings()
    return CrossEncoderReranker(
        own.model,
        path=own.path,
        cache_dir=FastembedSettings().cache_dir,
        depth=own.depth,
        threads=own.threads,
    )


@hookimpl
def mcp_memory_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="fastembed",
        factory=_embedder,
        description="any fastembed model (bge, e5, multilingual …) on onnxruntime; "
        "from files downloaded once, never at run time",
        settings_model=FastembedSettings,
    )


@hookimpl
def mcp_memory_rerankers() -> Iterator[RerankerSpec]:
    yield RerankerSpec(
        name=NAME,
        factory=_reranker,
        description="a fastembed cross-encoder (ms-marco MiniLM, bge-reranker …) reads the query with "
        "each candidate; from files downloaded once, never at run time",
        settings_model=CrossEncoderSettings,
    )
