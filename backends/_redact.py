"""Secrets and URLs out of server-provided text, however a server echoes them.

A key can come back in changed case, cut by a character, or embedded in a longer token: any run of at
least ``SECRET_MATCH_CHARS`` characters that also occurs in the key (case-insensitive) is masked, and
so is the whole key when it is shorter than that. URLs (which may carry user info) become ``<url>``.
"""

from __future__ import annotations

import re

from sot import constants

_URL = re.compile(r"\b[a-zA-Z][\w+.-]*://\S+")
_USERINFO = re.compile(r"\b[\w.%+-]+:[^\s@/]+@[\w.-]+")


def _mask(text: str, secret: str) -> str:
    size = min(len(secret), constants.SECRET_MATCH_CHARS)
    if size < 3:
        return text
    key = secret.lower()
    pieces = {key[i : i + size] for i in range(len(key) - size + 1)}
    lowered = text.lower()
    hidden = [False] * len(text)
    for i in range(len(text) - size + 1):
        if lowered[i : i + size] in pieces:
            for j in range(i, i + size):
                hidden[j] = True
    if not any(hidden):
        return text
    out: list[str] = []
    for i, char in enumerate(text):
        if not hidden[i]:
            out.append(char)
        elif i == 0 or not hidden[i - 1]:
            out.append("***")
    return "".join(out)


def redact(text: str, *secrets: str | None) -> str:
    """`text` without URLs or any long piece of `secrets`, on one line of at most 200 characters."""
    for secret in secrets:
        if secret:
            text = _mask(text, secret)
    text = _URL.sub("<url>", text)
    text = _USERINFO.sub("<url>", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:200]
