"""Stores acknowledged through the engine's shared embedding batches survive a SIGKILL.

A process stores memories from several threads at once, so that their texts share embed calls
(one of them a long memory, whose whole text and sentences are embedded in one call), prints each id
the moment ``store_memory`` returns it, and is killed with SIGKILL while more stores are under way.
Reopened, the file has every acknowledged memory, each found by search. With the passage backlog on
(and its filler running whenever the model is free), a long memory is acknowledged before its
sentences' vectors are written: reopened, each is found all the same, and the backlog it left is
finished by the next engine.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.passages import split_passages
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder

pytest.importorskip("mcp_memory_rankers")  # the engine's ranker: absent from the plugin-only venv

STORER = """
import os, signal, sys, threading
from mcp_memory_core import MemoryEngine
from mcp_memory_core.passages import split_passages
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder

defer = sys.argv[2] == "defer"
engine = MemoryEngine(
    SqliteVecStore(sys.argv[1]), HashEmbedder(), SimilarityRanker(), defer_passages=defer, passage_fill_idle=0.0
)
engine.warm()
acknowledged = threading.Semaphore(0)
printing = threading.Lock()

def client(c):
    for i in range(1000):
        text = (
            f"Client {c} note {i}: the billing service moved to Fridays. It needs two reviewers. "
            f"The parser ships behind a flag {c}-{i}." if i % 3 == 0 else f"Client {c} note {i} about item {i * 7}."
        )
        outcome = engine.store_memory(text)
        with printing:
            print(outcome.status, outcome.memory.id, text, sep="\\t", flush=True)
        acknowledged.release()

for c in range(4):
    threading.Thread(target=client, args=(c,), daemon=True).start()
for _ in range(40):  # forty acknowledged, more under way
    acknowledged.acquire()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("passages", ["inline", "defer"])
def test_memories_acknowledged_from_concurrent_stores_survive_sigkill(tmp_path: Path, passages: str) -> None:
    db = tmp_path / "crash.db"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STORER), str(db), passages],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    acknowledged = [line.split("\t") for line in done.stdout.splitlines() if line.count("\t") == 2]
    assert len(acknowledged) >= 40 and all(status == "stored" for status, _, _ in acknowledged)
    assert any(text.count(". ") >= 2 for _, _, text in acknowledged)  # long memories among them
    from mcp_memory_rankers import SimilarityRanker

    engine = MemoryEngine(SqliteVecStore(db), HashEmbedder(), SimilarityRanker())
    try:
        for _, memory_id, text in acknowledged:
            assert engine.get_memory(memory_id).memory.content == text
            hits = engine.search_memories(text, limit=3)
            assert memory_id in [hit.memory.id for hit in hits], text
        store = engine.store
        assert isinstance(store, SqliteVecStore)
        if passages == "inline":
            assert store.count_pending_passages() == 0
        while engine.passage_filler.drain_step() != "empty":  # what the killed process left
            pass
        assert store.count_pending_passages() == 0
        rows = store.vectors([memory_id for _, memory_id, _ in acknowledged])
        for _, memory_id, text in acknowledged:
            assert len(rows[memory_id]) == len(split_passages(text)), text
    finally:
        engine.close()
