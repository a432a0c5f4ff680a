import pytest

from sot._shape import SkeletonShape
from sot.backends.small_model._outline import SkeletonParser, parse_skeleton

CASES = [
    ("1. Plan ahead\n2. Sleep well\n3. Eat right", ["Plan ahead", "Sleep well", "Eat right"]),
    ("1) Alpha\r\n2) Beta\r\n3) Gamma\r\n", ["Alpha", "Beta", "Gamma"]),
    ("Step 1. Plan\nStep 2: Do\nStep 3 - Check", ["Plan", "Do", "Check"]),
    ("**1.** Plan\n**2.** Do\n**3. Check**", ["Plan", "Do", "Check"]),
    (
        "1. **Prioritize**: use lists\n2. **Delegate work**\n3. *Rest*",
        ["Prioritize", "Delegate work", "Rest"],
    ),
    (
        "Sure! Here is a skeleton for your question:\n\n1. Set goals.\n2. Track time.\n3. Review weekly.\n\n"
        "I hope this helps! Let me know if you need more.",
        ["Set goals", "Track time", "Review weekly"],
    ),
    (
        "1. Exercise\n   - cardio\n   - weights\n2. Diet\n   a) protein\n   1. nested number\n3. Sleep",
        ["Exercise", "Diet", "Sleep"],
    ),
    ("1. Save 2.5 hours 2. Sleep 8 hours 3. Eat at 7.30", ["Save 2.5 hours", "Sleep 8 hours", "Eat at 7.30"]),
    ("Skeleton: 1. A thing 2. Another thing 3. Third", ["A thing", "Another thing", "Third"]),
    ("1. Set clear goals.2. Manage time\n3. Rest", ["Set clear goals", "Manage time", "Rest"]),
    ("1. Plan;\n2. Do,\n3. Check?\n4. Go!", ["Plan", "Do", "Check?", "Go!"]),
    ("1. Costs went up 2.5. Then\n2. Next", ["Costs went up 2.5", "Next"]),
    ("1. One\n2. Two\n3. Three\n4.", ["One", "Two", "Three"]),
    ("1. One\n2. Two\n3.   \n", ["One", "Two"]),
    ("- one\n- two\n  - sub\n- three", ["one", "two", "three"]),
    ("### 1. Heading one\n### 2. Heading two", ["Heading one", "Heading two"]),
    ("1. Alpha\n2. Beta\nIn summary:\n1. Chi\n2. Psi", ["Alpha", "Beta"]),
    ("1. Same thing\n2. same thing.\n3. Other", ["Same thing", "Other"]),
    ("(1) Left\n(2) Right", ["Left", "Right"]),
    ("1.Plan\n2.Do", ["Plan", "Do"]),
    ("1.5 hours of sleep is too little.\n2.5 is more", []),
    ("Here are some ideas about 2024 plans and 3 goals.", []),
    ("", []),
    # From an outside check of ten fresh questions (issue 16): near-repeats, runs of letters, and
    # sentences that a word limit used to cut inside a phrase ("... was primarily caused").
    (
        "1. It promotes cultural awareness\n2. It enhances cultural awareness\n3. Liquorization\n4. Liquorizing",
        ["It promotes cultural awareness", "It enhances cultural awareness", "Liquorization"],
    ),
    ("1. Plan your budget\n2. B\n3. D, E, F, G, H, I, J, K\n4. Shop smarter", ["Plan your budget", "Shop smarter"]),
    (
        "1. Practice with language apps and tutors\n2. Language apps\n3. Use coupons\n4. Use cashback",
        ["Practice with language apps and tutors", "Use coupons", "Use cashback"],
    ),
    (
        "1. The most significant advantage of electric cars is their environmental impact.\n"
        "2. The Roman Empire's collapse was primarily caused by external factors, including:",
        [
            "The most significant advantage of electric cars is their environmental impact",
            "The Roman Empire's collapse was primarily caused by external factors",
        ],
    ),
    (
        "1. Luxury vs. budget\n2. Phase 1: plan\n3. Phase 2: build\n4. U.S. policy",
        ["Luxury vs. budget", "Phase 1", "Phase 2", "U.S. policy"],
    ),
    (  # the abbreviations an expansion's sentences know (backends/small_model/_abbreviations.py); "No." only before a number
        "1. Hike Mt. Fuji at dawn\n2. Visit St. Mark's Square early\n3. Learn to Say No. It saves time\n"
        "4. Go to bed by 10 p.m. on weeknights\n5. Nature VS. nurture\n6. Rank No. 5 first\n7. Check the tides! They turn fast",
        [
            "Hike Mt. Fuji at dawn",
            "Visit St. Mark's Square early",
            "Learn to Say No",
            "Go to bed by 10 p.m. on weeknights",
            "Nature VS. nurture",
            "Rank No. 5 first",
            "Check the tides",
        ],
    ),
    (
        "1. Bring a camera for security, 9\n2. Dress well, 10: more\n3. Plan ahead",
        ["Bring a camera for security", "Dress well", "Plan ahead"],
    ),
    (  # a score the model gave its own line (outside check X's question, sampled); "etc." keeps its point;
        # a score that is the point stays (a review: how rugby is scored)
        "1. Trees shed their leaves. (2 points)\n2. Temperature, humidity, light, etc. (3 points)\n3. Try (5 points)\n",
        ["Trees shed their leaves", "Temperature, humidity, light, etc.", "Try (5 points)"],
    ),
    (  # an example begun and never given (outside check Z); one given stays
        "1. Building more roads, e.g.\n2. Reduce waste, i.e.\n3. Plant trees (e.g.\n4. Carpool, e.g., with coworkers",
        ["Building more roads", "Reduce waste", "Plant trees", "Carpool, e.g., with coworkers"],
    ),
    (
        "1. Engage\n2. The most\n3. If you find someone\n4. It’\n5. Renting\n6. Keep them in a sunny spot\n"
        '7. Set aside\n8. It is important\n9. Take regular breaks to re:\n10. Plan a "study\n'
        "11. The most obvious way\n12. The fall of the Western Roman Empire was primarily caused\n"
        "13. The 2\n14. Book a table at the restaurant’\n15. Use earplugs or use\n16. Pick and choose\n17. Better clarity and focus"
        "\n18. Learn to give and take",
        [
            "If you find someone",
            "Renting",
            "Keep them in a sunny spot",
            "Set aside",
            "Take regular breaks",
            "The fall of the Western Roman Empire",
            "Book a table",
            "Pick and choose",
            "Better clarity and focus",
            "Learn to give and take",
        ],
    ),
    # Outside check AB: a title ends between clauses, not inside a list or a pair ("numbers, letters",
    # "reduce neck"), never before "of", and not on "due"; a role with no "in", "To the ..." and a step
    # never named are no titles.
    (
        "1. Use strong passwords that include numbers, letters, and symbols.\n"
        "2. Use ergonomically designed computers to reduce neck and shoulder pain\n"
        "3. The fall of the Roman Empire was primarily due to economic mismanagement and corruption that fueled.\n"
        "4. Inactivated vaccines are used to prevent diseases caused by viruses, such as COVID-19 and rabies.\n"
        "5. Some areas are more prone to earthquakes due\n6. Know when bills are due\n"
        "7. To the rise of international trade\n8. The second step\n9. Set goals and track them every week with a journal",
        [
            "Use strong passwords that include numbers, letters, and symbols",
            "Use ergonomically designed computers to reduce neck and shoulder pain",
            "The fall of the Roman Empire was primarily due to economic mismanagement",
            "Inactivated vaccines are used to prevent diseases caused by viruses",
            "Some areas are more prone to earthquakes",
            "Know when bills are due",
            "Set goals and track them every week with a journal",
        ],
    ),
    # Outside check AC: no cut after a word that needs what follows; what a colon left of "e.g.:".
    (
        "1. The Ming dynasty's campaigns against the Mongols led to a great loss of life and a re:\n"
        "2. The Ming dynasty's failure to adapt to changing global circumstances, e:\n"
        "3. Negotiate in a way that is fair and transparent, with clear terms and conditions.\n4. Vitamin E",
        [
            "The Ming dynasty's campaigns against the Mongols led to a great loss of life",
            "The Ming dynasty's failure to adapt to changing global circumstances",
            "Negotiate in a way that is fair and transparent",
            "Vitamin E",
        ],
    ),
    # Outside check AD: no cut after "by" and a verb; a setting, an aim or "Every day" alone is no title;
    # an adjective with no noun after "than".
    (
        "1. Use language processing to improve memory recall by analyzing the way you speak and listen, which\n"
        "2. In a world of AI\n3. To avoid confusion\n4. Every day\n5. It is more convenient than traditional\n"
        "6. To-do lists\n7. In a world of AI, people forget names\n8. To help your kids learn to code at home",
        [
            "Use language processing to improve memory recall",
            "It is more convenient",
            "To-do lists",
            "In a world of AI, people forget names",
            "To help your kids learn to code at home",
        ],
    ),
    # Outside check AE: no cut after "ability" or "begins"; a relative clause ending "that occurs", "make it
    # easy", "a software" and what they leave ("Another way") are no titles.
    (
        "1. Supports immune system health by boosting the immune system's ability to fight off infections and other\n"
        "2. The process of volcanic eruption begins with the Earth's crust being melted by magma deep below the surface\n"
        "3. Another way is to use a software\n4. Coral bleaching is a devastating consequence of climate change that occurs\n"
        "5. Paint in a way that will make it easy\n6. Know when it starts\n7. Use a software tool",
        [
            "Supports immune system health",
            "The process of volcanic eruption begins with the Earth's crust being melted",
            "Coral bleaching is a devastating consequence of climate change",
            "Know when it starts",
            "Use a software tool",
        ],
    ),
    # Outside check AF: a subject or a manner with no verb, half a compound, an adverb whose verb never came;
    # a subject with its verb, a heading "with" one thing and "Pre- and post-workout" stay.
    (
        "1. The best\n2. Begin with a beginner's boot and gradually\n3. Offer a non-\n4. The only way to get rid of ants\n"
        "5. The most important thing you can do\n6. With dedication and consistent practice\n"
        "7. The best way to save is to budget\n8. Traveling with kids\n9. Pre- and post-workout meals",
        [
            "Begin with a beginner's boot",
            "The best way to save is to budget",
            "Traveling with kids",
            "Pre- and post-workout meals",
        ],
    ),
    # Outside check AG: "when" and a verb with nothing after, the prompt's words, "compared" with nothing to.
    (
        '1. When buying in a foreign country\n2. For example, "1-3-6" Here is the outline of a numbered list of 3\n'
        "3. Mechanical keyboards are louder and pricier when compared\n4. When to stop\n5. When traveling, pack light",
        ["Mechanical keyboards are louder and pricier", "When to stop", "When traveling, pack light"],
    ),
    # Outside check AH: a passive with no subject, "the" or "a" and an adjective with no noun, an ellipsis
    # run into more words; "Be prepared", "Focus on the positive" and "Embrace the new" stay.
    (
        "1. Be used for oral hygiene only\n2. Removed from the mouth, to prevent infection\n3. Ditch the old\n"
        "4. Use a high-tech\n5. Don't waste more water...otherwise, just how many do\n6. Be prepared for emergencies\n"
        "7. Focus on the positive\n8. Embrace the new\n9. Hire a full-time",
        ["Don't waste more water", "Be prepared for emergencies", "Focus on the positive", "Embrace the new"],
    ),
    # Outside check AK: a placeholder counted on, a step counted and never named, "The answer", an
    # adjective whose noun never came; "Do the most good", "Take vitamin b12" and "Next steps" stay.
    (
        "1. Use a3\n2. Second step\n3. The answer\n"
        "4. Enhanced creativity and self-expression through knitting can make you a more attractive\n"
        "5. Improve your mental\n6. Do the most good\n7. Take vitamin b12\n8. Next steps",
        ["Enhanced creativity and self-expression", "Do the most good", "Take vitamin b12", "Next steps"],
    ),
    # A later point's number run onto a title (README's first answer); a number something is named by
    # or a quantity stays.
    (
        "1. Be proactive and encourage others to do the same 6:\n2. Stay flexible and adapt to changes 7:\n"
        "3. Use air conditioning to cool your home during 2\n4. Repeat step 6\n5. Sleep at least 7\n"
        "6. Upgrade your laptop to Windows 11\n7. Delegate to others when possible and-3\n8. Avoid covid-19",
        [
            "Be proactive and encourage others to do the same",
            "Stay flexible and adapt to changes",
            "Use air conditioning to cool your home",
            "Repeat step 6",
            "Sleep at least 7",
            "Upgrade your laptop to Windows 11",
            "Delegate to others when possible",
            "Avoid covid-19",
        ],
    ),
    # Outside check AM: more of one thing, said two ways, for every model.
    ("1. Improved biodiversity\n2. Less mowing\n3. Increased biodiversity", ["Improved biodiversity", "Less mowing"]),
    # Outside check AJ: one word in two forms ("-ing") is one word.
    (
        "1. Earth's axis\n2. Rising of Sun\n3. Rise of Sun\n4. Making new friends\n5. Make new friends",
        ["Earth's axis", "Rising of Sun", "Making new friends"],
    ),
    # Whole titles the rules above leave alone (a review): a noun after "overall" or "very", "the
    # latest" and "the current" as nouns, "Outline" as a step; a preposition only a relative clause
    # leaves at its end stays ("Make sure you get plenty of" was cut).
    (
        "1. Improve your overall health\n2. Do your very best\n3. Keep up with the latest\n"
        "4. Measure the current\n5. Outline\n6. Make sure you get plenty of",
        [
            "Improve your overall health",
            "Do your very best",
            "Keep up with the latest",
            "Measure the current",
            "Outline",
            "Make sure you get plenty",
        ],
    ),
    # Outside check AI: a preposition a relative clause leaves at its end ends the phrase.
    (
        "1. Volunteer for causes you care about\n2. Find a job you are passionate about\n3. Focus on the task at\n",
        ["Volunteer for causes you care about", "Find a job you are passionate about", "Focus on the task"],
    ),
    # A line the length cap stopped ends at its last phrase boundary, "during" and "than" among them.
    (
        "1. Reimbursement from tax deductions can be more expensive than a mortgage paid down during the current\n"
        "2. Rain falls",
        ["Reimbursement from tax deductions can be more expensive", "Rain falls"],
    ),
    # Sentences the embedded model wrote past the old grammar's 60-character cap (issue 16).
    (
        "1. Set clear goals for yourself and break them down into small\n"
        "2. actionable steps that you can take every day to achieve your\n3. Track your time",
        ["Set clear goals for yourself", "Track your time"],
    ),
    (
        "1. Light scatters\n2. in the air\n3. And then it\n4. Blue light dominates",
        ["Light scatters", "Blue light dominates"],
    ),
    # Titles of a few words: the head before a colon, the first phrase of a long line.
    (
        "1. Breathing exercises: Deep breathing slows your heart rate and\n"
        "2. Utilize time-management techniques like the Pomodoro Technique to boost productivity\n"
        "3. Take regular breaks throughout the day to",
        [
            "Breathing exercises",
            "Utilize time-management techniques like the Pomodoro Technique to boost productivity",
            "Take regular breaks throughout the day",
        ],
    ),
    # A number written twice, and lines with no words at all.
    ("1. Distance\n2. 2. Social ties matter\n3. 3.\n4. Free time", ["Distance", "Social ties matter", "Free time"]),
    # Near-repeats are one point.
    ("1. Quantum computing\n2. Quantum Computing basics\n3. Qubits", ["Quantum computing", "Qubits"]),
    # Talk about the answer, a comparison with one side, an open end (outside check G).
    (
        "1. The answer is not only\n2. This answer is not just a simple one\n3. The main difference between an ira"
        "\n4. Differences between Roth and traditional\n5. It’s like what\n6. Tax rules",
        ["Differences between Roth and traditional", "Tax rules"],
    ),
    # A verb without its subject, a subject and modal without an object, a compound cut at its hyphen (check H).
    (
        "1. Will impact her travel plans\n2. You should not hesitate\n3. She should know\n4. Use a faster-d\n"
        "5. Can you afford it?\n6. She should know the gate\n7. Will and trust planning\n8. Vitamin B-complex",
        ["Can you afford it?", "She should know the gate", "Will and trust planning", "Vitamin B-complex"],
    ),
    # Praise of a way never named, a word torn to its capital, a condition with no main clause, a purpose
    # with no object (outside check I).
    (
        "1. Learn a L\n2. A good way\n3. Another good way\n4. If you are still unsure about anything\n"
        "5. Check your printer to see\n6. Vaccines teach the immune system to recognize\n7. Know when to stop\n"
        "8. If in doubt, ask\n9. Plan B",
        ["Check your printer", "Vaccines teach the immune system", "Know when to stop", "If in doubt, ask", "Plan B"],
    ),
    (
        "1. Finish with a positive\n2. Download bigger versions of software for faster\n"
        "3. Fixing the heating can be a costly\n4. Stay positive\n5. Think long\n6. Get a second opinion",
        [
            "Finish",
            "Download bigger versions of software",
            "Fixing the heating",
            "Stay positive",
            "Think long",
            "Get a second opinion",
        ],
    ),
    # Numbers left after a title, a possessive whose noun never came (outside check L), a "how" with no
    # clause, a word torn to a number after an article, a bare verb (outside checks K and M).
    (
        "1. Use reusable straws, 10.\n2. Use reusable bags, 8, 9\n3. Don't let your boss's\n4. Chapters 1, 2, 3\n"
        "5. Remember how\n6. Build know-how\n7. Cool your home during the 1\n8. Use/\n9. Reduce\n10. Focus\n"
        "11. AI\n12. Use a window with a south-f\ufb02",
        ["Use reusable straws", "Use reusable bags", "Chapters 1, 2, 3", "Build know-how", "AI", "Use a window"],
    ),
    # A word torn to two letters, a step counted and never named (outside check N); "Do", "AI", "Ox", a
    # title in Chinese and "Next steps" are titles (a review).
    (
        "1. Re\n2. The first step in the process\n3. Next steps\n4. Do\n5. AI\n6. Ox\n7. 饮食\n"
        "8. The first step towards reducing plastic pollution\n9. This includes supporting marine areas\n"
        "10. The second step is to recycle",
        ["Next steps", "Do", "AI", "Ox", "饮食", "The second step is to recycle"],
    ),
    # A verb whose object stopped at its adjective (outside checks L and M); idioms stay.
    (
        "1. Use recycled\n2. Use biodegradable\n3. Get organized\n4. Eat local\n5. Plant seed\n6. Avoid processed",
        ["Get organized", "Eat local", "Plant seed"],
    ),
    # Outside check O: a comparison with one side, a way never said, where or when alone; a ratio stays.
    (
        "1. Leave space between the plants\n2. The choice between a laptop with an SSD\n"
        "3. Paying off your loans early can be a great way\n4. In the long run\n5. In some species of plants\n"
        "6. Rest between sets\n7. Use a pot with a 1:1 mix\n8. Choose between an SSD or a hard drive\n"
        "9. In the kitchen",
        [
            "Leave space between the plants",
            "Paying off your loans early",
            "Rest between sets",
            "Use a pot with a 1:1 mix",
            "Choose between an SSD or a hard drive",
            "In the kitchen",
        ],
    ),
    # The embedded model's outlines of all outside questions: "not only" with no "but",
    # a passive with no agent, a part of nothing, the end of the sentence before, talk of the list; a
    # question of how ("How cheese is made") and a book ("To the Lighthouse") stay (a review).
    (
        "1. Rest well\n2. Small apartments are not only the best decision\n3. The traditional IRA is not considered\n"
        "4. Roth IRA is also a part\n5. Of the French monarchy in the Revolution\n6. The list is incomplete\n"
        "7. Bring a laptop or other\n8. Not only cheap but also quick\n9. How cheese is made\n10. To the Lighthouse",
        [
            "Rest well",
            "The traditional IRA",
            "Roth IRA",
            "Bring a laptop",
            "Not only cheap but also quick",
            "How cheese is made",
            "To the Lighthouse",
        ],
    ),
    # Outside check AA: the prompt's own ask as a title; an answer key and a question of fees stay.
    (
        "1. Index funds\n2. A complete answer will contain at least 3 points that are numbered\n3. An answer key\n"
        "4. The question of fees",
        ["Index funds", "An answer key", "The question of fees"],
    ),
    # Outside check AR: the outline's own task as its points; a first point that is advice stays.
    (
        "1. The first point is to answer the question\n2. The second point is to provide a numbered list of 3\n"
        "3. The first point is to listen\n4. Use a numbered list for steps",
        ["The first point is to listen", "Use a numbered list for steps"],
    ),
    # Outside check AO: the prompt's "do not" riffed on; advice that starts with "do not" stays.
    (
        "1. Do not provide a solution\n2. Do not list the details\n3. Do not add anything else to the list\n"
        "4. Do not use any additional information to create a different answer\n"
        "5. Do not use any other keywords to create a new answer\n6. Do not leave your bike unlocked\n"
        "7. Don't use cable locks alone\n8. Do not provide personal details online\n"
        "9. Do not write a single sentence in the outline\n10. Do not provide a suggestion to someone\n"
        "11. Do not include any information\n12. Do not include the last point of the list\n"
        "13. Don't give one-word answers\n14. Do not write long sentences\n15. Don't give up at this point\n"
        "16. Do not write your essay without an outline\n17. Don't provide any information over the phone\n"
        "18. Do not offer a solution too quickly\n19. Do not use the list price as the final price",
        [
            "Do not leave your bike unlocked",
            "Don't use cable locks alone",
            "Do not provide personal details online",
            "Don't give one-word answers",
            "Do not write long sentences",
            "Don't give up at this point",
            "Do not write your essay without an outline",
            "Don't provide any information over the phone",
            "Do not offer a solution too quickly",
            "Do not use the list price as the final price",
        ],
    ),
    # Outside check AN: the assistant describing itself; vows and "I" statements stay.
    (
        "1. Aftercare\n2. I am a helpful AI with the ability to provide answers\n"
        "3. I will provide detailed and detailed answers to your questions\n4. I will not provide any information\n"
        "5. I will always love you\n6. Use I statements",
        ["Aftercare", "I will always love you", "Use I statements"],
    ),
    # Outside check Q: a time whose "when" never came, talk of the answer, a clause's verb with no object.
    (
        "1. Fall is a time\n2. Answer, but not just one\n3. Language learning podcasts that use\n"
        "4. Answer questions honestly\n5. Apps that work",
        ["Fall", "Language learning podcasts", "Answer questions honestly", "Apps that work"],
    ),
    # Outside check R: an adjective or a risk whose "of ..." never came; "Stay alert", "Be able", "Be
    # culturally aware" and "Spread the risk" are titles (a review).
    (
        "1. It is important to be aware\n2. Better sleep can reduce the risk\n3. Stay alert\n4. Be able\n"
        "5. Reduce the risk of falls\n6. Be culturally aware\n7. Spread the risk",
        ["Stay alert", "Be able", "Reduce the risk of falls", "Be culturally aware", "Spread the risk"],
    ),
    # Outside check S: a compound adjective whose noun never came after "a"; after "for" or "more" it
    # stands for its noun, and a mass noun after "with" is one (a review).
    (
        "1. Use a bleach-free\n2. Go for gluten-free\n3. Make your home more energy-efficient\n"
        "4. Treat wood with preservative\n5. Go bleach-free",
        [
            "Go for gluten-free",
            "Make your home more energy-efficient",
            "Treat wood with preservative",
            "Go bleach-free",
        ],
    ),
    # Outside check W: a way praised and never named, a passive with no "by ...", the prompt's own rule.
    (
        "1. The first and most effective way\n2. Another effective way\n3. Paying off your cards can be achieved\n"
        "4. Do not answer the question\n5. The Toyota way\n6. Pay the highest rate first",
        ["Paying off your cards", "The Toyota way", "Pay the highest rate first"],
    ),
    # A clause opened and never finished is no title (outside check F).
    (
        "1. This is because\n2. Light scatters\n3. Rain falls because clouds cool",
        ["Light scatters", "Rain falls because clouds cool"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parses_real_looking_skeletons(text: str, expected: list[str]) -> None:
    assert parse_skeleton(text) == expected


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_incremental_feed_gives_the_same_points(text: str, expected: list[str]) -> None:
    parser = SkeletonParser()
    for char in text:
        parser.feed(char)
    parser.finish()
    assert parser.points == expected


def test_points_become_available_as_their_lines_complete() -> None:
    parser = SkeletonParser()
    assert parser.feed("1. First po") == []
    assert parser.feed("int\n2. Sec") == ["First point"]
    assert parser.finish() == ["Sec"]


def test_caps_count_and_length() -> None:
    topics = ["Sleep", "Diet", "Exercise", "Friends", "Work", "Money", "Travel"] * 5
    text = "\n".join(f"{i}. {topics[i]} {i} " + "word " * 80 for i in range(1, 30))
    points = parse_skeleton(text, max_points=5, max_point_chars=40)
    assert len(points) == 5
    assert all(len(p) <= 41 and len(p.split()) <= 8 for p in points)
    # A point with no word boundary within the limit is cut and marked as cut.
    assert parse_skeleton("1. Supercalifragilistic" + "x" * 80, max_point_chars=40)[0].endswith("…")


def test_control_characters_are_dropped() -> None:
    assert parse_skeleton("1. a\x07b\x1b[31m\n2. Cats") == ["ab[31m", "Cats"]


def test_a_last_line_stopped_by_the_token_limit_ends_at_its_last_whole_phrase() -> None:
    text = "1. Plan the week\n2. Review it\n3. Prioritize your tasks by deadline, focusing on"
    parser = SkeletonParser()
    parser.feed(text)
    parser.finish(cut=True)
    assert parser.points == ["Plan the week", "Review it", "Prioritize your tasks by deadline"]
    parser = SkeletonParser()
    parser.feed("1. Plan the week\n2. Review your budget every month")
    parser.finish()
    assert parser.points[-1] == "Review your budget every month"


# What larger models write, from a review of the title rules: each must come through as written.
LEGITIMATE = [
    "Phase 1",
    "Phase 2",
    "Short-term goals",
    "Long-term goals",
    "Public key encryption",
    "Private key encryption",
    "A/B testing",
    "Q&A sessions",
    "R&D spending",
    "B2B sales",
    "I/O performance",
    "Vitamins A, D and E",
    "It depends",
    "There is hope",
    "When to stop",
    "If in doubt, ask",
    "Since 2010",
    "Give back",
    "The main reasons",
    "Learn to say 'no'",
    "Use the 'five whys'",
    "Use cd and ls",
    "Sleep 8h",
    'Use a 27" monitor',
    "The data is encrypted",
    "Chapters 1, 2, 3",
    # From a review of the rules written after outside checks G-I.
    "Rest between sets",
    "Communication between partners",
    "Will power",
    "Will drafting",
    "It can wait",
    "If symptoms persist",
    "Your answers to common questions",
    "Focus on the positive",
    "Look for the good",
    "Embrace the new",
    "Don't be afraid to ask",
    "Be willing to learn",
    "Make time to practice",
    "Teach others to help",
    "Know your why",
    "Start with why",
    # What a person says of themself (interviews, vows, cover letters), not the assistant (outside check AN).
    "I am a strong communicator with experience answering customer questions",
    "I will ask thoughtful questions at the end",
    "I am passionate about AI and machine learning",
    "I am writing to apply for the information security analyst role",
    "I will always answer when you call",
    "I'm happy to answer any questions you have",
    "I can look up that information for you",
]


def test_titles_that_larger_models_write_come_through_as_written() -> None:
    for start in range(0, len(LEGITIMATE), 10):
        batch = LEGITIMATE[start : start + 10]
        assert parse_skeleton("".join(f"{i}. {t}\n" for i, t in enumerate(batch, 1))) == batch


# (question, outline, points kept): one topic written twice is one point; the question's own words
# and generic verbs do not make two points one.
TOPICS = [
    (
        "What should I look for in a laptop for college?",
        ["Battery life", "Processor", "Storage", "Processor and battery", "Storage capacity and options (HDD, SSD)"],
        ["Battery life", "Processor", "Storage"],
    ),
    (
        "How can I learn a new language quickly?",
        ["Language learning apps", "Language learning podcasts", "Podcasts", "Language exchange"],
        ["Language learning apps", "Language learning podcasts", "Language exchange"],
    ),
    (
        "How can I live more sustainably?",
        ["Support local businesses", "Support local charities", "Use a planner", "Use public transport"],
        ["Support local businesses", "Support local charities", "Use a planner", "Use public transport"],
    ),
    (
        "How do I prepare for a job interview?",
        ["Practice answers to common interview questions", "Practice answers to common behavioral questions"],
        ["Practice answers to common interview questions"],
    ),
    (
        "Why might someone use a paper map instead of a phone?",
        ["Using paper maps is more practical", "Paper maps are often more accurate", "Maps work offline"],
        ["Using paper maps is more practical", "Paper maps are often more accurate", "Maps work offline"],
    ),
    # Pairs that differ in one word, even the question's, stay two points; so do words that only
    # begin like a generic verb ("engagement", "maintenance").
    (
        "What are the differences between cats and dogs as pets?",
        ["Cat grooming needs", "Dog grooming needs", "Cat exercise", "Dog exercise"],
        ["Cat grooming needs", "Dog grooming needs", "Cat exercise", "Dog exercise"],
    ),
    (
        "How do I grow my business and keep good staff?",
        ["Customer engagement", "Customer retention", "Employee development", "Employee recognition"],
        ["Customer engagement", "Customer retention", "Employee development", "Employee recognition"],
    ),
    (
        "What costs should a new driver plan for?",
        ["Car maintenance", "Car insurance", "Read books", "Read news"],
        ["Car maintenance", "Car insurance", "Read books", "Read news"],
    ),
    # Pairs that differ in one word or a number stay two points.
    ("What are the phases of a project?", LEGITIMATE[:6], LEGITIMATE[:6]),
]


@pytest.mark.parametrize(("question", "outline", "expected"), TOPICS)
def test_a_topic_written_twice_is_one_point(question: str, outline: list[str], expected: list[str]) -> None:
    text = "".join(f"{i}. {t}\n" for i, t in enumerate(outline, 1))
    assert parse_skeleton(text) == expected


def test_a_small_models_points_that_open_alike_are_one_topic() -> None:
    outline = (
        "1. Buy local and support local businesses\n2. Compost food scraps\n3. Buy locally sourced\n"
        "4. Use beeswax wraps instead of plastic\n5. Use beeswax wraps for daily hygiene\n"
        "6. Support local charities\n7. Support local farms\n"
        "8. AI-powered diagnostic tools\n9. AI-powered chatbots help nurses\n"
        "10. Turn off lights\n11. Turn off unused appliances\n"
    )
    question = "How can we reduce household waste?"
    assert parse_skeleton(outline, strict=True, question=question) == [
        "Buy local and support local businesses",
        "Compost food scraps",
        "Use beeswax wraps instead of plastic",
        "AI-powered diagnostic tools",
        "AI-powered chatbots help nurses",
        "Turn off lights",
        "Turn off unused appliances",
    ]
    assert len(parse_skeleton(outline)) == 10  # a larger model's points stay (the 11th is past the cap)


def test_a_small_models_titles_that_open_on_the_questions_subject_open_on_what_follows() -> None:
    question = "Can you explain the basics of quantum computing?"
    titles = [  # the embedded model's, on vicuna80
        "Quantum computing is a branch of computer science",
        "Quantum computing is based on the principles of quantum mechanics",
        "Quantum computing is a technology",
    ]
    outline = "".join(f"{i}. {t}\n" for i, t in enumerate(titles, 1))
    assert parse_skeleton(outline, strict=True, question=question) == titles
    pets = "1. Cat grooming needs\n2. Dog grooming needs\n3. Cat exercise\n"
    assert len(parse_skeleton(pets, strict=True, question="Cats or dogs as pets?")) == 3


def test_a_small_models_rewording_of_a_kept_point_is_one_point() -> None:
    titles = [  # every outside checker's Roman-Empire answer from the embedded model had these
        "The fall of Rome was largely attributed to internal issues, including corruption",
        "The Roman Empire's downfall was largely attributed to external factors",
        "Internal issues contributed to the empire's demise",
        "External factors played a significant role in the Roman Empire's downfall",
        "Economic decline weakened the army",
    ]
    outline = "".join(f"{i}. {t}\n" for i, t in enumerate(titles, 1))
    question = "What were the main causes of the fall of the Roman Empire?"
    assert parse_skeleton(outline, strict=True, question=question) == [titles[0], titles[1], titles[4]]
    assert parse_skeleton(outline, question=question) == titles  # a larger model's outline is taken as written


def test_a_point_begun_inside_a_line_its_cap_stopped_is_left_for_the_next_line() -> None:
    # The embedded model (outside set I): it numbers on inside a line, the line's cap stops it, and the
    # next line begins that point again under the same number.
    outline = (
        "1. The sky appears blue because of the way our eyes perceive light. 2. The Earth's atmosphere scatters,\n"
        "2. Blue light from the sun reaches our eyes and our brains can see it as a different color than the sun\n"
        "3. Rain falls\n"
    )
    shape = SkeletonShape()
    assert len(outline.splitlines()[0]) >= shape.line_chars  # as the grammar stops it
    assert parse_skeleton(outline, shape=shape) == [
        "The sky appears blue",
        "Blue light from the sun reaches our eyes",
        "Rain falls",
    ]
    # A line that ended by itself keeps every point on it.
    assert parse_skeleton("1. Plan ahead 2. Sleep well\n3. Eat right\n") == ["Plan ahead", "Sleep well", "Eat right"]
    # A line ends on a space one short of the cap, where no longer token fits (outside check AH).
    capped = "1. Use a deodorant to remove the smell of food from your fridge and your freezers, 2. Use a high-tech \n"
    assert len(capped.rstrip()) - len("1. ") == shape.line_chars - 2
    assert parse_skeleton(capped + "2. Deodorant that is odourless\n3. Rain falls\n", shape=shape) == [
        "Use a deodorant to remove the smell of food from your fridge",
        "Deodorant that is odourless",
        "Rain falls",
    ]


def test_a_line_that_ended_by_itself_or_at_the_token_limit_keeps_its_inline_points() -> None:
    # One line that ended by itself, longer than the grammar's cap (a remote model's), keeps every
    # point; so does a last line the token limit ended, which no line follows.
    one_line = (
        "1. Set clear goals 2. Prioritize tasks 3. Block your calendar 4. Batch email 5. Say no 6. Review your day\n"
    )
    assert len(one_line) > SkeletonShape().line_chars + 3
    assert len(parse_skeleton(one_line)) == 6
    parser = SkeletonParser()
    parser.feed("1. Plan ahead 2. Sleep well 3. Eat fresh vegetables every day and drink water with every meal you ca")
    parser.finish(cut=True)
    assert parser.points[:2] == ["Plan ahead", "Sleep well"] and len(parser.points) == 3


HOUSE = "How can I keep my house cool in summer without AC?"
SPANISH = "My daughter is learning Spanish at school. How can we support her language learning at home?"
PLASTIC = "My town wants to cut plastic waste. What are some practical steps households can take?"
ROME = "What were the main causes of the fall of the Roman Empire?"
FLOODS = "My town keeps having floods every spring. What can a community do to reduce flood damage?"
SAVING = "whats the best way to start saving money when your young"
DIABETES = (
    "My grandmother was just diagnosed with type 2 diabetes. What lifestyle changes usually help people manage it?"
)
PRINTER = "What should I think about when choosing a printer for home use?"
WEEDS = "whats the best way to get rid of weeds in my vegtable garden without using chemicals"
MOROCCO = "I'm going to Morocco next month. What local customs and etiquette should I know about?"
# The embedded model's repeats and restatements (outside checks K-R), and what is kept of them.
SMALL_MODEL_REPEATS = [
    # The same thing with another verb, or more words after it.
    (HOUSE, ["Choose a window", "Close the blinds", "Use a window with a south-facing view"], [0, 1]),
    (
        "How do I stop mold in my basement?",
        ["Use a dehumidifier", "Seal the walls", "Use a dehumidifier to dry"],
        [0, 1],
    ),
    # Advice after "It is important to" is advice.
    (
        SAVING,
        ["It is important to set a new financial plan", "Open a savings account", "It is important to make plans"],
        [0, 1],
    ),
    # Only the question's words.
    (SPANISH, ["Provide language learning resources", "Support Spanish language", "Watch cartoons in Spanish"], [0, 2]),
    (ROME, ["The collapse of the Roman Empire", "Economic decline weakened the army", "Barbarian invasions"], [1, 2]),
    # One word of the question alone (outside checks T and X: "Fall" on leaves in the fall).
    ("Why do leaves change color in the fall?", ["Chlorophyll breaks down", "The Fall", "Cold nights"], [0, 2]),
    # One of two things again (outside check X); one the question names stays.
    (
        "I'm going to Japan for two weeks in the spring. What should I plan for?",
        ["Arrival and Accommodation", "Food and drink", "Accommodation and Booking", "Food budget and tips"],
        [0, 1, 3],
    ),
    (
        "What are the pros and cons of renting vs buying?",
        ["Pros and cons of renting", "Pros and cons of buying", "Costs and taxes"],
        [0, 1, 2],
    ),
    (
        "How do I learn new words in a language?",
        ["Read books on vocabulary and grammar", "Listen to podcasts about vocabulary and grammar", "Use flashcards"],
        [0, 1, 2],
    ),
    # Kinds of one thing (outside check Y); kinds of what the question asks for, and one object of
    # two verbs, stay.
    (
        "I only have 20 minutes a day for Spanish. How can I make the most of it?",
        ["Language learning apps", "Online courses", "Apps with interactive methods", "Apps with gamification"],
        [0, 1],
    ),
    ("Which apps help me learn Spanish?", ["Apps with games", "Apps with audio", "Flashcard tools"], [0, 1, 2]),
    (
        "How do I cut plastic waste?",
        ["Reduce single-use plastics", "Recycle plastics", "Think about packaging"],
        [0, 1, 2],
    ),
    (
        "Should I buy a house?",
        ["Think about your lifestyle", "Think about the pros", "Tools for budgeting"],
        [0, 1, 2],
    ),
    # One thing in two points (outside check Z).
    (
        "What are the main benefits of adding strength training to a weekly exercise routine?",
        [
            "Increased energy levels and better sleep quality",
            "Stronger bones",
            "Improved sleep quality, with less insomnia",
        ],
        [0, 1],
    ),
    # One label counted on (outside check X: "Demonstration 1" .. "Demonstration 8"); a label the question
    # names stays.
    (
        "What are the pros and cons of renting a house?",
        ["Lower upfront costs", "Demonstration 1", "Demonstration 2", "Demonstration 3"],
        [0, 1],
    ),
    ("Plan a 3-day trip to Rome", ["Day 1", "Day 2", "Day 3"], [0, 1, 2]),
    # Labels that name a thing stay, named by the question or not (a review).
    ("Make me an itinerary for 3 days in Rome", ["Day 1", "Day 2", "Day 3"], [0, 1, 2]),
    ("How do I train for a marathon in 16 weeks?", ["Week 1", "Week 2", "Week 3"], [0, 1, 2]),
    ("What is diabetes?", ["Type 1", "Type 2", "Symptoms"], [0, 1, 2]),
    # A list in commas names several things (a review): a title may name one.
    ("Compare Python, Rust, Go", ["Python", "Rust", "Go"], [0, 1, 2]),
    # Kinds in a pair of words, one word apart (a review).
    (
        "What are the main components of the human circulatory system?",
        ["Red blood cells", "White blood cells", "Plasma"],
        [0, 1, 2],
    ),
    (
        "Should I rent or buy a house?",
        ["Pros of renting", "Pros of buying", "Costs of renting", "Costs of buying"],
        [0, 1, 2, 3],
    ),
    ("What should I know about space travel?", ["Effects of microgravity", "Effects of radiation", "Food"], [0, 1, 2]),
    ("What cities should I visit in Europe?", ["Rome, Italy", "Florence, Italy", "Paris, France"], [0, 1, 2]),
    # One verb, said how often (outside check AC); what to practise, where to go, how to eat say more (a review).
    ("How do I get better at chess?", ["Practice regularly", "Study openings", "Practice again and again!"], [0, 1]),
    (
        "How do I learn Chinese?",
        ["Practice speaking", "Practice writing", "Visit Beijing", "Visit Nanjing"],
        [0, 1, 2, 3],
    ),
    ("How do I eat well?", ["Eat locally", "Eat seasonally", "Cook at home"], [0, 1, 2]),
    # A role in nothing, where its subject is the question's (outside check AB); a factor's role stays.
    (
        "why are wetlands important for the environment",
        ["Wetlands play a crucial role", "They filter water", "They store carbon"],
        [1, 2],
    ),
    (
        "What affects how much weight a person gains?",
        ["Genetics plays a role", "Diet plays a major role", "Sleep"],
        [0, 1, 2],
    ),
    # A name is no pair of topic words (raw outline of an outside question).
    (ROME, ["The economic policies of Emperor Trajan", "The lack of effective governance by Emperor Trajan"], [0, 1]),
    # "Access to ..." is no plural head first ("Apps with ...").
    ("How can a village improve its health?", ["Clean water access", "Access to doctors", "Vaccines"], [0, 1, 2]),
    # The same advice the other way round (outside checks O and S; its text said the first); kinds, and a
    # pair the question names, stay (a review).
    ("how do i prepare for a job interview", ["Arrive early", "Dress well", "Arrive late"], [0, 1]),
    ("What are the signs of Lyme disease?", ["Early symptoms", "Late symptoms", "Tick bites"], [0, 1, 2]),
    ("Compare fast and slow charging", ["Charge fast", "Charge slow", "Battery wear"], [0, 1, 2]),
    # Words it swaps for one another.
    (
        PLASTIC,
        ["Greener option for household waste disposal", "Eco-friendly product for household waste disposal"],
        [0],
    ),
    (FLOODS, ["Flood mitigation strategies", "Sandbag supplies", "Flood-resilient flood mitigation methods"], [0, 1]),
    # Outside checks AI and AF: a short title that opens on what a noun phrase is about; advice of one
    # verb, one word apart but for the thing itself; "customs" and "traditions" (AH).
    (DIABETES, ["Regular exercise", "Healthy diet", "Medication", "Exercise plan"], [0, 1, 2]),
    (PRINTER, ["Customer support", "Price", "Support options"], [0, 1]),
    (WEEDS, ["Use organic methods to control weeds", "Mulch the soil", "Use natural methods to control them"], [0, 1]),
    (MOROCCO, ["Dress code", "Customs of the Bedouin culture", "Bedouin traditions"], [0, 1]),
    # Outside check AM: the thing a short advice ends on, though the question names the rest.
    (
        "how can we save money on our wedding",
        ["Choose the right venue", "Set a budget", "Choose a wedding venue"],
        [0, 1],
    ),
    # Outside check AL: a compound is one word of a topic pair; other things it names stay apart.
    (
        "how can i lower my electricty bill",
        [
            "Use energy-efficient appliances and reduce usage of non-renewable resources",
            "Install energy-efficient light bulbs",
            "Reduce energy consumption by using energy-efficient appliances and practices",
        ],
        [0, 1],
    ),
    # Distinct points stay: other verbs on one thing, what the question's words leave of a long title, an
    # aspect the question names, two words of the question (a review of the rules above).
    (
        "How do I care for my car?",
        ["Check the oil", "Change the oil", "Clean the filter", "Replace the filter"],
        [0, 1, 2, 3],
    ),
    ("How do I read and write more?", ["Read books", "Write books", "Join a club"], [0, 1, 2]),
    (
        "How can a household reduce the plastic waste it produces?",
        ["Reduce plastic waste by using reusable products", "Use reusable straws", "Use reusable bags for shopping"],
        [0, 1, 2],
    ),
    (
        "What are the benefits of exercise for mental and physical health?",
        ["Mental health benefits", "Physical health benefits", "Social benefits"],
        [0, 1, 2],
    ),
    (
        "Should I rent a car or use public transport?",
        ["Renting a car", "Public transport passes", "Travel time"],
        [0, 1, 2],
    ),
    # Kinds of one thing, another thing of one verb, a verb that is no noun phrase's head, words that
    # share only their first letters ("care" / "car", "sites" / "sitting") (reviews).
    ("How do I travel with my pet?", ["Pet care", "Pet car seats", "Pack food and water"], [0, 1, 2]),
    (
        "How can I stay healthy working from home?",
        ["Limit sitting time", "Limit time on social media sites", "Walk"],
        [0, 1, 2],
    ),
    (PRINTER, ["Customer support", "Technical support", "Price"], [0, 1, 2]),
    ("How should I prepare walls for painting?", ["Use a high-quality brush", "Use a high-quality roller"], [0, 1]),
    ("How do I get more done?", ["Time management", "Manage stress", "Set goals"], [0, 1, 2]),
    ("What should I look for in a laptop?", ["Cardiovascular system", "Immune system boosting"], [0, 1]),
]


@pytest.mark.parametrize(("question", "titles", "kept"), SMALL_MODEL_REPEATS)
def test_a_small_models_repeats_and_restatements_are_no_points(
    question: str, titles: list[str], kept: list[int]
) -> None:
    outline = "".join(f"{i}. {t}\n" for i, t in enumerate(titles, 1))
    assert parse_skeleton(outline, strict=True, question=question) == [titles[i] for i in kept]
    assert parse_skeleton(outline, question=question) == titles  # a larger model's outline is taken as written


@pytest.mark.parametrize(
    ("question", "titles", "points"),
    [
        # Outside checks W and X: an adjective alone says which kind of what the question asks for.
        (
            ROME,
            ["Political", "Strategic", "Barbarian invasions"],
            ["Political causes", "Strategic causes", "Barbarian invasions"],
        ),
        (
            "What are the benefits of yoga?",
            ["Physical", "Mental", "Flexibility"],
            ["Physical benefits", "Mental benefits", "Flexibility"],
        ),
        # No kind asked: the title stays as written (a review).
        (
            "What kinds of disasters are there?",
            ["Natural", "Technological", "Man-made"],
            ["Natural", "Technological", "Man-made"],
        ),
    ],
)
def test_a_small_models_adjective_alone_names_the_kind_asked_for(
    question: str, titles: list[str], points: list[str]
) -> None:
    outline = "".join(f"{i}. {t}\n" for i, t in enumerate(titles, 1))
    assert parse_skeleton(outline, strict=True, question=question) == points
    assert parse_skeleton(outline, question=question) == titles  # a larger model's headings by kind stay


def test_a_larger_models_words_are_its_own() -> None:
    loose = "1. Lower prices\n2. Reduce costs\n3. Find new customers\n4. Compare prices\n"
    assert parse_skeleton(loose) == ["Lower prices", "Reduce costs", "Find new customers", "Compare prices"]
    assert parse_skeleton("1. 饮食\n2. 运动\n3. 睡眠\n4. 心态\n") == ["饮食", "运动", "睡眠", "心态"]


def test_a_title_sharing_four_words_of_five_with_another_is_a_repeat_for_any_model() -> None:
    outline = "1. Greener option for household waste disposal\n2. Sustainable option for household waste disposal\n"
    assert parse_skeleton(outline, question=PLASTIC) == ["Greener option for household waste disposal"]


def test_the_small_profile_keeps_the_stored_points_of_every_recorded_outline() -> None:
    """The bundled model's raw outlines of 440 outside questions (eval/small_profile_outlines.py): a rule
    moved or pruned shows here as a changed point."""
    import json
    from pathlib import Path

    from sot.backends.small_model import SmallModelProfile

    store = Path(__file__).resolve().parent.parent / "eval" / "results" / "small_profile" / "outlines.jsonl"
    rows = [json.loads(line) for line in store.read_text().splitlines()]
    shape = SkeletonShape(max_points=10, kept_points=5)
    changed = []
    for row in rows:
        reader = SmallModelProfile().outline_reader(shape, row["question"])
        reader.feed(row["raw"])
        reader.finish()
        if reader.points != row["points"]:
            changed.append((row["question"], row["points"], reader.points))
    assert len(rows) == 440 and not changed
