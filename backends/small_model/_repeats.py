"""A point that says a kept point again: the same topic, thing or advice in other words."""

from __future__ import annotations

from collections.abc import Iterable

from ._topics import Question, Traits, singular
from ._vocabulary import ADVICE_VERBS, BARE_VERBS, word_set

# Words whose swap turns a point into its opposite: "Arrive early" / "Arrive late".
_OPPOSITES = frozenset(
    frozenset(pair.split()) for pair in ("early late", "more less", "fast slow", "often rarely", "always never")
)
# Labels that name no thing: counted on, they add no point. ("Day 2", "Week 2", "Stage 2", "Type 2",
# "Apollo 13", "iPhone 15" name one, and stay.)
_PLACEHOLDERS = word_set("demonstration example sample point item answer question idea tip title heading")


# How often or how hard, and nothing of what: "Practice regularly", "Practice again and again!" ("Practice
# speaking", "Eat locally", "Visit Beijing" say what, and stay apart).
_HOW = word_set(
    "regularly daily weekly often frequently consistently constantly repeatedly again more always every day and "
    "a lot hard"
)


def repeats(new: Traits, kept: Iterable[Traits], question: Question) -> bool:
    """A kept point's topic again, compared without generic verbs: the same words
    ("Liquorization" / "Liquorizing"), all of one's inside the other's ("Storage" / "Storage
    capacity and options", "Podcasts" / "Language learning podcasts"), or three words or more
    shared and at most one apart. Points that differ in a word of two or three ("Short-term goals" /
    "Long-term goals", "Cat grooming" / "Dog grooming", "Support local businesses" / "Support
    local charities") stay, the last unless strict. Strict, a point that opens on two topic words
    of a kept one rewords it ("Internal issues contributed to the empire's demise" after "The fall
    of Rome was largely attributed to internal issues, including corruption")."""
    alone = len(new.topic) >= 3 or len(new.bag) == 1
    if question.strict and not question.lists and new.topic and new.topic <= question.asked and alone:
        # The question again ("Support Spanish language" on supporting a child's Spanish), or one
        # word of it alone ("Fall" on why leaves change colour in the fall); where the question
        # names several things ("mental and physical health"), a title may name one.
        return True
    return any(_repeat_of(new, old, question) for old in kept)


def _repeat_of(new: Traits, old: Traits, question: Question) -> bool:
    return (
        (question.strict and _said_otherwise(new, old, question))
        or _one_thing_twice(new, old, question)
        or _same_topic(new, old)
        or _same_advice(new, old)
    )


def _said_otherwise(new: Traits, old: Traits, question: Question) -> bool:
    """A small model's advice turned round, counted on, or said again with how often alone."""
    if _contradicts(new.words, old.words, question.words) or _counted(new.words, old.words):
        return True
    # "Practice regularly" / "Practice again and again!": one verb, said how often.
    return _only_how(new.words) and new.words[0] == old.words[0] and _only_how(old.words)


def _one_thing_twice(new: Traits, old: Traits, question: Question) -> bool:
    """One thing the question did not name, named in two points."""
    # "Arrival and Accommodation" / "Accommodation and Booking": one of the two things again, unless the
    # question names it ("Pros and cons of renting" / "... buying").
    if any(part == other_part and not part <= question.asked for part in new.parts for other_part in old.parts):
        return True
    # "Apps with interactive methods" after "Language learning apps": a kind of a thing that is a point
    # already. "Pros of renting" / "Pros of buying" (both name their kind) and "Reduce single-use plastics" /
    # "Recycle plastics" (neither) stay two.
    if new.head.word and new.head.word == old.head.word and new.head.first != old.head.first:
        return True
    # "Increased energy levels and better sleep quality" / "Improved sleep quality, with ...": one
    # thing the question did not name, in two points. "Cat grooming needs" / "Dog grooming needs"
    # differ in the question's own words, "Red blood cells" / "White blood cells" in one word each:
    # kinds, and they stay.
    if new.pairs & old.pairs and not (new.topic ^ old.topic) <= question.asked and not _swapped(new, old):
        return True
    return _named_again(new, old) or _named_again(old, new)


def _same_topic(new: Traits, old: Traits) -> bool:
    topic, other = new.topic, old.topic
    if new.bag == old.bag or (new.opening and (new.opening == old.opening or set(new.opening) <= other)):
        return True
    if not topic or not other:
        return False
    shared = len(topic & other)
    # One topic word inside another point's words is a repeat only as a title of its own
    # ("Storage"), not as what is left of a longer one once its generic words go.
    inside = (topic <= other and (len(topic) > 1 or new.short)) or (other <= topic and (len(other) > 1 or old.short))
    return inside or (shared >= 3 and min(len(topic), len(other)) - shared <= 1)


def _same_advice(new: Traits, old: Traits) -> bool:
    # One thing with a verb that says nothing ("Choose a window" / "Use a window with a
    # south-facing view"), or the same verb; "Check the oil" / "Change the oil" are two.
    alike = new.verb == old.verb or bool({new.verb, old.verb} & BARE_VERBS)
    if alike and new.object and old.object and (new.object <= old.object or old.object <= new.object):
        return True
    return bool(new.verb) and new.verb == old.verb and _one_word_apart(new.acts_on, old.acts_on)


def _contradicts(words: tuple[str, ...], other: tuple[str, ...], asked: frozenset[str]) -> bool:
    """Short advice that is another's with its manner swapped for the opposite ("Arrive late" after
    "Arrive early": the title turned round while its text still says to arrive early). A pair the
    question names ("fast and slow charging") or that names kinds ("Early symptoms" / "Late symptoms")
    stays."""
    if len(words) != len(other) or len(words) > 3:
        return False
    swapped = [(i, a, b) for i, (a, b) in enumerate(zip(words, other, strict=True)) if a != b]
    if len(swapped) != 1 or swapped[0][0] == 0 or frozenset(swapped[0][1:]) not in _OPPOSITES:
        return False
    return not set(swapped[0][1:]) <= asked


def _named_again(phrase: Traits, other: Traits) -> bool:
    """Whether a title of a few words opens on what a short noun phrase is about: "Exercise plan"
    after "Regular exercise", "Support options" after "Customer support".
    Two phrases of one head name kinds of it ("Customer support" / "Technical support", "Immune
    system boosting" after "Cardiovascular system"), and "Manage stress" names no "Time management"."""
    if not phrase.head.word or len(other.words) > 3 or other.head.word == phrase.head.word:
        return False
    return singular(phrase.words[0] if phrase.head.first else phrase.words[-1]) == singular(other.words[0])


def _one_word_apart(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether two pieces of advice of one verb act on the same things but for one word, not the last:
    "Use organic methods to control weeds" / "Use natural methods to control them".
    "Use a high-quality brush" / "Use a high-quality paint" differ in the thing itself."""
    apart = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b]
    return len(mine) == len(theirs) >= 3 and len(apart) == 1 and apart[0] < len(mine) - 1


def _only_how(words: tuple[str, ...]) -> bool:
    """Advice of a verb and how often to do it, nothing of what."""
    rest = [w.strip(".,;:!?") for w in words[1:]]
    return words[0] in ADVICE_VERBS and bool(rest) and all(w in _HOW for w in rest)


def _swapped(new: Traits, kept: Traits) -> bool:
    """Two titles one topic word apart each way: one kind for another ("Red blood cells" / "White
    blood cells", "Foundation, Isaac Asimov" / "I, Robot, Isaac Asimov")."""
    return len(new.topic - kept.topic) <= 1 and len(kept.topic - new.topic) <= 1


def _counted(words: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A placeholder counted on ("Demonstration 2" after "Demonstration 1": a run of them,
    each with the same text): no new point."""
    if len(words) != 2 or len(other) != 2 or words[0] != other[0] or words[0] not in _PLACEHOLDERS:
        return False
    return words[-1].isdigit() and other[-1].isdigit()
