"""The secret detector: each kind of secret is found (with its span) and redacted; ordinary technical
text (hashes, ids, versions, paths, URLs without credentials) is never touched."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_core.secret_scan import (
    SecretPolicy,
    SecretRefusedError,
    describe,
    find_secrets,
    redact,
)

AWS_ID = "AKIAQ3EGUJ7NYWPRT4FD"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9R3kTz5a"
GHP = "ghp_" + "R8sT2vW4xY6zA1bC3dE5fG7hJ9kL0mN2pQ4r"
GITHUB_PAT = (
    "github_pat_11ABCDEFG0aBcDeFgHiJkL_" + "mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcD"
)
SLACK = "xoxb-2048613557-4096813574-" + "kQ7pXv2LmN9sR4tW8yZ1bC3d"
OPENAI = "sk-proj-" + "Tq8Vw2Xy4Za6Bc8De0Fg2Hi4Jk6Lm8No0Pq2Rs4Tu6Vw8Xy0Za2Bc4De6Fg8Hi0Jk"
ANTHROPIC = "sk-ant-api03-" + "h7K2mP9qR4sT8vW1xY5zA3bC6dE0fG2hJ4kL7mN9pQ1rS3tU5vW8xY0zA2bC4dE6fG8h-AbCdEfAA"
STRIPE = "sk_live_" + "51H8xKqL2mN4pR6tV8xZ0bD2fH4jL6nP8rT0vX2zB4dF6hJ8"
GOOGLE = "AIza" + "SyD4x8Kq2Lm6Np0Rt4Vx8Zb2Dc6Fh0Jl4Np"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAx3Vq5rT8YzW1pL9kN2mQ4sR6tU8vW0xY2zA4bC6dE8fG0hJ2\n"
    "kL4mN6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hJ6kL8mN0pQ2rS4tU6vW8xY0zA2bC4d\n"
    "-----END RSA PRIVATE KEY-----"
)


def only(text: str, secret: str, kind: str) -> None:
    """``text`` holds ``secret`` once, found as ``kind``, and its redaction keeps the rest."""
    findings = find_secrets(text)
    assert [f.kind for f in findings] == [kind], findings
    start = text.index(secret)
    assert (findings[0].start, findings[0].end) == (start, start + len(secret))
    redacted = redact(text, findings)
    assert secret not in redacted
    assert redacted == text[:start] + f"[REDACTED:{kind}]" + text[start + len(secret) :]


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"The deploy user's key is {AWS_ID} in us-east-1.", AWS_ID, "aws-key"),
        (f'aws_secret_access_key = "{AWS_SECRET}"', AWS_SECRET, "aws-key"),
        (f"CI pushes with {GHP} (repo scope).", GHP, "github-token"),
        (f"Fine-grained token for the bot: {GITHUB_PAT}", GITHUB_PAT, "github-token"),
        (f"The Slack bot posts with {SLACK} to #deploys.", SLACK, "slack-token"),
        (f"OpenAI key for the eval harness: {OPENAI}", OPENAI, "openai-key"),
        (f"Use {ANTHROPIC} for the summariser.", ANTHROPIC, "anthropic-key"),
        (f"Billing runs with {STRIPE} in production.", STRIPE, "stripe-key"),
        (f"Maps widget key {GOOGLE}, restricted to our domain.", GOOGLE, "google-api-key"),
        (f"Session cookie was {JWT} when it failed.", JWT, "jwt"),
        ("Staging DB is postgres://app:Zx9-kQ2mW7@db.internal:5432/app", "Zx9-kQ2mW7", "url-password"),
        ("Cache at redis://:s3cretRedisPw@cache:6379/0", "s3cretRedisPw", "url-password"),
        ("Put PASSWORD=Tr0ub4dor-3x in .env.local", "Tr0ub4dor-3x", "password"),
        ('db_password: "hunter2-prod"', "hunter2-prod", "password"),
        (
            "GITLAB_API_TOKEN=glpat-Ab3dEf7hIj1kLm5nOp9q for the mirror",
            "glpat-Ab3dEf7hIj1kLm5nOp9q",
            "gitlab-token",
        ),
        (
            "export HF_TOKEN=hf_Xq7Zt2Kp9Lm4Xv8Rb3NdWq2Lm6Np0Rt4",
            "hf_Xq7Zt2Kp9Lm4Xv8Rb3NdWq2Lm6Np0Rt4",
            "secret",
        ),
        ("The webhook signing secret: Wq7Zt2Kp9Lm4Xv8Rb3Nd", "Wq7Zt2Kp9Lm4Xv8Rb3Nd", "secret"),
    ],
)
def test_each_kind_is_found_and_redacted_in_place(text: str, secret: str, kind: str) -> None:
    only(text, secret, kind)


def test_a_private_key_block_is_redacted_whole() -> None:
    text = f"The deploy key:\n{PEM}\nrotate it yearly."
    findings = find_secrets(text)
    assert [f.kind for f in findings] == ["private-key"]
    assert redact(text, findings) == "The deploy key:\n[REDACTED:private-key]\nrotate it yearly."


def test_a_private_key_without_its_end_line_is_redacted_to_the_end() -> None:
    text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
    assert redact(text, find_secrets(text)) == "key:\n[REDACTED:private-key]"


def test_several_secrets_in_one_text_are_each_redacted() -> None:
    text = f"AWS {AWS_ID}, GitHub {GHP}\nand postgres://u:Pw9xK2mQ7z@h/db"
    findings = find_secrets(text)
    assert [f.kind for f in findings] == ["aws-key", "github-token", "url-password"]
    redacted = redact(text, findings)
    assert redacted == (
        "AWS [REDACTED:aws-key], GitHub [REDACTED:github-token]\nand postgres://u:[REDACTED:url-password]@h/db"
    )
    assert find_secrets(redacted) == []  # a redacted text is clean: redacting again changes nothing


ORDINARY = [
    "Fixed in commit 3f9a2c1; the full hash is 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291.",
    "Merged 9fceb02d0ae598e95dc970b74767f19372d61af8 into main after review.",
    "Release tag v2.14.3 (also 1.0.0-rc.1+build.5) shipped on 2024-03-18 at 14:05 UTC.",
    "Request id 3b241101-e2bb-4255-8caa-4b6b6b7b1c2f failed with HTTP 502.",
    "The base image is python@sha256:4b7c5e4a1d4e7a9f0b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8.",
    "Config lives in /etc/mcp-memory/config.yaml and ~/.config/mcp-memory/settings.toml.",
    "Docs at https://docs.example.com/guide/install?version=2#linux and http://localhost:8000/mcp.",
    "The service listens on 10.0.3.17:5432 and 192.168.1.20:6379.",
    'package-lock pins "integrity": "sha512-Q2x9Z7k1mN3pR5tV7xZ9bD1fH3jL5nP7rT9vX1zB3dF5hJ7kL9mN1pQ3rS5tU7vW9xY1zA3bC5dE7fG9hJ1kL3m=="',
    "The cache key is sha1:0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33 per request.",
    "We store the password hash with argon2id; passwords are never logged.",
    "The token budget is 800 and MCP_MEMORY_MAX_RESULT_TOKENS=8000.",
    "Set MCP_MEMORY_TOKENS_PATH=/srv/mcp/tokens.db on the team server.",
    "The API key lives in 1Password under 'Stripe prod'; ask Dana for access.",
    "Password: see the vault entry for the staging database.",
    "Run scikit-learn's sk-learn-compatible estimators only on Python 3.12.",
    "Connect with postgresql://mcp@db.internal/memory (the password comes from PGPASSWORD).",
    "secret_name: prod/db/credentials is read by the ECS task.",
    "A ULID like 01HZY3K6QW8X9V2T4R5N7M0P1J sorts by time; the trace id is 4bf92f3577b34da6a3ce929d0e0e4736.",
    "The object is stored as b64 ZXhhbXBsZSBwYXlsb2FkIGZvciB0ZXN0cw== in the fixture.",
    "Use DATABASE_URL=${DATABASE_URL} and API_KEY=<your key> in the template.",
    "Clone git@github.com:acme/api.git or ssh://git@github.com:22/acme/api.",
    "Open https://dana@example.com/path and https://example.com:8443/x at 12:30:45 (16:9).",
    "token_type: bearer, expires_in: 3600, scope: read:org; Authorization: Bearer <token>",
    "kubectl create secret generic db --from-literal=password=$(pass show db)",
    "Use `secret: ${{ secrets.NPM_TOKEN }}`; npm config set //registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    "password_reset_url=https://example.com/reset, password_policy: strong",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_technical_text_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_email_and_phone_only_when_asked() -> None:
    text = "Reach Dana at dana.k@example.com or +1 415-555-0132."
    assert find_secrets(text) == []
    kinds = [f.kind for f in find_secrets(text, pii=frozenset({"email", "phone"}))]
    assert kinds == ["email", "phone"]
    assert [f.kind for f in find_secrets(text, pii=frozenset({"email"}))] == ["email"]


def test_phone_numbers_do_not_catch_dates_versions_or_addresses() -> None:
    text = "On 2024-05-08 we moved 10.0.3.17 to v1.2.3, build 20240508.1, port 5432."
    assert find_secrets(text, pii=frozenset({"email", "phone"})) == []


def test_describe_says_kind_and_field_never_the_value() -> None:
    policy = SecretPolicy("redact")
    screened = policy.screen(
        f"key {AWS_ID}", {"db": {"url": "postgres://u:Pw9xK2mQ7z@h/db"}, "note": "plain"}, ("ops",)
    )
    assert screened.content == "key [REDACTED:aws-key]"
    assert screened.metadata == {"db": {"url": "postgres://u:[REDACTED:url-password]@h/db"}, "note": "plain"}
    sentence = describe(screened.findings)
    assert (
        sentence == "redacted 2 secrets: an AWS access key in content, a password in a URL in metadata.db.url"
    )
    assert AWS_ID not in sentence


def test_a_metadata_value_under_a_secret_name_is_a_secret() -> None:
    screened = SecretPolicy("redact").screen("deploy notes", {"password": "hunter2-prod"}, None)
    assert screened.metadata == {"password": "[REDACTED:password]"}
    assert [(f.kind, f.field) for f in screened.findings] == [("password", "metadata.password")]


def test_tags_are_screened_too() -> None:
    screened = SecretPolicy("redact").screen("x", None, ("ops", GHP))
    assert screened.tags == ("ops", "[REDACTED:github-token]")
    assert [(f.kind, f.field) for f in screened.findings] == [("github-token", "tags")]


def test_refuse_names_kind_and_field_and_what_to_do_without_the_secret() -> None:
    with pytest.raises(SecretRefusedError) as caught:
        SecretPolicy("refuse").screen(f"key {AWS_ID}", None, None)
    message = str(caught.value)
    assert isinstance(caught.value, InvalidInputError)
    assert AWS_ID not in message
    assert message.startswith("Refused: an AWS access key in content; nothing was written. Remove it")
    assert "MCP_MEMORY_SECRETS" in message


def test_allow_changes_nothing() -> None:
    screened = SecretPolicy("allow").screen(f"key {AWS_ID}", {"k": GHP}, None)
    assert screened.content == f"key {AWS_ID}"
    assert screened.findings == ()


def test_a_bad_policy_is_one_sentence_naming_the_variable() -> None:
    with pytest.raises(InvalidInputError, match="MCP_MEMORY_SECRETS"):
        SecretPolicy("redcat")
    with pytest.raises(InvalidInputError, match="MCP_MEMORY_SECRETS_PII"):
        SecretPolicy("redact", pii=frozenset({"ssn"}))


def test_importing_the_module_does_not_import_the_detector_library() -> None:
    code = "import sys, mcp_memory_core.secret_scan, mcp_memory_core.engine; print('detect_secrets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (
            "The client_secret is DAsh-Z8ZVlpOrTN6Q8Bc1pmtu, client id 0oa1b2c3d4.",
            "DAsh-Z8ZVlpOrTN6Q8Bc1pmtu",
            "secret",
        ),
        ("the staging password is Tr0ub4dor-3x", "Tr0ub4dor-3x", "password"),
        (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET} first", AWS_SECRET, "aws-key"),
    ],
)
def test_prose_and_named_assignments(text: str, secret: str, kind: str) -> None:
    only(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "The token is valid for one hour; the password is required on every login.",
        "The API key is in 1Password and the secret is 32 bytes long.",
        "In the script: password = getpass() and token = os.environ['GITHUB_TOKEN'].",
        "const apiKey = process.env.API_KEY; secret = request.headers['X-Signature']",
    ],
)
def test_prose_about_secrets_without_one_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"AWS credentials for the deploy user: access key {AWS_ID} and secret {AWS_SECRET}.",
        f"deploy user keys: {AWS_ID} / {AWS_SECRET}",
        f"The signing secret {AWS_SECRET} rotates monthly.",
    ],
)
def test_a_random_looking_value_after_a_secret_word_or_beside_an_aws_key_id_is_found(text: str) -> None:
    assert AWS_SECRET not in redact(text, find_secrets(text))


def test_a_url_password_holding_an_at_sign_is_redacted_whole() -> None:
    text = "Connect with postgresql://admin:S3cr3tP@ssw0rd!@db.internal:5432/app today"
    redacted = redact(text, find_secrets(text))
    assert redacted == "Connect with postgresql://admin:[REDACTED:url-password]@db.internal:5432/app today"


@pytest.mark.parametrize(
    "text",
    [
        "The secret santa draw is on Friday; the token bucket refills 20 tokens a second.",
        "secret sauce: cache the embeddings; token counting uses the WordPiece vocabulary.",
        f"Build {AWS_ID[:4]}-less: commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it.",
    ],
)
def test_ordinary_words_after_a_secret_word_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "secret management: HashiCorpVaultAgentInjector2 injects them",
        "component: KubernetesExternalSecretsOperator3 syncs the values",
    ],
)
def test_an_identifier_made_of_words_is_not_random(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("The root password is hunter2", "hunter2"),
        ("API key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
        ("Datadog API key 3c0c3965368a6b10f7640dbda46abfdc", "3c0c3965368a6b10f7640dbda46abfdc"),
        ("Twilio auth token 8f4c1e2d9b7a6c5e3f1d0b9a8c7e6f5d", "8f4c1e2d9b7a6c5e3f1d0b9a8c7e6f5d"),
        (
            "Use this webhook secret whsec_5f8a9b2c3d4e5f6a7b8c9d0e1f2a3b4c",
            "whsec_5f8a9b2c3d4e5f6a7b8c9d0e1f2a3b4c",
        ),
        (
            "The API key for Mailgun is key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
            "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
        ),
        (
            "DigitalOcean token dop_v1_4f9a2b7c8d1e6f3a5b9c0d2e4f6a8b1c3d5e7f9a0b2c4d6e8f1a3b5c7d9e0f2a",
            "dop_v1_4f9a2b7c8d1e6f3a5b9c0d2e4f6a8b1c3d5e7f9a0b2c4d6e8f1a3b5c7d9e0f2a",
        ),
        (
            "Discord webhook https://discord.com/api/webhooks/123456789012345678/"
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrSt",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrSt",
        ),
    ],
)
def test_secrets_named_in_prose_by_two_words_or_a_short_password(text: str, secret: str) -> None:
    assert secret not in redact(text, find_secrets(text))


@pytest.mark.parametrize(
    "text",
    [
        "The cache key 9fceb02d0ae598e95dc970b74767f19372d61af8 is the commit of the lock file.",
        "The token lifetime is 3600s; the password is required; password policy: min-length 12.",
        "API key rotation is quarterly; the API key lives in the vault under payments/stripe.",
        "The session token expires after 86400s and the auth token header is X-Auth-Token.",
    ],
)
def test_words_and_ids_near_secret_words_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Run it with MCP_MEMORY_SECRETS=redact and MCP_MEMORY_SECRETS_PII=email,phone set.",
        "A revoked token counts at once when the token is revoked: the token is verified every time.",
        "It applies **at once when the token is revoked**: the token is verified on every request.",
        'Examples: "S3 as AKIA…", "DATABASE_URL=postgresql://svc:…@host/db", "DB_PASSWORD=…".',
    ],
)
def test_settings_about_secrets_prose_and_elided_examples_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "Connection string: Server=tcp:db.example.net;Database=app;User ID=admin;Password=Pa55w0rd!2024;",
            "Pa55w0rd!2024",
        ),
        ("SMTP login is ops@example.com with password Qw3rty!9xZ", "Qw3rty!9xZ"),
    ],
)
def test_a_password_in_a_connection_string_or_after_the_word(text: str, secret: str) -> None:
    assert secret not in redact(text, find_secrets(text))


@pytest.mark.parametrize(
    "text",
    [
        "Send a password reset for user42 and enable password 2FA codes.",
        "Connection: Server=tcp:db.example.net;Database=app;Encrypt=true;",
    ],
)
def test_password_words_and_connection_settings_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("The staging db password is swordfish", "swordfish"),
        ("wifi password: sunflowerbakery", "sunflowerbakery"),
        ("The password for the shared drive is bluebird.", "bluebird"),
        ("The router password was opensesame, the guest one too.", "opensesame"),
        ("The wifi passcode is: lemontree", "lemontree"),
        ("The router passphrase is purple-monkey-dishwasher", "purple-monkey-dishwasher"),
        ("the passphrase is 'correct horse battery staple'", "correct horse battery staple"),
        ('In the test fixture: password = "letmein"', "letmein"),
    ],
)
def test_a_password_given_as_a_word_or_in_quotes(text: str, secret: str) -> None:
    found = find_secrets(text)
    assert [f.kind for f in found] == ["password"]
    assert secret not in redact(text, found)


@pytest.mark.parametrize(
    "text",
    [
        "The password is required.",
        "The password was changed last week.",
        "The password is case-sensitive.",
        "The token is short-lived.",
        "The password is stored in the vault",
        "The password for staging is in 1Password.",
        "Password: see the vault",
        "Password: TBD",
        "The password is the same as before.",
        "The password of the admin is unknown.",
        "Password is expiring soon.",
        "password = settings.DB_PASSWORD",
        "Her password manager is Bitwarden.",
        "The passcode is four digits.",
        "The tests pass: great",
        "The password was stolen, so rotate it.",
        "The new password is great.",
    ],
)
def test_words_that_describe_a_password_are_not_one(text: str) -> None:
    assert find_secrets(text) == []


# -- the gates: cheap checks that skip a pattern which cannot match ----------------------------------
def test_every_term_of_detect_secrets_keyword_plugin_holds_a_gate_word() -> None:
    """The keyword plugin runs only on a line holding one of KEYWORD_WORDS: each of its terms must
    hold one (a new term in a detect-secrets release would otherwise go unsearched)."""
    import re

    from detect_secrets.plugins.keyword import DENYLIST

    from mcp_memory_core.secret_patterns import KEYWORD_WORDS

    assert not any("i" in word for word in KEYWORD_WORDS)  # str.casefold and re differ on "i"
    for term in DENYLIST:
        for form in (re.sub(r"_\?", "", term), re.sub(r"_\?", "_", term)):
            assert any(word in form.casefold() for word in KEYWORD_WORDS), form


def _strings_of_this_module_and_the_data_sets() -> list[str]:
    import ast
    import itertools
    import json
    from pathlib import Path

    here = Path(__file__)
    texts = [
        node.value
        for node in ast.walk(ast.parse(here.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 8
    ]
    texts += [a + " " + b for a, b in itertools.pairwise(texts)]  # secrets amid other text
    data = here.parents[3] / "benchmarks" / "data"
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            texts += [v for v in row.values() if isinstance(v, str)]
    return texts


def test_the_gates_change_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every string of this module's cases (alone and two by two) and of the benchmark data sets
    gets the same findings with the gates as with every pattern run on every line."""
    import re

    from mcp_memory_core import secret_patterns, secret_scan

    texts = _strings_of_this_module_and_the_data_sets()
    assert len(texts) > 1000
    gated = [find_secrets(t, pii=frozenset({"email", "phone"})) for t in texts]
    assert sum(map(bool, gated)) > 40  # the module's secrets are among them
    ungated = secret_scan._Detector()
    ungated.plugins = [(priority, plugin, None) for priority, plugin, _ in ungated.plugins]
    monkeypatch.setattr(secret_scan, "_detector", lambda: ungated)
    monkeypatch.setattr(secret_patterns, "PROSE_VALUE_RUN", re.compile(""))
    assert [find_secrets(t, pii=frozenset({"email", "phone"})) for t in texts] == gated
