"""The default router: weighted cues, offline, in microseconds.

Each cue is a regular expression with a weight, pointing to sequential decoding (one step needs
the last: math, code, estimates, puzzles, one-voice writing, playing a character, taking a stance)
or to SoT (an answer made of independent points: ways, tips, factors, differences, what-ifs).
Sequential wins ties and unclear prompts: SoT on a prompt that needs sequential thought hurts the
answer, while sequential decoding on a list prompt only costs time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from .decision import Route

_F = re.IGNORECASE


@dataclass(frozen=True)
class Cue:
    name: str
    pattern: re.Pattern[str]
    weight: float  # > 0 points to sequential, < 0 to SoT


def _cue(name: str, weight: float, *patterns: str) -> Cue:
    return Cue(name, re.compile("|".join(f"(?:{p})" for p in patterns), _F), weight)


_LANGS = r"python|java(?:script)?|typescript|c\+\+|c#|\bc\b|rust|go(?:lang)?|ruby|php|kotlin|swift|sql|bash|shell|html|css|r\b|scala|haskell|perl|lua|matlab"
_WRITING = (
    r"story|stories|poem|poems|haiku|limerick|sonnet|song|lyrics|letter|e-?mail|essay|speech|script|screenplay|"
    r"blog\s*post|review|tweet|post|cover\s+letter|joke|dialogue|conversation|article|announcement|press\s+release|"
    r"proposal|advertisement|ad\b|slogan|tagline|toast|eulogy|obituary|rap|ballad|fable|tale|anecdote|monologue|"
    r"soliloquy|memo|invitation|note|message|bio|biography|description|summary|abstract|paragraph|sentence|riddle|outline|"
    r"headline|title|caption|jingle|pitch|novel|chapter|scene|play"
)

CUES: tuple[Cue, ...] = (
    # --- sequential: mathematics and computation
    _cue(
        "math-expression",
        3.0,
        r"\d\s*[-+*/^×÷=<>]\s*\(?-?\d",
        r"\b[a-z]\s*\^\s*\d",
        r"\b[fgh]\s*\(\s*[a-z0-9]\s*\)",
        r"\b\d+\s*[a-z]\s*[-+=]",
        r"√|∫|∑|π",
        r"\d\s*(?:times|plus|minus|divided by|multiplied by|squared|cubed|percent of|% of|to the power of)\s*\d",
    ),
    _cue(
        "math-words",
        3.0,
        r"\b(solve|simplify|factori[sz]e|differentiate|integrate|derivative|integral|equation|inequality|polynomial|probability|expected value|prove|proof|theorem|lemma|modulo|prime factor|greatest common|least common|matrix|determinant|eigen\w*|logarithm|arithmetic|geometric (?:series|sequence))\b",
    ),
    _cue(
        "calculate",
        2.5,
        r"\b(calculate|compute|evaluate|how much (?:is|are|will|would|does|do)|what is the (?:value|sum|product|area|volume|length|perimeter|distance|speed|average|mean|median|ratio|percentage|total|result|answer)|find the (?:value|sum|area|volume|length|number|perimeter|distance|roots?|solution|probability|derivative|integral|average|mean)|round to|to the nearest)\b",
    ),
    _cue("estimate", 3.0, r"\bhow many\b", r"\b(estimate|approximately how|roughly how|ballpark|order of magnitude)\b"),
    _cue(
        "step-by-step",
        2.5,
        r"\bstep[- ]by[- ]step\b",
        r"\b(?:explain|show|walk (?:me|the reader) through) your (?:reasoning|work|answer|thinking)\b",
        r"\bshow (?:your|the) (?:work|calculations?|math|steps|derivation)\b",
        r"\bhow long (?:would|will|does) it take\b",
        r"\breasoning\b",
    ),
    _cue(
        "puzzle",
        3.0,
        r"\b(riddle|puzzle|brain ?teaser|logic (?:problem|question)|trick question|syllogism)\b",
        r"\bwho (?:is|was) (?:taller|older|shorter|the (?:oldest|youngest|tallest))\b",
        r"\bif .+ then (?:which|who|what|how)\b",
        r"\btrue or false\b",
        r"\b(?:does not|doesn't) belong\b",
        r"\bodd one out\b",
    ),
    # --- sequential: code
    _cue(
        "code-block", 6.0, r"```", r"^\s*(?:def|class|function|import|#include|public static|fn|let|const|var|SELECT)\b"
    ),
    _cue(
        "code-task",
        3.5,
        r"\b(?:write|implement|develop|create|code|build|design)\b[^.?!]{0,40}\b(?:function|program|script|class|method|algorithm|code|query|regex|regular expression|api|module|snippet|unit tests?|test cases?|data structure|linked list|binary (?:search|tree)|stack|queue|sort\w*)\b",
        rf"\b(?:in|using|with)\s+(?:{_LANGS})\b",
        r"\b(debug|refactor|fix (?:this|the|my) (?:code|bug|error|function|program)|stack trace|compile error|runtime error|segfault|time complexity|big[- ]o)\b",
        r"\b(regular expression|regex|sql query|dynamic programming|recursion|recursive)\b",
    ),
    # --- sequential: one-voice writing and transformation
    _cue(
        "compose",
        3.0,
        rf"\b(?:write|compose|draft|create|craft|pen|author|generate|produce|prepare|develop)\b(?:\s+\w+){{0,6}}?\s+(?:{_WRITING})\b",
        r"\bhelp me (?:write|draft|compose)\b",
    ),
    _cue(
        "transform-text",
        3.0,
        r"\b(rewrite|rephrase|paraphrase|translate|summari[sz]e|proofread|edit (?:this|my|the following)|correct (?:the|this|my) grammar|make (?:it|this) (?:shorter|longer|more formal|funnier)|continue (?:the|this) story|in the style of|start every sentence)\b",
    ),
    _cue(
        "structure-doc",
        2.0,
        r"\b(?:structure|format|outline)\s+(?:a|an|the)\s+(?:formal\s+)?(?:letter|podcast|script|email|speech|essay|report|recommendation)\b",
    ),
    _cue(
        "format-constraint",
        2.0,
        r"\b(?:in|with|using) (?:fewer|less|no more|not more) than\b",
        r"\b(?:in|within) (?:one|two|three|four|five|\d+) (?:paragraphs?|sentences?|words|lines|bullet points)\b",
        r"\b(?:answer|respond|reply|output|return|format (?:it|your answer)) (?:only )?(?:in|as|with) (?:json|yaml|csv|xml|a table|markdown|one word|a single)\b",
        r"\b(?:json|yaml|csv) (?:dictionary|object|format|string|array)\b",
        r"\brefrain from\b",
    ),
    _cue(
        "extraction",
        2.5,
        r"\b(?:identify|extract|classify|categori[sz]e|assign|label|tag|parse) (?:the|all|each|these|them|every)\b",
        r"\b(?:given|in|from) (?:the|this|these) (?:following|text|article|passage|paragraph|data|table|categories|sentences?|reviews?|document)\b",
    ),
    _cue("creative", 1.5, r"\b(vivid|imaginative|fictional|poetic|whimsical|creative language|strong imagery)\b"),
    # --- sequential: playing a character, telling one's own story
    _cue(
        "roleplay",
        3.0,
        r"\b(pretend|role-?play|act as|acting as|in character|stay in character)\b",
        r"\b(?:take on|play|assume|adopt) the (?:role|persona|character)\b",
        r"\b(?:imagine|suppose) (?:that )?you(?:'re| are)\b",
        r"^\s*(?:you are|you're) (?:a|an|the)\b",
        r"^\s*as an? [^,]{2,60},",
        r"\bif you were (?:a|an|the)\b",
        r"\bhow would you (?:introduce|describe|declare|explain|greet|respond|react|convince|persuade|tell)\b",
    ),
    _cue(
        "first-person-narrative",
        2.0,
        r"\bdescribe (?:your|the) (?:emotions|feelings|daily life|experience|journey|first day|view)\b",
        r"\bwhat would you say to\b",
        r"\byour (?:origin story|signature dish|crew|soliloquy)\b",
    ),
    # --- sequential: taking one stance, one short fact
    _cue(
        "stance",
        2.0,
        r"\b(?:do|should|would|could|is|are|can) [^?]{3,120}\bor (?:should|would|is|are|do|does|can|must)\b",
        r"\bis it (?:more|better|worse|ethical|moral|right|wrong|possible)\b",
        r"\b(moral obligation|should we|do you (?:think|believe|agree))\b",
    ),
    _cue(
        "causal-chain",
        1.5,
        r"\bhow does [^?]{2,60} work\b",
        r"\bhow do [^?]{2,60} work\b",
        r"\bexplain the process of\b",
        r"\bwhat happens (?:when|if|after)\b",
        r"\bhow (?:does|do) [^?]{2,60} (?:lead to|cause|result in|contribute to)\b",
    ),
    _cue(
        "short-fact",
        1.5,
        r"^\s*(?:who|when|where)\b",
        r"^\s*which (?:year|country|city|person|one|planet|element|language|team)\b",
        r"^\s*in (?:what|which) year\b",
        r"^\s*what(?:'s| is) the (?:capital|name|date|year|population|height|meaning|definition|boiling point|melting point|freezing point|speed|distance|weight|mass|temperature|size|length|age|price|cost|formula|symbol|atomic number|square root|value)\b",
        r"\bin (?:fahrenheit|celsius|kelvin|kilometers|miles|meters|feet|kilograms|pounds|dollars|euros)\b",
        r"^\s*(?:what|who) (?:is|was|are|were) [^?]{1,40}\?\s*$",
    ),
    _cue(
        "multilingual-sequential",
        3.0,
        r"\b(écris|écrivez|rédige[zr]?|escribe|escriba|redacta|schreibe?|schreiben sie|verfasse|scrivi|calcule[rz]?|calcula|berechne|calcola|résous|resuelve|löse|risolvi|combien|cuántos|cuántas|wie viele|quanti)\b",
        r"\b(poème|poema|gedicht|poesia|histoire|cuento|geschichte|lettre|carta|brief|lettera)\b",
        r"写|计算|解方程|多少|詩|書いて|計算",
    ),
    # --- SoT: answers made of independent points
    _cue(
        "list-request",
        -3.0,
        r"\b(?:what|which) (?:are|were) (?:some|the|a few|several|main|key|most|common|major|primary|best)?\s*(?:\w+\s+){0,4}?(?:ways|tips|strategies|steps|factors|benefits|advantages|disadvantages|pros|cons|drawbacks|reasons|causes|effects|consequences|implications|challenges|risks|differences|similarities|features|characteristics|examples|types|kinds|methods|techniques|practices|habits|ideas|options|alternatives|principles|elements|components|signs|symptoms|clues|skills|qualities|lessons|uses|applications|trends|issues|problems|barriers|opportunities|considerations|criteria|arguments|mistakes|myths|impacts|things|aspects|roles|functions|responsibilities|needs|requirements|steps|stages|parts|areas|sources|threats|dangers|limitations|properties|traits|rules|guidelines)\b",
    ),
    _cue(
        "list-nouns",
        -1.5,
        r"\b(ways|tips|strategies|factors|benefits|advantages|disadvantages|pros and cons|reasons|implications|challenges|differences|similarities|considerations|applications|clues|consequences|best practices|key points|examples|ideas)\b",
    ),
    _cue(
        "advice",
        -2.5,
        r"^\s*how (?:can|could|should|do|might) (?:i|we|you|one|people|someone|a person|governments?|companies|businesses|schools|teachers|parents|individuals|organi[sz]ations|cities|countries|society|leaders|managers|students)\b(?! (?:solve|calculate|compute|write|implement|code|prove|find the))",
    ),
    _cue(
        "counterfactual",
        -3.5,
        r"^\s*what (?:if|would happen if|(?:might|would) have happened if)\b",
        r"\bhad (?:not |never )?(?:been|happened|occurred|invented|discovered|formed|collapsed|constructed|succeeded|won|lost|focused)\b",
    ),
    _cue(
        "why-might",
        -2.5,
        r"^\s*why (?:might|would) (?!you\b)",
        r"^\s*why (?:do|does|are|is) (?:someone|some people|people|many|a person|companies|individuals)\b",
    ),
    _cue(
        "advice-verb",
        -2.5,
        r"^\s*how (?:can|could|should|might|do|does) (?:a |an |the |our |my |your )?[\w-]+(?: [\w-]+)? (?:improve|reduce|increase|become|make|build|develop|prevent|avoid|protect|manage|encourage|support|promote|prepare|approach|handle|deal|cope|overcome|ensure|get|stay|keep|boost|save|choose|find|learn|start|grow|attract|retain|create|foster|balance|adapt|respond|address|tackle|lower|raise|strengthen|enhance|maintain|motivate)\b(?! (?:this|the following) (?:code|equation))",
    ),
    _cue("literal-list", 3.0, r"\[\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+\s*\]"),
    _cue(
        "open-question",
        -1.2,
        r"^\s*(?:what|how|why|which|in what ways?|describe|explain|discuss|tell me about|can you (?:explain|describe|tell)|could you (?:explain|describe))\b(?=(?:\W+\w+){4,})",
    ),
    _cue(
        "list-words",
        -2.0,
        r"^\s*(?:please )?list\b",
        r"\blist (?:the|some|all|a few|several|\d+|of)\b(?! \[)",
        r"\b(enumerate|name (?:some|a few|several|\d+)|give (?:me )?(?:some|a few|several|\d+) (?:examples|ideas|tips|reasons|ways)|suggest (?:some|a few|ways)|brainstorm|outline the)\b",
        r"\b(?:top|best) \d+\b",
    ),
    _cue(
        "compare",
        -2.0,
        r"\b(compare|comparison|contrast|differences? between|similarities between|versus|vs\.?|pros and cons)\b",
    ),
    _cue(
        "overview",
        -1.5,
        r"\b(explain the basics|overview of|introduction to|key (?:aspects|concepts|points|features)|main (?:aspects|ideas|points|types|features)|discuss (?:its|the|their)? ?(?:potential )?(?:applications|implications|impact|effects|benefits|risks))\b",
        r"\bdescribe a scenario\b",
        r"\bwhat factors\b",
        r"\bhow (?:do|does|can|might) [^?]{3,80} (?:influence|affect|impact|shape)\b",
    ),
    _cue(
        "multilingual-sot",
        -3.0,
        r"\b(quels sont|quelles sont|avantages|inconvénients|conseils|façons|moyens|cuáles son|ventajas|desventajas|consejos|maneras|formas de|welche|vorteile|nachteile|tipps|möglichkeiten|quali sono|vantaggi|svantaggi|consigli|modi per)\b",
        r"有哪些|优点|缺点|建议|方法|メリット|デメリット|方法は",
    ),
)

THRESHOLD = 0.0  # score >= THRESHOLD: sequential (ties and no cue at all go sequential)


def route(question: str) -> Route:
    """Decide between SoT and sequential decoding for `question`, offline, in microseconds."""
    text = question[:4000]
    matched = [cue for cue in CUES if cue.pattern.search(text)]
    score = sum(cue.weight for cue in matched)
    if not text.strip():
        return Route("sequential", 1.0, "empty prompt: nothing to outline", ())
    mode: Literal["sot", "sequential"] = "sequential" if score >= THRESHOLD else "sot"
    confidence = round(1 / (1 + math.exp(-abs(score - THRESHOLD) / 1.5)), 3)
    names = tuple(cue.name for cue in matched)
    if not matched:
        reason = "no sign of an answer made of independent points: sequential"
    else:
        leaning = [
            c.name for c in sorted(matched, key=lambda c: -abs(c.weight)) if (c.weight > 0) == (mode == "sequential")
        ]
        shown = ", ".join(leaning[:3]) or ", ".join(names[:3])
        what = "needs sequential thought" if mode == "sequential" else "an answer of independent points"
        reason = f"{what} ({shown}; score {score:+.1f})"
    return Route(mode, confidence, reason, names)
