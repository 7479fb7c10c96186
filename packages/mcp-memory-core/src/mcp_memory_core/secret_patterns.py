"""What detect-secrets' plugins do not cover, and what keeps ordinary text out of the findings.

Token shapes it lacks (newer OpenAI keys, Anthropic keys, fine-grained GitHub tokens, Google API
keys, npm tokens, a URL password after an empty user), secrets assigned to a secret-sounding name
(``PASSWORD=…``, ``api_token: …``), high-entropy values in other assignments, and, on request, e-mail
addresses and phone numbers. Imports nothing heavy: the detector compiles these on its first scan.
"""

from __future__ import annotations

import re

# (kind, pattern, group holding the secret)
TOKEN_PATTERNS: tuple[tuple[str, str, int], ...] = (
    ("anthropic-key", r"(?<![\w-])sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,}", 0),
    # sk-…, sk-proj-…, sk-svcacct-…: a body of 20+ characters with a digit and a capital in it, so
    # words like "sk-learn-compatible" are not keys.
    (
        "openai-key",
        r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[\w-]*\d)(?=[\w-]*[A-Z])[\w-]{20,}",
        0,
    ),
    ("github-token", r"(?<!\w)github_pat_[A-Za-z0-9_]{22,}", 0),
    ("google-api-key", r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])", 0),
    ("npm-token", r"(?<!\w)npm_[A-Za-z0-9]{36}(?!\w)", 0),
    ("stripe-key", r"(?<!\w)(?:sk|rk)_test_[0-9a-zA-Z]{24,}", 0),
    ("stripe-key", r"(?<!\w)whsec_[0-9a-zA-Z]{24,}", 0),  # a webhook signing secret
    ("huggingface-token", r"(?<!\w)hf_[A-Za-z]{30,}(?!\w)", 0),
    ("digitalocean-token", r"(?<!\w)do[opr]_v1_[0-9a-f]{64}(?!\w)", 0),
    ("mailgun-key", r"(?<![\w-])key-[0-9a-z]{32}(?![\w-])", 0),
    ("webhook-url", r"discord(?:app)?\.com/api/webhooks/\d+/([\w-]{30,})", 1),
    # scheme://user:password@host with an empty user (redis://:password@host), which the basic auth
    # plugin of detect-secrets leaves out
    ("url-password", r"(?<=[A-Za-z0-9])://:([^\s:/?#\[\]@]+)@", 1),  # no scheme scan: linear on long words
)

PII_PATTERNS: dict[str, str] = {
    "email": r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-]|\.\w)",
    # international (+CC …), (NNN) NNN-NNNN, or NNN-NNN-NNNN; dates, versions and addresses do not fit
    "phone": r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}"
    r"|\(\d{3}\) ?\d{3}-\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w-]|\.\d)",
}

# NAME = value, NAME: value, NAME := value, NAME => value, and in prose "NAME is value"; the name
# may be quoted (JSON, YAML).
ASSIGNMENT = re.compile(
    r"""(?<![\w.-])["']?(?P<name>[A-Za-z_][\w.-]*)["']?\s*(?P<op>:=|=>|=(?!=)|:(?!//)|(?<=\s)is(?=\s))\s*"""
    r"""(?P<quote>["'`]?)(?P<value>(?:(?!;[A-Za-z][\w ]{0,30}=)[^\s"'`])+)"""
)  # a value ends before "; Name=" (a connection string's next setting)
SECRET_NAME = re.compile(
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api_?key|apikey|access_?key|private_?key|auth_?key"
    r"|signing_?key|encryption_?key|credentials?|bearer",
    re.IGNORECASE,
)
# In prose, a secret-sounding name of one or two words right before the value, maybe after "is", ":"
# or "=" ("and secret wJalrX…", "Datadog API key 3c0c39…"): :func:`named_in_prose` says whether the
# value is one, so "the secret santa" and "token bucket" stay words.
PROSE_SECRET = re.compile(
    r"(?<![\w.-])(?P<name>(?:[A-Za-z][\w-]*[ _])?[A-Za-z_][\w-]*)\s*(?:(?<=\s)is\s+|[:=]\s*)?"
    r"(?P<quote>[\"'`]?)(?P<value>[A-Za-z0-9+/=_-]{20,})(?![\w+/=-])"
)
# A PROSE_SECRET value is such a run: a line without one is not searched for it (the full pattern,
# tried at every position, was 70 µs of a 300-character memory's 370 µs scan).
PROSE_VALUE_RUN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
# Every term of detect-secrets' KeywordDetector (its DENYLIST: api_?key, db_?pass, password, pwd,
# secret, contraseña …) holds one of these words, so a line that holds none, case folded, cannot
# match it: the plugin is not run (it was 170 µs of the same scan). None holds an "i", whose case
# rules differ between str.casefold and the regex engine's IGNORECASE.
KEYWORD_WORDS = ("key", "pass", "pwd", "secret", "contrase")


def may_name_a_keyword(line: str) -> bool:
    """False only when ``line`` holds none of :data:`KEYWORD_WORDS` in any case."""
    folded = line.casefold()
    return any(word in folded for word in KEYWORD_WORDS)


# "with password Qw3rty!9xZ": a password right after the word, letters and digits mixed
PASSWORD_PROSE = re.compile(
    r"(?<![\w-])(?:pass(?:word|wd|phrase)?|pwd)\s+(?P<value>[^\s\"'`]{6,})", re.IGNORECASE
)
# "the wifi password is swordfish", "Password: sunflowerbakery", "the password for the NAS is
# 'correct horse battery staple'": a password word (maybe "for <what>") then "is", "was", ":" or "=",
# then one word of letters that ends the clause, or anything quoted. A word that describes the password
# ("the password is required.", "… was changed.") is none (:func:`password_word`).
PASSWORD_WORD = re.compile(
    r"(?<![\w-])(?:pass(?:word|wd|phrase|code)|pwd)"
    r"(?:\s+(?:for|of|to|on)\s+[^.:;!?\n\"'`“”‘’=]{1,40}?)?"
    r"(?:\s+(?:is|was)\s*:?\s+|\s*[:=]\s*)"
    r"(?:[\"'`“‘](?P<quoted>[^\"'`“”‘’\n]{3,80})[\"'`”’]"
    r"|(?P<word>[A-Za-z][A-Za-z-]{2,39})(?=\s*(?:[!?;,)]|\.(?:\s|$)|$)))",
    re.IGNORECASE,
)
# Words that say what a password is like or where it is, not what it is.
_DESCRIPTIONS = """required wrong incorrect correct invalid valid weak strong long short unknown missing empty
blank set unset reset same new old default fine ok okay good bad right lost random complex simple easy
hard known mine yours his hers theirs ours it this that there here inside below above elsewhere gone
done ready inactive plaintext cleartext hidden unique obvious weird secret private public shared stale
latest temp none null nil great nice cool solid safe terrible awful perfect tricky stolen forgotten broken
written given chosen taken shown frozen due overdue plain fake dummy"""
NOT_A_PASSWORD = frozenset(_DESCRIPTIONS.split())
# Adjectives and participles by their ending: "expired", "expiring", "guessable", "sensitive",
# "useless", "weekly", "different", "generic", "optional", "mandatory".
DESCRIBING = re.compile(r"(?:ed|ing|able|ible|ive|ous|ful|less|ly|ent|ant|ic|al|ary|ory|ure)$", re.IGNORECASE)


def password_word(word: str) -> bool:
    """Whether the one word after "the password is" is the password: no placeholder, no word that
    describes a password (:data:`NOT_A_PASSWORD`, :data:`DESCRIBING`)."""
    folded = word.casefold()
    return plausible(word) and folded not in NOT_A_PASSWORD and not DESCRIBING.search(folded)


# An AWS secret access key: 40 characters of base64, which a line holding an access key id
# (AKIA…, ASIA…) may give without naming it ("keys: AKIA… / wJalrX…")
AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")
# where a URL's userinfo ends: the last "@" before the host (a password may hold "@" unencoded)
AUTHORITY = re.compile(r"[^\s/?#]*")
PASSWORD_NAME = re.compile(r"pass(?:word|wd|phrase)?|pwd", re.IGNORECASE)
# names that hold something about a secret, not the secret: where it lives, how big, how many
NOT_SECRET_NAME = re.compile(
    r"(?:^|[_.-])(?:ids?|path|file|dir|url|uri|name|names|count|len|length|size|limit|budget|ttl|type|"
    r"types|format|header|field|policy|rotation|expiry|expires|age|min|max|hash|hashes|manager|store|"
    r"vault|env|prefix|kind|source|location|ref|mode|pii|secrets|tokens|passwords)$"
    r"|^(?:max|min|num|n)[_.-]|tokeni[sz]er",
    re.IGNORECASE,
)
# names of values that are ids or digests: a high value entropy says nothing there
ID_NAME = re.compile(
    r"(?:^|[_.-])(?:ids?|uuid|guid|sha\d*|hash|digest|checksum|integrity|commit|rev|revision|version|"
    r"etag|tag|ref|cursor|trace|span|request|build|run|image|slug)(?:$|[_.-])",
    re.IGNORECASE,
)
PLACEHOLDER = re.compile(
    r"^(?:[$%{<\[(*…]|x{3,}|\.{3})|^(?:none|null|nil|true|false|yes|no|changeme|redacted|example|"
    r"placeholder|required|optional|secret|password|token|undefined|empty|todo|tbd|n/?a|unset|"
    r"your[_-].*|my[_-].*)$",
    re.IGNORECASE,
)
# references to a value kept elsewhere: settings.db_password, process.env.TOKEN, OTHER_VARIABLE, 42,
# getpass(), os.environ["X"], request.headers[…]
REFERENCE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9_]+|\d+|[A-Za-z_][\w.]*[(\[].*)$")
# identifiers that look random but are not secrets: commit hashes and other hex digests, UUIDs,
# prefixed digests (sha256:…, sha512-…), versions
IDENTIFIER = re.compile(
    r"^(?:[0-9a-fA-F]{7,128}|[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
    r"|(?:sha\d+|md5|blake2b?)[:-][A-Za-z0-9+/=_-]+|v?\d+(?:\.\d+)+(?:[-+][\w.-]+)?)$"
)
TRAILING = ".,;:!?)]}>"
EMPHASIS = "*_~"  # markdown around a word
DURATION = re.compile(r"\d+[A-Za-z]{1,2}")  # 3600s, 512mb, 90d
BASE64_CHARS = re.compile(r"^[A-Za-z0-9+/=_-]{20,}$")
HIGH_ENTROPY = 4.0  # bits per character (detect-secrets' base64 measure) of a value that looks random


def assigned_value(name: str, op: str, value: str) -> str | None:
    """The secret among ``NAME op value`` (trailing punctuation dropped), or None when the name does
    not sound secret or the value is a placeholder, a reference, a path or an ordinary identifier.
    After ``:`` or ``is`` (prose as much as config: "Password: see the vault", "the token is valid")
    the value must also be 8 characters or more and not only letters (and hyphens: "short-lived"); a
    password given as a word is :data:`PASSWORD_WORD`'s."""
    value = value.rstrip(TRAILING)
    if not SECRET_NAME.search(name) or NOT_SECRET_NAME.search(name) or not plausible(value):
        return None
    word = value.strip(EMPHASIS)  # "the token is **revoked**:" holds a word, "… is short-lived" too
    if op in (":", "is") and (
        word.replace("-", "").isalpha() or len(word) < (6 if _short_password(name, word) else 8)
    ):
        return None
    return value if len(value) >= 6 else None


def _short_password(name: str, value: str) -> bool:
    """A password of 6 or 7 characters with letters and digits ("the root password is hunter2"),
    not a duration or a size ("3600s", "512mb")."""
    return (
        bool(PASSWORD_NAME.search(name))
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and not DURATION.fullmatch(value)
    )


def password_in_prose(value: str) -> str | None:
    """The password in "password <value>": 6 characters or more with a digit in them (8 or more,
    or letters too), or None for a word, a reference, an address or a duration ("password reset",
    "password 2FA", "password 90d")."""
    value = value.rstrip(TRAILING)
    if len(value) < 6 or "@" in value or DURATION.fullmatch(value) or not plausible(value):
        return None
    if not any(c.isdigit() for c in value):
        return None
    return value if len(value) >= 8 or any(c.isalpha() for c in value) else None


def named_in_prose(name: str, value: str, entropy: float) -> bool:
    """A value right after a secret-sounding name in prose ("Datadog API key 3c0c39…", "the signing
    secret 8fK…"): random-looking, or at least 20 characters of letters and digits mixed that are
    no words (a hex key, a prefixed token) under a name that is no id or digest."""
    words = name.replace(" ", "_")
    if not SECRET_NAME.search(words) or NOT_SECRET_NAME.search(words) or not plausible(value):
        return False
    if random_looking(name, value, entropy):
        return True
    return (
        not ID_NAME.search(words)
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and not wordlike(value)
        and entropy > 3.0
    )


def plausible(value: str) -> bool:
    """Could ``value`` be a secret at all (not a placeholder, a reference, a path or a URL)? Under a
    secret name a hex string or a UUID is one (a webhook secret, an API key)."""
    return not (
        PLACEHOLDER.match(value)
        or REFERENCE.match(value)
        or value.startswith(("/", "~", "./", "../"))
        or "://" in value
    )


def random_looking(name: str, value: str, entropy: float) -> bool:
    """A high-entropy value assigned to a name that is no id or digest: base64-ish, 20+ characters,
    capitals, small letters and digits mixed, ``entropy`` (bits per character) above the bar."""
    return (
        not ID_NAME.search(name)
        and bool(BASE64_CHARS.match(value))
        and plausible(value)
        and not IDENTIFIER.match(value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and entropy > HIGH_ENTROPY
        and not wordlike(value)
    )


WORD_RUN = re.compile(r"[a-z]{3,}")


def wordlike(value: str) -> bool:
    """Mostly runs of three or more small letters: an identifier made of words
    (``HashiCorpVaultAgentInjector2``), not random characters, where such runs are rare (a random
    40-character base64 string has about one)."""
    return sum(len(run) for run in WORD_RUN.findall(value)) * 2 >= len(value)
