"""Lifecycle rules: TTL by type, pin, hard delete, clear, dedup and conflicts, namespaces, history."""

import math
from datetime import timedelta
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from mcp_memory_core import InvalidInputError, MemoryEngine, MemoryNotFoundError, MemoryType, Settings
from mcp_memory_core.context import current_context, derive_namespace, derive_project, slug
from mcp_memory_core.lifecycle import TTLPolicy, parse_duration
from mcp_memory_core.models import DEDUP_THRESHOLD, DUPLICATE_THRESHOLD
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock


def make(**kwargs) -> MemoryEngine:
    return MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock(), **kwargs)


def ids(hits):
    return [h.memory.id for h in hits]


# -- TTL -------------------------------------------------------------------------------------------
def test_working_memory_expires_after_48h_and_disappears_at_once():
    engine = make()
    note = engine.store_memory("scratch: current branch is feature-x", type="working").memory
    fact = engine.store_memory("scratch: the repo uses feature branches").memory  # semantic: forever
    assert set(ids(engine.search_memories("scratch branch"))) == {note.id, fact.id}
    engine.clock.now += timedelta(hours=48, seconds=1)
    assert ids(engine.search_memories("scratch branch")) == [fact.id]  # hidden before any sweep
    assert [m.id for m in engine.list_memories().memories] == [fact.id]
    view = engine.get_memory(note.id)
    assert view.status == "expired" and view.memory.deleted_at == note.created_at + timedelta(hours=48)


def test_episodic_lives_90_days_and_pinned_never_expires():
    engine = make()
    trip = engine.store_memory("visited lisbon in may", type="episodic").memory
    pinned = engine.store_memory("visited porto in june", type="episodic", pinned=True).memory
    engine.clock.now += timedelta(days=89)
    assert engine.sweep() == 0
    engine.clock.now += timedelta(days=2)
    assert engine.sweep() == 1
    assert engine.get_memory(trip.id).status == "expired"
    assert engine.get_memory(pinned.id).status == "current"


def test_pin_and_unpin():
    engine = make()
    note = engine.store_memory("temporary build flag", type="working").memory
    assert engine.pin_memory(note.id).pinned is True
    engine.clock.now += timedelta(days=5)
    assert engine.sweep() == 0 and engine.get_memory(note.id).status == "current"
    engine.pin_memory(note.id, pinned=False)
    assert engine.sweep() == 1


def test_ttl_is_configurable():
    engine = make(ttl=TTLPolicy({MemoryType.WORKING: timedelta(minutes=5), MemoryType.SEMANTIC: None}))
    engine.store_memory("short lived", type="working")
    engine.clock.now += timedelta(minutes=6)
    assert engine.sweep() == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("48h", timedelta(hours=48)),
        ("90d", timedelta(days=90)),
        ("2w", timedelta(weeks=2)),
        ("never", None),
        ("3600", timedelta(hours=1)),
    ],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


def test_bad_duration():
    with pytest.raises(InvalidInputError, match="not a duration"):
        parse_duration("soon")


# -- hard delete and clear ---------------------------------------------------------------------------
def test_hard_delete_purges_the_whole_chain():
    engine = make()
    a = engine.store_memory("my old address is 1 elm street").memory
    b = engine.update_memory(a.id, "my address is 2 oak avenue").memory
    keep = engine.store_memory("my phone is a pixel").memory
    outcome = engine.delete_memory(a.id, hard=True)
    assert outcome.status == "purged" and set(outcome.purged) == {a.id, b.id}
    for gone in (a.id, b.id):
        with pytest.raises(MemoryNotFoundError):
            engine.get_memory(gone)
    assert ids(engine.search_memories("address elm oak street avenue")) == [keep.id]
    assert engine.store.get([a.id, b.id]) == {}


def test_clear_namespace_purges_only_that_namespace():
    engine = make()
    engine.store_memory("work fact one", namespace="work")
    engine.store_memory("work fact two", namespace="work")
    home = engine.store_memory("home fact", namespace="home").memory
    assert engine.clear_namespace("work") == 2
    assert engine.list_namespaces() == {"home": 1}
    assert engine.get_memory(home.id).status == "current"


# -- dedup and conflicts -----------------------------------------------------------------------------
def test_exact_duplicate_returns_the_existing_memory():
    engine = make()
    first = engine.store_memory("The user prefers  dark mode").memory
    again = engine.store_memory("the user prefers dark MODE")
    assert again.status == "duplicate" and again.memory.id == first.id
    assert engine.count() == 1
    other_ns = engine.store_memory("The user prefers dark mode", namespace="elsewhere")
    assert other_ns.status == "stored"  # duplicates are per namespace


def test_near_duplicates_are_listed_not_merged():
    engine = make(dedup_threshold=0.8)
    first = engine.store_memory("deploys happen on tuesday mornings").memory
    outcome = engine.store_memory("deploys happen on tuesday mornings early")
    assert outcome.status == "stored" and outcome.memory.id != first.id
    assert [s.memory.id for s in outcome.similar] == [first.id] and outcome.similar[0].similarity >= 0.8
    assert engine.count() == 2


def test_supersede_policy_updates_the_near_duplicate_and_says_so():
    engine = make(dedup_threshold=0.8, duplicate_threshold=0.8, conflict_policy="supersede")
    first = engine.store_memory("deploys happen on tuesday mornings", tags=["ops"]).memory
    outcome = engine.store_memory("deploys happen on tuesday mornings early")
    assert outcome.status == "superseded" and outcome.superseded.id == first.id
    assert engine.get_memory(first.id).head_id == outcome.memory.id
    assert engine.count() == 1


class AngleEmbedder:
    """Exact cosines for dedup tests: ANCHOR is e0; a text in ``COSINES`` is at that cosine to the
    anchor (c·e0 + √(1-c²)·e_i, one axis each, so two of them are at c1·c2 to each other)."""

    ANCHOR = "the user prefers dark mode in every editor"
    COSINES: ClassVar[dict[str, float]] = {
        "restated, 0.93": 0.93,
        "restated, 0.90": 0.90,
        "close, 0.80": 0.80,
        "far, 0.70": 0.70,
    }
    model_id, dimensions = "angle-8", 8

    def load(self) -> None:
        pass

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimensions, dtype=np.float32)
        if text == self.ANCHOR:
            vector[0] = 1.0
        else:
            cosine = self.COSINES[text]
            vector[0], vector[1 + list(self.COSINES).index(text)] = cosine, math.sqrt(1 - cosine**2)
        return vector

    def embed_documents(self, texts):
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text):
        return self._one(text)


def angle_engine(**kwargs) -> MemoryEngine:
    return MemoryEngine(InMemoryStore(), AngleEmbedder(), SimilarityRanker(), clock=TickingClock(), **kwargs)


def test_default_thresholds_are_the_calibrated_ones(monkeypatch):
    engine = make()
    assert (engine.dedup_threshold, engine.duplicate_threshold) == (DEDUP_THRESHOLD, DUPLICATE_THRESHOLD)
    assert (DEDUP_THRESHOLD, DUPLICATE_THRESHOLD) == (0.73, 0.87)  # docs/benchmarks.md, near-duplicates
    settings = Settings()
    assert (settings.dedup_threshold, settings.duplicate_threshold) == (0.73, 0.87)
    monkeypatch.setenv("MCP_MEMORY_DEDUP_THRESHOLD", "0.8")
    monkeypatch.setenv("MCP_MEMORY_DUPLICATE_THRESHOLD", "0.9")
    assert (Settings().dedup_threshold, Settings().duplicate_threshold) == (0.8, 0.9)


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("restated, 0.93", "duplicate"),
        ("restated, 0.90", "duplicate"),
        ("close, 0.80", "related"),
        ("far, 0.70", None),
    ],
)
def test_similar_lists_at_the_dedup_threshold_and_names_the_relation(text, listed):
    engine = angle_engine()
    first = engine.store_memory(AngleEmbedder.ANCHOR).memory
    outcome = engine.store_memory(text)
    assert outcome.status == "stored" and engine.count() == 2  # a restatement is still stored
    if listed is None:
        assert outcome.similar == []
    else:
        assert [(s.memory.id, s.relation) for s in outcome.similar] == [(first.id, listed)]
        assert outcome.similar[0].similarity == pytest.approx(AngleEmbedder.COSINES[text], abs=1e-5)


def test_supersede_replaces_only_a_duplicate_never_a_related_memory():
    engine = angle_engine(conflict_policy="supersede")
    first = engine.store_memory(AngleEmbedder.ANCHOR).memory
    close = engine.store_memory("close, 0.80")
    assert close.status == "stored" and close.superseded is None
    assert [(s.memory.id, s.relation) for s in close.similar] == [(first.id, "related")]
    assert engine.get_memory(first.id).status == "current"
    restated = engine.store_memory("restated, 0.90")  # 0.90 to the anchor, 0.72 to "close"
    assert restated.status == "superseded" and restated.superseded.id == first.id
    assert engine.get_memory(first.id).head_id == restated.memory.id
    assert engine.get_memory(close.memory.id).status == "current"
    assert engine.count() == 2


def test_a_dedup_threshold_above_the_duplicate_one_makes_every_listed_memory_a_duplicate():
    # as with a dedup threshold set before the duplicate one existed (e.g. the old 0.95)
    engine = angle_engine(dedup_threshold=0.92, conflict_policy="supersede")
    first = engine.store_memory(AngleEmbedder.ANCHOR).memory
    assert engine.store_memory("restated, 0.90").similar == []
    outcome = engine.store_memory("restated, 0.93")
    assert outcome.status == "superseded" and outcome.superseded.id == first.id
    assert [s.relation for s in outcome.similar] == ["duplicate"]


# -- namespaces ------------------------------------------------------------------------------------
def test_no_query_crosses_namespaces_unless_asked():
    engine = make()
    mine = engine.store_memory("alpha project uses postgres").memory
    theirs = engine.store_memory("beta project uses postgres", namespace="beta").memory
    assert ids(engine.search_memories("project postgres")) == [mine.id]
    assert set(ids(engine.search_memories("project postgres", namespace="*"))) == {mine.id, theirs.id}
    assert [m.id for m in engine.list_memories(namespace="beta").memories] == [theirs.id]
    assert engine.list_namespaces() == {"default": 1, "beta": 1}


@pytest.mark.parametrize("bad", ["", "Has Caps", "with space", "-leading", "x" * 65, "a/b"])
def test_namespace_names_are_validated(bad):
    with pytest.raises(InvalidInputError, match="namespace"):
        make().store_memory("x", namespace=bad)


def test_star_is_for_reads_only():
    with pytest.raises(InvalidInputError, match="only allowed"):
        make().store_memory("x", namespace="*")


def test_default_namespace_is_the_git_project(tmp_path: Path):
    repo = tmp_path / "My Project"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert derive_namespace(repo / "src") == "my-project"
    plain = tmp_path / "notes_dir"
    plain.mkdir()
    assert derive_namespace(plain) == "notes_dir"
    assert derive_namespace(Path("/")) == "user"
    assert derive_namespace(Path.home()) == "user"
    assert derive_project(Path.home()) is None
    assert slug("Ünïcode Name!") == "n-code-name"
    reserved = tmp_path / "user"
    (reserved / ".git").mkdir(parents=True)
    assert derive_namespace(reserved) == "user-project"


def test_worktrees_of_one_repository_share_its_namespace(tmp_path: Path):
    """A real `git worktree add`: the linked worktree (any name) maps to the main repository's name."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.fail("git is needed for this test")
    repo = tmp_path / "Atlas"
    repo.mkdir()

    def git(*args: str, cwd: Path = repo) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x")
    git("worktree", "add", "-q", str(tmp_path / "feature-branch-checkout"))
    (tmp_path / "feature-branch-checkout" / "src").mkdir()
    assert derive_namespace(repo) == "atlas"
    assert derive_namespace(tmp_path / "feature-branch-checkout" / "src") == "atlas"
    assert current_context(tmp_path / "feature-branch-checkout")["project"] == "Atlas"


def test_context_is_attached_to_new_memories(tmp_path: Path):
    context = current_context(tmp_path)
    engine = make(context=context)
    memory = engine.store_memory("remember this").memory
    assert memory.metadata["context"] == context
    assert set(context) == {"cwd", "project", "platform"}
    explicit = engine.store_memory("explicit context", metadata={"context": {"project": "x"}}).memory
    assert explicit.metadata["context"] == {"project": "x"}


# -- history -----------------------------------------------------------------------------------------
def test_history_lists_the_chain_oldest_first():
    engine = make()
    a = engine.store_memory("version one of the fact").memory
    b = engine.update_memory(a.id, "version two of the fact").memory
    c = engine.update_memory(b.id, "version three of the fact").memory
    for start in (a, b, c):
        view = engine.get_memory(start.id, history=True)
        assert [m.id for m in view.history] == [a.id, b.id, c.id]
        assert view.head_id == c.id
    assert engine.get_memory(b.id).history is None
