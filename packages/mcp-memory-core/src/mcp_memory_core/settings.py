"""Settings, read from environment variables prefixed ``MCP_MEMORY_`` (all optional)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .context import derive_project
from .lifecycle import TTLPolicy, parse_duration
from .models import DEDUP_THRESHOLD, DUPLICATE_THRESHOLD, LOCAL_USER, MemoryType
from .passages import DEFAULT_FILL_IDLE_SECONDS, DEFAULT_PASSAGE_BACKLOG
from .relevance import Calibrated, RelevanceFloor
from .scope import validate_principal
from .secret_scan import PII_KINDS, SecretPolicy
from .validation import DEFAULT_LIMITS, Limits, validate_namespace

APP_NAME = "mcp-memory"


def default_db_path() -> Path:
    """``<user data dir>/mcp-memory/memories.db`` — absolute, per user, as platformdirs defines it
    (``~/.local/share/mcp-memory/memories.db`` on Linux)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "memories.db"


class Settings(BaseSettings):
    """What the engine and the choice of plugins read from the environment.

    A surface adds its own fields in a subclass (the server: its HTTP and tool-result settings); a
    plugin reads its own with a ``BaseSettings`` of its own, declared as its spec's ``settings_model``
    (e.g. the postgres store's ``MCP_MEMORY_DATABASE_URL``). ``db_path`` stays here: the sqlite-vec
    store and the vault's index open it, and the server puts the token file, the hooks' state and the
    doctor's checks beside it."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_", extra="ignore")

    db_path: Path = Field(default_factory=default_db_path, description="SQLite database file")
    create_database: bool = Field(
        default=True,
        description="Create the database when it does not exist (the CLI's read commands turn it off, so "
        "a mistyped path is an error, not a new empty database)",
    )
    store: str = Field(default="sqlite-vec", description="Store plugin name")
    embedder: str = Field(default="minilm", description="Embedder plugin name")
    ranker: str = Field(default="hybrid", description="Ranker plugin name (hybrid: chosen on LoCoMo dev)")
    rerankers: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Reranker plugin names, comma-separated, applied in this order after the ranker "
        "(default: none)",
    )
    reranker_timeout: float = Field(
        default=2.0,
        gt=0.0,
        le=600.0,
        description="Seconds a reranker may take per search; a slower one is skipped and the search says so",
    )
    disable_plugins: str = Field(
        default="", description="Comma-separated plugin entry-point names not to load, or * for all"
    )
    strict_plugins: bool = Field(default=False, description="Fail on a plugin that cannot be loaded")
    log_level: str = Field(default="INFO", description="Log level (logs go to stderr)")
    namespace: str | None = Field(
        default=None,
        description="The project namespace (default: the git repository's name, shared by its worktrees, or "
        "the working directory's; none in the home directory or /, where writes go to 'user')",
    )
    user: str = Field(
        default=LOCAL_USER, description="Who the stdio server and the CLI act as (the owner of new memories)"
    )
    ttl_working: str = Field(default="48h", description="Lifetime of working memories (e.g. 48h, 90d, never)")
    ttl_episodic: str = Field(default="90d", description="Lifetime of episodic memories")
    ttl_semantic: str = Field(default="never", description="Lifetime of semantic memories")
    ttl_procedural: str = Field(default="never", description="Lifetime of procedural memories")
    dedup_threshold: float = Field(
        default=DEDUP_THRESHOLD,
        ge=0.0,
        le=1.0,
        description="Similarity at which store_memory lists an existing memory in similar (calibrated for "
        "all-MiniLM-L6-v2: docs/benchmarks.md)",
    )
    duplicate_threshold: float = Field(
        default=DUPLICATE_THRESHOLD,
        ge=0.0,
        le=1.0,
        description="Similarity at which a listed memory's relation is duplicate (restated or revised) "
        "rather than related; conflict policy supersede replaces only a duplicate",
    )
    conflict_policy: Literal["report", "supersede"] = Field(
        default="report",
        description="report: list near-duplicates; supersede: the closest duplicate is updated (newer wins)",
    )
    defer_passages: bool = Field(
        default=True,
        description="A memory of several sentences is acknowledged once its whole text's vector is written, "
        "and its sentences' vectors are added moments later in the background (on a store that keeps a "
        "backlog: sqlite-vec, postgres); until then it is found by its whole text. false: every vector before the "
        "answer. The CLI and the hooks always embed before answering: they exit right after",
    )
    passage_backlog: int = Field(
        default=DEFAULT_PASSAGE_BACKLOG,
        ge=0,
        description="At most this many memories wait for their sentences' vectors; past it a long memory's "
        "are embedded before the answer",
    )
    passage_fill_idle: float = Field(
        default=DEFAULT_FILL_IDLE_SECONDS,
        ge=0.0,
        description="Seconds without a request's embedding before waiting sentences are embedded (a large "
        "value holds them off until the server is restarted with a smaller one)",
    )
    relevance_floor: bool = Field(
        default=True,
        description="Search returns only memories that clear the relevance floor (false: every ranked memory)",
    )
    floor_similarity: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="Relevance floor: a similarity that always clears it (default: the embedder's calibration)",
    )
    floor_standout: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="Relevance floor: how far above the query's background similarity a memory clears it",
    )
    floor_keyword_similarity: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="Relevance floor: the similarity that clears it for a memory sharing a word with the query",
    )
    floor_best_similarity: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="Relevance floor: the similarity at which the best-ranked memory clears it",
    )
    floor_extra_similarity: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="Relevance floor: the least similarity of any memory below the best-ranked one",
    )
    auto_context: bool = Field(default=True, description="Attach cwd, project and platform to new memories")
    max_content_bytes: int = Field(
        default=DEFAULT_LIMITS.content_bytes,
        ge=1,
        description="Largest content of a memory, in bytes of UTF-8",
    )
    max_metadata_bytes: int = Field(
        default=DEFAULT_LIMITS.metadata_bytes,
        ge=2,
        description="Largest metadata of a memory, in bytes of JSON",
    )
    secrets: Literal["refuse", "redact", "allow"] = Field(
        default="redact",
        description="What a write holding a secret (an API key, token, password, private key) does: redact "
        "(stored with [REDACTED:<kind>] in its place, and the receipt says so), refuse (nothing written) "
        "or allow",
    )
    secrets_pii: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Personal data also kept out like secrets: email and/or phone, comma-separated "
        "(default: none)",
    )
    max_page_bytes: int = Field(
        default=DEFAULT_LIMITS.page_bytes,
        ge=1,
        description="Largest page of the engine's list (mcp-memory list), in bytes of JSON (a page always "
        "holds at least one memory); MCP tool results are bounded by max_result_tokens instead",
    )

    def floor(self, embedder: object) -> RelevanceFloor | None:
        """The relevance floor search applies: the embedder's calibration (its ``relevance_floor``)
        with any value set here replacing its own; None when switched off, or when the embedder
        declares none and not all three values are set here."""
        if not self.relevance_floor:
            return None
        given = {
            "min_similarity": self.floor_similarity,
            "min_standout": self.floor_standout,
            "min_keyword_similarity": self.floor_keyword_similarity,
        }
        optional = {
            "min_best_similarity": self.floor_best_similarity,
            "min_extra_similarity": self.floor_extra_similarity,
        }
        chosen = {key: value for key, value in (given | optional).items() if value is not None}
        calibrated = embedder.relevance_floor if isinstance(embedder, Calibrated) else None
        if calibrated is not None:
            return dataclasses.replace(calibrated, **chosen)
        if all(value is not None for value in given.values()):
            return RelevanceFloor(**chosen)
        return None

    def limits(self) -> Limits:
        return Limits(
            content_bytes=self.max_content_bytes,
            metadata_bytes=self.max_metadata_bytes,
            page_bytes=self.max_page_bytes,
        )

    def secret_policy(self) -> SecretPolicy:
        return SecretPolicy(self.secrets, self.secrets_pii)

    def ttl_policy(self) -> TTLPolicy:
        return TTLPolicy(
            {
                MemoryType.WORKING: parse_duration(self.ttl_working),
                MemoryType.EPISODIC: parse_duration(self.ttl_episodic),
                MemoryType.SEMANTIC: parse_duration(self.ttl_semantic),
                MemoryType.PROCEDURAL: parse_duration(self.ttl_procedural),
            }
        )

    def resolved_project(self) -> str | None:
        """The project namespace, or None (no project: writes go to ``user``)."""
        return validate_namespace(self.namespace) if self.namespace else derive_project()

    @field_validator("db_path")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve() if str(value) != ":memory:" else value

    @field_validator("ttl_working", "ttl_episodic", "ttl_semantic", "ttl_procedural")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)  # raises a clear error for a bad duration
        return value

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        return validate_principal(value)

    @field_validator("store", "embedder", "ranker")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator("rerankers", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """``"a, B"`` (the environment's form) or a sequence of names -> ``("a", "b")``; a name given
        twice is an error (the same reranker twice in a row only costs time)."""
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value  # pydantic reports the wrong type
        names = tuple(str(item).strip().lower() for item in items if str(item).strip())
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"names the reranker {', '.join(repr(n) for n in twice)} more than once")
        return names

    @field_validator("secrets_pii", mode="before")
    @classmethod
    def _pii(cls, value: Any) -> Any:
        """``"email, Phone"`` (the environment's form) or a sequence -> ``("email", "phone")``."""
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value  # pydantic reports the wrong type
        kinds = tuple(dict.fromkeys(str(item).strip().lower() for item in items if str(item).strip()))
        if unknown := [kind for kind in kinds if kind not in PII_KINDS]:
            raise ValueError(f"takes email and/or phone, comma-separated; got {', '.join(unknown)}")
        return kinds
