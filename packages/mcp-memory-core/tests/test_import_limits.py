"""What an import reads is bounded: a ChatGPT export's conversations.json is read one conversation at a
time, a zip member may not inflate past a cap (whatever its header says), and only regular files are
read. Every refusal is one sentence, and nothing is written."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_import_safety import import_file, stored
from test_transfer import chatgpt_export, make_engine

from mcp_memory_core import InvalidInputError, json_stream, surrogates, transfer
from mcp_memory_core.transfer import (
    chat_archive,
    detect_format,
    files,
    parse_chatgpt_conversations,
    read_memories,
)


def zip_with(path: Path, text: str) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("chat.html", "<html></html>")
        archive.writestr("conversations.json", text)
    return path


# -- zip bombs -------------------------------------------------------------------------------------
def test_a_member_inflating_past_the_cap_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_archive, "MAX_CHAT_JSON_BYTES", 1 << 20)
    bomb = zip_with(tmp_path / "export.zip", json.dumps(chatgpt_export()) + " " * (2 << 20))
    opened: list[Any] = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(
        zipfile.ZipFile, "open", lambda self, *a, **k: opened.append(a) or real_open(self, *a, **k)
    )
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, bomb, "chatgpt")
    assert str(caught.value) == (
        f"{bomb}: its conversations.json inflates to 2.0 MiB, more than the 1.0 MiB an import reads from "
        "a zip; unzip it and import the conversations.json file itself."
    )
    assert opened == [] and stored(engine) == []


def lie_about_the_size(path: Path, size: int) -> None:
    """Rewrite conversations.json's uncompressed size in the zip's headers (local and central)."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            name_at = start + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at : name_at + len("conversations.json")] == b"conversations.json":
                struct.pack_into("<I", data, start + offset, size)
            start += 4
    path.write_bytes(bytes(data))


def test_a_member_whose_header_understates_its_size_is_refused_as_damaged(tmp_path: Path) -> None:
    bomb = zip_with(tmp_path / "export.zip", json.dumps(chatgpt_export()) + " " * (2 << 20))
    lie_about_the_size(bomb, 100)
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, bomb, "chatgpt")
    assert str(caught.value).startswith(f"{bomb}: the zip is damaged (")
    assert str(caught.value).endswith("); download the export again.")
    assert stored(engine) == []


def test_the_inflated_bytes_are_counted_while_reading() -> None:
    capped = transfer.Inflated(io.BytesIO(b"x" * 100), limit=64, refusal="too much")
    with pytest.raises(InvalidInputError, match=r"^too much$"):
        capped.read()
    assert transfer.Inflated(io.BytesIO(b"x" * 64), limit=64, refusal="too much").read() == b"x" * 64


# -- one conversation at a time ------------------------------------------------------------------------
@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_the_streamed_read_equals_a_whole_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    export = chatgpt_export()
    export[0]["mapping"]["n2"]["message"]["content"]["parts"] = ['tea \ud83d and 1.5e3 \\ " ] , {']
    text = json.dumps(export, indent=1)  # newlines, escapes, numbers and brackets inside strings
    plain = tmp_path / "conversations.json"
    plain.write_text(text, encoding="utf-8")
    archive = zip_with(tmp_path / "export.zip", text)
    whole = parse_chatgpt_conversations(surrogates.repair(json.loads(text))[0], include_assistant=True)
    for path in (plain, archive):
        streamed = read_memories(path, "chatgpt", include_assistant=True)
        assert [m.model_dump() for m in streamed] == [m.model_dump() for m in whole]
        assert streamed.repaired == 1 and streamed.origins == whole.origins


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}', "holds a JSON list of conversations; this is not a list."),
        ('[{"mapping": {}}', "not JSON (line 1: Expecting ',' delimiter)."),
        ('[{"mapping": {"a": "\\x"}}]', "not JSON (line 1: Invalid \\escape)."),
        (
            '[\n{"mapping": {}},\n{"mapping": {}}\n{"mapping": {}}]',
            "not JSON (line 4: Expecting ',' delimiter).",
        ),
        ('[{"mapping": {}}, ]', "not JSON (line 1: Expecting value)."),
        ('[{"mapping": {}}] x', "not JSON (line 1: Extra data)."),
        ("", "not JSON (line 1: Expecting value)."),
    ],
)
def test_bad_json_is_one_sentence_naming_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 3)
    path = tmp_path / "conversations.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        read_memories(path, "chatgpt")
    assert message in str(caught.value) and str(caught.value).count("\n") == 0


def test_a_conversation_larger_than_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_archive, "MAX_CONVERSATION_CHARS", 20_000)
    export = chatgpt_export()
    export[1]["mapping"]["u1"]["message"]["content"]["parts"] = ["x" * 50_000]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        read_memories(path, "chatgpt")
    assert str(caught.value) == (
        f"{path}: conversation 2 is larger than 20,000 characters; is this a ChatGPT export's conversations.json?"
    )


def test_a_large_export_is_read_one_conversation_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 MB of assistant replies (not imported): the reader holds one conversation, not the file."""
    monkeypatch.setattr(json_stream, "CHUNK", 64 << 10)
    template = chatgpt_export()[0]
    conversations = []
    for number in range(200):
        conversation = json.loads(json.dumps(template))
        conversation["conversation_id"] = f"c{number}"
        conversation["mapping"]["n3"]["message"]["content"]["parts"] = [f"{number} " + "y" * 100_000]
        conversations.append(conversation)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        memories = read_memories(path, "chatgpt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(memories) == 200 * len(parse_chatgpt_conversations([template]))
    assert peak < size / 8, f"peak {peak} bytes while reading {size} bytes"


# -- only regular files --------------------------------------------------------------------------------
@pytest.mark.parametrize("format", ["mcp-memory", "chatgpt", "mcp-knowledge-graph"])
def test_only_regular_files_are_read(format: Any) -> None:
    device = Path("/dev/null")
    message = "/dev/null is not a regular file: save what you want to import to a file and import that."
    with pytest.raises(InvalidInputError) as caught:
        read_memories(device, format)
    assert str(caught.value) == message
    with pytest.raises(InvalidInputError) as caught:
        detect_format(device)
    assert str(caught.value) == message


def test_format_detection_reads_a_bounded_first_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "DETECT_LINE_CHARS", 100)
    entity = {"type": "entity", "name": "Ada", "observations": ["Writes Rust " * 20]}
    path = tmp_path / "memory.jsonl"
    path.write_text("\n" + " " * 250 + "\n" + json.dumps(entity) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="Cannot tell the format"):
        detect_format(path)  # the first 100 characters of the line are not JSON on their own
    assert len(read_memories(path, "mcp-knowledge-graph")) == 1  # --format reads it whole
    monkeypatch.setattr(files, "DETECT_LINE_CHARS", 1000)
    assert detect_format(path) == "mcp-knowledge-graph"
