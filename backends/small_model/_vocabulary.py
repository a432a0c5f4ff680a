"""Word lists the outline's rules share: where a phrase may end, what opens advice, what refers back."""

from __future__ import annotations


def word_list(text: str) -> list[str]:
    return text.split()


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A phrase does not end on these words: a point ending on one was cut inside a phrase.
DANGLING_WORDS = word_set(
    "a an the and or but nor of to for in on at with by from into onto about as than that which who whose "
    "your their its our my his her this these those is are was were be can could will would should must "
    "may might more most very such so if when while between through without within over under via like "
    "including especially both either each every some any not also using even because although unless "
    "whereas just what how whether"
)
# Verbs a title never ends on alone: "4. Use" / "5. Use a good plant food" (seen from the embedded model).
BARE_VERBS = word_set(
    "use make get take keep try find give set put add engage embrace avoid build create develop ensure "
    "provide consider learn practice choose ask start stop bring allow help reduce improve increase limit focus"
)
PRONOUNS = frozenset(["it", "they", "you", "we", "i", "there", "he", "she"])
OBJECTS = frozenset(["it", "them", "you", "us", "me", "him", "her", "yourself", "themselves"])
# An object that refers back ("... to control them"): no thing of its own.
REFERRING = OBJECTS | word_set("this these those that")
PARTICLES = frozenset(["off", "on", "up", "down", "out", "back", "away", "over", "in", "into"])
# Verbs that open advice titles ("Support Spanish language", "Choose a window"). A small model
# says one thing twice with two of them; what the verb acts on tells its points apart.
ADVICE_VERBS = BARE_VERBS | word_set(
    "support offer encourage promote read write watch listen talk speak eat drink sleep exercise save "
    "spend invest pay buy sell plan prepare review research check clean wash store open close turn switch "
    "install plant grow cook walk visit join call share discuss explain understand know remember manage "
    "track monitor schedule organize declutter apply attend replace repair protect cover block seal "
    "insulate hang place wear carry pack bring cut lower raise boost cultivate foster nurture teach show "
    "expose immerse surround celebrate reward praise cap automate compare negotiate"
)
# Words after which the first word of a title is its verb ("Choose a window", "Track your spending").
DETERMINERS = word_set("a an the your my our their some more less each every this these those")
# Verbs a title does not end on after "to": what they act on is missing.
# ("Don't be afraid to ask", "Be willing to learn", "Make time to practice": those take none.)
NEEDS_OBJECT = frozenset(
    {"use", "make", "get", "take", "keep", "find", "give", "set", "put", "add", "ensure", "provide", "bring"}
    | {"see", "recognize", "identify", "determine", "prevent", "reduce", "improve", "increase", "create"}
)
# Two-letter words that follow "to" in a whole title ("Learn to do", "Listen to me"); any other
# ("Take regular breaks to re") is a word the line tore off.
AFTER_TO = frozenset(["be", "do", "go", "it", "me", "us", "up", "an"])
