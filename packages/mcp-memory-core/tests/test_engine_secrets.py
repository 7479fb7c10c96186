"""The engine screens every write for secrets before anything is written or embedded: store, update
(a new version) and import, under each policy (refuse, redact: the default, allow)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from test_import_safety import export_file, memory_id, stored
from test_transfer import good_line

from mcp_memory_core import MemoryEngine
from mcp_memory_core.protocols import StoredVectors, Vector
from mcp_memory_core.secret_scan import SecretPolicy, SecretRefusedError
from mcp_memory_core.transfer import import_records, read_memories
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

AWS_ID = "AKIAQ3EGUJ7NYWPRT4FD"
URL = "postgres://app:Zx9-kQ2mW7@db.internal:5432/app"


class RecordingEmbedder(HashEmbedder):
    """Keeps every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.texts.extend(texts)
        return super().embed_documents(texts)


def make(policy: str = "redact", pii: Sequence[str] = ()) -> tuple[MemoryEngine, RecordingEmbedder]:
    embedder = RecordingEmbedder()
    engine = MemoryEngine(
        InMemoryStore(),
        embedder,
        SimilarityRanker(),
        namespace="default",
        clock=TickingClock(),
        secrets=SecretPolicy(policy, pii),
    )
    return engine, embedder


def everything(engine: MemoryEngine) -> str:
    return json.dumps([m.model_dump(mode="json") for m in stored(engine)])


def test_redact_is_the_default() -> None:
    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock())
    outcome = engine.store_memory(f"The deploy key is {AWS_ID}.")
    assert outcome.memory.content == "The deploy key is [REDACTED:aws-key]."


def test_store_redacts_content_metadata_tags_and_thread_before_writing_or_embedding() -> None:
    engine, embedder = make()
    outcome = engine.store_memory(
        f"The deploy key is {AWS_ID}.",
        {"db": {"url": URL}, "owner": "ops"},
        tags=["deploy"],
        thread="chat-1",
    )
    assert outcome.status == "stored"
    assert outcome.memory.content == "The deploy key is [REDACTED:aws-key]."
    assert outcome.memory.metadata["db"] == {
        "url": "postgres://app:[REDACTED:url-password]@db.internal:5432/app"
    }
    assert [(f.kind, f.field) for f in outcome.redacted] == [
        ("aws-key", "content"),
        ("url-password", "metadata.db.url"),
    ]
    assert AWS_ID not in everything(engine) and "Zx9-kQ2mW7" not in everything(engine)
    assert all(AWS_ID not in text for text in embedder.texts)


def test_storing_the_same_secret_twice_is_a_duplicate_of_the_redacted_memory() -> None:
    engine, _ = make()
    first = engine.store_memory(f"key {AWS_ID}")
    again = engine.store_memory(f"key {AWS_ID}")
    assert again.status == "duplicate" and again.memory.id == first.memory.id
    assert [f.kind for f in again.redacted] == ["aws-key"]


def test_refuse_writes_and_embeds_nothing() -> None:
    engine, embedder = make("refuse")
    with pytest.raises(SecretRefusedError) as caught:
        engine.store_memory("ok", {"password": "hunter2-prod"})
    assert "a password in metadata.password" in str(caught.value)
    assert "hunter2-prod" not in str(caught.value)
    assert stored(engine) == [] and embedder.texts == []


def test_allow_stores_as_given() -> None:
    engine, _ = make("allow")
    outcome = engine.store_memory(f"key {AWS_ID}")
    assert outcome.memory.content == f"key {AWS_ID}" and outcome.redacted == ()


def test_pii_only_when_asked() -> None:
    engine, _ = make(pii=["email"])
    outcome = engine.store_memory("Dana is dana.k@example.com; commit 3f9a2c1 fixed it.")
    assert outcome.memory.content == "Dana is [REDACTED:email]; commit 3f9a2c1 fixed it."
    plain, _ = make()
    assert plain.store_memory("Dana is dana.k@example.com").memory.content == "Dana is dana.k@example.com"


def test_update_redacts_the_new_version() -> None:
    engine, embedder = make()
    first = engine.store_memory("the staging database moved")
    outcome = engine.update_memory(
        first.memory.id, f"staging is {URL}", {"token": "glpat-Ab3dEf7hIj1kLm5nOp9q"}
    )
    assert outcome.memory.content == "staging is postgres://app:[REDACTED:url-password]@db.internal:5432/app"
    assert outcome.memory.metadata == {"token": "[REDACTED:gitlab-token]"}
    assert [(f.kind, f.field) for f in outcome.redacted] == [
        ("url-password", "content"),
        ("gitlab-token", "metadata.token"),
    ]
    assert "Zx9-kQ2mW7" not in everything(engine) and all("Zx9-kQ2mW7" not in t for t in embedder.texts)


def test_update_under_refuse_keeps_the_old_version_current() -> None:
    engine, _ = make("refuse")
    first = engine.store_memory("the staging database moved")
    with pytest.raises(SecretRefusedError, match="a password in a URL in content"):
        engine.update_memory(first.memory.id, f"staging is {URL}")
    assert [m.id for m in stored(engine)] == [first.memory.id]
    assert stored(engine)[0].superseded_by is None


def records() -> list[str]:
    """Line 1 ordinary; line 2 a key in its content; line 3 a password in metadata, line 4 an older
    version of line 3."""
    return [
        good_line(id=memory_id(1), content="commit 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 fixed the build"),
        good_line(id=memory_id(2), content=f"the deploy key is {AWS_ID}"),
        good_line(id=memory_id(3), content="db creds", metadata={"password": "hunter2-prod"}),
        good_line(id=memory_id(4), content="db creds, older", superseded_by=memory_id(3)),
    ]


def test_import_redacts_and_counts_each_memory(tmp_path: Path) -> None:
    engine, embedder = make()
    path = export_file(tmp_path, records())
    outcome = import_records(engine, read_memories(path, "mcp-memory", now=engine.clock()))
    assert (outcome.inserted, outcome.refused) == (4, {})
    assert outcome.redacted == {
        memory_id(2): "redacted 1 secret: an AWS access key in content",
        memory_id(3): "redacted 1 secret: a password in metadata.password",
    }
    assert AWS_ID not in everything(engine) and "hunter2-prod" not in everything(engine)
    assert all(AWS_ID not in text for text in embedder.texts)
    again = import_records(engine, read_memories(path, "mcp-memory", now=engine.clock()))
    assert (again.inserted, again.skipped) == (0, 4)


def test_import_refuses_each_memory_holding_a_secret_and_imports_the_rest(tmp_path: Path) -> None:
    engine, _ = make("refuse")
    path = export_file(tmp_path, records())
    memories = read_memories(path, "mcp-memory", now=engine.clock())
    engine.check_import(memories)  # the refused ones are left out, not an error for the whole file
    outcome = import_records(engine, memories)
    assert outcome.inserted == 1 and [m.id for m in stored(engine)] == [memory_id(1)]
    assert sorted(outcome.refused) == [memory_id(2), memory_id(3), memory_id(4)]
    assert outcome.refused[memory_id(2)].startswith("holds an AWS access key in content")
    assert "MCP_MEMORY_SECRETS=redact" in outcome.refused[memory_id(2)]
    assert outcome.refused[memory_id(4)].startswith(f"its newer version {memory_id(3)} is refused")
    assert AWS_ID not in json.dumps(outcome.refused)


def test_import_embeds_a_redacted_memory_again_instead_of_reusing_its_vectors(tmp_path: Path) -> None:
    engine, embedder = make()
    path = export_file(tmp_path, records()[:2])
    memories = read_memories(path, "mcp-memory", now=engine.clock())
    row = np.ones((1, embedder.dimensions), dtype=np.float32) / np.sqrt(embedder.dimensions)
    given = StoredVectors(embedder.model_id, embedder.dimensions, {memory_id(1): row, memory_id(2): row})
    outcome = engine.import_memories(memories, vectors=given)
    assert outcome.reused == 1  # the ordinary one; the redacted one is embedded from its new text
    assert embedder.texts == ["the deploy key is [REDACTED:aws-key]"]


def test_the_detector_is_imported_by_warm_or_the_first_write_not_by_building_the_engine() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from mcp_memory_core import MemoryEngine\n"
        "from mcp_memory_core.secret_scan import SecretPolicy\n"
        "from mcp_memory_rankers import SimilarityRanker\n"
        "from mcp_memory_testing import HashEmbedder, InMemoryStore\n"
        "for mode in ('allow', 'redact'):\n"
        "    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), secrets=SecretPolicy(mode))\n"
        "    print(mode, 'detect_secrets' in sys.modules, end=' ')\n"
        "    engine.warm()\n"
        "    print('detect_secrets' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["allow False False", "redact False True"]
