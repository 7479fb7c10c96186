"""Secrets in what is about to be stored: found, then refused or redacted before anything is written
or embedded.

:func:`find_secrets` finds them in a text, each a :class:`Finding` (its kind and its span), with
detect-secrets' plugins (AWS, GitHub, GitLab, Slack, OpenAI, Stripe, SendGrid, PyPI, Azure, Twilio,
Mailchimp, Discord, Telegram, Square, private keys, JSON Web Tokens, passwords in URLs, quoted
keyword assignments) and the patterns of :mod:`.secret_patterns` (the token shapes those plugins
lack, secrets assigned to a secret-sounding name, random-looking values in other assignments and,
on request, e-mail addresses and phone numbers). The plugins are asked through their
``analyze_string`` only: no network (their ``verify`` is never called), no global settings, safe from
several threads. :class:`SecretPolicy` is what the engine applies to every write (store, update,
import): ``refuse`` raises :class:`SecretRefusedError`, ``redact`` puts ``[REDACTED:<kind>]`` in each
secret's place, ``allow`` changes nothing.

detect-secrets takes ~80 ms to import with its bytecode cached (~70 of them for the ``requests`` its
plugins import; ~190 ms when every module is compiled): it is imported on the first scan, or by
:func:`warm` in the background after the handshake, never with this module (3.8 ms).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import secret_patterns as patterns
from .errors import InvalidInputError

POLICIES = ("refuse", "redact", "allow")
PII_KINDS = ("email", "phone")

LABELS: dict[str, str] = {
    "aws-key": "an AWS access key",
    "github-token": "a GitHub token",
    "gitlab-token": "a GitLab token",
    "slack-token": "a Slack token",
    "openai-key": "an OpenAI API key",
    "anthropic-key": "an Anthropic API key",
    "stripe-key": "a Stripe secret key",
    "google-api-key": "a Google API key",
    "sendgrid-key": "a SendGrid API key",
    "pypi-token": "a PyPI token",
    "npm-token": "an npm token",
    "huggingface-token": "a Hugging Face token",
    "digitalocean-token": "a DigitalOcean token",
    "mailgun-key": "a Mailgun API key",
    "webhook-url": "a webhook URL's secret",
    "azure-storage-key": "an Azure storage key",
    "twilio-key": "a Twilio key",
    "mailchimp-key": "a Mailchimp API key",
    "discord-token": "a Discord bot token",
    "telegram-token": "a Telegram bot token",
    "square-token": "a Square OAuth secret",
    "private-key": "a private key",
    "jwt": "a JSON Web Token",
    "url-password": "a password in a URL",
    "password": "a password",
    "secret": "a secret value",
    "high-entropy": "a random-looking value in an assignment",
    "email": "an e-mail address",
    "phone": "a phone number",
}

# detect-secrets' plugins used (module, class, kind), most specific first: where two findings overlap,
# the earlier one names the kind. The keyword plugin's kind is refined by the name it follows.
PLUGINS = (
    ("aws", "AWSKeyDetector", "aws-key"),
    ("github_token", "GitHubTokenDetector", "github-token"),
    ("gitlab_token", "GitLabTokenDetector", "gitlab-token"),
    ("slack", "SlackDetector", "slack-token"),
    ("openai", "OpenAIDetector", "openai-key"),
    ("stripe", "StripeDetector", "stripe-key"),
    ("sendgrid", "SendGridDetector", "sendgrid-key"),
    ("pypi_token", "PypiTokenDetector", "pypi-token"),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure-storage-key"),
    ("twilio", "TwilioKeyDetector", "twilio-key"),
    ("mailchimp", "MailchimpDetector", "mailchimp-key"),
    ("discord", "DiscordBotTokenDetector", "discord-token"),
    ("telegram_token", "TelegramBotTokenDetector", "telegram-token"),
    ("square_oauth", "SquareOAuthDetector", "square-token"),
    ("jwt", "JwtTokenDetector", "jwt"),
    ("basic_auth", "BasicAuthDetector", "url-password"),
    ("keyword", "KeywordDetector", "password"),
)
# A plugin's pattern may stop short of the token's end (Stripe's takes 24 characters, the JWT one
# may leave the signature out): a finding of these kinds runs on over the token's characters.
TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")
JWT_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")
UNEXTENDED = frozenset({"url-password", "password", "secret", "high-entropy", "private-key", *PII_KINDS})
PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d.*?(?:Private-MAC: *\S+|\Z)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Finding:
    """A secret found: its ``kind`` (``aws-key`` …), the ``field`` it is in (``content``,
    ``metadata.db.url``, ``tags``, ``thread``) and its span ``[start, end)`` in that field's text."""

    kind: str
    field: str
    start: int
    end: int

    @property
    def label(self) -> str:
        """What it is, in words (``an AWS access key``)."""
        return LABELS[self.kind]


def find_secrets(text: str, *, field: str = "content", pii: frozenset[str] = frozenset()) -> list[Finding]:
    """The secrets in ``text``, in order, overlapping ones merged; ``pii``: also these of
    :data:`PII_KINDS`."""
    spans = sorted(_detector().spans(text, pii), key=lambda s: (s[1], s[0]))
    merged: list[list[int]] = []  # [priority, start, end]
    for priority, start, end in spans:
        if merged and start < merged[-1][2]:
            last = merged[-1]
            last[0] = min(last[0], priority)
            last[2] = max(last[2], end)
        else:
            merged.append([priority, start, end])
    return [Finding(_detector().kinds[p], field, start, end) for p, start, end in merged]


def redact(text: str, findings: Iterable[Finding]) -> str:
    """``text`` with each finding's span replaced by ``[REDACTED:<kind>]``."""
    out: list[str] = []
    at = 0
    for finding in sorted(findings, key=lambda f: f.start):
        out += [text[at : finding.start], f"[REDACTED:{finding.kind}]"]
        at = finding.end
    return "".join(out) + text[at:]


def describe(findings: Iterable[Finding], verb: str = "redacted") -> str:
    """``redacted 2 secrets: an AWS access key in content, a password in a URL in metadata.db.url``:
    the kind and field of each, never a value."""
    found = list(findings)
    return f"{verb} {len(found)} {'secret' if len(found) == 1 else 'secrets'}: {listing(found)}"


def listing(findings: Iterable[Finding]) -> str:
    """``an AWS access key in content, a GitHub token in tags (2 times)``."""
    counts = Counter((f.label, f.field) for f in findings)
    return ", ".join(
        f"{label} in {field}" + (f" ({n} times)" if n > 1 else "") for (label, field), n in counts.items()
    )


def warm() -> None:
    """Import detect-secrets and compile the patterns now (the server does it after the handshake)."""
    _detector()


class SecretRefusedError(InvalidInputError):
    """A write holding a secret under policy ``refuse``: nothing was written. ``findings`` say what
    and where; the message never holds the secret."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.findings = tuple(findings)
        super().__init__(
            f"Refused: {listing(self.findings)}; nothing was written. "
            "Remove it (keep secrets in a password manager or the environment, not in memory) and try "
            "again, or set MCP_MEMORY_SECRETS=redact to store it with a placeholder in its place."
        )


def import_refusal(findings: Iterable[Finding]) -> str:
    """Why an import left a memory out under policy ``refuse``: what and where, never the value."""
    return (
        f"holds {listing(findings)}: remove it and import again, or set MCP_MEMORY_SECRETS=redact to import it "
        "with a placeholder in its place."
    )


@dataclass(frozen=True)
class Screened:
    """A write's fields after the policy: the secrets' placeholders in place (under ``redact``), and
    what was found (empty under ``allow``)."""

    content: str
    metadata: dict[str, Any] | None
    tags: tuple[str, ...] | None
    thread: str | None
    findings: tuple[Finding, ...]


class SecretPolicy:
    """What to do with a write holding a secret: ``refuse``, ``redact`` (the default) or ``allow``;
    ``pii`` adds e-mail addresses and/or phone numbers to what counts as one."""

    def __init__(self, mode: str = "redact", pii: Iterable[str] = ()) -> None:
        if mode not in POLICIES:
            raise InvalidInputError(f"MCP_MEMORY_SECRETS must be refuse, redact or allow; got {mode!r}.")
        kinds = frozenset(pii)
        if unknown := sorted(kinds - set(PII_KINDS)):
            raise InvalidInputError(
                f"MCP_MEMORY_SECRETS_PII takes email and/or phone, comma-separated; got {', '.join(unknown)}."
            )
        self.mode = mode
        self.pii = kinds

    def __repr__(self) -> str:
        return f"SecretPolicy({self.mode!r}, pii={sorted(self.pii)})"

    def screen(
        self,
        content: str,
        metadata: Mapping[str, Any] | None,
        tags: Iterable[str] | None,
        thread: str | None = None,
    ) -> Screened:
        """The fields as they may be written: unchanged under ``allow`` or when nothing is found,
        redacted under ``redact``; under ``refuse`` a finding raises :class:`SecretRefusedError`."""
        tag_tuple = tuple(tags) if tags is not None else None
        meta = dict(metadata) if metadata is not None else None
        if self.mode == "allow":
            return Screened(content, meta, tag_tuple, thread, ())
        found: list[Finding] = []
        content = self._text(content, "content", "", found)
        if meta is not None:
            meta = {key: self._value(value, f"metadata.{key}", key, found) for key, value in meta.items()}
        if tag_tuple is not None:
            tag_tuple = tuple(dict.fromkeys(self._text(tag, "tags", "", found) for tag in tag_tuple))
        if thread is not None:
            thread = self._text(thread, "thread", "", found)
        if found and self.mode == "refuse":
            raise SecretRefusedError(found)
        return Screened(content, meta, tag_tuple, thread, tuple(found))

    def _text(self, text: str, field: str, name: str, found: list[Finding]) -> str:
        """``text`` redacted (findings added to ``found``); ``name``: the key it is the value of, read
        as an assignment (``password`` → its whole value is one)."""
        prefix = f"{name}=" if name and patterns.SECRET_NAME.search(name) else ""
        findings = [
            Finding(f.kind, field, max(0, f.start - len(prefix)), f.end - len(prefix))
            for f in find_secrets(prefix + text, field=field, pii=self.pii)
            if f.end > len(prefix)
        ]
        found.extend(findings)
        return redact(text, findings) if findings else text

    def _value(self, value: Any, field: str, name: str, found: list[Finding]) -> Any:
        if isinstance(value, str):
            return self._text(value, field, name, found)
        if isinstance(value, Mapping):
            return {k: self._value(v, f"{field}.{k}", str(k), found) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v, f"{field}[{i}]", name, found) for i, v in enumerate(value)]
        return value


class _Detector:
    """detect-secrets' plugins and our patterns, built once (see :func:`_detector`)."""

    def __init__(self) -> None:
        import importlib

        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        self.kinds: list[str] = []
        self.private_key = self._kind("private-key")  # a whole block: whatever else is inside it
        # (priority, plugin, a gate: a line it refuses cannot match the plugin, which is not run)
        self.plugins: list[tuple[int, Any, Callable[[str], bool] | None]] = []
        for module, name, kind in PLUGINS:
            plugin_class = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
            gate = patterns.may_name_a_keyword if name == "KeywordDetector" else None
            self.plugins.append((self._kind(kind), plugin_class(), gate))
        self.tokens = [
            (self._kind(kind), re.compile(pattern), group) for kind, pattern, group in patterns.TOKEN_PATTERNS
        ]
        self.password, self.secret, self.entropy_kind = map(
            self._kind, ("password", "secret", "high-entropy")
        )
        self.aws = self.kinds.index("aws-key")
        self.pii = {kind: (self._kind(kind), re.compile(p)) for kind, p in patterns.PII_PATTERNS.items()}
        self.entropy = Base64HighEntropyString().calculate_shannon_entropy

    def _kind(self, kind: str) -> int:
        self.kinds.append(kind)
        return len(self.kinds) - 1

    def spans(self, text: str, pii: frozenset[str]) -> Iterator[tuple[int, int, int]]:
        """``(priority, start, end)`` of every finding in ``text``, overlaps included."""
        if "PRIVATE KEY" in text or "PuTTY-User-Key-File" in text:
            for match in PRIVATE_KEY_BLOCK.finditer(text):
                yield self.private_key, match.start(), match.end()
        offset = 0
        for raw in text.splitlines(keepends=True):
            line = raw.rstrip("\r\n")
            for priority, start, end in self._line(line, pii):
                if self.kinds[priority] == "url-password":
                    end = _userinfo_end(line, end)
                elif self.kinds[priority] not in UNEXTENDED:
                    tail = JWT_TAIL if self.kinds[priority] == "jwt" else TOKEN_TAIL
                    end = tail.match(line, end).end()  # type: ignore[union-attr]
                yield priority, offset + start, offset + end
            offset += len(raw)

    def _line(self, line: str, pii: frozenset[str]) -> Iterator[tuple[int, int, int]]:
        for priority, plugin, gate in self.plugins:
            if gate is not None and not gate(line):
                continue
            for value in set(plugin.analyze_string(line)):
                if not value or "PRIVATE KEY" in value or "PuTTY" in value:
                    continue  # private keys: whole blocks, above
                kind = self.kinds[priority]
                if kind == "password" and not patterns.plausible(value.rstrip(patterns.TRAILING)):
                    continue
                if kind == "url-password" and patterns.PLACEHOLDER.match(value):
                    continue  # an elided example (scheme://user:…@host); a dotted password is one
                for start in _occurrences(line, value):
                    if kind == "password":
                        named = patterns.PASSWORD_NAME.search(line[:start])
                        yield (self.password if named else self.secret), start, start + len(value)
                    else:
                        yield priority, start, start + len(value)
        for priority, regex, group in self.tokens:
            for match in regex.finditer(line):
                yield priority, match.start(group), match.end(group)
        yield from self._assignments(line)
        yield from self._prose(line)
        for kind in sorted(pii):
            priority, regex = self.pii[kind]
            for match in regex.finditer(line):
                yield priority, match.start(), match.end()

    def _assignments(self, line: str) -> Iterator[tuple[int, int, int]]:
        for match in patterns.ASSIGNMENT.finditer(line):
            name, op, value = match["name"], match["op"], match["value"]
            start = match.start("value")
            secret = patterns.assigned_value(name, op, value)
            if secret is not None:
                yield self._named_kind(name), start, start + len(secret)
                continue
            value = value.rstrip(patterns.TRAILING)
            if patterns.random_looking(name, value, self.entropy(value)):
                yield self.entropy_kind, start, start + len(value)

    def _prose(self, line: str) -> Iterator[tuple[int, int, int]]:
        """A value right after a secret-sounding name in prose (:func:`.secret_patterns.named_in_prose`),
        and a line's AWS secret access key beside its access key id."""
        prose = patterns.PROSE_SECRET.finditer(line) if patterns.PROSE_VALUE_RUN.search(line) else ()
        for match in prose:
            name, value = match["name"], match["value"]
            if patterns.named_in_prose(name, value, self.entropy(value)):
                yield self._named_kind(name), match.start("value"), match.end("value")
        for match in patterns.PASSWORD_PROSE.finditer(line):
            secret = patterns.password_in_prose(match["value"])
            if secret is not None:
                yield self.password, match.start("value"), match.start("value") + len(secret)
        if patterns.PASSWORD_NAME.search(line):
            yield from self._password_words(line)
        if patterns.AWS_KEY_ID.search(line):
            for match in patterns.AWS_SECRET.finditer(line):
                if patterns.random_looking("", match[0], self.entropy(match[0])):
                    yield self.aws, match.start(), match.end()

    def _password_words(self, line: str) -> Iterator[tuple[int, int, int]]:
        """A password given as a word or in quotes (:data:`.secret_patterns.PASSWORD_WORD`)."""
        for match in patterns.PASSWORD_WORD.finditer(line):
            if match["quoted"] is not None:
                value = match["quoted"].strip()
                if len(value) >= 3 and patterns.plausible(value):
                    yield self.password, match.start("quoted"), match.end("quoted")
            elif patterns.password_word(match["word"]):
                yield self.password, match.start("word"), match.end("word")

    def _named_kind(self, name: str) -> int:
        """The kind of a secret assigned to ``name``: AWS_SECRET_ACCESS_KEY holds an AWS key,
        DB_PASSWORD a password, anything else secret-sounding a secret."""
        if "aws" in name.lower():
            return self.aws
        return self.password if patterns.PASSWORD_NAME.search(name) else self.secret


def _userinfo_end(line: str, end: int) -> int:
    """The end of a URL password found ending at ``end``: the last "@" of the URL's authority (an
    unencoded "@" in the password is the user's, the last one the host's)."""
    authority_end = patterns.AUTHORITY.match(line, end).end()  # type: ignore[union-attr]
    last_at = line.rfind("@", end, authority_end)
    return last_at if last_at > end else end


def _occurrences(line: str, value: str) -> Iterator[int]:
    at = line.find(value)
    while at != -1:
        yield at
        at = line.find(value, at + len(value))


@functools.cache
def _detector() -> _Detector:
    return _Detector()
