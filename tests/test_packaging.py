"""What every published package says about itself on the package index, read from its pyproject.toml
and README (nothing is built): its license files (which the wheel and the sdist carry), the model's
own license in the model wheel, the project's links, trove classifiers, and a README whose links
work on the index's page (a relative link there points nowhere).

``uv build --all-packages -o DIR`` then listing the archives shows the same files inside them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    path.parent
    for pattern in ("packages/*", "plugins/*", "examples/*")
    for path in ROOT.glob(f"{pattern}/pyproject.toml")
)
REPOSITORY = "https://github.com/mcp-memory/mcp-memory"  # every package's Project-URLs: one value
LINK = re.compile(r"\]\(([^)\s]+)\)|^\[[^\]]+\]:\s*(\S+)", re.MULTILINE)


def project(folder: Path) -> dict[str, Any]:
    return dict(tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"])


def test_every_package_is_found() -> None:
    names = {project(folder)["name"] for folder in PACKAGES}
    assert {"mcp-memory-stack", "mcp-memory-app", "mcp-memory-core", "mcp-memory-postgres"} <= names
    assert len(PACKAGES) >= 12


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda folder: folder.name)
def test_every_package_carries_its_license_files(folder: Path) -> None:
    meta = project(folder)
    assert meta["license"] in ("MIT", "MIT AND Apache-2.0"), meta["license"]
    declared = meta.get("license-files")
    assert declared and "LICENSE" in declared, f'{folder.name}: declare license-files = ["LICENSE", …]'
    for pattern in declared:
        assert list(folder.glob(pattern)), f"{folder.name}: no file matches license-files {pattern!r}"
    assert (folder / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_the_model_wheel_carries_the_model_license() -> None:
    folder = ROOT / "plugins" / "mcp-memory-minilm"
    meta = project(folder)
    assert meta["license"] == "MIT AND Apache-2.0"
    model_license = (folder / "LICENSE-MODEL").read_text(encoding="utf-8")
    assert "Apache License" in model_license and "Version 2.0, January 2004" in model_license
    notice = (folder / "NOTICE").read_text(encoding="utf-8")
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice and "LICENSE-MODEL" in notice
    assert {"LICENSE", "LICENSE-MODEL", "NOTICE"} <= set(meta["license-files"])


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda folder: folder.name)
def test_every_package_links_the_repository(folder: Path) -> None:
    urls = project(folder).get("urls", {})
    assert urls.get("Repository") == REPOSITORY, f"{folder.name}: [project.urls] Repository"
    assert urls.get("Issues") == f"{REPOSITORY}/issues"
    documentation = f"{REPOSITORY}/tree/main/{folder.relative_to(ROOT).as_posix()}#readme"
    assert urls.get("Documentation") == documentation


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda folder: folder.name)
def test_every_package_has_classifiers(folder: Path) -> None:
    meta = project(folder)
    classifiers = meta.get("classifiers", [])
    assert "Programming Language :: Python :: 3 :: Only" in classifiers, folder.name
    assert "Programming Language :: Python :: 3.11" in classifiers  # requires-python's floor
    assert meta["requires-python"] == ">=3.11"
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert not any(c.startswith("License ::") for c in classifiers)  # the SPDX `license` says it (PEP 639)
    typed = any((folder / "src").glob("*/py.typed"))
    assert ("Typing :: Typed" in classifiers) == typed, f"{folder.name}: Typing :: Typed iff py.typed ships"


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda folder: folder.name)
def test_readme_links_work_on_the_package_index(folder: Path) -> None:
    readme = (folder / project(folder)["readme"]).read_text(encoding="utf-8")
    targets = [a or b for a, b in LINK.findall(readme)]
    relative = [t for t in targets if not t.startswith(("https://", "http://", "mailto:", "#"))]
    assert not relative, f"{folder.name}/README.md: use absolute URLs ({REPOSITORY}/blob/main/…): {relative}"
    ours = [t for t in targets if "github.com/mcp-memory/" in t]
    assert all(t.startswith(f"{REPOSITORY}/") or t == REPOSITORY for t in ours), ours
