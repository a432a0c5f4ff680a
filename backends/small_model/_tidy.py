"""Cleaning an expansion of what the tool itself put in, which small models echo back.

Applied once, in the orchestrator, before the Draft commits a point's text, so every view shows the
same cleaned answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._abbreviations import NOT_AFTER_ABBREVIATION

# Labels and fillers a small model puts before the content: "Point 2:", "Answer:", "The answer to
# your question is:", "Sure, here is the explanation:".
_LEAD = re.compile(
    r"""^\s*(?:
        (?:point|answer|explanation|response|expansion|part|question)\s*\d*\s*[:.\-]\s*
      | \d{1,2}\s*[.):]\s+
      | (?:sure|certainly|of\s+course|okay|ok)\b[!,.]?\s*
      | (?:the\s+)?answer\s+to\s+(?:your|the|this)\s+question\s+is\s*[:,\-]?\s*
      | (?:the\s+)?answer\s+is\s*:\s*
      | here(?:\s+is|'s)\s+(?:the|my|an?)\s+(?:answer|explanation|expansion|response)\b[^:\n]{0,40}:\s*
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_BRACKETED = re.compile(r"\[([^\[\]\n]{0,200})\](?!\()")  # not a Markdown link: [docs](https://...)
# What the model wraps in the prompt's delimiters by imitation: a few plain words ("[Digital tools]"),
# never code, numbers or a citation ("[1, 2]", "[3]").
_PHRASE = re.compile(r"[^\W\d_]+(?:[ '’-][^\W\d_]+){0,7}")
_SENTENCE = re.compile(r".*?(?:[.!?:]+(?=\s|$)|\n|$)\s*", re.DOTALL)  # "$3.50" and "v1.0" stay whole
_WORDS = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
# The model talking about the task instead of doing it: "The first and third paragraphs in your answer,
# one to three sentences, should ...", "Your question brings together the main points of the answer.",
# "The question:" as a label, "This is a classic answer that ...", "The question is a classic example",
# "The answer is a concise explanation", "Here's a one-to-three-sentence version of the point:",
# "Referring to an answer, ...", "The answer is not a label or a question.", "As I mentioned in my
# previous response", "The question asks about the causes of earthquakes", the model's own name from
# its chat template ("A helpful AI assistant, SmolLM, trained by Hugging Face"), "I'll write: ...", "The
# answer is to find a solution to the problem of hiccups."
_META = re.compile(
    r"""\b(?:your|the|this|my)\s+(?:answer|response|question)\b[^.!?]{0,80}?
        \b(?:paragraphs?|sentences?|points?|parts?|should|brings?\s+together)\b
      | \b(?:paragraphs?|sentences?)\b[^.!?]{0,80}?\b(?:your|the|this)\s+(?:answer|response)\b
      | \bone\s+to\s+three\s+(?:plain\s+)?sentences\b
      | \b(?:version|summary|rewrite)\s+of\s+(?:the|this|your)\s+point\b
      | \breferring\s+to\s+(?:an?|the)\s+answer\b
      | \blabel\s+or\s+(?:a|the)\s+question\b
      | \bmy\s+previous\s+(?:response|answer)\b
      | \bassistant(?:\s+named)?,?\s+SmolLM\b|\bSmolLM,?\s+trained\s+by\s+Hugging\s*Face\b
      | ^\s*(?:as\s+)?an?\s+helpful\s+AI\s+assistant\s*,
      | \bI['’]ll\s+(?:write|rewrite|rephrase)(?:\s+it)?\s*:
      | ^\s*the\s+(?:question(?:\s+is)?|answer)\s*:
      | ^\s*(?:the\s+)?next\s+(?:question|point)\s*[.!]?\s*$
      | ^\s*not\s+available\s*[.!]?\s*$
      | ^\s*(?:the\s+)?answer\s+is(?:\s*:?\s*\d{1,2}\s*[.!]?)?\s*$
      | \bthis\s+is\s+an?\s+(?:\w+\s+){0,3}answer\b
      | \b(?:the|an?)\s+(?:good\s+)?answer\s+to\s+the\s+question\b
      | ^\s*the\s+question\s+is\s+an?\b
      | ^\s*(?:the|this|your)\s+question\s+(?:asks|is\s+asking)\s+(?:about|for|what|how|why|whether|which)\b
      | ^\s*the\s+answer\s+is\s+a\s+bit\b
      | ^\s*the\s+answer\s+is\s+(?:not|to\s+find)\s+an?\s+solution\s+to\s+the\s+problem\b
      | \bquestion\s+that\s+requires\s+an?\s+(?:\w+\s+)?answer\b
      | ^\s*(?:(?:A|Answer)\s*:\s*)?your\s+answer\s*[.!]?\s*$
      | \banswer\s+is\s+an?\s+(?:\w+\s+){0,3}(?:explanation|answer|response)\b""",
    re.IGNORECASE | re.VERBOSE,
)
_ANSWER_LABEL = re.compile(r"^\s*(?:the\s+)?answer\s+is\s*:\s*$", re.IGNORECASE)
# A sentence that only praises its point ("This is a crucial step in preparing."): nothing of its own.
_PRAISE = re.compile(
    r"^\s*(?:this|it)\s+is\s+(?:a|an|one\s+of\s+the)\s+(?:crucial|key|important|great|essential|simple|vital"
    r"|critical|helpful|useful|no-brainer)\s+(?:steps?|tips?|points?|aspects?|ways?|parts?|factors?|skills?|habits?)\b"
    r"[^.!?]*[.!?]\s*$",
    re.IGNORECASE,
)
_PROMPT_LINE = re.compile(
    r"^[ \t]*(?:(?:question|point[ \t]*\d*|the (?:answer has these parts|outline of the answer)\b[^:\n]*)[ \t]*:"
    r"|write point \d+ only\b).*$",
    re.I | re.M,
)
# A line that starts another point ("\n3. Next title: ...", "\n* Next title"): the model writing on past its own.
_NEXT_POINT = re.compile(r"(?:^|\n)[ \t]*(\d{1,2}[.)]|[-*•])?[ \t]*(.*)")
# The same within a line ("... values: 3. Prepare for the interview: 4. Practice ..."): a numbered
# title and its colon, after a colon or semicolon. A list of the point's own starts at 1, and stays.
_NUMBERED_TITLE = r"(\d{1,2})\.\s+[^\W\d_][^.:!?\n]{0,60}:(?=\s|$)"
_INLINE_POINT = re.compile(r"(?<=[:;]\s)" + _NUMBERED_TITLE)
_OWN_LIST = re.compile(r"(?:^|(?<=\s))1[.)]\s")
# After a sentence, only the next point's number and a title of the model's own ("... your goals. 2.
# Prioritize tasks effectively: ...", README's first answer): a small model's stop on "\n2." missed it inline.
_RUN_ON_POINT = re.compile(r"(?<=[.!?]\s)" + _NUMBERED_TITLE)
# The "9." of a list run on in a line (", 9. Camera") ends nothing; "... between 18 and 25." does.
_LIST_NUMBER = r"(?<![,;]\s\d)(?<![,;]\s\d\d)"
# Nor does an abbreviation: "vs.", "e.g.", "Dr.", "St.", an initial.
_SENTENCE_END = re.compile(NOT_AFTER_ABBREVIATION + _LIST_NUMBER + r"[.!?](?=\s)")
_CLAUSE_END = re.compile(_LIST_NUMBER + r"[.!?:](?=\s)|,")


def _words_of(sentence: str) -> str:
    return " ".join(_WORDS.findall(sentence.casefold()))


def _unloop(text: str) -> str:
    """A small model's loop inside a sentence ("... external forces such as external forces such as
    ..."): the text before a run of four words came round again (it comes three times or more),
    ended at its last sentence, else its last clause or lead-in. Unchanged where none of those
    comes before a repeat."""
    # Without numbers: "9. Camera, 10. Camera, 11. Camera" loops on its word.
    words = [(m.group().casefold(), m.start()) for m in _WORDS.finditer(text) if not m.group().isdigit()]
    grams: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(words) - 3):
        grams.setdefault(tuple(w for w, _ in words[i : i + 4]), []).append(words[i][1])
    loops = [starts for starts in grams.values() if len(starts) >= 3]
    for cut in sorted({start for starts in loops for start in starts[1:]}):
        head = text[:cut]
        ends = list(_CLAUSE_END.finditer(head + " "))
        sentences = [m for m in ends if m.group() in ".!?"]
        if sentences:
            return head[: sentences[-1].end()]
        if ends:  # a clause: ", ..." ends the sentence there; "Title:" is a lead-in, dropped after
            return head[: ends[-1].start()] + ("." if ends[-1].group() == "," else ":")
    return text


# The question sent back in the second person ("... paying off your loans" for "my loans"): both
# are read in the first.
_AS_ASKED = {"you": "i", "your": "my", "yours": "mine", "yourself": "myself", "are": "am"}


def _asks_again(sentence: str, asked: list[str]) -> bool:
    """The user's question pasted back: asked again (a question mark, or opening as the question
    does), every word the question's but one in a long one (its typo mended: "pollution" for
    "polution"), and most of the question. "It is worth learning to code." answers "Is it worth
    learning to code?" and stays."""
    words = [_AS_ASKED.get(w, w) for w in _WORDS.findall(sentence.casefold())]
    if len(words) < max(4, 0.7 * len(asked)) or len(set(words) - set(asked)) > (len(words) >= 8):
        return False
    return sentence.rstrip().endswith("?") or words[:3] == asked[:3]


def _echoes(sentence: str, instructions: list[str]) -> bool:
    """Whether `sentence` repeats five words in a row (or all) of one of the prompt's instructions."""
    words = _WORDS.findall(sentence.casefold())
    said = " ".join(words)
    for instruction in instructions:
        told = _WORDS.findall(instruction.casefold())
        grams = [" ".join(told[j : j + 5]) for j in range(max(len(told) - 4, 1))]
        if any(gram and f" {gram} " in f" {said} " for gram in grams):
            return True
    return False


@dataclass(frozen=True)
class _Point:
    """The point an expansion was written for, and the outline's titles it may recite."""

    title: str
    index: int
    titles: tuple[str, ...]  # its own and every point's, casefolded

    @classmethod
    def of(cls, title: str, index: int, points: list[str] | None) -> _Point:
        return cls(title, index, tuple(t.casefold().strip() for t in [title, *(points or [])] if t.strip()))

    @property
    def others(self) -> list[str]:
        return [t for t in self.titles if t != self.title.casefold().strip()]

    def unwrap(self, match: re.Match[str]) -> str:
        # The delimiters the prompt put around points: "[Enhanced sleep quality]" reads as the words.
        inside = match.group(1).casefold().strip()
        if match.start() and (match.string[match.start() - 1].isalnum() or match.string[match.start() - 1] in "_)]"):
            return match.group(0)  # an index, as in x[i]
        echoed = match.start() == 0 or any(inside.startswith(t) for t in self.titles) or bool(_PHRASE.fullmatch(inside))
        return match.group(1) if echoed else match.group(0)


def tidy_expansion(
    text: str,
    title: str,
    index: int,
    points: list[str] | None = None,
    instructions: list[str] | None = None,
    question: str = "",
    capped: bool = False,
) -> str:
    """The expansion without what the tool itself put in, which small models echo.

    Drops the point's number, labels ("Point:", "Answer:"), fillers ("The answer to your question
    is:", "Sure, here is ..."), the title at the start, sentences that repeat the prompt's
    `instructions`, the ``[ ]`` delimiters around a point or title, and a trailing lead-in that
    ends on a colon with nothing after it, the `question` pasted back, and, in a text `capped` by
    its token limit, the loop that ran into it. Empty if nothing of substance is left, or only the
    title.
    """
    point = _Point.of(title, index, points)
    text = _without_leads(text.replace("\r\n", "\n").strip().strip('"').strip(), point)
    text = _before_recital(text, point)
    if capped:  # a loop runs until the token limit stops it; parallel wording in a finished text stays
        text = _unloop(text)
    text = _BRACKETED.sub(point.unwrap, text)
    if "[" in text and "]" not in text[text.rfind("[") :]:
        text = text[: text.rfind("[")]  # a delimiter opened and never closed: the model talking about its task
    # A prompt line repeated after the content ("Question: How can I ...?") is the prompt, not the answer.
    text = _PROMPT_LINE.sub("", text)
    kept = _own_sentences(text, instructions or [], question)
    kept = _once_each(_unrecited(kept, point, own_list=bool(_OWN_LIST.search(text))))
    text = _paragraph(_without_filler(kept))
    if capped:
        text = _whole_sentences(text)
    # Nothing but the title again: no more than an empty expansion, and retried like one.
    # A number alone ("4.") is the point's own numbering left over.
    return text if _LETTER.search(text) and _words_of(text) != _words_of(title) else ""


def _without_leads(text: str, point: _Point) -> str:
    """`text` without the labels, fillers, title and delimiters it opens on, in any order."""
    bare_title = point.title.rstrip(".:;!… ")
    for _ in range(6):
        before = text
        text = _LEAD.sub("", text, count=1).lstrip(' "*')
        for candidate in (f"**{bare_title}**", f'"{bare_title}"', f"[{bare_title}]", bare_title):
            if bare_title and text.casefold().startswith(candidate.casefold()):
                rest = text[len(candidate) :]
                # The title as a heading ("Title: ...", "**Title** ..."), not the start of a sentence.
                if not rest.strip() or rest.lstrip(" *")[:1] in ".:-—\n" or candidate != bare_title:
                    text = rest.lstrip(" .:-—*\n")
                break
        text = _BRACKETED.sub(point.unwrap, text, count=1) if text.startswith("[") else text
        if text == before:
            break
    return text


def _before_recital(text: str, point: _Point) -> str:
    """`text` up to where it goes on to another point."""
    # From the first line that is another point on: the outline recited, not this point written.
    others = point.others
    for match in _NEXT_POINT.finditer(text):
        line = match.group(2).casefold().strip("*[] ")
        numbered = (match.group(1) or "")[:1].isdigit()
        if any(re.match(rf"{re.escape(t)}\b", line) if numbered else line.rstrip(".:;") == t for t in others):
            text = text[: match.start()]
            break
    inline = next((m for m in _INLINE_POINT.finditer(text) if int(m.group(1)) >= 2), None)
    if inline is not None and not _OWN_LIST.search(text[: inline.start()]):
        text = text[: inline.start()]
    run_on = next((m for m in _RUN_ON_POINT.finditer(text) if int(m.group(1)) == point.index + 2), None)
    if run_on is not None and not _OWN_LIST.search(text[: run_on.start()]):
        text = text[: run_on.start()].rstrip()
    return text


def _own_sentences(text: str, instructions: list[str], question: str) -> list[str]:
    """The sentences of `text` that neither echo the prompt, talk about the task, nor ask the question again."""
    sentences = [s for s in _SENTENCE.findall(text) if s.strip()]
    # The question, and each sentence or clause of it: a small model pastes back one sentence alone
    # ("I'm going to Iceland in October for a week." of "... What should I pack?") or one clause, its
    # typo mended ("How do I get better at public speaking?" from "how do i get better at public
    # speeking, i get really nervous").
    clauses = (c for sentence in _SENTENCE.findall(question) for c in sentence.split(","))
    parts = [question, *(c for c in clauses if c.strip() and c.strip() != question.strip())]
    asked = [[_AS_ASKED.get(w, w) for w in _WORDS.findall(part.casefold())] for part in parts]
    return [
        s
        for s in sentences
        if not _echoes(s, instructions) and not _META.search(s) and not any(_asks_again(s, a) for a in asked)
    ]


def _unrecited(sentences: list[str], point: _Point, own_list: bool) -> list[str]:
    """`sentences` without a title recited after the content with the number it had in the outline."""
    # A title recited after the content with the number it had in the outline ("... by Friday. The
    # answer is: 2. Set realistic deadlines."); not a list of the text's own ("1. Sleep. 2. Exercise.").
    recited = {_words_of(t) for t in point.titles}
    told: list[str] = []
    for sentence in sentences:
        numbered = bool(told) and not _LETTER.search(told[-1]) and not own_list
        if numbered and _words_of(sentence) in recited:
            told.pop()
            if told and _ANSWER_LABEL.match(told[-1]):
                told.pop()
            continue
        told.append(sentence)
    return told


def _once_each(sentences: list[str]) -> list[str]:
    # A small model's loop ("The answer is: The answer is: ..."): each sentence once.
    seen: set[str] = set()
    unique = []
    for sentence in sentences:
        key = _words_of(sentence)
        # Whole sentences only: "Example: oats. Example: eggs." keeps both labels.
        if key not in seen or sentence.rstrip()[-1:] not in ".!?":
            seen.add(key)
            unique.append(sentence)
    return unique


def _without_filler(sentences: list[str]) -> list[str]:
    kept = list(sentences)
    # "This is a crucial step." says nothing of the point: dropped where something follows it.
    if len(kept) > 1 and _PRAISE.match(kept[0]):
        kept.pop(0)
    # A closing lead-in ("Here are some tips:", "... include: 1.") announces what never came: the stop
    # cut it off, at most after the number of a list it began.
    while kept and (kept[-1].rstrip().endswith(":") or not _LETTER.search(kept[-1])):
        kept.pop()
    return kept


def _paragraph(sentences: list[str]) -> str:
    # One paragraph: a point is one line of the answer ("3. Title: text").
    text = " ".join(line.strip() for line in re.split(r"\r\n|\r|\n", "".join(sentences)) if line.strip())
    # The quote a dropped lead-in opened, or its "that" ('that "Study techniques ...').
    opened = re.match(r'(?:that\s+)?"', text)
    if opened and text.count('"') % 2:
        text = text[opened.end() :]
    # A text that carries on its title's sentence (", in a small town, can ...", "that building new
    # roads is not ...") starts as a sentence of its own.
    # ("that is, ..." is a sentence's own start; "iPhone" and "iOS" keep their case.)
    carried = re.match(r"(?:[,;]\s*|that\s+(?!(?:is|was)\b))(?=[a-z])", text)
    if carried:
        text = text[carried.end() :]
        text = text[0].upper() + text[1:] if re.match(r"[a-z]+\b", text) else text
    return text


def _whole_sentences(text: str) -> str:
    # The sentence the limit stopped ("... including the plague, e") ends the text where a whole one
    # came before it.
    # (Not a list's last items after it: "Key steps:\n- Install Python\n- Run pip install requ".)
    whole = list(_SENTENCE_END.finditer(text))
    if whole and not re.search(r"[.!?][\"'”’)]*\s*$", text):
        tail = text[whole[-1].end() :]
        if not re.search(r"(?:^|\s)(?:[-*•]|\d{1,2}[.)])\s", tail):
            text = text[: whole[-1].end()]
    return text


# The model talking about its task: a sampled last try that does is no better than no text.
_TASK_TALK = re.compile(r"\b(?:point|answer|sentences?|questions?|request|rewrit\w*|version|title|label)\b", re.I)


def says_again(text: str, others: Iterable[str]) -> bool:
    """Whether `text` says word for word what one of `others` (other points' expansions) said (two
    points of one answer expanded alike). Only the same words: a small model opens many distinct
    expansions alike ("To stay healthy, it is important to ...")."""
    words = _words_of(text)
    return any(_words_of(other) == words for other in others)


def talks_about_task(text: str, title: str, question: str) -> bool:
    """Whether `text` speaks of points, answers, sentences or the request, in words that are not its
    `title`'s or the `question`'s ("Be prepared to answer the question" may say "answer")."""
    own = set(_WORDS.findall(f"{title} {question}".casefold()))
    return any(m.group().casefold() not in own for m in _TASK_TALK.finditer(text))
