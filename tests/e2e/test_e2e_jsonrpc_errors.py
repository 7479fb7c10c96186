"""A malformed line on stdin gets a JSON-RPC error on stdout (never silence), and the server goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import INITIALIZE, INITIALIZED, RawServer, module_command, server_env

pytestmark = pytest.mark.e2e

# The fast fakes: this is about the stdio transport, not the model.
FAKES = {"MCP_MEMORY_STORE": "memory", "MCP_MEMORY_EMBEDDER": "hash", "MCP_MEMORY_RANKER": "similarity"}
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SEARCH = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_memories","arguments":%s}}\n'
)
MALFORMED = [  # (line, error code, id of the reply)
    (b"{not json\n", PARSE_ERROR, None),
    (b'{"foo":1}\n', INVALID_REQUEST, None),
    (b"[]\n", INVALID_REQUEST, None),
    (b'"just a string"\n', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":7,"method":5}\n', INVALID_REQUEST, 7),  # a request: answered by its id
    (b'{"jsonrpc":"2.0","id":8,"result":5,"error":{}}\n', INVALID_REQUEST, None),  # not a request
    # JSON, but more than the SDK's parser reads: answered by the request's id, with what to change
    (SEARCH % (9, rb'{"query":"\ud800"}'), INVALID_PARAMS, 9),  # half a surrogate pair
    (SEARCH % (10, b'{"query":' + b"[" * 10_000 + b"]" * 10_000 + b"}"), INVALID_PARAMS, 10),
    (
        b'{"jsonrpc":"2.0","id":"s","method":"ping","extra":' + b"[" * 300 + b"]" * 300 + b"}\n",
        INVALID_REQUEST,
        "s",
    ),
]
SAYS = {9: "half of a UTF-16 surrogate pair", 10: "levels deep", "s": "levels deep"}  # by the reply's id


def test_each_malformed_line_is_answered_and_the_server_keeps_serving(db_path: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "server.err"
    with RawServer(module_command(), server_env(db_path, **FAKES), errlog) as server:
        assert "result" in server.request(INITIALIZE)
        server.send(INITIALIZED)
        for number, (line, code, reply_id) in enumerate(MALFORMED, start=100):
            server.send_line(line)
            reply = server.receive(timeout=30)
            assert reply["jsonrpc"] == "2.0" and reply["id"] == reply_id and "result" not in reply, line
            assert reply["error"]["code"] == code and reply["error"]["message"], line
            assert SAYS.get(reply_id, "") in reply["error"]["message"], line
            answer = server.request({"jsonrpc": "2.0", "id": number, "method": "tools/list"})
            assert "store_memory" in {tool["name"] for tool in answer["result"]["tools"]}, line
    assert server.proc.returncode == 0
    assert errlog.read_text().count("Answered a malformed JSON-RPC line") == len(MALFORMED)  # on stderr
