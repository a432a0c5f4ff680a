"""Half a sentence rather than a title: what a small model's line opened and never finished."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._phrases import NOUN_MISSING
from ._vocabulary import (
    ADVICE_VERBS,
    AFTER_TO,
    BARE_VERBS,
    DANGLING_WORDS,
    NEEDS_OBJECT,
    PRONOUNS,
    word_list,
    word_set,
)

# A point that opens on one of these and stops within a few words is half a sentence ("If you find someone").
_SUBORDINATORS = frozenset(["if", "when", "whenever", "because", "although", "though", "unless", "since", "whereas"])
# Of those, the ones a title cannot stop after ("When to stop", "Since 2010" and "While traveling" are whole).
_CONDITIONS = frozenset(["if", "because", "although", "though", "unless", "whereas"])
# "It is important", "This is essential": an adjective that needs what the line never said.
_OPEN_ADJECTIVE = re.compile(
    r"^(?:it|this)\s+is\s+(?:important|essential|crucial|vital|necessary|key|helpful|useful|best|better)$",
    re.IGNORECASE,
)


# "The answer is not only", "This answer is not just a simple one", "The list is incomplete", "A complete
# answer will contain at least 3 points": the model talking about its task.
_ABOUT_THE_TASK = re.compile(
    r"^(?:(?:the|this|my|your|an?)\s+(?:(?:good|complete|full|short)\s+)?(?:answer|question|outline|response)"
    r"|(?:the|this)\s+list)\s+(?:is|was|will|should|must|contains?|has)\b"
    r"|^(?:do\s+not|don['’]t)\s+answer\s+the\s+question\b"
    # "Do not provide a solution", "Do not list the details", "Do not add anything else to the list", "Do not
    # write a single sentence in the outline", "Do not include the last point of the list": the prompt's "do
    # not" riffed on, in those shapes only ("Do not offer a solution too quickly", "Don't provide any
    # information over the phone", "Don't give up at this point" are advice).
    r"|^(?:do\s+not|don['’]t)\s+provide\s+an?\s+(?:solution|suggestion)(?:\s+to\s+(?:someone|anyone))?$"
    r"|^(?:do\s+not|don['’]t)\s+(?:write|include|add|use|list)\s+(?:a\s+single\s+sentence\s+in\s+the\s+outline"
    r"|the\s+(?:last|first|next)\s+point\s+of\s+the\s+list|anything\s+else\s+to\s+the\s+list|the\s+details$"
    r"|any\s+information$|any\s+(?:other|additional)\s+(?:information|keywords?)\s+to\s+(?:create|make|write))\b"
    r"|\bhere\s+is\s+the\s+outline\b|\boutline\s+of\s+a\s+numbered\s+list\b|\bprovide\s+a\s+numbered\s+list\b"
    # "The first point is to answer the question": the outline's own task as a point.
    r"|^the\s+(?:first|second|third|fourth|fifth|next|last)\s+point\s+is\s+to\s+(?:answer|provide|write|give|list)\b"
    r"|^the\s+answer$"
    # "I am a helpful AI with the ability to provide answers", "I will provide detailed answers to your
    # questions", "I will not provide any information": the assistant describing itself ("I am passionate
    # about AI", "I will ask thoughtful questions", "I'm happy to answer any questions" stay).
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
_SETTING = re.compile(r"in\s+(?:a|the|this|today['’]s)\s+(?:world|age|era)\b(?!.*,)", re.IGNORECASE)
_PURPOSES = word_set("avoid prevent ensure help make keep reduce improve get stay")
# "The best", "The only way to get rid of ants", "The most important thing you can do", "With dedication
# and consistent practice": a sentence's subject or its manner, its verb never said.
_SUBJECT_ONLY = re.compile(
    r"^the\s+(?:best|worst|only|first|last|most|key|main|\w+est)$"
    r"|^(?:the|one)\s+(?:best|only|first|most\s+\w+|\w+est|key|main)\s+(?:ways?|things?|steps?|tips?|time)\b"
    r"(?!.*\b(?:is|are|was|were)\b)"
    r"|^with\s+(?!.*,)\S+\s+\S+\s+\S+",
    re.IGNORECASE,
)
# "Be used for oral hygiene only", "Removed from the mouth": a passive whose subject never came ("Be
# prepared", "Be informed" are advice).
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

# "The most obvious way", "One of the best things", "A good way": praise of a way never named.
_OPEN_SUPERLATIVE = re.compile(
    r"^(?:the|one\s+of\s+the|an?|another)\s+(?:(?:first|most|and)\s+)*"
    r"(?:\w+est|good|great|simple|easy|better|effective|important|useful|helpful|obvious)"
    r"\s+(?:ways?|things?|ideas?|options?|methods?)$"
    r"|^(?:another|one)\s+(?:way|option)$",  # "Another way"
    re.I,
)

# "Use a bleach-free", "Use a high-tech": a compound adjective whose noun never came
# ("Go for gluten-free" is whole).
_ADJECTIVE_COMPOUND = re.compile(
    r"-(?:free|based|friendly|resistant|proof|efficient|safe|powered|related|tech|quality|end|grade|cost|term|time)$"
)
# ("Focus on the positive", "Embrace the new": after "the", an adjective stands for its noun; not these.)
_NOUN_AFTER_THE = word_set("old right proper entire existing following")
# Two-letter titles that are words ("Go", "Ox"), not a word torn off ("Re").
_TWO_LETTER_WORDS = AFTER_TO | word_set("no ok oz ox qi hi tv pc uv ai")

# Whole-title shapes of half a sentence, whatever its words.
_RULES = (
    _OPEN_SUPERLATIVE,
    _ABOUT_THE_TASK,
    _ONE_SIDED,
    _NO_SUBJECT,
    _NO_OBJECT,
    _NAMELESS_STEP,
    _SUBJECT_ONLY,
    _PASSIVE_START,
    NOUN_MISSING,
)


@dataclass(frozen=True)
class _Title:
    """A title as the word rules read it."""

    text: str  # as written
    raw: tuple[str, ...]  # its words without the punctuation around them (empty where that was all)
    words: tuple[str, ...]  # those left, casefolded


def fragment(title: str) -> bool:
    """Half a sentence rather than a title."""
    if any(rule.search(title) for rule in _RULES):
        return True
    raw = tuple(w.strip(".,;:!?’'\"/") for w in word_list(title))
    if len(raw) > 1 and ((len(raw[-1]) == 1 and raw[-1].isupper()) or raw[-1].isdigit()):
        # "Plan B", "Vitamin A", "Phase 1": a name, not an article left hanging; "Learn a L" and
        # "... during the 1" are words torn off.
        return raw[-2].casefold() in ("a", "an", "the")
    words = tuple(w.casefold() for w in raw if w)
    if not words:
        return True
    if len(words) > 1 and re.search(r"\w['’]s$", words[-1]):
        return True  # "Don't let your boss's": a possessive whose noun never came
    if len(words) == 1:
        return _one_word(raw[0], words[0])
    read = _Title(title, raw, words)
    return _open_end(read) or _no_main_clause(read)


def _one_word(raw: str, word: str) -> bool:
    # "It’s": what is left of "It’s like what" once its open end is gone; "Re": a word torn off
    # ("AI", "pH", "Go" and "饮食" are whole).
    subject = re.split(r"['’]", word)[0]
    torn = bool(re.fullmatch(r"[A-Z][a-z]", raw)) and word not in _TWO_LETTER_WORDS
    return torn or word in BARE_VERBS or word in DANGLING_WORDS or subject in PRONOUNS


def _open_end(title: _Title) -> bool:
    """A title of two words or more whose end leaves open what it is of, what it acts on, or which."""
    raw, words = title.raw, title.words
    if len(words) == 2 and words[-1] in DANGLING_WORDS:
        return True  # "The most", "Keep your"
    if len(words) > 3 and words[-2] in ("or", "and") and words[-1] in NEEDS_OBJECT and words[-3] not in ADVICE_VERBS:
        # "Use earplugs or use": the second verb's object never came ("Give and take", "Learn to give and
        # take", "Buy or make" are whole).
        return True
    if len(words) == 2 and words[0] in ADVICE_VERBS and re.fullmatch(r"[a-z]\d{1,3}", raw[1]):
        return True  # "Use a3", "Use a4": a placeholder counted on
    if len(words) == 2 and words[0] in ("use", "avoid") and raw[1].islower() and _ADJECTIVE_END.search(words[1]):
        # "Use recycled", "Use biodegradable": what to use never came ("Buy refurbished", "Use Audible",
        # "Get organized" are whole).
        return True
    if _NO_COMPLEMENT.search(title.text):
        return True  # "It is important to be aware", "Better sleep can reduce the risk": of what, never said
    if len(words) >= 3 and words[-2] in ("a", "an") and _ADJECTIVE_COMPOUND.search(words[-1]):
        return True  # "Use a bleach-free": a compound adjective whose noun never came
    if len(words) >= 2 and words[-2] == "the" and words[-1] in _NOUN_AFTER_THE:
        return True  # "Ditch the old", "Use the proper": which of them, never said
    return bool(_OPEN_ADJECTIVE.match(" ".join(words)))


def _no_main_clause(title: _Title) -> bool:
    """A title of two words or more that opens on what comes around a point (the task, the end of the
    sentence before, a setting, an aim, a condition) and never says the point."""
    text, raw, words = title.text, title.raw, title.words
    if words[0] in ("answer", "answers") and word_list(text)[0][-1] in ",:":
        return True  # "Answer, but not just one": the model talking about its task
    if words[0] == "of" and words[1] in ("the", "a", "an"):
        return True  # "Of the French monarchy in the Revolution": the end of the sentence before it
    if words[0] == "to" and words[1] in ("the", "a", "an") and len(words) >= 5 and raw[2][:1].islower():
        return True  # "To the rise of international trade": the end of a sentence; "To the Lighthouse" is a book
    if " ".join(words) in _ADVERBIALS or (words[0] in ("in", "for") and words[1] == "some" and "," not in text):
        return True  # "In the long run", "In some species of plants": where or when, never what
    if _SETTING.match(text) or (words[0] == "to" and words[1] in _PURPOSES and len(words) <= 4):
        return True  # "In a world of AI", "To avoid confusion": the setting or aim of a point
    # "If you are still unsure about anything": a long condition with no main clause ("If in doubt,
    # ask" has one; "If symptoms persist" is a heading).
    if words[0] in _CONDITIONS and "," not in text and len(words) >= 5:
        return True
    if words[0] == "when" and words[1].endswith("ing") and "," not in text and len(words) >= 4:
        return True  # "When buying in a foreign country": when, and then nothing
    # "If they", "When you": a clause opened and stopped at its subject.
    return words[0] in _SUBORDINATORS and len(words) <= 3 and words[-1] in PRONOUNS | DANGLING_WORDS
