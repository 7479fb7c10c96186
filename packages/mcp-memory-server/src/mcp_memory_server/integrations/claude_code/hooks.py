"""Automatic recall for Claude Code through its hooks (issue 16): what ``mcp-memory hook NAME`` does
when Claude Code runs it. ``settings.py`` installs the handlers; ``cli/hooks.py`` is the command.

The contract, as Claude Code's hooks reference states it (code.claude.com/docs/en/hooks, formerly
docs.anthropic.com/en/docs/claude-code/hooks; read through the dated copies of that page at
spybara.com/anthropic/claude-code/history/docs/en/…, its mirror in catlog22/Claude-Code-Workflow
``.claude/docs/HOOKS_OFFICIAL_REFERENCE.md``, and the Agent SDK's typed inputs, e.g. docs.rs
``starpod-agent-sdk`` ``HookInput``):

- A command hook gets one JSON object on stdin. Every event has ``session_id``, ``transcript_path``
  (the conversation as JSON Lines), ``cwd`` (the working directory when the hook fires),
  ``permission_mode`` and ``hook_event_name``.
- ``SessionStart`` adds ``source`` (``startup`` | ``resume`` | ``clear`` | ``compact``) and ``model``;
  ``UserPromptSubmit`` adds ``prompt`` (a slash command arrives unexpanded); ``Stop`` adds
  ``stop_hook_active`` and, in recent versions, ``last_assistant_message`` (the transcript file is
  written asynchronously and may lag; the field avoids reading it); ``PreCompact`` adds ``trigger``
  (``manual`` | ``auto``) and ``custom_instructions``.
- Exit 0 is success: for SessionStart and UserPromptSubmit, plain text on stdout is added to
  Claude's context, and JSON on stdout is read as structured output, where
  ``{"hookSpecificOutput": {"hookEventName": "<event>", "additionalContext": "..."}}`` adds context.
  For the other events stdout is only shown in verbose mode (plain text from a Stop hook never
  reaches the model). ``systemMessage`` (every event) is a message shown to the user.
- Exit 2 is a blocking error: for UserPromptSubmit it blocks the prompt and erases it; SessionStart
  cannot be blocked. Any other exit code is a non-blocking error (stderr in verbose mode) and the
  session goes on. A hook that times out (``timeout``, seconds, default 60) is cancelled.

So every hook here FAILS OPEN: any error (bad stdin, no or a broken database, a bad setting, a
plugin that fails) is exit 0 with nothing on stdout, a line on stderr and the traceback in
``hooks.log`` beside the database (:func:`log_failure`). The installed command ends in ``|| true``
so that even an mcp-memory that cannot start (``uv`` itself exits with 2 when a clone has moved)
never blocks a prompt.

What each hook does:

- ``session-start``: the project's memories (and the personal ``user`` namespace's), pinned first,
  then by importance, then newest, packed into the budget exactly as ``memory_injection`` packs
  search hits (:func:`mcp_memory_core.recall.pack`). Nothing is searched: no query exists yet.
- ``user-prompt-submit``: :meth:`MemoryEngine.recall` with the prompt, the very call behind the
  ``memory_injection`` prompt: a search (relevance floor included: an off-topic prompt injects
  nothing), packed into the budget. The prompt is cut to :data:`MAX_QUERY_CHARS` first.
- ``stop`` / ``pre-compact``: off unless ``--store-decisions`` (or ``MCP_MEMORY_HOOK_STORE_DECISIONS``).
  Then only explicit lines are stored (:func:`decision_lines`): a line of an assistant message that
  starts with ``Decision:`` or ``Remember:`` (after an optional list bullet or bold marker, outside
  code fences), one memory per line, at most :data:`MAX_DECISIONS` per message and
  :data:`MAX_DECISION_CHARS` each; a longer line is skipped, never cut. Stop reads the last assistant
  message; PreCompact every assistant message of the transcript (what compaction is about to
  summarise away), reading only lines that contain a marker. The transcript itself is never stored;
  the same line twice is the engine's ``duplicate``, not a second memory.

The namespace is the server's: the hook changes into the payload's ``cwd`` before the settings
derive the project (``MCP_MEMORY_NAMESPACE`` still wins), and the Scope is ``MCP_MEMORY_USER``'s, so
another user's private memories are never injected.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.plugins import PluginManager
    from mcp_memory_core.settings import Settings

log = logging.getLogger(__name__)

HOOKS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}
DEFAULT_BUDGET = 800
BUDGET_SETTING = "MCP_MEMORY_HOOK_BUDGET"
STORE_DECISIONS_SETTING = "MCP_MEMORY_HOOK_STORE_DECISIONS"
SESSION_START_CANDIDATES = 200  # the newest current memories session-start orders (pinned, importance)
MAX_QUERY_CHARS = 2_000  # a pasted log is a prompt too: search with its start
MAX_DECISIONS = 10
MAX_DECISION_CHARS = 1_000
TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024  # Stop without last_assistant_message: the end of the transcript
LOG_FILE = "hooks.log"
LOG_MAX_BYTES = 1_000_000
PLUGIN_CACHE = "hook-plugins.json"

_MARKER = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?(decision|remember)(?:\*\*|__)?\s*:(?:\*\*|__)?\s*(.+?)\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKER_WORDS = re.compile(r"decision|remember", re.IGNORECASE)


class HookInputError(ValueError):
    """The hook's stdin is not what Claude Code sends."""


# -- entry point -----------------------------------------------------------------------------------------
def run(name: str, raw: bytes, *, budget: int = DEFAULT_BUDGET, store_decisions: bool = False) -> str:
    """What hook ``name`` prints on stdout for the stdin ``raw`` ('' for nothing). Raises on any error:
    the caller (:func:`run_failing_open`) turns that into exit 0 and no output."""
    event = HOOKS[name]
    payload = read_payload(raw)
    if name == "session-start":
        return context_output(event, session_start(payload, budget))
    if name == "user-prompt-submit":
        return context_output(event, user_prompt_submit(payload, budget))
    stored, notes = store_decisions_of(payload, event) if store_decisions else (0, [])
    if not stored and not notes:
        return ""
    what = "decision" if stored == 1 else "decisions"
    said = f" ({'; '.join(notes)})" if notes else ""
    return json.dumps({"systemMessage": f"mcp-memory remembered {stored} {what} from this session{said}."})


def run_failing_open(name: str, raw: bytes, *, budget: int, store_decisions: bool) -> str:
    """:func:`run`, but any error at all is logged (:func:`log_failure`) and answered with ''."""
    started = time.perf_counter()
    try:
        out = run(name, raw, budget=budget, store_decisions=store_decisions)
    except BaseException as exc:  # fail open: nothing may block the prompt
        log_failure(name, exc)
        return ""
    log.info("hook %s answered in %.0f ms", name, (time.perf_counter() - started) * 1000)
    return out


def read_payload(raw: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HookInputError(f"stdin is not JSON ({exc}).") from None
    except RecursionError:
        raise HookInputError("stdin nests JSON too deeply to be a hook's input.") from None
    if not isinstance(payload, dict):
        raise HookInputError("stdin is not a JSON object.")
    return payload


def context_output(event: str, text: str) -> str:
    """The JSON that adds ``text`` to Claude's context ('' when there is nothing to add)."""
    if not text:
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False
    )


# -- the hooks -------------------------------------------------------------------------------------------
def session_start(payload: dict[str, Any], budget: int) -> str:
    from mcp_memory_core.models import SearchHit
    from mcp_memory_core.protocols import TokenCounting
    from mcp_memory_core.recall import approximate_tokens, pack

    engine = open_engine(payload, create=False)
    if engine is None:
        return ""
    try:
        page = engine.list_memories(SESSION_START_CANDIDATES)
        ordered = sorted(
            page.memories, key=lambda m: (not m.pinned, -m.importance, -m.updated_at.timestamp())
        )
        hits = [SearchHit(m, score=0.0, matched_id=None, similarity=None, parts={}) for m in ordered]
        embedder = engine.embedder
        counter = embedder.count_tokens if isinstance(embedder, TokenCounting) else approximate_tokens
        return pack(hits, budget, counter, engine.clock()).text
    finally:
        engine.close()


def user_prompt_submit(payload: dict[str, Any], budget: int) -> str:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise HookInputError("UserPromptSubmit input has no prompt.")
    query = prompt.strip()[:MAX_QUERY_CHARS]
    if not query:
        return ""
    engine = open_engine(payload, create=False)
    if engine is None:
        return ""
    try:
        return engine.recall(query, budget).text
    finally:
        engine.close()


def store_decisions_of(payload: dict[str, Any], event: str) -> tuple[int, list[str]]:
    """Store the explicit decisions of this session (see the module docstring); how many were new,
    and what was said of secrets (redacted in one, or one left out under MCP_MEMORY_SECRETS=refuse:
    the others are still stored). No engine is built and no model loaded when there are none."""
    if event == "Stop":
        message = payload.get("last_assistant_message")
        if not isinstance(message, str):
            message = last_assistant_text(_transcript(payload))
        found = decision_lines([message])
    else:
        found = decision_lines(assistant_texts(_transcript(payload), marked_only=True))
    if not found:
        return 0, []
    from mcp_memory_core.secret_scan import SecretRefusedError, listing

    from ...operations.write import StoreRequest, store

    session = payload.get("session_id")
    engine = open_engine(payload, create=True)
    assert engine is not None
    stored = 0
    notes: list[str] = []
    try:
        for kind, line in found:
            metadata: dict[str, Any] = {"source": "claude-code", "hook": event}
            if isinstance(session, str) and session:
                metadata["session_id"] = session
            request = StoreRequest(content=line, metadata=metadata, type="semantic", tags=[kind])
            try:
                receipt = store(engine, engine.default_scope, request)
            except SecretRefusedError as exc:
                notes.append(f"left out 1 holding {listing(exc.findings)}")
                continue
            stored += receipt.status != "duplicate"
            notes += [receipt.redaction] if receipt.redaction else []
    finally:
        engine.close()
    return stored, notes


# -- decisions ---------------------------------------------------------------------------------------------
def decision_lines(messages: Iterable[str]) -> list[tuple[str, str]]:
    """``(kind, line)`` for each explicit decision in ``messages``: ``kind`` is ``decision`` or
    ``remember``, ``line`` is ``"Decision: <text>"`` / ``"Remember: <text>"`` (the label kept: it
    says what the memory is). Lines inside code fences, empty ones and ones over
    :data:`MAX_DECISION_CHARS` are skipped; at most :data:`MAX_DECISIONS` per message; each line once."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for message in messages:
        taken = 0
        fenced = False
        for raw in message.splitlines():
            if _FENCE.match(raw):
                fenced = not fenced
                continue
            match = None if fenced else _MARKER.match(raw)
            if match is None:
                continue
            kind, text = match.group(1).lower(), match.group(2).strip().strip("*_").strip()
            if not text or len(text) > MAX_DECISION_CHARS:
                continue
            line = f"{kind.capitalize()}: {text}"
            if line in seen:
                continue
            seen.add(line)
            found.append((kind, line))
            taken += 1
            if taken == MAX_DECISIONS:
                break
    return found


def _transcript(payload: dict[str, Any]) -> Path | None:
    path = payload.get("transcript_path")
    return Path(path).expanduser() if isinstance(path, str) and path else None


def _entry_text(entry: Any) -> str | None:
    """The text of an assistant entry of a transcript (``{"type": "assistant", "message": {"content":
    str | [{"type": "text", "text": ...}, ...]}}``), or None for anything else."""
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def last_assistant_text(path: Path | None) -> str:
    """The text of the last assistant entry with text in the transcript's last
    :data:`TRANSCRIPT_TAIL_BYTES` ('' when there is none)."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - TRANSCRIPT_TAIL_BYTES))
        lines = handle.read().splitlines()
    return next((text for line in reversed(lines) if (text := _assistant_line(line))), "")


def assistant_texts(path: Path | None, *, marked_only: bool) -> Iterator[str]:
    """The text of every assistant entry of the transcript; with ``marked_only`` only of the lines
    that mention a marker word (the rest is not even parsed)."""
    if path is None or not path.is_file():
        return
    with path.open("rb") as handle:
        for line in handle:
            if marked_only and not _MARKER_WORDS.search(line.decode("utf-8", "replace")):
                continue
            if text := _assistant_line(line):
                yield text


def _assistant_line(line: bytes) -> str:
    """The text of a transcript line if it is an assistant entry ('' otherwise, or unreadable)."""
    if b'"assistant"' not in line:
        return ""
    try:
        return _entry_text(json.loads(line)) or ""
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ""


# -- the engine, quickly -----------------------------------------------------------------------------------
def open_engine(payload: dict[str, Any], *, create: bool) -> MemoryEngine | None:
    """The engine the server would build in the payload's ``cwd``, loading only the plugins it uses
    (:func:`hook_plugins`). None when ``create`` is off and the SQLite database does not exist yet
    (nothing stored: nothing to say, and nothing to log on every prompt)."""
    from mcp_memory_core.settings import Settings

    from ...runtime.assembly import build_engine

    settings = Settings()  # reads the environment; resolves the database path against the old cwd
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        os.chdir(cwd)  # the project namespace is derived from the working directory, as the server does
    if not create:
        if (
            settings.store == "sqlite-vec"
            and str(settings.db_path) != ":memory:"
            and not settings.db_path.exists()
        ):
            return None
        settings = settings.model_copy(update={"create_database": False})
    # A hook exits right after its stores: their sentences are embedded before it answers.
    settings = settings.model_copy(update={"defer_passages": False})
    return build_engine(settings, hook_plugins(settings))


def hook_plugins(settings: Settings) -> PluginManager:
    """A plugin manager holding the plugins that provide the configured store, embedder, ranker and
    rerankers, and no other: which entry point provides which backend is cached in
    :data:`PLUGIN_CACHE` beside the database, keyed by every installed entry point (name, target,
    package, version) and the disable settings. Without a valid cache every plugin is loaded (as the
    server does, conflicts and unknown names raising the same errors) and the cache written."""
    from importlib.metadata import entry_points

    from mcp_memory_core.hookspecs import ENTRY_POINT_GROUP
    from mcp_memory_core.plugins import PluginManager

    from ...runtime.assembly import load_plugins

    points = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
    packages = {ep.name: (ep.dist.metadata["Name"] if ep.dist is not None else "?") for ep in points}
    fingerprint = [
        *(
            [ep.name, ep.value, packages[ep.name], ep.dist.version if ep.dist is not None else "?"]
            for ep in points
        ),
        ["disabled", settings.disable_plugins, str(settings.strict_plugins)],
    ]
    wanted = [
        f"store:{settings.store}",
        f"embedder:{settings.embedder}",
        f"ranker:{settings.ranker}",
        *(f"reranker:{name}" for name in settings.rerankers),
    ]
    wanted = [key.strip().lower() for key in wanted]
    cache = data_dir(settings) / PLUGIN_CACHE
    providers = _read_plugin_cache(cache, fingerprint)
    if providers is not None and all(key in providers for key in wanted):
        needed = {package for key in wanted for package in [providers[key]]}
        disabled = {d for d in settings.disable_plugins.split(",")} | {
            ep.name for ep in points if packages[ep.name] not in needed
        }
        manager = PluginManager(strict=settings.strict_plugins, disabled=disabled)
        manager.load_entry_points()
        # A package that changed without a new version (an editable install) may no longer provide
        # what the cache says: then load everything and write the cache again.
        if all(key.partition(":")[2] in manager.names(key.partition(":")[0]) for key in wanted):  # type: ignore[arg-type]
            return manager
    manager = load_plugins(settings)
    rows = manager.backends()  # raises PluginConflictError as the server would
    _write_plugin_cache(cache, fingerprint, {f"{row.kind}:{row.name}": row.package for row in rows})
    return manager


def _read_plugin_cache(path: Path, fingerprint: list[list[str]]) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint:
        return None
    providers = data.get("providers")
    return providers if isinstance(providers, dict) else None


def _write_plugin_cache(path: Path, fingerprint: list[list[str]], providers: dict[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(
            json.dumps({"fingerprint": fingerprint, "providers": providers}), encoding="utf-8"
        )
        os.replace(temporary, path)
    except OSError as exc:  # a cache: the next hook loads every plugin again
        log.debug("Plugin cache not written: %s", exc)


# -- where logs go -------------------------------------------------------------------------------------------
def data_dir(settings: Settings | None = None) -> Path:
    """The folder of the database (the user data dir by default): the hook log and plugin cache live there."""
    if settings is not None and str(settings.db_path) != ":memory:":
        return settings.db_path.parent
    raw = os.environ.get("MCP_MEMORY_DB_PATH", "").strip()
    if raw and raw != ":memory:":
        return Path(raw).expanduser().absolute().parent
    import platformdirs

    return Path(platformdirs.user_data_dir("mcp-memory", appauthor=False))


def log_failure(name: str, exc: BaseException) -> None:
    """One line on stderr (Claude Code shows it in verbose mode) and the traceback in ``hooks.log``."""
    summary = f"{type(exc).__name__}: {exc}".strip().rstrip(".")
    try:
        sys.stderr.write(
            f"mcp-memory hook {name}: skipped ({summary}); see {LOG_FILE} in the data directory.\n"
        )
        sys.stderr.flush()
    except Exception:  # stderr closed: nothing else to do
        pass
    try:
        path = data_dir() / LOG_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(f"{LOG_FILE}.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        detail = "".join(traceback.format_exception(exc)).rstrip()
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} hook {name} failed open: {summary}\n{detail}\n")
    except Exception:  # an unwritable log must not fail the hook
        pass
