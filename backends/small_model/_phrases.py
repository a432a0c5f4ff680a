"""Where a title ends: at a phrase boundary, never inside a phrase, a list or an aside."""

from __future__ import annotations

import re
from typing import NamedTuple

from ._abbreviations import NOT_AFTER_ABBREVIATION
from ._vocabulary import ADVICE_VERBS, DANGLING_WORDS, DETERMINERS, OBJECTS, PARTICLES, PRONOUNS, word_list

# Where a long point may end: before a connective, a clause or a preposition that adds detail ("of"
# only where nothing else does: "The frequency and severity" is no title without what it is of).
_BOUNDARY = re.compile(
    r"\s*(?:[,;(]|\s[-–—]\s)\s*|\s+(?=(?:and|or|but|which|that|who|because|so|while|as|by|to|for|with|"
    r"without|through|like|such as|including|in order|from|into|in|on|at|about|using|when|if|of|"
    r"during|after|before|until|within|than|across|despite)\b)",
    re.IGNORECASE,
)
# Boundaries between clauses: punctuation (in the match itself) or one of these words after it.
_STRONG = re.compile(r"(?:and|or|but|which|that|who|because|so|while|when|if)\b", re.IGNORECASE)
# "Title: explanation", "Title - explanation", "Title. More sentences."
# (not after an abbreviation or an initial: "Visit Mt. Fuji early", "U.S. policy")
# ("water...otherwise, just how many do": an ellipsis run into more words.)
_TITLE_END = re.compile(r":\s|:$|;|\s[-–—]\s|" + NOT_AFTER_ABBREVIATION + r"[.!?]\s+(?=\S)|(?<=\w)(?:\.{2,}|…)(?=\w)")


# "Volunteer for causes you care about", "A job you are passionate about": a preposition a relative clause
# leaves at its end, which ends the phrase ("Make sure you get plenty of" is no relative clause, and was cut).
_STRANDED = re.compile(
    r"\b(?!(?:that|sure|if|when|as|because|so|and|or|but|make|ensure|remember|know)\b)[a-z]+\s+"
    r"(?:you|we|they|i|he|she)\s+(?:[\w'’]+\s+){0,2}[\w'’]+\s+(?:about|for|with|in|on|to|from|at|of|by)$",
    re.IGNORECASE,
)


# "... can make you a more attractive", "... can enhance your overall physical": an adjective whose noun never
# came ("Do the most good" and "Keep it physical" are whole).
NOUN_MISSING = re.compile(
    r"\ban?\s+(?:more|less)\s+[a-z]+$"
    r"|\b(?:an?|your|their|our|its|his|her)\s+(?:overall\s+)?(?:physical|mental|emotional|social|financial|personal|overall)$",
    re.IGNORECASE,
)


def dangles(text: str) -> bool:
    """Whether a line of a few words or more ends on a word no phrase ends on ("... them into a")."""
    words = word_list(text)
    if len(words) < 4:
        return False
    if NOUN_MISSING.search(text.rstrip(" .,;:")):
        return True
    return words[-1].casefold().strip(",;") in DANGLING_WORDS and not _STRANDED.search(text)


def strip_dangling(text: str) -> str:
    words = word_list(text.rstrip(" ,;:-–—("))
    while len(words) > 1 and words[-1].casefold().strip(",;") in DANGLING_WORDS:
        if _STRANDED.search(" ".join(words)):
            break
        words.pop()
    return " ".join(words).rstrip(" ,;:-–—(")


# A word that needs what follows it: no title ends on it ("... against the Mongols led", "Negotiate in a way",
# "Earthquakes are caused"; "... before they are due, and" may end on "due", said of what is due).
_NEEDS_MORE = re.compile(
    r"\b(?:led|leads?|leading|contribut(?:ed|es|ing)|attributed|related|linked|according|prone|able|unable"
    r"|ability|used|way|begins|starts|compared)$|(?<!\bare\s)(?<!\bis\s)(?<!\bbe\s)\bdue$"
    r"|\b(?:by|for|about|from|without)\s+\w+ing$"
    r"|\b(?:is|are|was|were|be|been)\s+(?:\w+ed|made|driven|done|known|seen|given|taken)$",
    re.IGNORECASE,
)
# "... prone to earthquakes due", "... compared": its cause or what it is compared to never came ("... when
# bills are due" stays; "was due" is an open passive, below).
_OPEN_END = re.compile(
    r"(?<!\bare)(?<!\bis)(?<!\bbe)(?<!\bwas)(?<!\bwere)(?<!ly)\s+due[\s,;:]*$|\s+(?:when\s+|as\s+)?compared[\s,;:]*$"
)
# A comma after a list's first item ("numbers, letters"): no title ends inside a list ...
_MID_LIST = re.compile(r",(?:\s+[\w'’-]+){1,3}\s*$")
# ... and one before more items ("numbers, letters, and symbols") ends a title only where no clause
# boundary does. ("..., like coconut oil or ashwagandha" opens an aside, no list.)
_LIST_GOES_ON = re.compile(
    r"(?!(?:like|such|including|especially|which|that|who|with|by|for|to|from|as|so|but|because|while|when|if)\b)"
    r"(?:[\w'’-]+\s+){0,2}[\w'’-]+(?:,|\s+(?:and|or)\s)",
    re.IGNORECASE,
)
_OF = re.compile(r"of\b", re.IGNORECASE)


class Boundaries(NamedTuple):
    """Where a title may end, in order."""

    heads: list[re.Match[str]]  # every boundary that leaves a title before it
    strong: list[re.Match[str]]  # those of them between two clauses


def boundaries(text: str) -> Boundaries:
    """Phrase boundaries that leave a title before them (three words, else two): all, and those
    between clauses. "In contrast, plant-based sources ..." is not cut to "In contrast". Not inside a
    list, nor after a word that needs what follows; before "of" only where there is no other."""
    found = [
        m
        for m in _BOUNDARY.finditer(text)
        if not (m.group(0).strip() == "," and _MID_LIST.search(text[: m.start()]))
        and not _NEEDS_MORE.search(text[: m.start()])
    ]
    found = [m for m in found if not _OF.match(text, m.end())] or found
    heads = [m for m in found if len(word_list(text[: m.start()])) >= 3] or [
        m for m in found if len(word_list(text[: m.start()])) == 2
    ]
    strong = [m for m in heads if _between_clauses(text, m)]
    return Boundaries(heads, strong)


def _between_clauses(text: str, boundary: re.Match[str]) -> bool:
    """Whether `boundary` parts two clauses, not two things of one list ("numbers, letters, and
    symbols", "neck and shoulder pain"; "Set goals and track them" parts two)."""
    mark, after = boundary.group(0).strip(), text[boundary.end() :]
    if mark == "," and _LIST_GOES_ON.match(after):
        return False
    if mark not in (",", ""):
        return True
    joined = re.match(r"(?:and|or)\s+([\w'’-]+)(?:\s+([\w'’-]+))?", after, re.IGNORECASE)
    if joined:  # "and" before a verb ("and break them down"), or a new subject, starts a clause
        word, then = joined.group(1).casefold(), (joined.group(2) or "").casefold()
        subject = word in DETERMINERS or word in PRONOUNS
        verb = word in ADVICE_VERBS or word.endswith("ing") or then in DETERMINERS | OBJECTS | PARTICLES
        return subject or verb
    return mark == "," or bool(_STRONG.match(text, boundary.end()))


def _first_phrase(text: str, max_words: int, whole_words: int) -> str:
    """`text` ended at a phrase boundary, never inside a phrase: at its last clause boundary within
    `max_words` words that leaves four or more; else whole, up to `whole_words` (a complete sentence
    reads better than its first words: "The biggest advantage is their low running cost", not "The
    biggest advantage"); else at its last clause boundary, then its last boundary of any kind, within
    `whole_words`; else at its first boundary."""
    heads, strong = boundaries(text)
    if within := [m for m in strong if 4 <= len(word_list(text[: m.start()])) <= max_words]:
        return text[: within[-1].start()]
    # (Cut only before "of", a sentence a little over the length reads better whole: "... was largely
    # attributed to the rise of barbarian tribes", not "... to the rise".)
    of_only = bool(heads) and all(_OF.match(text, m.end()) for m in heads)
    if len(word_list(text)) <= whole_words + (whole_words // 3 if of_only else 0):
        return text
    for found in (strong, heads):
        if within := [m for m in found if len(word_list(text[: m.start()])) <= whole_words]:
            return text[: within[-1].start()]
    return text[: heads[0].start()] if heads else text


def shape_title(text: str, max_words: int, cut: bool = False, whole_words: int | None = None) -> str:
    """A point's title: its head before a colon, semicolon or sentence end, ending at a phrase boundary.

    `cut`: the line was stopped by a length or token limit, so its end is not a phrase boundary.
    `whole_words`: a line of at most this many words with no clause boundary early on stays whole.
    """
    title_end = _TITLE_END.search(text)
    if title_end and len(word_list(text[: title_end.start()])) >= 1:
        text, cut = text[: title_end.start()], False
    text = re.sub(r"(?<=\S)\s+[^\W\d_]+-$", "", text.rstrip())  # "Offer a non-": half a compound
    if (cut and len(word_list(text)) >= 4) or dangles(text):
        # Back off to the last boundary: "... and make them work on a" ends at "... goals".
        heads, strong = boundaries(text)
        text = text[: (strong or heads)[-1].start()] if heads else text
    if len(word_list(text)) > max_words:
        text = _first_phrase(text, max_words, max_words if whole_words is None else whole_words)
    if text.count("(") > text.count(")"):  # "Language capabilities (e.g" : the aside never closed
        text = text[: text.rfind("(")]
    text = _OPEN_END.sub("", text)
    return strip_dangling(text) if len(word_list(text)) >= 3 else text.strip()
