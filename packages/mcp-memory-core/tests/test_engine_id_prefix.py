"""``get_memory`` takes a unique prefix of an id (8 characters or more), counted among the memories
the Scope may read only: a prefix never reveals that another user's private memory exists."""

import uuid
from collections.abc import Iterator

import pytest

from mcp_memory_core import InvalidInputError, MemoryEngine, MemoryNotFoundError, Scope
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

ALICE = Scope.for_user("alice", project="atlas")
BOB = Scope.for_user("bob", project="atlas")
ALICE_PRIVATE = "abcdef01-1111-4111-8111-111111111111"
BOB_PRIVATE = "abcdef01-2222-4222-8222-222222222222"
ALICE_PUBLIC = "abcdef01-3333-4333-8333-333333333333"


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> MemoryEngine:
    ids: Iterator[str] = iter([ALICE_PRIVATE, BOB_PRIVATE, ALICE_PUBLIC])
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(next(ids)))  # new memories take these ids
    engine = MemoryEngine(
        InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock(), require_scope=True
    )
    assert engine.store_memory("alice's door code is 4711", scope=ALICE).memory.id == ALICE_PRIVATE
    assert engine.store_memory("bob parks on level 2", scope=BOB).memory.id == BOB_PRIVATE
    return engine


def missing_message(engine: MemoryEngine, memory_id: str, scope: Scope) -> str:
    with pytest.raises(MemoryNotFoundError) as caught:
        engine.get_memory(memory_id, scope=scope)
    return str(caught.value).replace(memory_id, "ID")


def test_a_unique_prefix_gets_the_memory(engine: MemoryEngine) -> None:
    assert engine.get_memory("abcdef01", scope=BOB).memory.id == BOB_PRIVATE  # alice's is not counted
    assert engine.get_memory(" ABCDEF01-2222 ", scope=BOB).memory.content == "bob parks on level 2"
    assert engine.get_memory("abcdef01-1", history=True, scope=ALICE).memory.id == ALICE_PRIVATE


def test_a_prefix_never_reveals_another_users_private_memory(engine: MemoryEngine) -> None:
    hidden = missing_message(engine, "abcdef01-1111", scope=BOB)
    assert hidden == missing_message(engine, "abcdef01-9999", scope=BOB)
    assert hidden == missing_message(engine, "00000000-0000-4000-8000-000000000000", scope=BOB)


def test_an_ambiguous_prefix_says_how_many_readable_memories_match(engine: MemoryEngine) -> None:
    engine.store_memory("the wifi is atlas-guest", privacy_scope="public", scope=ALICE)
    for scope in (ALICE, BOB):  # each sees its own private one and the public one: two, never three
        with pytest.raises(InvalidInputError, match=r"'abcdef01' matches 2 memories") as caught:
            engine.get_memory("abcdef01", scope=scope)
        assert str(caught.value).count(". ") == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abcdef0", "too short to find a memory by: give at least 8 characters"),
        ("abcdef01x", "is not a memory id"),
        ("not-a-uuid", "is not a memory id"),
        ("", "is not a memory id"),
    ],
)
def test_a_short_or_foreign_prefix_is_refused_in_one_sentence(
    engine: MemoryEngine, text: str, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        engine.get_memory(text, scope=ALICE)


def test_a_prefix_is_found_past_the_first_chunk_and_a_whole_id_is_taken_as_it_is(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = iter(f"00000000-0000-4000-8000-{n:012d}" for n in range(150))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(next(ids)))
    for n in range(150):  # newer than alice's first memory: it comes in the second chunk of the scan
        engine.store_memory(f"note number {n} about topic {n * 7}", scope=ALICE)
    assert engine.get_memory("abcdef01", scope=ALICE).memory.id == ALICE_PRIVATE
    assert engine.get_memory(ALICE_PRIVATE.replace("-", ""), scope=ALICE).memory.id == ALICE_PRIVATE


def test_the_store_matches_the_prefix_so_a_lookup_reads_only_what_it_names(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = iter(f"00000000-0000-4000-8000-{n:012d}" for n in range(150))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(next(ids)))
    for n in range(150):
        engine.store_memory(f"note number {n} about topic {n * 7}", scope=ALICE)
    listed: list[str] = []
    store = engine.store
    original = store.list

    def counting_list(*args: object, **kwargs: object) -> list:  # type: ignore[type-arg]
        rows = original(*args, **kwargs)  # type: ignore[arg-type]
        listed.extend(m.id for m in rows)
        return rows

    monkeypatch.setattr(store, "list", counting_list)
    assert engine.get_memory("abcdef01", scope=ALICE).memory.id == ALICE_PRIVATE
    assert listed == [ALICE_PRIVATE]  # bob's private one is not the store's to return to alice either
