"""What a point is about, read once per point: its topic words, its advice, its head, its pairs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ._vocabulary import (
    ADVICE_VERBS,
    BARE_VERBS,
    DANGLING_WORDS,
    DETERMINERS,
    PARTICLES,
    PRONOUNS,
    REFERRING,
    word_list,
    word_set,
)

# Words that say nothing of a point's topic: those no phrase ends on, pronouns, auxiliaries.
_NON_TOPIC = DANGLING_WORDS | PRONOUNS | {"do", "does", "have", "has"}
_TOPIC_WORDS = re.compile(r"[^\W_]+")
# Words with their hyphens: "AI-powered diagnostics" and "AI-powered chatbots" open on two words each.
COMPOUNDS = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


# What joins the things a title names ("Arrival and Accommodation", "Visas, insurance and money").
_CONJUNCTS = re.compile(r"\s*(?:&|\band\b)\s*", re.IGNORECASE)


# Words a small model uses for one another in one outline ("The Roman Empire's collapse" on its fall,
# "Greener option" / "Sustainable option"): compared as one.
_SAME = {
    word: group.split()[0]
    for group in (
        "fall collapse downfall demise decline",
        "benefit advantage pro",
        "drawback disadvantage con downside",
        "sustainable greener eco",
        "option choice alternative",
        "method strategy technique approach",
        "tradition custom",  # "Customs of the Bedouin culture" / "Bedouin traditions"
        "etiquette manner",
    )
    for word in group.split()
}


def stems(
    text: str, words: re.Pattern[str] = _TOPIC_WORDS, skip: frozenset[str] = frozenset(), same: bool = False
) -> list[str]:
    """`text`'s topic `words` in order, but those in `skip`, cut as `_bag` cuts them (a plural "s"
    and an "-ing" first: "maps" is "map", "rising" and "rise" meet), and read as `_SAME` reads them
    where `same`."""
    found = []
    for i, word in enumerate(words.findall(text)):
        if word[0].isdigit() or (len(word) == 1 and i > 0 and word.isupper()):
            found.append(word)
        elif len(word) > 1 and word.casefold() not in _NON_TOPIC and word.casefold() not in skip:
            word = word.casefold()
            word = singular(word)
            if same:  # ("strategies": "strategy")
                word = _SAME.get(word[:-2] + "y" if word.endswith("ie") else word, word)
            found.append(_base(word)[:5])
    return found


def _bag(text: str, same: bool = False) -> frozenset[str]:
    """A point's topic words, each cut to its first five letters: "cultural" and "culture",
    "Liquorization" and "Liquorizing" are the same word here. Numbers and lone capitals count:
    "Phase 1" and "Phase 2", "Vitamin A" and "Vitamin C" are two points each."""
    return frozenset(stems(text, same=same))


# Verbs and adjectives that open advice titles without naming a topic ("Use a planner", "Key
# factors"): they do not tell two points apart. Whole words, so "engagement" or "maintenance" still do.
_GENERIC = (
    BARE_VERBS
    | {"stay", "maintain", "seek", "establish", "follow"}
    | {"prioritize", "way", "ways", "tip", "tips", "thing", "things", "important", "good", "better", "best"}
    | {"new", "other", "another", "different", "various", "key", "main"}
    # "Improved biodiversity" / "Increased biodiversity": more of it, both ways.
    | {"improved", "increased", "enhanced", "boosted", "greater"}
)


def _topic(text: str, same: bool = False) -> frozenset[str]:
    """`_bag` without the generic words: what two points are compared on."""
    return frozenset(stems(text, skip=_GENERIC, same=same))


# What comes before advice without being it: "It is important to make plans" advises "make plans".
_ADVICE_LEAD = re.compile(
    r"^(?:(?:it\s+is|it['’]s)\s+(?:important|essential|crucial|vital|key|necessary)|make\s+sure|remember"
    r"|don['’]t\s+forget|try)\s+to\s+",
    re.IGNORECASE,
)


class Advice(NamedTuple):
    verb: str  # empty: the title is no advice
    acts_on: frozenset[str]


_NO_ADVICE = Advice("", frozenset())


def _object(text: str, asked: frozenset[str]) -> Advice:
    """An advice title's verb and what it acts on: its topic words after the verb, without the
    question's own words ("Use a window with a south-facing view" on keeping a house cool: "use",
    "window south facing view"). Nothing for a title that is not advice, or whose object is only the
    question's subject."""
    words = word_list(_ADVICE_LEAD.sub("", text))
    verb = words[0].casefold() if len(words) >= 2 else ""
    if not verb or (verb not in ADVICE_VERBS and words[1].casefold() not in DETERMINERS):
        return _NO_ADVICE
    acts_on = frozenset(stems(" ".join(words[1:]), skip=_GENERIC, same=True)) - asked
    # One word left of a long title ("Reduce plastic waste by using reusable products": "reusable")
    # is what the question's words left over, not what it acts on, unless it ends the title ("Choose
    # a wedding venue" on saving on a wedding).
    last = stems(words[-1], same=True)
    return Advice(verb, acts_on) if len(acts_on) > 1 or len(words) <= 3 or set(last) == acts_on else _NO_ADVICE


class Head(NamedTuple):
    word: str  # empty: no head to compare
    first: bool  # it opens its phrase ("Apps with ..."), not ends it ("Language learning apps")


_NO_HEAD = Head("", False)
# Words after which a noun phrase's head has been said ("Apps with ...", "Tools for ...").
_AFTER_HEAD = word_set("with for of that which from about like")


def _head(words: tuple[str, ...], asked: frozenset[str]) -> Head:
    """A short noun phrase's head, and whether it comes first: "apps", first, in "Apps with
    interactive methods" (a plural first: "Focus on ..." is a verb); "apps", last, in "Language
    learning apps". None for a head the question names (a question on apps asks for kinds of
    them), for advice or a long title."""
    if not 2 <= len(words) <= 5 or words[0] in ADVICE_VERBS:
        return _NO_HEAD
    if words[1] in _AFTER_HEAD and re.search(r"[^su]s$", words[0]):  # a plural noun, not "Think about"
        head, first = words[0], True
    elif len(words) <= 4 and not _AFTER_HEAD.intersection(words):
        head, first = words[-1], False
    else:
        return _NO_HEAD
    found = stems(head, skip=_GENERIC, same=True)
    return Head(found[0], first) if found and found[0] not in asked else _NO_HEAD


def _base(word: str) -> str:
    """An "-ing" form as the word it comes from, so the two meet: "rising" / "rise",
    "running" / "run", "caring" / "care"; a cut to five letters does the rest ("cultural" / "culture").
    Other words stay as written ("care" and "car", "site" and "sitting" stay apart)."""
    if len(word) < 6 or not word.endswith("ing"):
        return word
    word = word[:-3]
    if word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]  # "running"
    # "rising", "making": a consonant, one vowel and a consonant lost their "e".
    return word + "e" if re.search(r"(?:^|[^aeiou])[aeiou][^aeiouwxy]$", word) else word


def singular(word: str) -> str:
    """A plural "s" off ("maps" is "map"; "glass" and "bus" stay)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _pairs(point: str, asked: frozenset[str]) -> frozenset[tuple[str, str]]:
    """Two topic words in a row ("sleep quality"), neither of them generic or the question's, nor an
    adverb or a past form ("largely attributed" says how, not what)."""
    pairs = set()
    before = ""
    words = COMPOUNDS.findall(point)
    # A capital inside a title in sentence case is a name, and a name no topic pair ("Emperor Trajan" in
    # two points on his reign); in a title in title case ("Better Sleep Quality") capitals say nothing.
    title_case = sum(w[:1].isupper() for w in words) > len(words) / 2
    for i, word in enumerate(words):
        named = i > 0 and word[:1].isupper() and not title_case
        found = (
            [] if named or re.search(r"..(?:ly|ed)$", word, re.IGNORECASE) else stems(word, skip=_GENERIC, same=True)
        )
        if len(found) > 1 and "-" in word:  # "energy-efficient appliances": one word, then one
            found = ["-".join(found)]
        alone = len(found) == 1 and found[0] not in asked and found[0] not in PARTICLES  # not "Turn off"
        stem = found[0] if alone and not found[0][0].isdigit() else ""
        if before and stem:
            pairs.add((before, stem))
        before = stem
    return frozenset(pairs)


@dataclass(frozen=True)
class Question:
    """What the question an outline answers asks, read once per outline."""

    # A small model's outline: points that open on the same two topic words ("Buy local and
    # support ..." / "Buy locally sourced") are one topic. A larger model's "Support local
    # businesses" / "Support local charities" are two, so this is for small models only.
    strict: bool
    asked: frozenset[str]  # its topic words (`stems`), read as one where strict (`_SAME`)
    as_written: frozenset[str]  # its topic words as written, for openings
    words: frozenset[str]  # its words, casefolded
    lists: bool  # it names several things

    @classmethod
    def read(cls, question: str, strict: bool) -> Question:
        return cls(
            strict=strict,
            asked=frozenset(stems(question, COMPOUNDS, same=strict)),
            as_written=frozenset(stems(question, COMPOUNDS, same=False)),
            words=frozenset(re.findall(r"\w+", question.casefold())),
            # ("Compare Python, Rust, Go": two commas make a list; "..., i get really nervous" is one clause more.)
            lists=bool(re.search(r"\b(?:and|or|vs|versus)\b|&|/|,.*,", question, re.IGNORECASE)),
        )


@dataclass(frozen=True)
class Traits:
    """What a point is compared on, worked out once per point."""

    bag: frozenset[str]  # its words (`_bag`)
    topic: frozenset[str]  # its words less the generic ones (`_topic`)
    opening: tuple[str, ...]  # its first two topic words, for a small model (empty: none to compare)
    words: tuple[str, ...]  # its words, casefolded
    verb: str  # its verb, as advice, for a small model (`_object`; empty: none)
    object: frozenset[str]  # what that verb acts on
    parts: tuple[frozenset[str], ...]  # a small model's "A and B" title: the topic words of each (else none)
    head: Head  # a small model's short noun phrase: its head, and whether it comes first (`_head`)
    pairs: frozenset[tuple[str, str]]  # a small model's title: two topic words in a row, neither the question's
    acts_on: tuple[str, ...]  # what its verb acts on, in order, the question's words and "them" left out

    @property
    def short(self) -> bool:
        """A title of one or two words."""
        return len(self.words) <= 2


def traits(point: str, question: Question) -> Traits:
    strict = question.strict  # a small model's synonyms are one word (`_SAME`)
    advice = _object(point, question.asked) if strict else _NO_ADVICE
    words = tuple(w.casefold() for w in word_list(point))
    in_order = (
        stems(" ".join(w for w in words[1:] if w not in REFERRING), skip=_GENERIC, same=True) if advice.verb else []
    )
    return Traits(
        bag=_bag(point, strict),
        topic=_topic(point, strict),
        opening=_opening(point, question),
        words=words,
        verb=advice.verb,
        object=advice.acts_on,
        parts=_parts(point) if strict else (),
        head=_head(words, question.asked) if strict else _NO_HEAD,
        pairs=_pairs(point, question.asked) if strict else frozenset[tuple[str, str]](),
        acts_on=tuple(s for s in in_order if s not in question.asked),
    )


def _parts(point: str) -> tuple[frozenset[str], ...]:
    """The topic words of each thing a small model's "A and B" title names."""
    # Things of a few words each: "Read books on vocabulary and grammar" names books, not grammar.
    split = [part for part in _CONJUNCTS.split(point) if part]
    parts = tuple(_topic(part, True) for part in split if len(word_list(part)) <= 3)
    return parts if len(split) > 1 and len(parts) == len(split) and all(parts) else ()


def _opening(point: str, question: Question) -> tuple[str, ...]:
    """The first two topic words, where strict and there are two (else nothing to compare). A
    title that opens on the question's own subject ("Quantum computing is a branch ..." for a
    question on quantum computing) opens on what follows it; "Cat grooming" / "Dog grooming"
    open on one word of the question each, and differ. A verb and its particle ("Turn off
    lights" / "Turn off unused appliances") open nothing."""
    # Words as written: "The Roman Empire's downfall was largely ..." opens on "downfall", not on
    # the question's "fall" (and so not on "largely attributed", which its internal twin shares).
    found = stems(point, COMPOUNDS, _GENERIC, same=False) if question.strict else []
    if len(found) > 2 and set(found[:2]) <= question.as_written:
        while found and found[0] in question.as_written:
            found.pop(0)
    opening = tuple(found[:2])
    return opening if len(opening) == 2 and opening[1] not in PARTICLES else ()
