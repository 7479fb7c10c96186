"""Rows decode to the memory that was encoded, built as pydantic's own ``model_construct`` builds it."""

from datetime import UTC, datetime

import pytest

from mcp_memory_core import Memory
from mcp_memory_core.row_codec import JsonTextRowCodec, RowCodec, trusted_memory


def _memory(**changes):
    base = Memory(
        content="The deploy runs on Fridays.",
        metadata={"source": "chat", "nested": {"n": 1}},
        tags=["ops", "deploy"],
        importance=0.7,
        thread="standup",
        occurred_at=datetime(2026, 5, 1, 9, 30, tzinfo=UTC),
    )
    return base.model_copy(update=changes)


@pytest.mark.parametrize("codec", [RowCodec(), JsonTextRowCodec()], ids=["native", "json-text"])
@pytest.mark.parametrize(
    "memory",
    [
        _memory(),
        _memory(metadata={}, tags=()),
        _memory(deleted_at=datetime(2026, 6, 1, tzinfo=UTC), superseded_by="abc", pinned=True),
    ],
)
def test_a_row_decodes_to_the_memory_it_encodes(codec, memory):
    decoded = codec.decode(codec.encode(memory))
    assert decoded == memory
    assert decoded.model_dump() == memory.model_dump()


def test_the_direct_construction_is_what_model_construct_builds():
    memory = _memory()
    fields = dict(memory.__dict__)
    direct = trusted_memory(dict(fields))
    constructed = Memory.model_construct(**dict(fields))
    assert direct == constructed
    assert direct.model_fields_set == constructed.model_fields_set
    assert direct.__pydantic_extra__ == constructed.__pydantic_extra__
    assert direct.__pydantic_private__ == constructed.__pydantic_private__
    assert type(direct) is Memory and hash(direct.id) == hash(constructed.id)


def test_the_model_keeps_what_the_direct_construction_relies_on():
    """No aliases, no post-init hook, no extra fields: model_construct would do more than set the
    fields, and the direct construction would differ from it."""
    assert not Memory.__pydantic_post_init__
    assert Memory.model_config.get("extra") != "allow"
    assert all(f.alias is None and f.validation_alias is None for f in Memory.model_fields.values())


def test_a_row_missing_a_field_is_refused():
    fields = dict(_memory().__dict__)
    del fields["thread"]
    with pytest.raises(ValueError, match="exactly the fields"):
        trusted_memory(fields)
