"""What the tool itself put in never reaches the answer: echoed prompts, delimiters, empty lead-ins."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import pytest
from _fakes import Reply, SeenRequest

import sot
from sot.backends.small_model._tidy import tidy_expansion
from sot.templates import EXPAND_BRIEF, Prompts

POINTS = ["Secure and robust", "Enhanced sleep quality", "Clear naming"]
INSTRUCTIONS = Prompts().expansion_instructions(EXPAND_BRIEF)

# Seen in real answers of the embedded model (issue 16), and what a reader should get instead.
CASES = [
    ('The answer to your question is: "Start with its content, not with a title, a label or the question."', 0, ""),
    ("Write point 1 only, in one to three short sentences.", 0, ""),
    # Led by "2. Title:" (the embedded model's prompt), it repeats the lead, then writes on into the next points.
    (
        "2. Enhanced sleep quality: You wake up rested.\n3. Clear naming: Names say what things do.",
        1,
        "You wake up rested.",
    ),
    ("This is a crucial tip. Rest eight hours a night.", 1, "Rest eight hours a night."),
    ("This is a crucial tip for sleep.", 1, "This is a crucial tip for sleep."),  # all there is
    ("Clear naming", 1, ""),  # another point's title, recited instead of this one written
    ("1. Secure and robust", 1, ""),
    ("Sleep well.\n* Clear naming\n* More", 1, "Sleep well."),  # the outline recited as a list
    # A list of the point's own, even one whose item starts like another point, stays.
    (
        "Eat well:\n- Vegetables\n- Clear naming-style labels\n- Fish",
        1,
        "Eat well: - Vegetables - Clear naming-style labels - Fish",
    ),
    ("It costs $3.50. Tax is $0.50.", 1, "It costs $3.50. Tax is $0.50."),
    ("Read the [official docs](https://example.com/docs).", 1, "Read the [official docs](https://example.com/docs)."),
    (
        "It is a good idea to eat vegetables daily. Aim for five portions.",
        1,
        "It is a good idea to eat vegetables daily. Aim for five portions.",
    ),
    ("Clear naming helps sleep quality too.", 1, "Clear naming helps sleep quality too."),
    ("The answer is: Rest well. The answer is: Rest well. The answer is: Rest well.", 1, "Rest well."),
    (
        "1. Secure and robust:\n- Validate input\n- Log errors\n2. Enhanced sleep quality: Rest.",
        0,
        "Validate input - Log errors",
    ),
    ("Point: [Secure and robust: A good API validates every input.]", 0, "A good API validates every input."),
    ("Point 1: [Secure and robust] A good API validates input.", 0, "A good API validates input."),
    (
        "You wake up rested: [Enhanced sleep quality] and [Enhanced sleep quality] follow.",
        1,
        "You wake up rested: Enhanced sleep quality and Enhanced sleep quality follow.",
    ),
    ("Sure, here is an example of a formal email:", 2, ""),
    ("Names say what things do. Here are some examples:", 2, "Names say what things do."),
    ("3. **Clear naming**: Names say what things do.", 2, "Names say what things do."),
    ("Clear naming - names say what things do.", 2, "names say what things do."),
    ("Answer: Names say what things do.", 2, "Names say what things do."),
    ("Know the mission.\nQuestion: How can I prepare for a job interview?", 2, "Know the mission."),
    ("Water less often. [This is a helpful tip about keeping plants alive in a", 2, "Water less often."),
    # Seen after the first fixes: the model paraphrasing its instructions or describing the answer.
    (
        "The first and third paragraphs in your answer, one to three sentences, should not contain any extra"
        " information. Plan the week on Sunday.",
        2,
        "Plan the week on Sunday.",
    ),
    ("Your question brings together the main points of the answer.", 1, ""),
    ('The answer is: "Scalability keeps the API fast under load."', 0, "Scalability keeps the API fast under load."),
    ("The answer is 42 requests per second at most.", 0, "The answer is 42 requests per second at most."),
    # Content that only looks similar stays as it is.
    ("Short sentences make an answer easy to read.", 2, "Short sentences make an answer easy to read."),
    ("Clear naming helps readers.", 2, "Clear naming helps readers."),
    ("Use arrays like [1, 2] in code.", 2, "Use arrays like [1, 2] in code."),
    ("Apps help. [Digital tools] can assist.", 2, "Apps help. Digital tools can assist."),
    ("See the notes [3] and x[i] in the loop.", 2, "See the notes [3] and x[i] in the loop."),
    ("Sleep 8 hours: it matters.", 1, "Sleep 8 hours: it matters."),
    # Seen in outside check F: other titles recited within the line, and a phrase looping to the cap.
    (
        "Know the mission and values: 3. Prepare for the interview: 4. Practice your answers: 5. Prepare for the",
        0,
        "",
    ),
    ("Know the mission. It matters: 3. Prepare for the interview: 4. Practice", 0, "Know the mission."),
    ("Three steps: 1. Mix: stir well. 2. Bake: one hour.", 0, "Three steps: 1. Mix: stir well. 2. Bake: one hour."),
    # Outside check H: the title written again, and nothing else.
    ("Enhanced sleep quality.", 1, ""),
    ("Enhanced sleep quality helps.", 1, "Enhanced sleep quality helps."),
    # Outside check J: the question pasted back, labels and talk about "the answer", a number alone.
    ("How do I ask my boss for a raise without it being awkward?", 2, ""),
    ("Ask for a raise in person. Bring numbers.", 2, "Ask for a raise in person. Bring numbers."),
    (
        "The question: How do I ask my boss for a raise without it being awkward? The answer: Plan ahead.",
        2,
        "Plan ahead.",
    ),
    ("This is a classic answer that requires a bit of creative thinking.", 0, ""),
    ("The answer is a simple and concise explanation of how to ask.", 0, ""),
    ("4.", 2, ""),
    # Outside check L: the question quoted back as "the answer to the question".
    ('The answer to the question "How can I cut waste" is to use straws. Straws last.', 2, "Straws last."),
    # README's first command from a fresh clone: "a good answer to the question".
    (
        "Not a question, but a good answer to the question of planning. Block time daily. Calendars help.",
        2,
        "Block time daily. Calendars help.",
    ),
    # Outside check K: a lead-in left with the first number of its list.
    ("Herbs help. Products that help include: 1.", 2, "Herbs help."),
    (
        "Sleep lowers it. 2. Stress can be reduced by meditation. 3.",
        2,
        "Sleep lowers it. 2. Stress can be reduced by meditation.",
    ),
    # Outside check O: the question sent back in the second person.
    (
        "How do you ask your boss for a raise without it being awkward. Ask in person.",
        0,
        "Ask in person.",
    ),
    # Outside check Q: the point's own number given as its answer.
    ("The answer is 2.", 1, ""),
    ("Sleep is the answer. The answer is 2. Rest more.", 1, "Sleep is the answer. Rest more."),
    # Outside check S: talk about the point or the prompt's own words, and the quote it opened.
    (
        "Here's a one-to-three-sentence version of the point: \"Walking daily lifts your mood.",
        0,
        "Walking daily lifts your mood.",
    ),
    ("The answer is not a label or a question.", 0, ""),
    ('Referring to an answer, the point is: "Sleep lowers stress.', 1, "Sleep lowers stress."),
    # Outside check T: the model's "previous response", and a quote opened after "that".
    ('As I mentioned in my previous response, "You can ask your boss for a raise.', 0, ""),
    ("As I mentioned in my previous response, ask in person. Then wait.", 0, "Then wait."),
    (
        'that "Study techniques that work well are the ones you repeat.',
        2,
        "Study techniques that work well are the ones you repeat.",
    ),
    # Outside check V: the question pasted back with its typo mended, or after "The question is:", and
    # "The answer is" alone.
    ("How do I ask my boss for a rise without it being awkward. Ask in person.", 0, "Ask in person."),
    ("The question is: How do I ask my boss for a raise without it being awkward? Ask in person.", 0, "Ask in person."),
    ("The answer is", 1, ""),
    ("The next question.", 1, ""),  # README's first command, from a fresh clone at 62c6670
    ("not available.", 1, ""),  # outside check W
    # Outside check AB: talk about what the question asks.
    ("The question asks about the causes of earthquakes, which is a topic of debate. Plates move.", 1, "Plates move."),
    ("Your question asks about a lot. Plates move.", 1, "Plates move."),
    # ... but not a question's demand, a name or a rephrasing offered (a review).
    (
        "The question asks you to compare two texts, so plan both sides.",
        1,
        "The question asks you to compare two texts, so plan both sides.",
    ),
    ("Small models such as SmolLM and Phi run on phones.", 1, "Small models such as SmolLM and Phi run on phones."),
    (
        "ChatGPT is a helpful AI assistant that drafts emails.",
        1,
        "ChatGPT is a helpful AI assistant that drafts emails.",
    ),
    ("Say I'll rephrase what you said, then listen.", 1, "Say I'll rephrase what you said, then listen."),
    ("The question of cost matters most.", 1, "The question of cost matters most."),
    # Outside check AG: the chat template's assistant speaking; the words in real content stay.
    ("A helpful AI assistant, I am here to help. Use short sentences.", 1, "Use short sentences."),
    (
        "ChatGPT is a helpful AI assistant, and it drafts emails.",
        1,
        "ChatGPT is a helpful AI assistant, and it drafts emails.",
    ),
    # Outside check AF: talk about the question and its answer.
    ("A crucial question that requires a thoughtful answer.", 1, ""),
    # Outside check AE: a placeholder answer.
    ("A: Your Answer", 1, ""),
    ("Write it in your answer. Keep it short.", 1, "Write it in your answer. Keep it short."),
    # Outside checks AN and AO: a solution to the problem, talked of instead of given.
    ("The answer is to find a solution to the problem of hiccups.", 1, ""),
    ("The answer is not a solution to the problem of keeping your bike from getting stolen. Lock it.", 1, "Lock it."),
    # Outside check AD: talk about the answer.
    ("The answer is a bit unconventional, but it is a great example. Storms rotate.", 1, "Storms rotate."),
    # Outside check AC: the model's name from its chat template, talk of rewriting the title.
    ("A helpful AI assistant, SmolLM, trained by Hugging Face, can help you answer this question.", 1, ""),
    (
        'Instead of "Remove these pests from your kitchen," I\'ll write: "Use a trap to get rid of fruit flies.',
        1,
        "Use a trap to get rid of fruit flies.",
    ),
    # Outside check Z: a text that carries on its title's sentence.
    ("that building new roads is not the answer.", 1, "Building new roads is not the answer."),
    (", in a small town, it works.", 1, "In a small town, it works."),
    ("That is why it works.", 1, "That is why it works."),
    ("that is, pick what you will use.", 1, "that is, pick what you will use."),
    (", iPhone users get updates first.", 1, "iPhone users get updates first."),
    ("; rest, then go on.", 1, "Rest, then go on."),
    # README's first answer, later: the model ran on into points of its own, numbered from the next.
    (
        "Clear goals help you focus. 2. Prioritize tasks effectively: Set goals. 3. Use tools: Utilize tools.",
        0,
        "Clear goals help you focus.",
    ),
    ("Steps help. 1. Mix: stir well. 2. Bake: at 200C.", 0, "Steps help. 1. Mix: stir well. 2. Bake: at 200C."),
    ("Rest often. 3. Walk: daily.", 0, "Rest often. 3. Walk: daily."),
    # README's first answer: the point's own title recited after a label and its number.
    ("Sleep lowers stress. The answer is: 2. Enhanced sleep quality.", 1, "Sleep lowers stress."),
    ("Names help. 3. Clear naming. Names last.", 2, "Names help. Names last."),
]

QUESTION = "How do I ask my boss for a raise without it being awkward?"

# Loops, in a text stopped by its token limit (outside checks F and G); each is cut at its last whole clause.
LOOPS = [
    (
        "Rome fell to outside factors, including external forces such as the Huns, which included external"
        " forces such as external forces such as external forces such",
        0,
        "Rome fell to outside factors, including external forces such as the Huns.",
    ),
    (
        "Rome was old. It fell to external forces such as the Huns and external forces such as the Goths and"
        " external forces such as",
        0,
        "Rome was old.",
    ),
    # Outside check AC: the sentence the token limit stopped, after a whole one.
    ("Rome fell for many reasons. Disease spread, including the plague, e", 0, "Rome fell for many reasons."),
    # ... not at an abbreviation or a number, and not before a list's last items (a review).
    (
        "Visit St. Peter's Basilica in Rome, which is the largest church in the wor",
        0,
        "Visit St. Peter's Basilica in Rome, which is the largest church in the wor",
    ),
    (
        "Check your BMI. A healthy BMI is between 18 and 25. Obesity starts at about 30 and ri",
        0,
        "Check your BMI. A healthy BMI is between 18 and 25.",
    ),
    (
        "Python is easy to learn. Key steps:\n- Install Python\n- Run pip install requ",
        0,
        "Python is easy to learn. Key steps: - Install Python - Run pip install requ",
    ),
    # Outside check G: a title-like lead-in looping to the cap leaves nothing.
    ("The answer is notonly: The answer is notonly: The answer is notonly: The answer is not", 0, ""),
    # Outside check AA: a numbered list looping on one item, cut after its last item before the loop.
    (
        "Battery life, 2. Processor, 3. Camera, 4. Storage, 5. Processor, 6. Camera, 7. Processor, 8. Camera,"
        " 9. Camera, 10. Camera, 11. Camera, 12. Camera, 13. Camera, 14",
        0,
        "Battery life, 2. Processor, 3. Camera, 4. Storage, 5. Processor, 6. Camera, 7. Processor, 8. Camera.",
    ),
]


@pytest.mark.parametrize(("raw", "index", "clean"), LOOPS)
def test_a_loop_that_ran_into_the_token_limit_ends_at_its_last_clause(raw: str, index: int, clean: str) -> None:
    assert tidy_expansion(raw, POINTS[index], index, POINTS, INSTRUCTIONS, QUESTION, capped=True) == clean


# Seen in a review: sentences that look like those above and are content, in texts that finished.
CONTENT = [
    "Split your pay. Put 50% of your income toward needs, 30% of your income toward wants, and 20% of your"
    " income toward savings.",
    "Prepare a short answer to the classic questions, such as why you want the role.",
    "Regular exercise is the answer to many common health problems.",
    "It is worth learning to code.",
    "Plan your day in blocks: deep work until 11. Afternoon: meetings and email.",
    # A review: another point's title said as a sentence of this one, or in a list of its own.
    "The secret is simple: clear naming.",
    "Build three habits: 1. Clear naming. 2. Enhanced sleep quality. 3. Diet. Each supports the others.",
    "Ask your doctor. The answer is: yes.",
    "Open with a one-to-three-sentence summary of the project. Reviewers read it first.",
    "As I mentioned earlier, hydration matters: drink eight glasses a day.",
    "The point is: say less.",
    "The answer is a solution to the problem of scale: shard the table.",
]


@pytest.mark.parametrize("text", CONTENT)
def test_content_that_only_looks_like_an_echo_stays(text: str) -> None:
    question = "Is it worth learning to code?"
    assert tidy_expansion(text, POINTS[2], 2, POINTS, INSTRUCTIONS, question) == text


@pytest.mark.parametrize(("raw", "index", "clean"), CASES)
def test_tidy_expansion_removes_what_the_tool_put_in(raw: str, index: int, clean: str) -> None:
    assert tidy_expansion(raw, POINTS[index], index, POINTS, INSTRUCTIONS, QUESTION) == clean


ICELAND = "I'm going to Iceland in October for a week. What should I pack and plan for?"
SPEAKING = "how do i get better at public speeking, i get really nervous"


@pytest.mark.parametrize(
    ("question", "raw", "clean"),
    [
        (ICELAND, "I'm going to Iceland in October for a week.", ""),  # outside check Z
        (ICELAND, "What should I pack and plan for? Bring layers.", "Bring layers."),
        (ICELAND, "Iceland in October is cold, so pack layers.", "Iceland in October is cold, so pack layers."),
        # Outside check AA: a clause of the question, its typo mended.
        (SPEAKING, "How do I get better at public speaking? Practice daily.", "Practice daily."),
        (SPEAKING, "I get really nervous.", ""),
        (SPEAKING, "Nervous speakers get better with practice.", "Nervous speakers get better with practice."),
    ],
)
def test_a_sentence_or_clause_of_the_question_pasted_back_is_dropped(question: str, raw: str, clean: str) -> None:
    assert tidy_expansion(raw, POINTS[0], 0, POINTS, INSTRUCTIONS, question) == clean


def test_instructions_are_the_templates_own_sentences() -> None:
    assert INSTRUCTIONS and all("\x00" not in s for s in INSTRUCTIONS)
    assert any("in one to three short sentences" in s for s in INSTRUCTIONS)


@pytest.mark.anyio
async def test_cleaned_once_every_view_shows_the_same_text(fake) -> None:
    replies = {
        1: "Point 1: [Secure and robust] Validate every input.",
        2: 'The answer to your question is: "Start with its content, not with a title, a label or the question."',
        3: "Sure, here is how to name things:",
    }

    def handler(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            return Reply("".join(f"{i}. {p}\n" for i, p in enumerate(POINTS, 1)))
        return Reply(replies.get(request.point or 0, ""))  # asked again unled: no lead, no number

    server = fake(handler)
    shown: list[str] = []
    # Two-phase: a pipelined expansion lists only the points known when it is sent, so whether the prompts
    # share their prefix would depend on how the skeleton's stream happened to be chunked.
    client = sot.Client(base_url=server.url, model="m", mode="sot", pipeline=False, profile="small")
    async with client, client.stream("What makes a good API?") as answer_events:
        async for event in answer_events:
            if isinstance(event, sot.events.AnswerText):
                shown.append(event.text)
            elif isinstance(event, sot.events.AnswerDone):
                answer = event.answer
    assert answer.text == "".join(shown)
    assert answer.text.splitlines() == [
        "1. Secure and robust: Validate every input.",
        "2. Enhanced sleep quality",
        "3. Clear naming",
    ]
    assert answer.expansions == ["Validate every input.", "", ""]  # as --json shows them: nothing is no text
