"""Who is asking: the Scope every engine call runs in, and the one place its rules are decided.

The server builds a Scope once per request (stdio and the CLI: the local user, who owns the file;
HTTP: the user behind the bearer token) and hands it to the engine; the engine asks the Scope, and
nothing else, whether a memory may be read or changed and which namespaces a call covers. Tools,
stores and CLI commands never decide it themselves.

The rules:

- a memory is readable by its owner; by every user who shares a team with the owner when its
  ``privacy_scope`` is ``team``; by every user of the server when it is ``public``;
- only the owner changes a memory (update, delete, pin, clear);
- a memory outside the scope answers exactly like a missing one (no existence leak);
- a read without a namespace covers the scope's *home* namespaces (the project and ``user``);
  ``"*"`` means every namespace the scope may read; writes go to the default namespace;
- ``readable`` / ``writable`` (``None``: every namespace) bound what a token may touch at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import InvalidInputError
from .models import LOCAL_USER, USER_NAMESPACE, Memory, MemoryFilter, Visibility
from .validation import validate_namespace

ALL_NAMESPACES = "*"
PRINCIPAL_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def validate_principal(name: str, what: str = "user name") -> str:
    """A user or team name: 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit."""
    text = name.strip() if isinstance(name, str) else name
    if not isinstance(text, str) or not PRINCIPAL_PATTERN.match(text):
        raise InvalidInputError(
            f"{name!r} is not a valid {what}: use 1-64 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit."
        )
    return text


@dataclass(frozen=True)
class Scope:
    """One request's principal and what it may see. Build it with :meth:`for_user`."""

    principal: str
    teams: frozenset[str] = frozenset()
    teammates: frozenset[str] = frozenset()  # users sharing at least one team with the principal
    default_namespace: str = USER_NAMESPACE
    home_namespaces: tuple[str, ...] = (USER_NAMESPACE,)
    readable: frozenset[str] | None = None
    writable: frozenset[str] | None = None
    visibility: Visibility = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "visibility", Visibility(self.principal, self.teammates))

    @classmethod
    def for_user(
        cls,
        principal: str = LOCAL_USER,
        *,
        project: str | None = None,
        teams: Iterable[str] = (),
        teammates: Iterable[str] = (),
        readable: Iterable[str] | None = None,
        writable: Iterable[str] | None = None,
    ) -> Scope:
        """The scope of ``principal`` working in ``project`` (``None``: no project, e.g. a client
        started in the home directory): writes go to the project, else to ``user``; reads cover the
        project and ``user``."""
        principal = validate_principal(principal)
        default = validate_namespace(project) if project else USER_NAMESPACE
        home = tuple(dict.fromkeys((default, USER_NAMESPACE)))
        allowed_read = None if readable is None else frozenset(validate_namespace(n) for n in readable)
        allowed_write = None if writable is None else frozenset(validate_namespace(n) for n in writable)
        if allowed_read is not None:
            home = tuple(n for n in home if n in allowed_read) or tuple(sorted(allowed_read))[:1]
        if allowed_write is not None and default not in allowed_write:
            default = home[0] if home and home[0] in allowed_write else min(allowed_write, default=default)
        return cls(
            principal=principal,
            teams=frozenset(validate_principal(t, "team name") for t in teams),
            teammates=frozenset(teammates) - {principal},
            default_namespace=default,
            home_namespaces=home,
            readable=allowed_read,
            writable=allowed_write,
        )

    # -- memories ----------------------------------------------------------------------------------
    def can_read(self, memory: Memory) -> bool:
        return (self.readable is None or memory.namespace in self.readable) and self.visibility.allows(memory)

    def can_change(self, memory: Memory) -> bool:
        return memory.owner == self.principal and (self.writable is None or memory.namespace in self.writable)

    # -- namespaces --------------------------------------------------------------------------------
    def write_namespace(self, requested: str | None) -> str:
        """Where a write goes: the requested namespace if this scope may write it, else the default."""
        if requested is None:
            return self.default_namespace
        if requested.strip() == ALL_NAMESPACES:
            raise InvalidInputError("'*' (all namespaces) is only allowed for search and list.")
        name = validate_namespace(requested)
        if self.writable is not None and name not in self.writable:
            raise InvalidInputError(
                f"You may not write to namespace {name!r}. Writable: {', '.join(sorted(self.writable))}."
            )
        return name

    def read_namespaces(self, requested: str | None) -> frozenset[str] | None:
        """The namespaces a read covers (``None``: every one): the home namespaces by default, every
        readable one for ``"*"``, else the one asked for if readable."""
        if requested is None:
            return frozenset(self.home_namespaces)
        if requested.strip() == ALL_NAMESPACES:
            return self.readable
        name = validate_namespace(requested)
        if self.readable is not None and name not in self.readable:
            raise InvalidInputError(
                f"You may not read namespace {name!r}. Readable: {', '.join(sorted(self.readable))}."
            )
        return frozenset({name})

    def reading(self, namespaces: frozenset[str] | None, **fields: object) -> MemoryFilter:
        """A store filter that only matches what this scope may read in ``namespaces``."""
        if namespaces is not None and self.readable is not None:
            namespaces = namespaces & self.readable
        elif namespaces is None:
            namespaces = self.readable
        return MemoryFilter(namespace=None, namespaces=namespaces, visible_to=self.visibility, **fields)  # type: ignore[arg-type]

    def owning(self, namespace: str | None, **fields: object) -> MemoryFilter:
        """A store filter that only matches this scope's own memories (in ``namespace``, or all)."""
        return MemoryFilter(namespace=namespace, owner=self.principal, **fields)  # type: ignore[arg-type]
