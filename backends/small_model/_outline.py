"""Parse skeletons as real models write them, all at once or line by line while they stream.

A skeleton is untrusted model output: the parser caps how many points it keeps and how long each
may be, drops duplicates and control characters, and nothing in a point can choose a model, a
parameter or a template; points only ever enter prompts as variables.

Points are titles of a few words that end at a phrase boundary. Small models write sentences
("Set clear goals and break them down into small"), run past a length cap, and carry the sentence
on as the next line ("actionable steps ..."): a point is cut back to its title ("Title: more" keeps
"Title"), a long one to its first phrase, one that ends inside a phrase ("... into small") back to
the last whole phrase, and a line that continues the one before (it starts with a connective, or
lowercase after a line that was cut) is not a point.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from sot._shape import SkeletonShape

from ._abbreviations import NOT_AFTER_ABBREVIATION

# "1.", "1)", "(1)", "1:", "1 -", "Step 1.", "Point 1:", "**1.**", "### 1.", "> 1."
_NUMBERED = re.compile(
    r"""^(?:[#>]+\s*)?(?:\*\*|__)?\s*
        (?:(?:step|point|part|item)\s+)?
        \(?(\d{1,2})(?:\s*[.):]|\s+-)(?=\s|\*|_|$|[^\W\d])
        \s*(?:\*\*|__)?\s*(.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_BULLET = re.compile(r"^([-*•+])\s+(.*)$")
# A marker inside a line, after a space or a sentence's end ("... effectively.2. Next point").
_INLINE_MARK = re.compile(r"(?:(?<=\s)|(?<=[.;!?])|^)(?:(?:step|point)\s+)?\(?(\d{1,2})[.)](?=\s)", re.IGNORECASE)
_EMPHASIS = re.compile(r"(\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)|`)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# A phrase does not end on these words: a point ending on one was cut inside a phrase.
DANGLING_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "nor",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "with",
        "by",
        "from",
        "into",
        "onto",
        "about",
        "as",
        "than",
        "that",
        "which",
        "who",
        "whose",
        "your",
        "their",
        "its",
        "our",
        "my",
        "his",
        "her",
        "this",
        "these",
        "those",
        "is",
        "are",
        "was",
        "were",
        "be",
        "can",
        "could",
        "will",
        "would",
        "should",
        "must",
        "may",
        "might",
        "more",
        "most",
        "very",
        "such",
        "so",
        "if",
        "when",
        "while",
        "between",
        "through",
        "without",
        "within",
        "over",
        "under",
        "via",
        "like",
        "including",
        "especially",
        "both",
        "either",
        "each",
        "every",
        "some",
        "any",
        "not",
        "also",
        "using",
        "even",
        "because",
        "although",
        "unless",
        "whereas",
        "just",
        "what",
        "how",
        "whether",
    ]
)
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
# A line that starts like this carries on the line before it.
_CONTINUES = re.compile(r"^(?:and|or|but|nor|which|that|so|because|then|while|than|whereas)\b", re.IGNORECASE)
# "Title: explanation", "Title - explanation", "Title. More sentences."
# (not after an abbreviation or an initial: "Visit Mt. Fuji early", "U.S. policy")
# ("water...otherwise, just how many do": an ellipsis run into more words, outside check AH.)
_TITLE_END = re.compile(r":\s|:$|;|\s[-–—]\s|" + NOT_AFTER_ABBREVIATION + r"[.!?]\s+(?=\S)|(?<=\w)(?:\.{2,}|…)(?=\w)")


def _words(text: str) -> list[str]:
    return text.split()


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# "Volunteer for causes you care about", "A job you are passionate about" (outside check AI): a
# preposition a relative clause leaves at its end, which ends the phrase ("Make sure you get plenty
# of" is no relative clause, and was cut).
_STRANDED = re.compile(
    r"\b(?!(?:that|sure|if|when|as|because|so|and|or|but|make|ensure|remember|know)\b)[a-z]+\s+"
    r"(?:you|we|they|i|he|she)\s+(?:[\w'’]+\s+){0,2}[\w'’]+\s+(?:about|for|with|in|on|to|from|at|of|by)$",
    re.IGNORECASE,
)


# "... can make you a more attractive", "... can enhance your overall physical" (outside check AK): an
# adjective whose noun never came ("Do the most good" and "Keep it physical" are whole).
_NOUN_MISSING = re.compile(
    r"\ban?\s+(?:more|less)\s+[a-z]+$"
    r"|\b(?:an?|your|their|our|its|his|her)\s+(?:overall\s+)?(?:physical|mental|emotional|social|financial|personal|overall)$",
    re.IGNORECASE,
)


def _dangles(text: str) -> bool:
    """Whether a line of a few words or more ends on a word no phrase ends on ("... them into a")."""
    words = _words(text)
    if len(words) < 4:
        return False
    if _NOUN_MISSING.search(text.rstrip(" .,;:")):
        return True
    return words[-1].casefold().strip(",;") in DANGLING_WORDS and not _STRANDED.search(text)


def _strip_dangling(text: str) -> str:
    words = _words(text.rstrip(" ,;:-–—("))
    while len(words) > 1 and words[-1].casefold().strip(",;") in DANGLING_WORDS:
        if _STRANDED.search(" ".join(words)):
            break
        words.pop()
    return " ".join(words).rstrip(" ,;:-–—(")


# A word that needs what follows it: no title ends on it ("... against the Mongols led", "Negotiate in
# a way", "Earthquakes are caused": outside checks AC and AD; "... before they are due, and" may end
# on "due", said of what is due).
_NEEDS_MORE = re.compile(
    r"\b(?:led|leads?|leading|contribut(?:ed|es|ing)|attributed|related|linked|according|prone|able|unable"
    r"|ability|used|way|begins|starts|compared)$|(?<!\bare\s)(?<!\bis\s)(?<!\bbe\s)\bdue$"
    r"|\b(?:by|for|about|from|without)\s+\w+ing$"
    r"|\b(?:is|are|was|were|be|been)\s+(?:\w+ed|made|driven|done|known|seen|given|taken)$",
    re.IGNORECASE,
)
# "... prone to earthquakes due" (outside check AB), "... compared" (AG): its cause or what it is
# compared to never came ("... when bills are due" stays; "was due" is an open passive, below).
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


def _boundaries(text: str) -> tuple[list[re.Match[str]], list[re.Match[str]]]:
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
    heads = [m for m in found if len(_words(text[: m.start()])) >= 3] or [
        m for m in found if len(_words(text[: m.start()])) == 2
    ]
    strong = [m for m in heads if _between_clauses(text, m)]
    return heads, strong


_OF = re.compile(r"of\b", re.IGNORECASE)


def _between_clauses(text: str, boundary: re.Match[str]) -> bool:
    """Whether `boundary` parts two clauses, not two things of one list ("numbers, letters, and
    symbols", "neck and shoulder pain": outside check AB; "Set goals and track them" parts two)."""
    mark, after = boundary.group(0).strip(), text[boundary.end() :]
    if mark == "," and _LIST_GOES_ON.match(after):
        return False
    if mark not in (",", ""):
        return True
    joined = re.match(r"(?:and|or)\s+([\w'’-]+)(?:\s+([\w'’-]+))?", after, re.IGNORECASE)
    if joined:  # "and" before a verb ("and break them down"), or a new subject, starts a clause
        word, then = joined.group(1).casefold(), (joined.group(2) or "").casefold()
        subject = word in _DETERMINERS or word in _PRONOUNS
        verb = word in _ADVICE_VERBS or word.endswith("ing") or then in _DETERMINERS | _OBJECTS | _PARTICLES
        return subject or verb
    return mark == "," or bool(_STRONG.match(text, boundary.end()))


def _first_phrase(text: str, max_words: int, whole_words: int) -> str:
    """`text` ended at a phrase boundary, never inside a phrase: at its last clause boundary within
    `max_words` words that leaves four or more; else whole, up to `whole_words` (a complete sentence
    reads better than its first words: "The biggest advantage is their low running cost", not "The
    biggest advantage"); else at its last clause boundary, then its last boundary of any kind, within
    `whole_words`; else at its first boundary."""
    heads, strong = _boundaries(text)
    if within := [m for m in strong if 4 <= len(_words(text[: m.start()])) <= max_words]:
        return text[: within[-1].start()]
    # (Cut only before "of", a sentence a little over the length reads better whole: "... was largely
    # attributed to the rise of barbarian tribes", not "... to the rise".)
    of_only = bool(heads) and all(_OF.match(text, m.end()) for m in heads)
    if len(_words(text)) <= whole_words + (whole_words // 3 if of_only else 0):
        return text
    for found in (strong, heads):
        if within := [m for m in found if len(_words(text[: m.start()])) <= whole_words]:
            return text[: within[-1].start()]
    return text[: heads[0].start()] if heads else text


def shape_title(text: str, max_words: int, cut: bool = False, whole_words: int | None = None) -> str:
    """A point's title: its head before a colon, semicolon or sentence end, ending at a phrase boundary.

    `cut`: the line was stopped by a length or token limit, so its end is not a phrase boundary.
    `whole_words`: a line of at most this many words with no clause boundary early on stays whole.
    """
    title_end = _TITLE_END.search(text)
    if title_end and len(_words(text[: title_end.start()])) >= 1:
        text, cut = text[: title_end.start()], False
    text = re.sub(r"(?<=\S)\s+[^\W\d_]+-$", "", text.rstrip())  # "Offer a non-" (outside check AF): half a compound
    if (cut and len(_words(text)) >= 4) or _dangles(text):
        # Back off to the last boundary: "... and make them work on a" ends at "... goals".
        heads, strong = _boundaries(text)
        text = text[: (strong or heads)[-1].start()] if heads else text
    if len(_words(text)) > max_words:
        text = _first_phrase(text, max_words, max_words if whole_words is None else whole_words)
    if text.count("(") > text.count(")"):  # "Language capabilities (e.g" : the aside never closed
        text = text[: text.rfind("(")]
    text = _OPEN_END.sub("", text)
    return _strip_dangling(text) if len(_words(text)) >= 3 else text.strip()


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _clean(text: str, max_chars: int, max_words: int, whole_words: int, cut: bool = False) -> str:
    text = _CONTROL.sub("", unicodedata.normalize("NFC", text))
    text = _EMPHASIS.sub("", text).strip()
    text = _unscored(re.sub(r"\s+", " ", text))
    text = _STRAY_NUMBER.sub("", shape_title(_STRAY_NUMBER.sub("", text), max_words, cut, whole_words))
    run_on = _NEXT_NUMBER.search(text)
    if run_on and len(_words(text)) >= 4 and run_on.group(1) not in _NUMBERED_NOUNS:
        text = _strip_dangling(re.sub(r"\s+(?:during|after|before|until|despite)$", "", text[: run_on.end(1)]))
    text = _torn_word(text)
    # Points are titles: a trailing period, colon or separator is formatting, not content.
    text = _EXAMPLE_OPENED.sub("", text)
    text = text.rstrip(" .,;:") + ("." if re.search(r"\betc\.[ .,;:]*$", text) else "")
    if len(text) > max_chars:
        head = text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]
        text = head.rstrip(" ,;:-") + "…"
    return text


_LETTER_WORDS = re.compile(r"[^\W\d_]+")
# Adjectives a small model leaves alone as a title ("Strategic", "Political" on the causes of Rome's
# fall: outside checks W and X). Where the question asks for kinds of something ("causes",
# "benefits"), the title says which kind of it; a larger model's "Political" / "Economic" heads a
# list by kind, and stays as written.
_BARE_ADJECTIVES = _word_set(
    "political strategic economic social cultural financial physical mental emotional environmental "
    "technological natural religious spiritual practical personal legal ethical moral medical historical"
)
_KINDS_ASKED = re.compile(
    r"\b(?:causes?|benefits?|factors?|reasons?|effects?|impacts?|risks?|advantages?|disadvantages?"
    r"|consequences?|challenges?|aspects?|costs?|skills?|changes?|issues?|problems?)\b",
    re.IGNORECASE,
)
# An example or a gloss begun and never given ("Building more roads, e.g.", outside check Z).
# (", e" is what the line's colon left of "e.g.:", outside check AC; "vitamin e" stays.)
_EXAMPLE_OPENED = re.compile(
    r"(?:[\s,;(]*\b(?:e\.\s?g|i\.\s?e)\b\.?|\s*[,(]\s*(?-i:[ei])\b\.?)[\s,:;]*$", re.IGNORECASE
)
# A score the model gave its own line ("Temperature, humidity, light, etc. (3 points)"): no part of the title.
_SCORE = re.compile(r"\s*\(\d{1,2} points?\)[.\s]*$", re.IGNORECASE)


def _unscored(text: str) -> str:
    """`text` without the score the model gave its line, where the line says more than a name and
    its value ("Try (5 points)" on how rugby is scored stays)."""
    score = _SCORE.search(text)
    return text[: score.start()] if score and len(text[: score.start()].split()) >= 4 else text


# A number the model tacked on after a comma ("Bring a camera for security, 9"): no part of the title.
_STRAY_NUMBER = re.compile(r"(?<![\d\s,])(?:\s*,\s*\d{1,3})+\s*[.:;]?\s*$")
# A later point's number run onto a title ("Be proactive and encourage others to do the same 6", the
# README's own first answer); "Phase 2", "Windows 11" and "Repeat step 6" name something.
_NEXT_NUMBER = re.compile(r"\b([a-z]{2,})(?:\s+|-)\d{1,2}\s*[.:;]?\s*$")  # ("... when possible and-3")
_NUMBERED_NOUNS = _word_set(
    "step steps day days week weeks phase type level stage grade chapter page part round set year years "
    "version vitamin section rule tip point number no covid"
    # and words a quantity follows ("Sleep at least 7", "Count to 10")
    " least most than about around over under every only to by of for within per top first last"
    # and an article: "... during the 1" is a word torn to a number, no title
    " the a an"
)
# A point that opens on one of these and stops within a few words is half a sentence ("If you find someone").
_SUBORDINATORS = frozenset(["if", "when", "whenever", "because", "although", "though", "unless", "since", "whereas"])
# Of those, the ones a title cannot stop after ("When to stop", "Since 2010" and "While traveling" are whole).
_CONDITIONS = frozenset(["if", "because", "although", "though", "unless", "whereas"])
# Verbs a title never ends on alone: "4. Use" / "5. Use a good plant food" (seen from the embedded model).
_BARE_VERBS = frozenset(
    [
        "use",
        "make",
        "get",
        "take",
        "keep",
        "try",
        "find",
        "give",
        "set",
        "put",
        "add",
        "engage",
        "embrace",
        "avoid",
        "build",
        "create",
        "develop",
        "ensure",
        "provide",
        "consider",
        "learn",
        "practice",
        "choose",
        "ask",
        "start",
        "stop",
        "bring",
        "allow",
        "help",
        "reduce",
        "improve",
        "increase",
        "limit",
        "focus",
    ]
)


_PRONOUNS = frozenset(["it", "they", "you", "we", "i", "there", "he", "she"])
_OBJECTS = frozenset(["it", "them", "you", "us", "me", "him", "her", "yourself", "themselves"])
# An object that refers back ("... to control them"): no thing of its own.
_REFERRING = _OBJECTS | _word_set("this these those that")
# "It is important", "This is essential": an adjective that needs what the line never said.
_OPEN_ADJECTIVE = re.compile(
    r"^(?:it|this)\s+is\s+(?:important|essential|crucial|vital|necessary|key|helpful|useful|best|better)$",
    re.IGNORECASE,
)


# "The answer is not only", "This answer is not just a simple one", "The list is incomplete", "A complete
# answer will contain at least 3 points" (outside check AA): the model talking about its task.
_ABOUT_THE_TASK = re.compile(
    r"^(?:(?:the|this|my|your|an?)\s+(?:(?:good|complete|full|short)\s+)?(?:answer|question|outline|response)"
    r"|(?:the|this)\s+list)\s+(?:is|was|will|should|must|contains?|has)\b"
    r"|^(?:do\s+not|don['’]t)\s+answer\s+the\s+question\b"
    # "Do not provide a solution", "Do not list the details", "Do not add anything else to the list", "Do not
    # write a single sentence in the outline", "Do not include the last point of the list" (outside check AO):
    # the prompt's "do not" riffed on, in those shapes only ("Do not offer a solution too quickly", "Don't
    # provide any information over the phone", "Don't give up at this point" are advice).
    r"|^(?:do\s+not|don['’]t)\s+provide\s+an?\s+(?:solution|suggestion)(?:\s+to\s+(?:someone|anyone))?$"
    r"|^(?:do\s+not|don['’]t)\s+(?:write|include|add|use|list)\s+(?:a\s+single\s+sentence\s+in\s+the\s+outline"
    r"|the\s+(?:last|first|next)\s+point\s+of\s+the\s+list|anything\s+else\s+to\s+the\s+list|the\s+details$"
    r"|any\s+information$|any\s+(?:other|additional)\s+(?:information|keywords?)\s+to\s+(?:create|make|write))\b"
    r"|\bhere\s+is\s+the\s+outline\b|\boutline\s+of\s+a\s+numbered\s+list\b|\bprovide\s+a\s+numbered\s+list\b"
    # "The first point is to answer the question" (outside check AR): the outline's own task as a point.
    r"|^the\s+(?:first|second|third|fourth|fifth|next|last)\s+point\s+is\s+to\s+(?:answer|provide|write|give|list)\b"
    r"|^the\s+answer$"
    # "I am a helpful AI with the ability to provide answers", "I will provide detailed answers to your
    # questions", "I will not provide any information" (outside check AN): the assistant describing itself
    # ("I am passionate about AI", "I will ask thoughtful questions", "I'm happy to answer any questions" stay).
    r"|^i(?:\s+am|['’]m)\s+(?:just\s+)?(?:a|an|your)\s+(?:[\w-]+\s+){0,3}(?:ai|assistant|language\s+model|chatbot)\b"
    r"|^i\s+will\s+(?:provide|offer|give)\s+(?:[\w-]+\s+){0,4}answers?\s+to\s+your\s+questions?\b"
    r"|^i\s+(?:will\s+not|won['’]t|cannot|can['’]t)\s+(?:provide|give|share|offer)\s+(?:any\s+)?(?:information|answers?|details)\b",
    re.IGNORECASE,
)
# "The main difference between an IRA", "The choice between a laptop with an SSD", "... is not only the
# best decision": a comparison with one side ("Rest between sets", "Leave space between the plants" and
# "Think of the team, not only yourself" are whole).
_ONE_SIDED = re.compile(
    r"\b(?:differences?\s+between|between\s+an?)\b(?!.*(?:\band\b|&|\bvs\b|/|\bor\b))"
    r"|\bnot\s+only\s+(?:the|a|an)\b(?!.*\bbut\b)",
    re.IGNORECASE,
)
# Adjectives a noun should follow: participles and "-able" words ("recycled", "biodegradable"; not "seed").
_ADJECTIVE_END = re.compile(r"^\w{2,}(?:[^e]ed|able|ible)$")
# "... to be aware", "... can reduce the risk", "Negotiate in a way", "... make it easy": what they
# need ("of ...", "that ...", "to ...") never came ("Be culturally aware", "Spread the risk" are whole).
_NO_COMPLEMENT = re.compile(
    r"\b(?:to\s+be|is|are)\s+(?:aware|able|capable|prone)$|\b(?:can|could|may|might|will)\s+\w+\s+the\s+risk$"
    r"|\bin\s+a\s+way$|\bmake\s+it\s+(?:easy|easier|hard|harder|difficult|possible)$",
    re.IGNORECASE,
)
# Phrases that set a sentence in time or turn it, and are no point alone.
_ADVERBIALS = frozenset(
    [
        "in the long run",
        "every day",
        "each day",
        "in the long term",
        "in the short term",
        "in the short run",
        "in recent years",
        "in some cases",
        "in general",
        "in conclusion",
        "in addition",
        "in other words",
        "in fact",
        "on the other hand",
        "for example",
        "for instance",
        "at the same time",
        "as a result",
        "in summary",
    ]
)
# "Wetlands play a crucial role": a role in nothing; dropped where its subject is the question's own
# ("Genetics plays a role" in what affects weight says which factor).
_ROLE = re.compile(r"^(.+?)\s+plays?\s+an?\s+(?:\w+\s+)?role$", re.IGNORECASE)
_SETTING = re.compile(r"in\s+(?:a|the|this|today['’]s)\s+(?:world|age|era)\b(?!.*,)", re.IGNORECASE)
_PURPOSES = _word_set("avoid prevent ensure help make keep reduce improve get stay")
# "The best", "The only way to get rid of ants", "The most important thing you can do", "With dedication
# and consistent practice" (outside check AF): a sentence's subject or its manner, its verb never said.
_SUBJECT_ONLY = re.compile(
    r"^the\s+(?:best|worst|only|first|last|most|key|main|\w+est)$"
    r"|^(?:the|one)\s+(?:best|only|first|most\s+\w+|\w+est|key|main)\s+(?:ways?|things?|steps?|tips?|time)\b"
    r"(?!.*\b(?:is|are|was|were)\b)"
    r"|^with\s+(?!.*,)\S+\s+\S+\s+\S+",
    re.IGNORECASE,
)
# "Be used for oral hygiene only", "Removed from the mouth" (outside check AH): a passive whose subject
# never came ("Be prepared", "Be informed" are advice).
_PASSIVE_START = re.compile(
    r"^(?:be\s+(?:used|removed|applied|placed|stored|given|taken|made|sent|put|held|left)"
    r"|(?:removed|taken|pulled|thrown|washed|wiped)\s+(?:from|off|out|away))\b",
    re.IGNORECASE,
)
# "The first step in the process", "The first step towards reducing plastic": a step counted, never
# named ("The first step is to ..." names it; "Next steps" is a heading); "This includes ...": the
# rest of the point before it.
_NAMELESS_STEP = re.compile(
    r"^(?:the\s+)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|next|final|last)\s+step"
    r"(?:\s+(?:in|of|to|towards?)\b(?!.*\bis\b)|$)"
    r"|^this\s+(?:includes|means|involves)\b",
    re.IGNORECASE,
)
# "Will impact her plans", "She should know", "You should not hesitate": a sentence's verb without its
# subject, or a subject and modal whose verb never got its object ("Can you afford it?" asks, and stays).
_MODALS = r"(?:will|would|should|could|can|must|might)(?:\s+not)?"
# (Two words at least after the modal: "Will power" and "Will drafting" are titles. "It can wait" is whole.)
_NO_SUBJECT = re.compile(
    rf"^{_MODALS}\s+(?!(?:you|i|we|they|it|and|or)\b)[a-z]+\s+\w+(?!.*\?$)",
    re.IGNORECASE,
)
_NO_OBJECT = re.compile(rf"^(?:she|he|they|you|we|i)\s+{_MODALS}\s+[a-z]+$", re.IGNORECASE)


def _fragment(title: str) -> bool:
    """Half a sentence rather than a title."""
    rules = (
        _OPEN_SUPERLATIVE,
        _ABOUT_THE_TASK,
        _ONE_SIDED,
        _NO_SUBJECT,
        _NO_OBJECT,
        _NAMELESS_STEP,
        _SUBJECT_ONLY,
        _PASSIVE_START,
        _NOUN_MISSING,
    )
    if any(rule.search(title) for rule in rules):
        return True
    raw = [w.strip(".,;:!?’'\"/") for w in _words(title)]
    if len(raw) > 1 and ((len(raw[-1]) == 1 and raw[-1].isupper()) or raw[-1].isdigit()):
        # "Plan B", "Vitamin A", "Phase 1": a name, not an article left hanging; "Learn a L" and
        # "... during the 1" are words torn off.
        return raw[-2].casefold() in ("a", "an", "the")
    words = [w.casefold() for w in raw if w]
    if not words:
        return True
    if len(words) > 1 and re.search(r"\w['’]s$", words[-1]):
        return True  # "Don't let your boss's": a possessive whose noun never came
    if len(words) == 1:
        # "It’s": what is left of "It’s like what" once its open end is gone; "Re": a word torn off
        # ("AI", "pH", "Go" and "饮食" are whole).
        subject = re.split(r"['’]", words[0])[0]
        torn = bool(re.fullmatch(r"[A-Z][a-z]", raw[0])) and words[0] not in _TWO_LETTER_WORDS
        return torn or words[0] in _BARE_VERBS or words[0] in DANGLING_WORDS or subject in _PRONOUNS
    if len(words) == 2 and words[-1] in DANGLING_WORDS:
        return True  # "The most", "Keep your"
    if len(words) > 3 and words[-2] in ("or", "and") and words[-1] in _NEEDS_OBJECT and words[-3] not in _ADVICE_VERBS:
        # "Use earplugs or use" (outside check Y): the second verb's object never came ("Give and take",
        # "Learn to give and take", "Buy or make" are whole).
        return True
    if len(words) == 2 and words[0] in _ADVICE_VERBS and re.fullmatch(r"[a-z]\d{1,3}", raw[1]):
        return True  # "Use a3", "Use a4" (outside check AK): a placeholder counted on
    if words[0] in ("answer", "answers") and _words(title)[0][-1] in ",:":
        return True  # "Answer, but not just one": the model talking about its task
    if words[0] == "of" and words[1] in ("the", "a", "an"):
        return True  # "Of the French monarchy in the Revolution": the end of the sentence before it
    if words[0] == "to" and words[1] in ("the", "a", "an") and len(words) >= 5 and raw[2][:1].islower():
        return True  # "To the rise of international trade" (outside check AB); "To the Lighthouse" is a book
    if " ".join(words) in _ADVERBIALS or (words[0] in ("in", "for") and words[1] == "some" and "," not in title):
        return True  # "In the long run", "In some species of plants": where or when, never what
    if _SETTING.match(title) or (words[0] == "to" and words[1] in _PURPOSES and len(words) <= 4):
        return True  # "In a world of AI", "To avoid confusion" (outside check AD): the setting or aim of a point
    if len(words) == 2 and words[0] in ("use", "avoid") and raw[1].islower() and _ADJECTIVE_END.search(words[1]):
        # "Use recycled", "Use biodegradable": what to use never came ("Buy refurbished", "Use Audible",
        # "Get organized" are whole).
        return True
    if _NO_COMPLEMENT.search(title):
        return True  # "It is important to be aware", "Better sleep can reduce the risk": of what, never said
    if len(words) >= 3 and words[-2] in ("a", "an") and _ADJECTIVE_COMPOUND.search(words[-1]):
        return True  # "Use a bleach-free": a compound adjective whose noun never came
    if len(words) >= 2 and words[-2] == "the" and words[-1] in _NOUN_AFTER_THE:
        return True  # "Ditch the old", "Use the proper" (outside check AH): which of them, never said
    if _OPEN_ADJECTIVE.match(" ".join(words)):
        return True
    # "If you are still unsure about anything": a long condition with no main clause ("If in doubt,
    # ask" has one; "If symptoms persist" is a heading).
    if words[0] in _CONDITIONS and "," not in title and len(words) >= 5:
        return True
    if words[0] == "when" and words[1].endswith("ing") and "," not in title and len(words) >= 4:
        return True  # "When buying in a foreign country" (outside check AG): when, and then nothing
    # "If they", "When you": a clause opened and stopped at its subject.
    return words[0] in _SUBORDINATORS and len(words) <= 3 and words[-1] in _PRONOUNS | DANGLING_WORDS


# Words that say nothing of a point's topic: those no phrase ends on, pronouns, auxiliaries.
_NON_TOPIC = DANGLING_WORDS | _PRONOUNS | {"do", "does", "have", "has"}
_TOPIC_WORDS = re.compile(r"[^\W_]+")
_PARTICLES = frozenset(["off", "on", "up", "down", "out", "back", "away", "over", "in", "into"])
# Words with their hyphens: "AI-powered diagnostics" and "AI-powered chatbots" open on two words each.
_COMPOUNDS = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


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
        "tradition custom",  # "Customs of the Bedouin culture" / "Bedouin traditions" (outside check AH)
        "etiquette manner",
    )
    for word in group.split()
}


def _stems(
    text: str, words: re.Pattern[str] = _TOPIC_WORDS, skip: frozenset[str] = frozenset(), same: bool = False
) -> list[str]:
    """`text`'s topic `words` in order, but those in `skip`, cut as `_bag` cuts them (a plural "s"
    and an "-ing" first: "maps" is "map", "rising" and "rise" meet), and read as `_SAME` reads them
    where `same`."""
    stems = []
    for i, word in enumerate(words.findall(text)):
        if word[0].isdigit() or (len(word) == 1 and i > 0 and word.isupper()):
            stems.append(word)
        elif len(word) > 1 and word.casefold() not in _NON_TOPIC and word.casefold() not in skip:
            word = word.casefold()
            word = _singular(word)
            if same:  # ("strategies": "strategy")
                word = _SAME.get(word[:-2] + "y" if word.endswith("ie") else word, word)
            stems.append(_base(word)[:5])
    return stems


def _bag(text: str, same: bool = False) -> frozenset[str]:
    """A point's topic words, each cut to its first five letters: "cultural" and "culture",
    "Liquorization" and "Liquorizing" are the same word here. Numbers and lone capitals count:
    "Phase 1" and "Phase 2", "Vitamin A" and "Vitamin C" are two points each."""
    return frozenset(_stems(text, same=same))


# Verbs and adjectives that open advice titles without naming a topic ("Use a planner", "Key
# factors"): they do not tell two points apart. Whole words, so "engagement" or "maintenance" still do.
_GENERIC = (
    _BARE_VERBS
    | {"stay", "maintain", "seek", "establish", "follow"}
    | {"prioritize", "way", "ways", "tip", "tips", "thing", "things", "important", "good", "better", "best"}
    | {"new", "other", "another", "different", "various", "key", "main"}
    # "Improved biodiversity" / "Increased biodiversity" (outside check AM): more of it, both ways.
    | {"improved", "increased", "enhanced", "boosted", "greater"}
)


def _topic(text: str, same: bool = False) -> frozenset[str]:
    """`_bag` without the generic words: what two points are compared on."""
    return frozenset(_stems(text, skip=_GENERIC, same=same))


# Verbs that open advice titles ("Support Spanish language", "Choose a window"). A small model
# says one thing twice with two of them; what the verb acts on tells its points apart.
_ADVICE_VERBS = _BARE_VERBS | _word_set(
    "support offer encourage promote read write watch listen talk speak eat drink sleep exercise save "
    "spend invest pay buy sell plan prepare review research check clean wash store open close turn switch "
    "install plant grow cook walk visit join call share discuss explain understand know remember manage "
    "track monitor schedule organize declutter apply attend replace repair protect cover block seal "
    "insulate hang place wear carry pack bring cut lower raise boost cultivate foster nurture teach show "
    "expose immerse surround celebrate reward praise cap automate compare negotiate"
)
# Words after which the first word of a title is its verb ("Choose a window", "Track your spending").
_DETERMINERS = _word_set("a an the your my our their some more less each every this these those")


# What comes before advice without being it: "It is important to make plans" advises "make plans".
_ADVICE_LEAD = re.compile(
    r"^(?:(?:it\s+is|it['’]s)\s+(?:important|essential|crucial|vital|key|necessary)|make\s+sure|remember"
    r"|don['’]t\s+forget|try)\s+to\s+",
    re.IGNORECASE,
)


def _object(text: str, asked: frozenset[str]) -> tuple[str, frozenset[str]]:
    """An advice title's verb and what it acts on: its topic words after the verb, without the
    question's own words ("Use a window with a south-facing view" on keeping a house cool: "use",
    "window south facing view"). Nothing for a title that is not advice, or whose object is only the
    question's subject."""
    words = _words(_ADVICE_LEAD.sub("", text))
    verb = words[0].casefold() if len(words) >= 2 else ""
    if not verb or (verb not in _ADVICE_VERBS and words[1].casefold() not in _DETERMINERS):
        return "", frozenset()
    acts_on = frozenset(_stems(" ".join(words[1:]), skip=_GENERIC, same=True)) - asked
    # One word left of a long title ("Reduce plastic waste by using reusable products": "reusable")
    # is what the question's words left over, not what it acts on, unless it ends the title ("Choose
    # a wedding venue" on saving on a wedding, outside check AM).
    last = _stems(words[-1], same=True)
    return (verb, acts_on) if len(acts_on) > 1 or len(words) <= 3 or set(last) == acts_on else ("", frozenset())


# Verbs a relative clause does not end on: "... climate change that occurs" (outside check AE) says
# nothing of when or where.
_NEEDS_WHEN = _word_set("occurs occur happens happen begins begin starts start")
# Verbs a title does not end on after "to": what they act on is missing.
# ("Don't be afraid to ask", "Be willing to learn", "Make time to practice": those take none.)
_NEEDS_OBJECT = frozenset(
    {"use", "make", "get", "take", "keep", "find", "give", "set", "put", "add", "ensure", "provide", "bring"}
    | {"see", "recognize", "identify", "determine", "prevent", "reduce", "improve", "increase", "create"}
)
_WANTS_NOUN = frozenset(
    {"positive", "negative", "faster", "better", "healthy", "healthier", "good", "great", "costly", "strong"}
    | {"clear", "quick", "quicker", "high", "higher", "low", "lower", "new", "long", "short", "deep", "local"}
    | {"traditional", "conventional", "standard", "regular", "usual", "similar", "software"}
)
# "Use a bleach-free", "Use a high-tech" (outside check AH): a compound adjective whose noun never came
# ("Go for gluten-free" is whole).
_ADJECTIVE_COMPOUND = re.compile(
    r"-(?:free|based|friendly|resistant|proof|efficient|safe|powered|related|tech|quality|end|grade|cost|term|time)$"
)
# ("Focus on the positive", "Embrace the new": after "the", an adjective stands for its noun; not these.)
_NOUN_AFTER_THE = _word_set("old right proper entire existing following")
_BEFORE_NOUN = frozenset(["a", "an", "for", "more", "less", "than"])  # "... more convenient than traditional"
_WH_WORDS = frozenset(["when", "how", "what", "where", "whether", "who", "which", "why"])
# Two-letter words that follow "to" in a whole title ("Learn to do", "Listen to me"); any other
# ("Take regular breaks to re") is a word the line tore off.
_AFTER_TO = frozenset(["be", "do", "go", "it", "me", "us", "up", "an"])
# Two-letter titles that are words ("Go", "Ox"), not a word torn off ("Re").
_TWO_LETTER_WORDS = _AFTER_TO | _word_set("no ok oz ox qi hi tv pc uv ai")


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
# "The most obvious way", "One of the best things", "A good way": praise of a way never named.
_OPEN_SUPERLATIVE = re.compile(
    r"^(?:the|one\s+of\s+the|an?|another)\s+(?:(?:first|most|and)\s+)*"
    r"(?:\w+est|good|great|simple|easy|better|effective|important|useful|helpful|obvious)"
    r"\s+(?:ways?|things?|ideas?|options?|methods?)$"
    r"|^(?:another|one)\s+(?:way|option)$",  # "Another way" (outside check AE)
    re.I,
)


def _torn_word(text: str) -> str:
    opening = max(text.rfind(' "'), text.rfind("“"))  # a quote that opens, not an inch mark ('27"')
    if opening >= 0 and (text.count('"') % 2 or text.count("“") > text.count("”")):
        text = text[:opening].rstrip()
    words = _words(text)
    last = words[-1] if words else ""
    torn = (
        # "... to re": an infinitive cut inside its verb
        (len(words) > 2 and words[-2].casefold() == "to" and last.isalpha() and last.islower() and len(last) <= 2)
        # "Arrive at the interviewer’": a contraction cut (a quoted 'no' closes its own quote)
        or (len(words) > 1 and last[-1:] in "’'" and text.count(last[-1]) % 2 == 1)
        # "Use a faster-d", "south-fﬂ": a compound cut after its hyphen (a ligature is a letter torn too)
        or bool(re.search(r"[^\W\d_]{3,}-(?:[a-z]|[a-z]?[\ufb00-\ufb06])$", last))
    )
    if torn and last not in _AFTER_TO:
        text = " ".join(words[:-1])
    # "Begin with a beginner's boot and gradually": a second verb whose verb never came (check AF).
    text = re.sub(r"\s+(?:and|or|but)\s+\w+ly$", "", text)
    text = re.sub(r"\s+(?:or|and)\s+other$", "", text, flags=re.IGNORECASE)  # "Bring a laptop or other"
    praised = _OPEN_PRAISE.search(text)
    if praised and praised.start() > 0:
        text = text[: praised.start()]
    passive = _OPEN_PASSIVE.search(text)
    # ("How cheese is made" asks, and is whole.)
    if passive and len(_words(text[: passive.start()])) >= 2 and text.split()[0].casefold() not in _WH_WORDS:
        text = text[: passive.start()]
    # "Finish with a positive", "... for faster", "can be a costly": an adjective whose noun is missing.
    words = _words(text)
    if len(words) >= 3 and words[-1].casefold() in _WANTS_NOUN and words[-2].casefold() in _BEFORE_NOUN:
        text = _strip_dangling(" ".join(words[:-2]))
    # "Check your printer to see", "Vaccines teach the immune system to recognize", "Podcasts that use":
    # a purpose or clause whose verb never got its object; what comes before it is the title ("Know
    # when to stop" is whole).
    words = _words(text)
    if (
        len(words) >= 4
        and words[-2].casefold() in ("to", "that", "which")
        and words[-3].casefold() not in _WH_WORDS
        and (words[-1].casefold() in _NEEDS_OBJECT or (words[-2] != "to" and words[-1].casefold() in _NEEDS_WHEN))
    ):
        text = " ".join(words[:-2])
    return _strip_dangling(text) if len(_words(text)) >= 3 else text


@dataclass(frozen=True)
class _Traits:
    """What a point is compared on, worked out once per point."""

    bag: frozenset[str]  # its words (`_bag`)
    topic: frozenset[str]  # its words less the generic ones (`_topic`)
    opening: tuple[str, ...]  # its first two topic words, for a small model (empty: none to compare)
    words: tuple[str, ...]  # its words, casefolded
    verb: str  # its verb, as advice, for a small model (`_object`; empty: none)
    object: frozenset[str]  # what that verb acts on
    parts: tuple[frozenset[str], ...]  # a small model's "A and B" title: the topic words of each (else none)
    head: tuple[str, bool]  # a small model's short noun phrase: its head, and whether it comes first (`_head`)
    pairs: frozenset[tuple[str, str]]  # a small model's title: two topic words in a row, neither the question's
    acts_on: tuple[str, ...]  # what its verb acts on, in order, the question's words and "them" left out

    @property
    def short(self) -> bool:
        """A title of one or two words."""
        return len(self.words) <= 2


# Words whose swap turns a point into its opposite: "Arrive early" / "Arrive late".
_OPPOSITES = frozenset(
    frozenset(pair.split()) for pair in ("early late", "more less", "fast slow", "often rarely", "always never")
)


def _contradicts(words: tuple[str, ...], other: tuple[str, ...], asked: frozenset[str]) -> bool:
    """Short advice that is another's with its manner swapped for the opposite ("Arrive late" after
    "Arrive early"; sets O and S, where its text said to arrive early). A pair the question names
    ("fast and slow charging") or that names kinds ("Early symptoms" / "Late symptoms") stays."""
    if len(words) != len(other) or len(words) > 3:
        return False
    swapped = [(i, a, b) for i, (a, b) in enumerate(zip(words, other, strict=True)) if a != b]
    if len(swapped) != 1 or swapped[0][0] == 0 or frozenset(swapped[0][1:]) not in _OPPOSITES:
        return False
    return not set(swapped[0][1:]) <= asked


# Words after which a noun phrase's head has been said ("Apps with ...", "Tools for ...").
_AFTER_HEAD = _word_set("with for of that which from about like")


def _head(words: tuple[str, ...], asked: frozenset[str]) -> tuple[str, bool]:
    """A short noun phrase's head, and whether it comes first: "apps", first, in "Apps with
    interactive methods" (a plural first: "Focus on ..." is a verb); "apps", last, in "Language
    learning apps". None for a head the question names (a question on apps asks for kinds of
    them), for advice or a long title."""
    if not 2 <= len(words) <= 5 or words[0] in _ADVICE_VERBS:
        return "", False
    if words[1] in _AFTER_HEAD and re.search(r"[^su]s$", words[0]):  # a plural noun, not "Think about"
        head, first = words[0], True
    elif len(words) <= 4 and not _AFTER_HEAD.intersection(words):
        head, first = words[-1], False
    else:
        return "", False
    stems = _stems(head, skip=_GENERIC, same=True)
    return (stems[0], first) if stems and stems[0] not in asked else ("", False)


def _named_again(phrase: _Traits, other: _Traits) -> bool:
    """Whether a title of a few words opens on what a short noun phrase is about: "Exercise plan"
    after "Regular exercise", "Support options" after "Customer support" (outside checks AI and AF).
    Two phrases of one head name kinds of it ("Customer support" / "Technical support", "Immune
    system boosting" after "Cardiovascular system"), and "Manage stress" names no "Time management"."""
    if not phrase.head[0] or len(other.words) > 3 or other.head[0] == phrase.head[0]:
        return False
    return _singular(phrase.words[0] if phrase.head[1] else phrase.words[-1]) == _singular(other.words[0])


def _one_word_apart(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether two pieces of advice of one verb act on the same things but for one word, not the last:
    "Use organic methods to control weeds" / "Use natural methods to control them" (outside check AI).
    "Use a high-quality brush" / "Use a high-quality paint" differ in the thing itself."""
    apart = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b]
    return len(mine) == len(theirs) >= 3 and len(apart) == 1 and apart[0] < len(mine) - 1


def _base(word: str) -> str:
    """An "-ing" form as the word it comes from, so the two meet: "rising" / "rise" (outside check AJ),
    "running" / "run", "caring" / "care"; a cut to five letters does the rest ("cultural" / "culture").
    Other words stay as written ("care" and "car", "site" and "sitting" stay apart)."""
    if len(word) < 6 or not word.endswith("ing"):
        return word
    word = word[:-3]
    if word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]  # "running"
    # "rising", "making": a consonant, one vowel and a consonant lost their "e".
    return word + "e" if re.search(r"(?:^|[^aeiou])[aeiou][^aeiouwxy]$", word) else word


def _singular(word: str) -> str:
    """A plural "s" off ("maps" is "map"; "glass" and "bus" stay)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _pairs(point: str, asked: frozenset[str]) -> frozenset[tuple[str, str]]:
    """Two topic words in a row ("sleep quality"), neither of them generic or the question's, nor an
    adverb or a past form ("largely attributed" says how, not what)."""
    pairs = set()
    before = ""
    words = _COMPOUNDS.findall(point)
    # A capital inside a title in sentence case is a name, and a name no topic pair ("Emperor Trajan" in
    # two points on his reign); in a title in title case ("Better Sleep Quality") capitals say nothing.
    title_case = sum(w[:1].isupper() for w in words) > len(words) / 2
    for i, word in enumerate(words):
        named = i > 0 and word[:1].isupper() and not title_case
        stems = (
            [] if named or re.search(r"..(?:ly|ed)$", word, re.IGNORECASE) else _stems(word, skip=_GENERIC, same=True)
        )
        if len(stems) > 1 and "-" in word:  # "energy-efficient appliances" (outside check AL): one word, then one
            stems = ["-".join(stems)]
        alone = len(stems) == 1 and stems[0] not in asked and stems[0] not in _PARTICLES  # not "Turn off"
        stem = stems[0] if alone and not stems[0][0].isdigit() else ""
        if before and stem:
            pairs.add((before, stem))
        before = stem
    return frozenset(pairs)


# Labels that name no thing: counted on, they add no point. ("Day 2", "Week 2", "Stage 2", "Type 2",
# "Apollo 13", "iPhone 15" name one, and stay.)
_PLACEHOLDERS = _word_set("demonstration example sample point item answer question idea tip title heading")


# How often or how hard, and nothing of what: "Practice regularly", "Practice again and again!" ("Practice
# speaking", "Eat locally", "Visit Beijing" say what, and stay apart).
_HOW = _word_set(
    "regularly daily weekly often frequently consistently constantly repeatedly again more always every day and "
    "a lot hard"
)


def _only_how(words: tuple[str, ...]) -> bool:
    """Advice of a verb and how often to do it, nothing of what."""
    rest = [w.strip(".,;:!?") for w in words[1:]]
    return words[0] in _ADVICE_VERBS and bool(rest) and all(w in _HOW for w in rest)


def _swapped(new: _Traits, kept: _Traits) -> bool:
    """Two titles one topic word apart each way: one kind for another ("Red blood cells" / "White
    blood cells", "Foundation, Isaac Asimov" / "I, Robot, Isaac Asimov")."""
    return len(new.topic - kept.topic) <= 1 and len(kept.topic - new.topic) <= 1


def _counted(words: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A placeholder counted on ("Demonstration 2" after "Demonstration 1", set X: eight of them,
    each with one text): no new point."""
    if len(words) != 2 or len(other) != 2 or words[0] != other[0] or words[0] not in _PLACEHOLDERS:
        return False
    return words[-1].isdigit() and other[-1].isdigit()


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _split_inline(body: str, first: int) -> list[tuple[int, str]] | None:
    """Split "A 2. B 3. C" (numbers following `first`) into numbered parts, or None."""
    parts: list[tuple[int, str]] = []
    expected = first + 1
    start = 0
    number = first
    for match in _INLINE_MARK.finditer(body):
        if int(match.group(1)) != expected:
            continue
        parts.append((number, body[start : match.start()]))
        number, start, expected = expected, match.end(), expected + 1
    if not parts:
        return None
    parts.append((number, body[start:]))
    return parts


class SkeletonParser:
    """Incremental skeleton parser: ``feed`` stream deltas, get points as their lines complete.

    The first list item fixes the list's style (numbered or bulleted) and indentation; items of
    the other style or deeper indentation are sub-points and are ignored, as are preambles and
    closing remarks. Numbers must increase, so a second list in a closing remark is not merged in.
    Limits come from the skeleton's shape (sot/_shape.py); ``max_points`` / ``max_point_chars``
    override its count and length.
    """

    def __init__(
        self,
        *,
        max_points: int | None = None,
        max_point_chars: int | None = None,
        shape: SkeletonShape | None = None,
        strict: bool = False,
        question: str = "",
    ) -> None:
        shape = shape or SkeletonShape()
        self._asked = frozenset(_stems(question, _COMPOUNDS, same=strict))
        self._question_words = frozenset(re.findall(r"\w+", question.casefold()))
        # ("Compare Python, Rust, Go": two commas make a list; "..., i get really nervous" is one clause more.)
        self._lists = bool(re.search(r"\b(?:and|or|vs|versus)\b|&|/|,.*,", question, re.IGNORECASE))
        self._asked_as_written = frozenset(_stems(question, _COMPOUNDS, same=False))  # for openings
        kind = _KINDS_ASKED.search(question)
        self._kind = kind.group().casefold() if kind else ""
        # A small model's outline: points that open on the same two topic words ("Buy local and
        # support ..." / "Buy locally sourced") are one topic. A larger model's "Support local
        # businesses" / "Support local charities" are two, so this is for small models only.
        self._strict = strict
        self.max_points = max_points or shape.kept_points
        self.max_point_chars = max_point_chars or shape.point_chars
        self.max_words = shape.point_words + 2  # a few words asked; a little more still reads as a title
        self.whole_words = shape.whole_words
        self.line_chars = shape.line_chars
        self.points: list[str] = []
        self.items = 0  # list items read, kept or not: more than points kept means repeats or fragments
        self._seen: set[str] = set()
        self._kept: list[_Traits] = []
        self._last_cut = False  # the line before was stopped mid-phrase
        self._cut_line = False  # the line being parsed was stopped by the token limit
        self._buffer = ""
        self._style: str | None = None
        self._indent = 0
        self._last_number = 0

    def keep(self, points: list[str]) -> None:
        """Points an earlier outline gave: this one's repeats of them are dropped, and they count
        toward ``max_points``."""
        for point in points:
            self._remember(point, self._traits(point))

    @property
    def full(self) -> bool:
        return len(self.points) >= self.max_points

    def detail(self, point: str) -> str:
        """Nothing: a small model's title is all of its point that is kept."""
        return ""

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the points whose lines became complete."""
        self._buffer += text.replace("\r\n", "\n").replace("\r", "\n")
        new: list[str] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            new.extend(self._line(line))
        return new

    def finish(self, *, cut: bool = False) -> list[str]:
        """End of the stream: parse what is left; return the points it adds.

        `cut`: the stream was stopped by its token limit, so its last line ends wherever that fell.
        """
        line, self._buffer = self._buffer, ""
        self._cut_line = cut
        try:
            return self._line(line) if line.strip() else []
        finally:
            self._cut_line = False

    def _line(self, raw: str) -> list[str]:
        if self.full:
            return []
        indent = _indent(raw)
        line = raw.strip()
        numbered = _NUMBERED.match(line)
        if numbered and self._style in (None, "numbered"):
            # (Its trailing spaces stay: the grammar's length cap counts them.)
            return self._numbered(indent, int(numbered.group(1)), numbered.group(2) + raw[len(raw.rstrip()) :])
        if self._style is None and not numbered:
            inline = _INLINE_MARK.search(line)
            if inline and int(inline.group(1)) == 1:
                return self._numbered(indent, 1, line[inline.end() :])
        bullet = _BULLET.match(line)
        if bullet and self._style in (None, "bullet"):
            if self._style is None:
                self._style, self._indent = "bullet", indent
            elif indent > self._indent + 1:
                return []
            return self._accept([bullet.group(2)])
        return []

    def _numbered(self, indent: int, number: int, body: str) -> list[str]:
        if self._style is None:
            if number > 2:
                return []
            self._style, self._indent = "numbered", indent
        elif indent > self._indent + 1 or not (self._last_number < number <= self._last_number + 3):
            return []
        body = re.sub(rf"^\s*{number}\s*[.)]\s+", "", body)  # "6. 6. Social connections"
        parts = _split_inline(body, number) or [(number, body)]
        # A line stopped by the length cap is cut in its last part only.
        span = len(body.lstrip())
        line_cut = self._cut_line or span >= self.line_chars - 1
        # "1. ... 2. The Earth's atmosphere scatters," then "2. Blue light ...": a point begun inside a
        # line the grammar's cap stopped; the next line mostly begins it again, under its number. (A
        # line longer than the cap had none, and one the token limit ended has no next line.)
        capped = not self._cut_line and self.line_chars - 1 <= span <= self.line_chars + 1
        if capped and len(parts) > 1:
            parts.pop()
            line_cut = False
        self._last_number = parts[-1][0]
        return self._accept([text for _, text in parts], last_cut=line_cut)

    def _continues(self, text: str) -> bool:
        """Whether `text` carries on the line before it rather than starting a point."""
        text = _EMPHASIS.sub("", text).strip()
        if _CONTINUES.match(text):
            return True
        # Lowercase after a cut line, or in a list whose points start uppercase: "2. actionable steps".
        return text[:1].islower() and (self._last_cut or self.points[0][:1].isupper())

    def _accept(self, texts: list[str], last_cut: bool | None = None) -> list[str]:
        added: list[str] = []
        for i, text in enumerate(texts):
            self.items += 1
            cut = last_cut if last_cut is not None and i == len(texts) - 1 else self._cut_line
            cut = cut or len(text.strip()) >= self.line_chars - 1
            continues = bool(self.points) and self._continues(text)
            self._last_cut = cut or _dangles(text)
            if continues:  # a line that carries on the one before it
                continue
            point = _clean(text, self.max_point_chars, self.max_words, self.whole_words, cut=cut)
            if (cut or len(texts) > 1) and len(_words(point)) == 1 and point.casefold() in DANGLING_WORDS:
                continue  # "4. Be": what was left of a line when its limit fell
            key = _key(point)
            letters = _LETTER_WORDS.findall(point)
            if _fragment(point) or all(w.casefold() in DANGLING_WORDS for w in letters):
                continue  # "The most", "If they", "Use": the start of a sentence the line never finished
            if not any(len(w) >= 2 for w in letters) or (len(letters) >= 3 and not any(len(w) >= 3 for w in letters)):
                continue  # no title: a number, a symbol, or a run of letters ("B", "D, E, F, G")
            if not key or key in self._seen or self.full:
                continue
            if self._strict and key in _BARE_ADJECTIVES and self._kind:
                point = f"{point} {self._kind}"  # "Political causes"
            role = _ROLE.match(point) if self._strict else None
            if role and set(_stems(role.group(1), same=True)) <= self._asked:
                continue  # "Wetlands play a crucial role" on why wetlands matter (check AB): in what, never said
            traits = self._traits(point)
            if self._repeats(traits):
                continue
            self._remember(point, traits)
            added.append(point)
        return added

    def _remember(self, point: str, traits: _Traits) -> None:
        self._seen.add(_key(point))
        self._kept.append(traits)
        self.points.append(point)

    def _traits(self, point: str) -> _Traits:
        strict = self._strict  # a small model's synonyms are one word (`_SAME`)
        verb, acts_on = _object(point, self._asked) if strict else ("", frozenset[str]())
        words = tuple(w.casefold() for w in _words(point))
        # Things of a few words each: "Read books on vocabulary and grammar" names books, not grammar.
        split = [part for part in _CONJUNCTS.split(point) if part] if strict else []
        parts = tuple(_topic(part, strict) for part in split if len(_words(part)) <= 3)
        parts = parts if len(split) > 1 and len(parts) == len(split) and all(parts) else ()
        head = _head(words, self._asked) if strict else ("", False)
        topic = _topic(point, strict)
        pairs = _pairs(point, self._asked) if strict else frozenset[tuple[str, str]]()
        in_order = (
            _stems(" ".join(w for w in words[1:] if w not in _REFERRING), skip=_GENERIC, same=True) if verb else []
        )
        acted_on = tuple(s for s in in_order if s not in self._asked)
        return _Traits(
            _bag(point, strict), topic, self._opening(point), words, verb, acts_on, parts, head, pairs, acted_on
        )

    def _opening(self, point: str) -> tuple[str, ...]:
        """The first two topic words, where strict and there are two (else nothing to compare). A
        title that opens on the question's own subject ("Quantum computing is a branch ..." for a
        question on quantum computing) opens on what follows it; "Cat grooming" / "Dog grooming"
        open on one word of the question each, and differ. A verb and its particle ("Turn off
        lights" / "Turn off unused appliances") open nothing."""
        # Words as written: "The Roman Empire's downfall was largely ..." opens on "downfall", not on
        # the question's "fall" (and so not on "largely attributed", which its internal twin shares).
        stems = _stems(point, _COMPOUNDS, _GENERIC, same=False) if self._strict else []
        if len(stems) > 2 and set(stems[:2]) <= self._asked_as_written:
            while stems and stems[0] in self._asked_as_written:
                stems.pop(0)
        opening = tuple(stems[:2])
        return opening if len(opening) == 2 and opening[1] not in _PARTICLES else ()

    def _repeats(self, new: _Traits) -> bool:
        """A kept point's topic again, compared without generic verbs: the same words
        ("Liquorization" / "Liquorizing"), all of one's inside the other's ("Storage" / "Storage
        capacity and options", "Podcasts" / "Language learning podcasts"), or three words or more
        shared and at most one apart. Points that differ in a word of two or three ("Short-term goals" /
        "Long-term goals", "Cat grooming" / "Dog grooming", "Support local businesses" / "Support
        local charities") stay, the last unless strict. Strict, a point that opens on two topic words
        of a kept one rewords it ("Internal issues contributed to the empire's demise" after "The fall
        of Rome was largely attributed to internal issues, including corruption")."""
        topic = new.topic
        alone = len(topic) >= 3 or len(new.bag) == 1
        if self._strict and not self._lists and topic and topic <= self._asked and alone:
            # The question again ("Support Spanish language" on supporting a child's Spanish), or one
            # word of it alone ("Fall" on why leaves change colour in the fall); where the question
            # names several things ("mental and physical health"), a title may name one.
            return True
        how_only = self._strict and _only_how(new.words)
        for kept in self._kept:
            if self._strict and (
                _contradicts(new.words, kept.words, self._question_words) or _counted(new.words, kept.words)
            ):
                return True
            # "Arrival and Accommodation" / "Accommodation and Booking" (outside check X): one of the
            # two things again, unless the question names it ("Pros and cons of renting" / "... buying").
            if any(part == other_part and not part <= self._asked for part in new.parts for other_part in kept.parts):
                return True
            # "Apps with interactive methods" after "Language learning apps" (outside check Y): a kind
            # of a thing that is a point already. "Pros of renting" / "Pros of buying" (both name their
            # kind) and "Reduce single-use plastics" / "Recycle plastics" (neither) stay two.
            if new.head[0] and new.head[0] == kept.head[0] and new.head[1] != kept.head[1]:
                return True
            # "Increased energy levels and better sleep quality" / "Improved sleep quality, with ..."
            # (outside check Z): one thing the question did not name, in two points. "Cat grooming needs"
            # / "Dog grooming needs" differ in the question's own words, "Red blood cells" / "White blood
            # cells" in one word each: kinds, and they stay.
            if new.pairs & kept.pairs and not (new.topic ^ kept.topic) <= self._asked and not _swapped(new, kept):
                return True
            other = kept.topic
            if new.bag == kept.bag or (new.opening and (new.opening == kept.opening or set(new.opening) <= other)):
                return True
            # One thing with a verb that says nothing ("Choose a window" / "Use a window with a
            # south-facing view"), or the same verb; "Check the oil" / "Change the oil" are two.
            alike = new.verb == kept.verb or bool({new.verb, kept.verb} & _BARE_VERBS)
            if alike and new.object and kept.object and (new.object <= kept.object or kept.object <= new.object):
                return True
            if new.verb and new.verb == kept.verb and _one_word_apart(new.acts_on, kept.acts_on):
                return True
            if _named_again(new, kept) or _named_again(kept, new):
                return True
            # "Practice regularly" / "Practice again and again!" (outside check AC): one verb, said how often.
            if how_only and new.words[0] == kept.words[0] and _only_how(kept.words):
                return True
            if not topic or not other:
                continue
            shared = len(topic & other)
            # One topic word inside another point's words is a repeat only as a title of its own
            # ("Storage"), not as what is left of a longer one once its generic words go.
            inside = (topic <= other and (len(topic) > 1 or new.short)) or (
                other <= topic and (len(other) > 1 or kept.short)
            )
            if inside or (shared >= 3 and min(len(topic), len(other)) - shared <= 1):
                return True
        return False


def parse_skeleton(
    text: str,
    *,
    max_points: int | None = None,
    max_point_chars: int | None = None,
    shape: SkeletonShape | None = None,
    strict: bool = False,
    question: str = "",
) -> list[str]:
    """Return the points of a skeleton, in order, without numbering or markdown (`strict`: a small
    model's outline, for the `question` it answers)."""
    parser = SkeletonParser(
        max_points=max_points, max_point_chars=max_point_chars, shape=shape, strict=strict, question=question
    )
    parser.feed(text)
    parser.finish()
    return parser.points
