"""A list item's text made a title: markup, scores and stray numbers off, and what the line tore or left open."""

from __future__ import annotations

import re
import unicodedata

from ._lines import CONTROL, EMPHASIS
from ._phrases import shape_title, strip_dangling
from ._vocabulary import AFTER_TO, NEEDS_OBJECT, word_list, word_set

# An example or a gloss begun and never given ("Building more roads, e.g.").
# (", e" is what the line's colon left of "e.g.:"; "vitamin e" stays.)
_EXAMPLE_OPENED = re.compile(
    r"(?:[\s,;(]*\b(?:e\.\s?g|i\.\s?e)\b\.?|\s*[,(]\s*(?-i:[ei])\b\.?)[\s,:;]*$", re.IGNORECASE
)
# A score the model gave its own line ("Temperature, humidity, light, etc. (3 points)"): no part of the title.
_SCORE = re.compile(r"\s*\(\d{1,2} points?\)[.\s]*$", re.IGNORECASE)
# A number the model tacked on after a comma ("Bring a camera for security, 9"): no part of the title.
_STRAY_NUMBER = re.compile(r"(?<![\d\s,])(?:\s*,\s*\d{1,3})+\s*[.:;]?\s*$")
# A later point's number run onto a title ("Be proactive and encourage others to do the same 6", the
# README's own first answer); "Phase 2", "Windows 11" and "Repeat step 6" name something.
_NEXT_NUMBER = re.compile(r"\b([a-z]{2,})(?:\s+|-)\d{1,2}\s*[.:;]?\s*$")  # ("... when possible and-3")
_NUMBERED_NOUNS = word_set(
    "step steps day days week weeks phase type level stage grade chapter page part round set year years "
    "version vitamin section rule tip point number no covid"
    # and words a quantity follows ("Sleep at least 7", "Count to 10")
    " least most than about around over under every only to by of for within per top first last"
    # and an article: "... during the 1" is a word torn to a number, no title
    " the a an"
)

# Verbs a relative clause does not end on: "... climate change that occurs" says nothing of when or where.
_NEEDS_WHEN = word_set("occurs occur happens happen begins begin starts start")
_WANTS_NOUN = frozenset(
    {"positive", "negative", "faster", "better", "healthy", "healthier", "good", "great", "costly", "strong"}
    | {"clear", "quick", "quicker", "high", "higher", "low", "lower", "new", "long", "short", "deep", "local"}
    | {"traditional", "conventional", "standard", "regular", "usual", "similar", "software"}
)
_BEFORE_NOUN = frozenset(["a", "an", "for", "more", "less", "than"])  # "... more convenient than traditional"
_WH_WORDS = frozenset(["when", "how", "what", "where", "whether", "who", "which", "why"])
# "X was primarily caused", "Y is driven", "The human eye is designed", "Z is also a part": a passive
# verb with no agent, or a part of nothing named, leaves the title unfinished; what comes before the
# verb is the title ("The fall of the Western Roman Empire").
_OPEN_PASSIVE = re.compile(
    r"\s+(?:is|are|was|were|has\s+been|have\s+been|can\s+be|be)(?:\s+(?:\w+ly|not))?\s+"
    r"(?:caused|attributed|driven|influenced|determined|based|characterized|followed|marked|known|considered"
    r"|designed|used|made|seen|achieved|done|(?:also\s+)?(?:a\s+)?part)$"
    # ("The fall was largely due" wants its cause; "... before they are due" is whole.)
    r"|\s+(?:was|were|has\s+been|have\s+been)(?:\s+(?:\w+ly|not))?\s+due$",
    re.IGNORECASE,
)
# "Paying off your loans early can be a great way", "Fall is a time": a way or a time whose "to ..." or
# "when ..." never came; what comes before it is the title.
_OPEN_PRAISE = re.compile(
    r"\s+(?:is|are|was|can\s+be|could\s+be|may\s+be|will\s+be)\s+(?:a|an|the|one\s+of\s+the)\s+(?:\w+\s+){0,2}"
    r"(?:ways?|time)$",
    re.IGNORECASE,
)


def clean(text: str, max_chars: int, max_words: int, whole_words: int, cut: bool = False) -> str:
    text = CONTROL.sub("", unicodedata.normalize("NFC", text))
    text = EMPHASIS.sub("", text).strip()
    text = _unscored(re.sub(r"\s+", " ", text))
    text = _STRAY_NUMBER.sub("", shape_title(_STRAY_NUMBER.sub("", text), max_words, cut, whole_words))
    run_on = _NEXT_NUMBER.search(text)
    if run_on and len(word_list(text)) >= 4 and run_on.group(1) not in _NUMBERED_NOUNS:
        text = strip_dangling(re.sub(r"\s+(?:during|after|before|until|despite)$", "", text[: run_on.end(1)]))
    text = _torn_word(text)
    # Points are titles: a trailing period, colon or separator is formatting, not content.
    text = _EXAMPLE_OPENED.sub("", text)
    text = text.rstrip(" .,;:") + ("." if re.search(r"\betc\.[ .,;:]*$", text) else "")
    if len(text) > max_chars:
        head = text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]
        text = head.rstrip(" ,;:-") + "…"
    return text


def _unscored(text: str) -> str:
    """`text` without the score the model gave its line, where the line says more than a name and
    its value ("Try (5 points)" on how rugby is scored stays)."""
    score = _SCORE.search(text)
    return text[: score.start()] if score and len(text[: score.start()].split()) >= 4 else text


def _torn_word(text: str) -> str:
    text = _unfinished_end(_torn_off(text))
    return strip_dangling(text) if len(word_list(text)) >= 3 else text


def _torn_off(text: str) -> str:
    """`text` without a quote that never closed, or the last word where the line tore it."""
    opening = max(text.rfind(' "'), text.rfind("“"))  # a quote that opens, not an inch mark ('27"')
    if opening >= 0 and (text.count('"') % 2 or text.count("“") > text.count("”")):
        text = text[:opening].rstrip()
    words = word_list(text)
    last = words[-1] if words else ""
    torn = (
        # "... to re": an infinitive cut inside its verb
        (len(words) > 2 and words[-2].casefold() == "to" and last.isalpha() and last.islower() and len(last) <= 2)
        # "Arrive at the interviewer’": a contraction cut (a quoted 'no' closes its own quote)
        or (len(words) > 1 and last[-1:] in "’'" and text.count(last[-1]) % 2 == 1)
        # "Use a faster-d", "south-fﬂ": a compound cut after its hyphen (a ligature is a letter torn too)
        or bool(re.search(r"[^\W\d_]{3,}-(?:[a-z]|[a-z]?[\ufb00-\ufb06])$", last))
    )
    if torn and last not in AFTER_TO:
        text = " ".join(words[:-1])
    return text


def _unfinished_end(text: str) -> str:
    """`text` without an end that opens what never came: a second verb, a way or a passive, an
    adjective or a purpose."""
    # "Begin with a beginner's boot and gradually": a second verb whose verb never came.
    text = re.sub(r"\s+(?:and|or|but)\s+\w+ly$", "", text)
    text = re.sub(r"\s+(?:or|and)\s+other$", "", text, flags=re.IGNORECASE)  # "Bring a laptop or other"
    praised = _OPEN_PRAISE.search(text)
    if praised and praised.start() > 0:
        text = text[: praised.start()]
    passive = _OPEN_PASSIVE.search(text)
    # ("How cheese is made" asks, and is whole.)
    if passive and len(word_list(text[: passive.start()])) >= 2 and text.split()[0].casefold() not in _WH_WORDS:
        text = text[: passive.start()]
    # "Finish with a positive", "... for faster", "can be a costly": an adjective whose noun is missing.
    words = word_list(text)
    if len(words) >= 3 and words[-1].casefold() in _WANTS_NOUN and words[-2].casefold() in _BEFORE_NOUN:
        text = strip_dangling(" ".join(words[:-2]))
    # "Check your printer to see", "Vaccines teach the immune system to recognize", "Podcasts that use":
    # a purpose or clause whose verb never got its object; what comes before it is the title ("Know
    # when to stop" is whole).
    words = word_list(text)
    if (
        len(words) >= 4
        and words[-2].casefold() in ("to", "that", "which")
        and words[-3].casefold() not in _WH_WORDS
        and (words[-1].casefold() in NEEDS_OBJECT or (words[-2] != "to" and words[-1].casefold() in _NEEDS_WHEN))
    ):
        text = " ".join(words[:-2])
    return text
