"""Write the corpora of the secret-detection benchmark (benchmarks/secret_detection.py).

    uv run python benchmarks/make_secret_corpus.py

``benchmarks/data/secret_memories.jsonl``: memories an assistant might be asked to remember, each
holding one fake but correctly shaped secret (AWS access key ids and secret keys, GitHub classic and
fine-grained tokens, GitLab tokens, Slack tokens and webhooks, OpenAI and Anthropic keys, Stripe
live keys, Google API keys, SendGrid keys, PEM and OpenSSH private keys, JSON Web Tokens, passwords
in postgres/mysql/redis/amqp/mongodb URLs, ``PASSWORD=…`` and ``api_token: …`` lines), each line
``{"kind", "text", "secret"}``: ``secret`` is what must not be left in the stored text.

``benchmarks/data/ordinary_memories.jsonl``: technical memories that hold no secret but plenty that
looks random: commit hashes (short and full), UUIDs, ULIDs, trace ids, semantic versions, paths, URLs
without credentials (some with query strings), ports, IP addresses, dates, docker digests, npm
integrity strings, base64 ids in prose, settings that name a token or a password without holding one;
each line ``{"kind", "text"}``. None of them may be altered.

Seeded: the same files every run. The values are random strings of the right alphabet and length,
never real credentials.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).parent / "data"
ALNUM = string.ascii_letters + string.digits
rng = random.Random(20261126)


def chars(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(n: int, extra: str = "") -> str:
    """n characters of ``ALNUM + extra`` with at least one capital, small letter and digit."""
    while True:
        value = chars(ALNUM + extra, n)
        if (
            any(c.isupper() for c in value)
            and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)
        ):
            return value


def password() -> str:
    return mixed(rng.randint(12, 20), "!#%^*-_+")


def url_password() -> str:
    return mixed(rng.randint(12, 20), "-_.~")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt() -> str:
    header = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    claims = {"sub": str(rng.randint(10**6, 10**9)), "name": rng.choice(["ci-bot", "dana", "svc-api"])}
    claims["iat"] = rng.randint(1_600_000_000, 1_800_000_000)
    return f"{header}.{b64url(json.dumps(claims).encode())}.{chars(ALNUM + '-_', 43)}"


def pem(kind: str) -> str:
    body = "\n".join(chars(ALNUM + "+/", 64) for _ in range(rng.randint(4, 8)))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n{chars(ALNUM + '+/', 24)}==\n-----END {kind}PRIVATE KEY-----"


HOSTS = [
    "db.internal",
    "10.0.4.12",
    "pg-prod.eu-west-1.rds.amazonaws.com",
    "cache.svc.cluster.local",
    "mq.example.net",
]
SECRETS: dict[str, tuple[Callable[[], str], list[str]]] = {
    "aws-key": (
        lambda: "AKIA" + chars(string.ascii_uppercase + "234567", 16),
        [
            "The deploy user's access key id is {s}; the secret is in the team vault.",
            "CI uploads artifacts to S3 as {s} (bucket releases-prod).",
            "Remember: the staging IAM key {s} must be rotated before the audit.",
            "aws configure was run with key {s} on the build box.",
        ],
    ),
    "aws-secret": (
        lambda: chars(ALNUM + "+/", 40),
        [
            'In ~/.aws/credentials: aws_secret_access_key = "{s}"',
            "export AWS_SECRET_ACCESS_KEY={s} before running terraform apply.",
            "AWS_SECRET_ACCESS_KEY={s} is what the nightly backup job uses.",
        ],
    ),
    "github-token": (
        lambda: "ghp_" + chars(ALNUM, 36),
        [
            "The release workflow pushes tags with {s}.",
            "Personal access token for the docs bot: {s} (repo scope).",
            "GITHUB_TOKEN={s} is set in the runner's environment.",
        ],
    ),
    "github-fine-grained": (
        lambda: "github_pat_" + chars(ALNUM, 22) + "_" + chars(ALNUM, 59),
        [
            "Fine-grained token for the mirror job: {s}, expires in March.",
            "Dependabot uses {s} to read the private registry.",
        ],
    ),
    "gitlab-token": (
        lambda: "glpat-" + chars(ALNUM + "-_", 20),
        [
            "The GitLab mirror authenticates with {s}.",
            "Use {s} for the gitlab API calls in the migration script.",
        ],
    ),
    "slack-token": (
        lambda: f"xoxb-{rng.randint(10**10, 10**12)}-{rng.randint(10**12, 10**13)}-{chars(ALNUM, 24)}",
        [
            "The deploy notifier posts to #releases with bot token {s}.",
            "SLACK_BOT_TOKEN={s} lives in the ops .env file.",
            "Our incident bot uses {s}; reinstall the app if it stops posting.",
        ],
    ),
    "slack-webhook": (
        lambda: (
            f"https://hooks.slack.com/services/T{chars(string.ascii_uppercase + string.digits, 8)}"
            f"/B{chars(string.ascii_uppercase + string.digits, 10)}/{chars(ALNUM, 24)}"
        ),
        ["Alerts go to the webhook {s} (channel #alerts)."],
    ),
    "openai-key": (
        lambda: "sk-" + mixed(48),
        [
            "The eval harness calls OpenAI with {s}.",
            "OPENAI_API_KEY={s} for the summarisation job.",
            "Use key {s} for the embeddings backfill, billed to the research org.",
        ],
    ),
    "openai-project-key": (
        lambda: "sk-proj-" + mixed(120, "-_"),
        ["The new project key is {s}; the old one was revoked.", "Dana's OpenAI project key: {s}"],
    ),
    "anthropic-key": (
        lambda: "sk-ant-api03-" + mixed(93, "-_") + "AA",
        [
            "The summariser uses the Anthropic key {s}.",
            "ANTHROPIC_API_KEY={s} is set for the agent runner.",
            "Claude API key for the support bot: {s}",
        ],
    ),
    "stripe-key": (
        lambda: "sk_live_" + chars(ALNUM, rng.choice([24, 34, 99])),
        [
            "Billing in production runs with {s}.",
            "STRIPE_SECRET_KEY={s} (live mode, do not use in staging).",
        ],
    ),
    "google-api-key": (
        lambda: "AIza" + chars(ALNUM + "-_", 35),
        [
            "The maps widget uses {s}, restricted to our domain.",
            "Firebase config apiKey: {s}",
            "GOOGLE_API_KEY={s} for the geocoding script.",
        ],
    ),
    "sendgrid-key": (
        lambda: f"SG.{chars(ALNUM + '-_', 22)}.{chars(ALNUM + '-_', 43)}",
        ["Transactional mail goes through SendGrid with {s}."],
    ),
    "private-key": (
        lambda: pem(rng.choice(["RSA ", "EC ", "OPENSSH ", ""])),
        [
            "The deploy key for the prod bastion:\n{s}",
            "Paste this into ~/.ssh/id_deploy:\n{s}\nand chmod 600 it.",
        ],
    ),
    "jwt": (
        jwt,
        [
            "The staging API accepted this bearer token: {s}",
            "Authorization: Bearer {s} worked against /v2/orders.",
            "Session cookie when the bug reproduced was {s}",
        ],
    ),
    "url-password": (
        url_password,
        [
            "Staging database: postgres://app:{s}@{host}:5432/app",
            "DATABASE_URL=postgresql://svc_orders:{s}@{host}/orders?sslmode=require",
            "The legacy app connects with mysql://root:{s}@{host}:3306/shop",
            "Celery broker is amqp://worker:{s}@{host}:5672/prod",
            "Cache lives at redis://:{s}@{host}:6379/0",
            "Atlas cluster: mongodb+srv://reporting:{s}@cluster0.ab12c.mongodb.net/analytics",
        ],
    ),
    "password": (
        password,
        [
            "Put DB_PASSWORD={s} in .env.local for the integration tests.",
            "POSTGRES_PASSWORD={s} is what docker compose uses locally.",
            "export ADMIN_PASSWORD='{s}' before seeding the admin user.",
            'In settings.py: EMAIL_HOST_PASSWORD = "{s}"',
            "The router's admin password: {s}",
            "redis_password: {s} (from the helm values)",
        ],
    ),
    "secret": (
        lambda: mixed(32, "-_"),
        [
            "api_token: {s} for the status page integration.",
            "WEBHOOK_SECRET={s} signs the GitHub deliveries.",
            "The client_secret is {s}, client id 0oa1b2c3d4.",
            "JWT_SIGNING_KEY={s} (HS256, shared by api and worker).",
        ],
    ),
}


def secret_memories() -> list[dict[str, str]]:
    rows = []
    for kind, (make, templates) in SECRETS.items():
        count = max(6, 2 * len(templates))
        for index in range(count):
            secret = make()
            template = templates[index % len(templates)]
            rows.append(
                {"kind": kind, "text": template.format(s=secret, host=rng.choice(HOSTS)), "secret": secret}
            )
    return rows


def hex_(n: int) -> str:
    return chars("0123456789abcdef", n)


def version() -> str:
    return f"{rng.randint(0, 30)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"


def ip() -> str:
    return f"{rng.choice([10, 172, 192])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def date() -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def ulid() -> str:
    return "01" + chars("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24)


ORDINARY: dict[str, Callable[[], str]] = {
    "commit": lambda: rng.choice(
        [
            f"The regression came in with commit {hex_(7)}; reverted in {hex_(7)}.",
            f"Merged {hex_(40)} into main after review on {date()}.",
            f"git bisect points at {hex_(40)} (the connection pool change).",
            f"Cherry-pick {hex_(12)} onto release/{version()} before tagging.",
        ]
    ),
    "uuid": lambda: rng.choice(
        [
            f"Request id {uuid.UUID(int=rng.getrandbits(128), version=4)} failed with HTTP 502 at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}.",
            f"The tenant {uuid.UUID(int=rng.getrandbits(128), version=4)} is the one with the broken invoices.",
            f"order_id={uuid.UUID(int=rng.getrandbits(128), version=4)} reproduces the rounding bug.",
        ]
    ),
    "version": lambda: rng.choice(
        [
            f"We pin fastapi {version()} and pydantic {version()}; upgrade after the {date()} release.",
            f"Release v{version()}-rc.{rng.randint(1, 5)}+build.{rng.randint(1, 99)} shipped on {date()}.",
            f"Node {rng.randint(18, 24)}.{rng.randint(0, 12)}.0 is required by the frontend since v{version()}.",
        ]
    ),
    "path": lambda: rng.choice(
        [
            f"Config lives in /etc/orders/config.yaml and ~/.config/orders/settings-{rng.randint(1, 9)}.toml.",
            f"Logs rotate under /var/log/app/{date()}/worker-{rng.randint(1, 16)}.log.",
            f"The fixture is tests/data/invoices_{hex_(8)}.json (generated, do not edit).",
            f"Windows builds read C:\\ProgramData\\Orders\\cache-{rng.randint(1, 9)}.db.",
        ]
    ),
    "url": lambda: rng.choice(
        [
            f"Docs: https://docs.example.com/guide/install?version={version()}#linux",
            f"Dashboard https://grafana.internal/d/{chars(ALNUM, 9)}/api-latency?orgId=1&from=now-6h",
            f"The health check is http://localhost:{rng.randint(3000, 9999)}/healthz; metrics at /metrics.",
            f"DATABASE_URL=postgresql://app@{rng.choice(HOSTS)}:5432/app (password from PGPASSWORD).",
            f"Download link https://files.example.com/share/{chars(ALNUM, 22)}?dl=1 expires {date()}.",
        ]
    ),
    "network": lambda: rng.choice(
        [
            f"Postgres listens on {ip()}:5432 and redis on {ip()}:6379.",
            f"The VPN hands out {ip()}/24; the gateway is {ip()}.",
            f"Port {rng.randint(1024, 65535)} is blocked by the corporate proxy.",
        ]
    ),
    "digest": lambda: rng.choice(
        [
            f"The base image is python@sha256:{hex_(64)}.",
            f"Pin ghcr.io/acme/api@sha256:{hex_(64)} in the helm chart.",
            f'package-lock has "integrity": "sha512-{chars(ALNUM + "+/", 86)}=="',
            f"The artifact checksum is sha256:{hex_(64)}.",
            f"cache_key = {hex_(40)} per request body.",
        ]
    ),
    "ids": lambda: rng.choice(
        [
            f"The trace id {hex_(32)} shows the slow span in the payment service.",
            f"Events are keyed by ULID, e.g. {ulid()}, so they sort by time.",
            f"Sentry issue {chars(string.ascii_uppercase, 4)}-{rng.randint(100, 999)} groups the timeouts.",
            f"The fixture stores b64 {base64.b64encode(rng.randbytes(18)).decode()} as the payload.",
            f"YouTube id {chars(ALNUM + '-_', 11)} is the onboarding video.",
            f"The S3 key is uploads/{date()}/{chars(ALNUM, 16)}.png.",
        ]
    ),
    "settings": lambda: rng.choice(
        [
            f"MCP_MEMORY_MAX_RESULT_TOKENS={rng.randint(1000, 16000)} keeps tool results small.",
            f"max_tokens={rng.choice([1024, 2048, 4096])} and temperature=0.{rng.randint(0, 9)} for the summariser.",
            "The API key lives in 1Password under 'Stripe prod'; ask Dana for access.",
            "Password: see the vault entry for the staging database.",
            "secret_name: prod/db/credentials is read by the ECS task.",
            f"TOKEN_TTL={rng.randint(5, 120)}m and PASSWORD_MIN_LENGTH={rng.randint(8, 16)}.",
            "Use DATABASE_URL=${DATABASE_URL} and API_KEY=<your key> in the template.",
            f"NODE_ENV=production LOG_LEVEL=info PORT={rng.randint(3000, 9000)} WORKERS={rng.randint(2, 16)}",
            "password_hash uses argon2id with 64 MiB memory; passwords are never logged.",
            "The token budget for the hook is 800; the tokenizer is tiktoken cl100k.",
            "GITHUB_TOKEN is provided by Actions; never paste one into an issue.",
            f"session_timeout: {rng.randint(15, 60)}m, csrf_header: X-CSRF-Token",
        ]
    ),
    "prose": lambda: rng.choice(
        [
            f"Dana prefers tabs, reviews before 10:00 and is off on {date()}.",
            f"We decided on PostgreSQL {rng.randint(14, 17)} with pgvector for the team server.",
            f"The sprint ends {date()}; the demo is at 15:30 in room 4B.",
            "Ask for the password reset flow to be tested on Safari too.",
            "Keys are rotated quarterly; secrets live in the vault, never in the repo.",
            f"The build takes {rng.randint(3, 15)} minutes on 2 cores and {rng.randint(1, 5)} on 8.",
        ]
    ),
}


def ordinary_memories(per_kind: int = 24) -> list[dict[str, str]]:
    rows, seen = [], set()
    for kind, make in ORDINARY.items():
        made = 0
        while made < per_kind:
            text = make()
            if text not in seen:
                seen.add(text)
                rows.append({"kind": kind, "text": text})
                made += 1
            elif len(seen) > 10_000:
                break
    return rows


def write(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"{path}: {len(rows)} memories")


def main() -> None:
    write(DATA / "secret_memories.jsonl", secret_memories())
    write(DATA / "ordinary_memories.jsonl", ordinary_memories())


if __name__ == "__main__":
    main()
