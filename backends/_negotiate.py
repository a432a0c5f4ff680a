"""Parameter negotiation: learn from a server's refusals which request fields it accepts.

A server that refuses a request (400/422) and names a field in its error body (OpenAI's
``error.param`` with ``code: unsupported_parameter|unsupported_value``, the "Unsupported parameter:
'x'" wording, Mistral's ``detail[].loc == ["body", FIELD]`` with ``extra_forbidden``, Gemini's
``Unknown name "x"``, "Unrecognized request argument supplied: x" ...) gets the request again,
adapted: ``max_tokens`` renamed to ``max_completion_tokens`` (and back), ``seed`` renamed to
``random_seed`` for strict (422) schemas, ``reasoning_effort`` stepped down, anything else dropped
(a dropped ``stop`` is emulated on the client, see ``ClientStop``). What is learned is kept per
(endpoint, model) for the rest of the process, so later calls are right the first time; the
knowledge only grows, so no field is adapted twice and a call cannot loop. An error that names no
field this module may change (a bad model name, a prompt too long, a value out of range) is never
adapted: it stays the real error it is.

Known defaults where the model name makes them certain (OpenAI's o-series and gpt-5 family) start
the knowledge, but nothing depends on them: an unknown name that refuses the same way is learned.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("sot.negotiate")

# The other name of a renamable field (servers differ on which one they take).
_OTHER_NAME = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}
# Fields a request may lose without changing what is asked: sampling knobs, extras, constraints.
DROPPABLE = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "seed",
        "random_seed",
        "stream_options",
        "stop",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "n",
        "user",
        "store",
        "grammar",
        "structured_outputs",
        "guided_regex",
        "guided_grammar",
        "response_format",
        "reasoning_effort",
        "chat_template_kwargs",
        "think",
        "max_tokens",
        "max_completion_tokens",
    }
)
# reasoning_effort values from least thinking up, as far as servers differ on them.
_EFFORT_STEP = {"none": "minimal", "minimal": "low"}
# OpenAI's reasoning models: o1, o3, o4-mini ... and the gpt-5 family (a provider prefix allowed).
# gpt-5-chat models are chat models: left to be learned if they refuse anything.
_OPENAI_REASONING = re.compile(r"^(?:[\w.-]+/)?(?:o[1-9](?:-|$)|gpt-5(?:\.\d+)?(?![.\d]|-chat))", re.IGNORECASE)
_REASONING_DEFAULT_DROPS = frozenset(
    {
        "temperature",
        "top_p",
        "frequency_penalty",
        "presence_penalty",
        "stop",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "chat_template_kwargs",
    }
)
_REFUSAL_CODES = frozenset(
    {"unsupported_parameter", "unsupported_value", "unknown_parameter", "unrecognized_parameter", "extra_forbidden"}
)
# pydantic's errors for a value outside a fixed set (vLLM's reasoning_effort: low|medium|high).
_VALUE_CODES = frozenset({"literal_error", "enum"})
# The wordings below stay text until a refusal needs them (_compiled): compiling them costs milliseconds
# that most processes, never refused, would spend at start-up.
# The same errors printed as Python reprs inside a message (vLLM, SGLang: "[{'type': 'literal_error', 'loc': ...").
_PYDANTIC_REPR = r"""'type':\s*'(extra_forbidden|literal_error|enum)',\s*'loc':\s*\('body',\s*'(\w+)'"""
_Q = r"""\\?["'`]?"""  # an optional quote (maybe escaped) around a field name
_NAME = r"([A-Za-z_][\w.\[\]]*)"
_WORDING = (  # each case-insensitive
    rf"unsupported (?:parameter|value|field|argument)s?\s*:?\s*{_Q}{_NAME}",
    rf"unknown (?:name|field|parameter|argument)s?\s*:?\s*{_Q}{_NAME}{_Q}(?: at '([\w.\[\]]+)')?",
    rf"unrecogni[sz]ed (?:request )?(?:argument|parameter|field)s?(?: supplied)?\s*:?\s*{_Q}{_NAME}",
    rf"""["'`]{_NAME}["'`]\s*:?\s*(?:is |are )?(?:not supported|unsupported|not allowed|not permitted|"""
    r"""does not support|is not a valid parameter)""",
    rf"(?:parameter|field|argument|property)\s+{_Q}{_NAME}{_Q}\s+(?:is\s+)?(?:not supported|unsupported|"
    r"not allowed|not permitted|unknown)",
    # Bare names ("logprobs is not supported"): safe, since only a field the request sent can match.
    rf"\b{_NAME} (?:is|are) (?:not supported|unsupported|not allowed|not permitted)",
    rf"does not support (?:the )?(?:parameter|field|argument)s?\s*:?\s*{_Q}{_NAME}",
    rf"unexpected (?:keyword )?(?:argument|field|parameter|property)s?\s*:?\s*{_Q}{_NAME}",
    rf"\({_Q}{_NAME}{_Q} (?:was|were) unexpected\)",  # JSON Schema's additionalProperties
    rf"{_NAME}\s*:\s*extra (?:inputs|fields) (?:are )?not permitted",
)
_REFUSAL_WORDS = (  # case-insensitive
    r"unsupported|not supported|unknown (?:name|field|parameter)|unrecogni[sz]ed|not permitted|not allowed|"
    r"extra (?:inputs|fields)|does not support|only the default|unexpected (?:keyword|argument|field|property)"
)


@dataclass(frozen=True)
class Refusal:
    """One field a server refused: its name as sent, and whether only its value was refused."""

    name: str
    value_only: bool = False


def _texts_and_dicts(body: Any) -> Iterator[Any]:
    """Every dict and string in an error body; strings holding JSON are opened (Mistral nests them)."""
    if isinstance(body, dict):
        yield body
        for value in body.values():
            yield from _texts_and_dicts(value)
    elif isinstance(body, list):
        for item in body:
            yield from _texts_and_dicts(item)
    elif isinstance(body, str):
        stripped = body.strip()
        if stripped[:1] in ("{", "["):
            try:
                yield from _texts_and_dicts(json.loads(stripped))
                return
            except ValueError:
                pass
        yield body


def _top_level(path: str, sent: Mapping[str, Any], at: str | None = None) -> str | None:
    """The top-level request field a (maybe nested) name points at, if the request sent it."""
    for candidate in (at, path):
        if not candidate:
            continue
        head = re.split(r"[.\[]", candidate.removeprefix("body."), maxsplit=1)[0]
        if head in sent:
            return head
    for key, value in sent.items():  # a nested name alone, e.g. "include_usage" of stream_options
        if isinstance(value, Mapping) and path in value:
            return key
    return None


@functools.cache
def _compiled() -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...], re.Pattern[str]]:
    """The refusal patterns (Python reprs, wordings, refusal words), compiled on the first refusal."""
    wordings = tuple(re.compile(wording, re.IGNORECASE) for wording in _WORDING)
    return re.compile(_PYDANTIC_REPR), wordings, re.compile(_REFUSAL_WORDS, re.IGNORECASE)


def find_refusals(status: int, body: Any, sent: Mapping[str, Any]) -> list[Refusal]:
    """The request fields a 400/422 error body says the server refuses; [] when it names none."""
    if status not in (400, 422):
        return []
    found: dict[str, Refusal] = {}
    pydantic_repr, wordings, refusal_words = _compiled()

    def add(name: str | None, value_only: bool = False) -> None:
        if name and name not in found:
            found[name] = Refusal(name, value_only)

    for item in _texts_and_dicts(body):
        if isinstance(item, str):
            for match in pydantic_repr.finditer(item):
                add(_top_level(match.group(2), sent), match.group(1) != "extra_forbidden")
            for pattern in wordings:
                for match in pattern.finditer(item):
                    at = match.group(2) if pattern.groups > 1 else None
                    value_only = bool(re.search(r"unsupported value|[\"'`]\s*does not support", match.group(0), re.I))
                    add(_top_level(match.group(1), sent, at), value_only)
            continue
        # Structured pointers: OpenAI's param + code, pydantic's loc + type (Mistral, FastAPI servers).
        param = item.get("param")
        code = str(item.get("code") or item.get("type") or "")
        message = str(item.get("message") or item.get("msg") or "")
        if isinstance(param, str) and (code in _REFUSAL_CODES or refusal_words.search(message)):
            add(_top_level(param, sent), code == "unsupported_value" or "unsupported value" in message.lower())
        loc = item.get("loc")
        if (
            isinstance(loc, list)
            and len(loc) > 1
            and loc[0] == "body"
            and (code in _VALUE_CODES or code == "extra_forbidden" or refusal_words.search(message))
        ):
            add(_top_level(".".join(str(part) for part in loc[1:]), sent), code in _VALUE_CODES)
    return list(found.values())


@dataclass
class _Learned:
    """What one (endpoint, model) accepts, as learned so far. Only grows."""

    names: dict[str, str] = field(default_factory=dict)  # original field -> the name to send
    values: dict[str, Any] = field(default_factory=dict)  # original field -> the value to send
    dropped: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)  # names refused outright
    notes: list[str] = field(default_factory=list)  # what was adapted, in order


def _defaults(model: str) -> _Learned:
    learned = _Learned()
    if _OPENAI_REASONING.match(model):
        learned.names["max_tokens"] = "max_completion_tokens"
        learned.dropped.update(_REASONING_DEFAULT_DROPS)
        learned.notes.append("max_tokens->max_completion_tokens")
        learned.notes.extend(f"drop {name}" for name in sorted(_REASONING_DEFAULT_DROPS))
    return learned


_MEMORY: dict[tuple[str, str], _Learned] = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Forget everything learned in this process (tests, or after a server was reconfigured)."""
    with _LOCK:
        _MEMORY.clear()


@dataclass(frozen=True)
class Prepared:
    """A request body as this endpoint takes it, with what was changed and a stop to emulate."""

    body: dict[str, Any]
    adaptations: tuple[str, ...]
    client_stop: tuple[str, ...] = ()


class Negotiator:
    """The learned request shape of one (endpoint, model); safe to share across threads and tasks."""

    def __init__(self, endpoint: str, model: str) -> None:
        self.key = (endpoint.rstrip("/"), model)
        with _LOCK:
            _MEMORY.setdefault(self.key, _defaults(model))

    def _learned(self) -> _Learned:
        return _MEMORY[self.key]

    def prepare(self, body: Mapping[str, Any]) -> Prepared:
        """`body` adapted to what this endpoint is known to accept."""
        out: dict[str, Any] = {}
        used: list[str] = []
        client_stop: tuple[str, ...] = ()
        with _LOCK:
            learned = self._learned()
            for name, value in body.items():
                if name in learned.dropped:
                    if name == "stop" and value:
                        client_stop = (value,) if isinstance(value, str) else tuple(value)
                    used.append(f"drop {name}")
                    continue
                sent_name = learned.names.get(name, name)
                if sent_name != name:
                    used.append(f"{name}->{sent_name}")
                if name in learned.values and learned.values[name] != value:
                    used.append(f"{name} {value}->{learned.values[name]}")
                    value = learned.values[name]
                out[sent_name] = value
        if client_stop:
            used = [f"{note} (emulated on the client)" if note == "drop stop" else note for note in used]
        return Prepared(out, tuple(used), client_stop)

    def learn(self, status: int, error_body: Any, original: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
        """Adapt to a refusal of `sent` (built from `original`); [] when it is a real error.

        Returns what changed (or was already learned by a concurrent call): the request can be sent
        again at once, adapted.
        """
        refusals = find_refusals(status, error_body, sent)
        changes: list[str] = []
        with _LOCK:
            learned = self._learned()
            for refusal in refusals:
                original_name = next(
                    (o for o in original if learned.names.get(o, o) == refusal.name and o not in learned.dropped),
                    None,
                )
                if original_name is None:
                    # Not sent so any more: a concurrent call learned it meanwhile; sending again is right.
                    changes.append(f"{refusal.name} (learned by another call)")
                    continue
                change = self._adapt(learned, original_name, refusal, sent, status)
                if change:
                    if not change.endswith("(learned by another call)"):
                        learned.notes.append(change)
                    changes.append(change)
        for change in changes:
            log.info("the server refused a field for model %s; adapted: %s (kept for later calls)", self.key[1], change)
        return changes

    @staticmethod
    def _adapt(learned: _Learned, original: str, refusal: Refusal, sent: Mapping[str, Any], status: int) -> str | None:
        name = refusal.name
        value = sent.get(name)
        if name == "reasoning_effort" and refusal.value_only and isinstance(value, str) and value in _EFFORT_STEP:
            if learned.values.get(original, value) != value:
                return f"{name} (learned by another call)"
            learned.values[original] = _EFFORT_STEP[value]
            return f"reasoning_effort {value}->{_EFFORT_STEP[value]}"
        if refusal.value_only and name == "temperature" and value == 1:
            return None  # 1 is every server's default: refusing it is no field problem
        learned.refused.add(name)
        other = _OTHER_NAME.get(name)
        if other is not None and other not in learned.refused and other not in sent:
            learned.names[original] = other
            return f"{name}->{other}"
        if name == "seed" and status == 422 and "random_seed" not in learned.refused and "random_seed" not in sent:
            learned.names[original] = "random_seed"  # Mistral's name for it
            return "seed->random_seed"
        if name in DROPPABLE or original in DROPPABLE:
            learned.dropped.add(original)
            return f"drop {original}" + (" (emulated on the client)" if original == "stop" else "")
        return None

    @property
    def notes(self) -> list[str]:
        """Every adaptation known for this (endpoint, model), defaults included."""
        with _LOCK:
            return list(self._learned().notes)


class ClientStop:
    """Emulates `stop` for a server that refused it: text up to the first stop string, then the end.

    Text that could be the start of a stop string split across chunks is held back until the next
    chunk tells; ``feed`` returns what may be shown now, ``stopped`` says the stop string was seen.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [s for s in stops if s]
        self._held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        if self.stopped or not self.stops:
            return "" if self.stopped else text
        buffer = self._held + text
        cut = min((i for i in (buffer.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.stopped = True
            self._held = ""
            return buffer[:cut]
        hold = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(buffer)), 0, -1):
                if buffer.endswith(stop[:size]):
                    hold = max(hold, size)
                    break
        self._held = buffer[len(buffer) - hold :] if hold else ""
        return buffer[: len(buffer) - hold]

    def flush(self) -> str:
        """What was held back, at the end of the stream."""
        held, self._held = self._held, ""
        return "" if self.stopped else held
