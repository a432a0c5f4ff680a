"""Hand-written parts of task types that need sequential thought.

Label rule (every task type here is labelled `sequential`): the answer is one artefact or one line
of reasoning where each part depends on the last: arithmetic and algebra, estimates, code (writing,
fixing, reviewing, explaining pasted code, "define X and Y with code examples"), logic puzzles and
premise/conclusion questions, one-voice writing (essays incl. persuasive ones, stories, poems,
letters, speeches, plans written as a document), transforming pasted text (rewrite, translate,
summarise, extract, reformat), playing a character, one short fact, and a writing task followed
by sub-questions about it (the sub-answers lean on the piece just written).
"""

from __future__ import annotations

NAMES = ["Alice", "Ben", "Carla", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Luca"]
ESSAY_TOPICS = [
    "school uniforms", "a four-day work week", "banning homework in primary school", "nuclear energy",
    "universal basic income", "raising the voting age to 21", "zoos", "social media age limits",
    "free public transport", "standardised testing", "remote work", "space exploration funding",
    "plastic bag bans", "year-round schooling", "self-driving cars on public roads", "tipping culture",
    "daylight saving time", "mandatory voting", "animal testing for cosmetics", "video games in classrooms",
]
STORY_SEEDS = [
    "a lighthouse keeper who finds a message in a bottle", "a robot that learns to paint",
    "two strangers stuck in an elevator during a blackout", "a girl who can hear plants",
    "the last bookstore in a futuristic city", "a detective who is afraid of the dark",
    "a dragon who wants to become a chef", "a grandmother's secret recipe", "a time traveller stuck in 1850",
    "a village where it never stops snowing", "a dog trying to find its way home", "an astronaut's last day on Mars",
]
LANGS = ["Python", "JavaScript", "Java", "C++", "Go", "Rust", "TypeScript", "C#", "Ruby", "PHP", "Kotlin", "Swift"]
CODE_TASKS = [
    "checks whether a string is a palindrome, ignoring punctuation and case",
    "merges two sorted lists into one sorted list",
    "parses a CSV file and returns the average of the third column",
    "finds the longest common prefix of an array of strings",
    "validates an email address without using a regex library",
    "counts word frequencies in a text file and prints the top 10",
    "implements a LRU cache with get and put in O(1)",
    "converts a Roman numeral to an integer",
    "rotates an N x N matrix 90 degrees clockwise in place",
    "debounces a function call",
    "reads JSON from an API and retries on failure with exponential backoff",
    "detects a cycle in a linked list",
    "returns all permutations of a list",
    "flattens a nested dictionary into dot-separated keys",
    "computes the Levenshtein distance between two words",
    "schedules meetings so that no two overlap, given start and end times",
]
CODE_SNIPPETS = [
    "def avg(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n\nprint(avg([]))",
    "for (let i = 0; i <= arr.length; i++) {\n  sum += arr[i];\n}\nconsole.log(sum)",
    "public int fib(int n) {\n    if (n == 0) return 0;\n    return fib(n - 1) + fib(n - 2);\n}",
    "SELECT name, COUNT(*) FROM orders\nJOIN customers ON orders.customer_id = customers.id\nWHERE total > 100",
    "items = [1, 2, 3]\nfor i in items:\n    if i % 2 == 0:\n        items.remove(i)\nprint(items)",
    "async function load() {\n  const data = fetch('/api/users');\n  return data.json();\n}",
    "int *p = malloc(10 * sizeof(int));\nfor (int i = 0; i < 10; i++) p[i] = i;\nprintf(\"%d\", p[10]);",
    "def add_item(item, bucket=[]):\n    bucket.append(item)\n    return bucket",
    "while True:\n    line = input()\n    if line == 'quit':\n        break\n    print(line.uper())",
    "const user = users.find(u => u.id = id);\nif (user) { render(user) }",
]
PASTED_TEXTS = [
    "Our team have been working very hard on the new release, which were delayed by two weeks due to "
    "unexpected issues with the payment provider. We apologise for any inconvenience this may of caused "
    "and we are confident the new features will be worth the wait.",
    "The city council met on Tuesday to discuss the proposed bike lanes on Main Street. Shop owners "
    "argued the lanes would remove 40 parking spaces and hurt business, while cycling groups pointed to "
    "a 2019 study showing that foot traffic rose 12% after similar changes in a nearby town. The vote "
    "was postponed until next month.",
    "Hi Mark, just following up on the invoice from march. It still shows as unpaid on our side, could "
    "you check with accounting? We need this settled before end of quarter otherwise we will have to "
    "pause the service. thanks, Julia",
    "Photosynthesis is the process by which green plants use sunlight, water and carbon dioxide to make "
    "glucose and oxygen. It happens mainly in the leaves, inside chloroplasts, which contain the pigment "
    "chlorophyll. The light reactions produce ATP and NADPH, which the Calvin cycle then uses to fix carbon.",
    "Customer review: I ordered the blue jacket in size M, it arrived in two days but the zipper broke "
    "after a week. Customer service was friendly and sent a replacement, but honestly the quality is not "
    "what I expected for 120 euros. 3/5.",
    "Meeting notes 14/05: budget approved for Q3 (45k). Sarah to hire 2 contractors by June. Website "
    "redesign pushed to Q4. Risk: vendor contract ends in July, need renewal decision. Next sync on 28/05.",
]

SEQ_TASKS: dict[str, dict[str, list[str]]] = {
    "math_word_problem": {
        "templates": [
            "A train leaves at {t1} travelling at {v1} km/h. Another leaves the same station {d} hours later at {v2} km/h. When does the second train catch up?",
            "{n1} has {a} apples and gives a third of them to {n2}, who then eats {b}. How many apples does {n2} have left if they started with {c}?",
            "If a shirt costs ${a} after a {p}% discount, what was the original price? Show your work.",
            "my kid has this homework: a rectangle is {a} cm long and its perimeter is {c} cm. whats the area? pls explain so i can help him",
            "A savings account pays {p}% interest compounded yearly. If I deposit ${c}, how much will I have after {d} years?",
            "{n1} can paint a fence in {a} hours and {n2} in {b} hours. How long does it take if they work together?",
            "The average of {d} numbers is {a}. When one number is removed the average becomes {b}. Which number was removed?",
        ],
        "t1": ["8:00", "9:30", "noon", "6:15"], "v1": ["60", "75", "80", "90"], "v2": ["100", "110", "120"],
        "d": ["2", "3", "4", "5"], "a": ["12", "18", "24", "30", "45"], "b": ["3", "4", "5", "6", "7"],
        "c": ["50", "60", "84", "100", "250", "1000"], "p": ["5", "15", "20", "25", "30"],
        "n1": NAMES, "n2": NAMES,
    },
    "algebra_calculus": {
        "templates": [
            "Solve for x: {a}x^2 - {b}x + {c} = 0",
            "Find the derivative of f(x) = {a}x^3 + sin({b}x) and evaluate it at x = {c}.",
            "Simplify ({a}x + {b})({a}x - {b}) and explain each step.",
            "Integrate {a}x * e^({b}x) dx.",
            "Prove that the sum of the first n odd numbers is n^2.",
            "What is the limit of (x^2 - {c}) / (x - {b}) as x approaches {b}?",
            "Given the matrix [[{a}, {b}], [{c}, 1]], find its determinant and inverse.",
            "Prove that there are infinitely many prime numbers.",
        ],
        "a": ["2", "3", "4", "5"], "b": ["1", "2", "3", "6"], "c": ["4", "9", "16", "1", "2"],
    },
    "fermi_estimate": {
        "templates": [
            "How many {thing} are there in {place}? Walk me through your reasoning.",
            "Estimate how many {thing} exist in {place}. Explain your assumptions one by one.",
            "Roughly how much water does {place} use in a day? Try to reason it out.",
            "How many times does the average human heart beat in a lifetime? Please explain step by step.",
        ],
        "thing": ["piano tuners", "golf balls that fit in a school bus", "dentists", "coffee cups sold per day", "trees", "traffic lights"],
        "place": ["Chicago", "London", "a city of one million people", "Germany", "Tokyo", "New York City"],
    },
    "code_write": {
        "templates": [
            "Write a {lang} function that {task}.",
            "Can you write {lang} code that {task}? Please include comments and a small example of usage.",
            "I need a {lang} script that {task}. It should handle edge cases like empty input.",
            "Using {lang}, implement a function that {task}. What is the time complexity?",
            "{ctx} I'm learning {lang}. How would I write something that {task}?",
            "write me {lang} code: {task}. no external libraries",
        ],
        "lang": LANGS, "task": CODE_TASKS,
        "ctx": ["I'm preparing for a coding interview.", "This is for a school assignment.", "My boss needs this by Friday."],
    },
    "code_debug": {
        "templates": [
            "Why doesn't this work?\n\n```\n{code}\n```",
            "I get a bug with this code, can you fix it?\n{code}",
            "This code gives the wrong result. What's wrong and how do I fix it?\n\n{code}\n\nThanks!",
            "Here's my code:\n```\n{code}\n```\nIt crashes sometimes. Explain the problem and give a corrected version.",
        ],
        "code": CODE_SNIPPETS,
    },
    "code_review": {
        "templates": [
            "Please review this code and suggest improvements:\n\n```\n{code}\n```",
            "Can you do a code review of the following snippet? Point out bugs, style issues and performance problems.\n{code}",
            "Our junior dev wrote this. Is it OK for production? What would you change?\n\n{code}",
            "Refactor this to be cleaner and explain what you changed:\n```\n{code}\n```",
        ],
        "code": CODE_SNIPPETS,
    },
    "list_question_on_pasted_code": {
        "templates": [
            "What are some ways to improve this?\n```\n{code}\n```",
            "What are the pros and cons of this implementation?\n\n{code}",
            "List the problems in this code and the fix for each:\n{code}",
            "Give me tips to make this faster and more readable:\n```\n{code}\n```",
            "What best practices does this snippet break?\n\n{code}\n\nThanks",
        ],
        "code": CODE_SNIPPETS,
    },
    "sql_with_schema": {
        "templates": [
            "I have a table {table}. Write a SQL query that {q}.",
            "Given the tables {table} and payments(id, order_id, amount, paid_at), how do I {q} in SQL?",
            "Suppose you have a dataset in a table {table}. Using SQL, {q}. Please explain the query.",
        ],
        "table": [
            "orders(id, customer_id, total, created_at)", "employees(id, name, department, salary, manager_id)",
            "students(id, name, grade, school_id)", "sales(region, product, units, sold_on)",
        ],
        "q": [
            "find the top 3 customers by total spend in 2023", "returns each department's highest salary",
            "computes a running total per month", "lists rows that have no matching record in the other table",
            "find duplicate names", "calculate the month-over-month growth",
        ],
    },
    "define_with_code": {
        "templates": [
            "Define {c1} and {c2} in programming, explain the difference, and give code examples in {lang}.",
            "What is {c1}? How is it different from {c2}? Please provide {lang} code examples for both.",
            "Explain {c1} vs {c2} with a short {lang} example of each, and say when to use which.",
            "Can you define {c1} and {c2}, and illustrate them with code examples? I use {lang}.",
        ],
        "c1": ["object-oriented programming", "recursion", "a closure", "a shallow copy", "synchronous code", "a stack", "composition", "static typing", "pass by value", "a process"],
        "c2": ["procedural programming", "iteration", "a regular function", "a deep copy", "asynchronous code", "a queue", "inheritance", "dynamic typing", "pass by reference", "a thread"],
        "lang": LANGS,
    },
    "persuasive_essay": {
        "templates": [
            "Write a persuasive essay arguing for or against {topic}.",
            "Write an argumentative essay on {topic}. Take a clear position and address counterarguments.",
            "{ctx} I need a 500-word persuasive essay in favour of {topic}. Use a strong thesis and a call to action.",
            "Compose an opinion piece convincing readers that {topic} is a bad idea.",
            "Write a speech for a school debate arguing against {topic}.",
            "could you write an essay that persuades my city council to support {topic}? make it convincing",
        ],
        "topic": ESSAY_TOPICS,
        "ctx": ["This is for my English class.", "It's for a newspaper op-ed section.", "My teacher wants five paragraphs."],
    },
    "story_fiction": {
        "templates": [
            "Write a short story about {seed}.",
            "Write a story for children about {seed}, with a happy ending.",
            "Can you write a 1000-word sci-fi story about {seed}? Include dialogue.",
            "Tell me a bedtime story about {seed}.",
            "Continue this story: \"{seed}\" ... make it suspenseful.",
            "write a flash fiction piece about {seed}, twist ending please",
        ],
        "seed": STORY_SEEDS,
    },
    "poem_song": {
        "templates": [
            "Write a poem about {theme}.",
            "Compose a sonnet about {theme}.",
            "Write song lyrics about {theme} in the style of a country ballad.",
            "Can you write a haiku sequence about {theme}?",
            "Write a rhyming poem for my mom's birthday that mentions {theme}.",
        ],
        "theme": ["the ocean at night", "autumn leaves", "losing a friend", "city rain", "first love", "a cup of coffee", "my cat", "the moon landing", "growing old", "hope"],
    },
    "letter_email": {
        "templates": [
            "Write an email to {to} about {about}.",
            "{ctx} Draft a polite letter to {to} regarding {about}.",
            "Help me write a message to {to}: {about}. Keep it professional but warm.",
            "Can you write a cover letter for a {job} position? {ctx}",
            "Write a formal complaint to {to} about {about}.",
        ],
        "to": ["my landlord", "my manager", "a customer", "the school principal", "my internet provider", "a potential investor", "my team"],
        "about": [
            "a broken heater that has not been fixed for three weeks", "asking for a raise", "a delayed shipment",
            "my son's absence next week", "a billing error", "a new product update", "working from home two days a week",
        ],
        "job": ["marketing assistant", "data analyst", "nurse", "junior developer", "teacher"],
        "ctx": ["I have 3 years of experience.", "English is not my first language.", "I need it by tonight."],
    },
    "rewrite_edit": {
        "templates": [
            "Rewrite the following paragraph to sound more professional:\n\n{text}",
            "Proofread this and fix any grammar mistakes:\n\"{text}\"",
            "Make this shorter and clearer, keep the meaning: {text}",
            "Can you edit this text to be friendlier?\n{text}",
            "Paraphrase this in simple English for a 10-year-old:\n{text}",
        ],
        "text": PASTED_TEXTS,
    },
    "translate": {
        "templates": [
            "Translate into {lang}: \"{text}\"",
            "Please translate the following text to {lang} and keep the tone:\n{text}",
            "How would you say this in {lang}? {text}",
        ],
        "lang": ["French", "Spanish", "German", "Japanese", "Italian", "Portuguese", "Chinese"],
        "text": PASTED_TEXTS,
    },
    "summarize": {
        "templates": [
            "Summarize this in two sentences:\n\n{text}",
            "TL;DR please:\n{text}",
            "Can you give me a one-line summary of the text below?\n{text}",
            "Summarise the following for my boss:\n\"{text}\"",
        ],
        "text": PASTED_TEXTS,
    },
    "extract_classify": {
        "templates": [
            "Extract all dates, names and amounts from this text and return them as JSON:\n{text}",
            "Classify the sentiment of this review as positive, negative or neutral:\n{text}",
            "Read the text below and identify the action items, with owners:\n{text}",
            "Convert this into a table with columns who, what, when:\n{text}",
        ],
        "text": PASTED_TEXTS,
    },
    "logic_seating": {
        "templates": [
            "{n} people - {names} - sit around a circular table. {c1} {c2} {c3} Who sits where?",
            "A family of {n} sits in a row at the cinema: {names}. {c1} {c2} {c3} What is the seating order?",
            "Five houses in a row are painted different colours. {c1} {c2} {c3} Who owns the green house?",
            "{names} finished a race. {c1} {c2} {c3} In what order did they finish?",
        ],
        "n": ["four", "five", "six"],
        "names": ["Alice, Ben, Carla, Dev", "Emma, Farid, Grace, Hiro and Ines", "the mother, father, grandmother, two sons and a daughter", "Jonas, Kemi, Luca, Mia and Noor"],
        "c1": ["Alice does not sit next to Ben.", "The grandmother sits opposite the father.", "Emma is immediately to the left of Hiro.", "The red house is left of the blue one."],
        "c2": ["Carla sits between two men.", "The youngest son is not next to his sister.", "Grace finished before Farid but after Ines.", "Dev is not at either end."],
        "c3": ["Dev sits to the right of Carla.", "Nobody sits next to their twin.", "The person in the middle owns a cat.", "Luca was neither first nor last."],
    },
    "logic_premises": {
        "templates": [
            "Which of the following statements is a valid conclusion based on these premises? Premise 1: {p1} Premise 2: {p2} (a) {c} (b) None of the above.",
            "If {p1} and {p2}, does it follow that {c}? Explain.",
            "Premises: {p1} {p2} Is the conclusion \"{c}\" logically valid? Justify your answer.",
            "Consider: {p1} {p2} Which conclusion must be true?",
            "Is this argument valid or invalid? {p1} {p2} Therefore, {c}",
        ],
        "p1": ["All cats are mammals.", "Some teachers are musicians.", "No reptiles have fur.", "All managers attend the Monday meeting.", "If it rains, the match is cancelled."],
        "p2": ["Some mammals are pets.", "All musicians can read music.", "Some pets are reptiles.", "Tom did not attend the Monday meeting.", "The match was not cancelled."],
        "c": ["some cats are pets", "some teachers can read music", "some pets have no fur", "Tom is not a manager", "it did not rain"],
    },
    "riddle_trick": {
        "templates": [
            "Riddle: {r} What am I?",
            "Here's a brain teaser: {r}",
            "Can you solve this puzzle? {r}",
        ],
        "r": [
            "I speak without a mouth and hear without ears.", "The more you take, the more you leave behind.",
            "A man pushes his car to a hotel and tells the owner he's bankrupt. Why?",
            "You have two ropes that each burn in an hour, unevenly. How do you measure 45 minutes?",
            "Three boxes are labelled apples, oranges and mixed, all wrongly. You may pick one fruit from one box. How do you fix the labels?",
            "A bat and a ball cost $1.10 in total. The bat costs $1 more than the ball. How much does the ball cost?",
        ],
    },
    "roleplay": {
        "templates": [
            "Pretend you are {who}. {q}",
            "Act as {who} and answer my questions in character. {q}",
            "You are {who}. {q} Stay in character.",
            "Let's role-play: you're {who} and I'm a new customer. {q}",
        ],
        "who": ["a medieval knight", "Sherlock Holmes", "a pirate captain", "a grumpy barista", "a tour guide in ancient Rome", "Albert Einstein", "a job interviewer at Google"],
        "q": ["Introduce yourself.", "Tell me about your day.", "What do you think of smartphones?", "Ask me three questions.", "Describe your greatest adventure."],
    },
    "short_fact": {
        "templates": [
            "Who {fact}?",
            "When was {thing} {verb}?",
            "What is the capital of {country}?",
            "quick question - what's the boiling point of {liquid} in fahrenheit?",
            "Which planet is {planet}?",
        ],
        "fact": ["wrote Pride and Prejudice", "painted the Mona Lisa", "discovered penicillin", "was the first woman to win a Nobel Prize", "invented the telephone"],
        "thing": ["the Eiffel Tower", "the printing press", "the Berlin Wall", "the first iPhone"], "verb": ["built", "invented", "torn down", "released"],
        "country": ["Australia", "Canada", "Kazakhstan", "Nigeria", "Peru"], "liquid": ["water", "ethanol", "milk"],
        "planet": ["the largest in our solar system", "closest to the Sun", "known for its rings"],
    },
    "document_plan": {
        "templates": [
            "Write a business plan for {biz}. Include an executive summary, market analysis, financial projections and a marketing strategy.",
            "{ctx} Create a one-page project proposal for {biz} that I can send to my manager.",
            "Draft a press release announcing {biz}.",
            "Write the product description and landing page copy for {biz}.",
            "Prepare a grant application narrative for {biz}, about 600 words.",
        ],
        "biz": ["a mobile dog-grooming van", "a vegan food truck", "a tutoring app for rural students", "a bike repair café", "an AI note-taking tool for doctors", "a community solar project"],
        "ctx": ["We have a budget of 20k.", "My manager is very numbers-driven.", "It's for a local startup competition."],
    },
    "writing_with_subquestions": {
        "templates": [
            "Write a short essay on {topic}. Then answer: 1) What is your strongest argument? 2) What would a critic say? 3) How would you respond?",
            "Write a blog post about {topic}, about 400 words. After that, explain which audience it targets, what tone you used, and suggest a title.",
            "Compose a speech about {topic} for a graduation ceremony. Also, what rhetorical devices did you use, and why? How long would it take to deliver?",
            "Draft an article on {topic}. Then: a) list the sources you would cite, b) write a headline, c) summarise it in one tweet.",
        ],
        "topic": ESSAY_TOPICS,
    },
    "format_transform": {
        "templates": [
            "Convert this list to JSON with keys name and age: {data}",
            "Turn the following data into a markdown table sorted by score: {data}",
            "Sort these by age and output CSV: {data}",
            "Give me a YAML version of this: {data}",
        ],
        "data": ["Anna 34, Bob 27, Chen 45, Dora 19", "name=Li score=88; name=Sam score=92; name=Eva score=75", "Paris 2.1M, Lyon 0.5M, Nice 0.34M, Lille 0.23M"],
    },
    "stance_debate": {
        "templates": [
            "Do you think {q}? Give me your honest opinion in one paragraph.",
            "Is it ethical to {e}? Take a side and defend it.",
            "Should {q2}? Answer yes or no and justify.",
            "Is it more important to {x} or to {y}? Argue for one of them.",
            "{ctx} Do we have a duty to {x}, or should we {y} instead? What's your position?",
            "Some say we should {x}, others that we should {y}. Which side are you on, and why?",
            "In your view, is it better to {x} or {y}? Defend your answer against the strongest objection.",
        ],
        "q": ["AI will replace programmers", "college is worth the cost", "pineapple belongs on pizza", "cash will disappear", "space tourism is a waste of money", "standardised tests are fair"],
        "e": ["eat meat", "use AI to write school essays", "keep animals in zoos", "clone pets", "track employees' keystrokes", "genetically edit embryos"],
        "q2": ["the voting age be lowered to 16", "homework be banned", "social media be regulated like tobacco", "billionaires exist", "cities ban cars from their centres"],
        "x": ["explore space", "protect jobs from automation", "preserve historic buildings", "fund the arts", "prioritise economic growth", "punish crime harshly"],
        "y": ["solve problems on Earth first", "let technology create new jobs", "build affordable housing", "fund hospitals", "prioritise the environment", "focus on rehabilitation"],
        "ctx": ["We argued about this at dinner.", "This came up in my philosophy seminar.", "My friend and I disagree."],
    },
    "mechanism_explanation": {
        "templates": [
            "How does {m} work?",
            "Explain the process of {m}, from start to finish.",
            "Can you explain how {m} works, and what happens if one part fails?",
            "What happens, step by step, during {m}?",
            "{ctx} I never understood how {m} works. Could you walk me through it?",
            "how does {m} actually work?? explain like im 12",
        ],
        "m": [
            "a vaccine protecting the body", "a refrigerator", "public-key encryption", "the stock market setting prices",
            "a nuclear reactor", "photosynthesis", "GPS finding my position", "a jet engine", "the immune response to a virus",
            "compound interest", "a bill becoming law in the US", "a blockchain transaction", "digestion", "a heat pump",
        ],
        "ctx": ["My son asked me and I had no answer.", "I'm studying for an exam.", "This came up at work."],
    },
}

SEQ_FOREIGN: dict[str, dict[str, list[str]]] = {
    "fr": {
        "templates": [
            "Écris un poème sur {x}.",
            "Rédige une lettre à {y} pour {z}.",
            "Calcule {m} et explique chaque étape.",
            "Écris une histoire courte sur {x}.",
            "Écris une dissertation argumentée pour ou contre {w}.",
        ],
        "x": ["la mer", "un vieux chat", "Paris sous la pluie", "l'automne"], "y": ["mon propriétaire", "mon patron", "la mairie"],
        "z": ["signaler une fuite d'eau", "demander une augmentation", "contester une amende"], "m": ["17 × 23", "15 % de 240", "la racine carrée de 196"],
        "w": ["l'uniforme scolaire", "la semaine de quatre jours", "le nucléaire"],
    },
    "es": {
        "templates": [
            "Escribe un cuento sobre {x}.",
            "Redacta un correo a {y} para {z}.",
            "Resuelve: {m}. Explica paso a paso.",
            "Escribe una función en Python que {c}.",
            "Escribe un ensayo persuasivo sobre {w}.",
        ],
        "x": ["un perro perdido", "un faro abandonado", "una abuela inventora"], "y": ["mi jefe", "el casero", "el colegio"],
        "z": ["pedir vacaciones", "quejarme del ruido", "justificar una ausencia"], "m": ["2x + 7 = 19", "el 12% de 350", "x^2 - 9 = 0"],
        "c": ["invierta una cadena", "cuente las vocales de un texto", "ordene una lista de números"], "w": ["los uniformes escolares", "la energía nuclear"],
    },
    "de": {
        "templates": [
            "Schreibe ein Gedicht über {x}.",
            "Schreibe eine E-Mail an {y}, um {z}.",
            "Berechne {m} und erkläre den Rechenweg.",
            "Schreibe eine Geschichte über {x}.",
            "Übersetze ins Englische: \"{t}\"",
        ],
        "x": ["den Herbst", "einen Roboter", "die Nordsee"], "y": ["meinen Vermieter", "meine Chefin", "die Schule"],
        "z": ["eine Reparatur anzufragen", "Urlaub zu beantragen", "mich zu entschuldigen"], "m": ["17 mal 23", "15 Prozent von 240", "die Fläche eines Kreises mit Radius 4"],
        "t": ["Ich komme morgen etwas später, weil mein Zug ausfällt.", "Wir freuen uns auf die Zusammenarbeit."],
    },
    "zh": {
        "templates": [
            "写一首关于{x}的诗。",
            "计算{m}，并写出步骤。",
            "用Python写一个函数，{c}。",
            "写一封给{y}的信，{z}。",
        ],
        "x": ["秋天", "大海", "故乡"], "m": ["17乘以23", "3x + 5 = 20 中的 x", "240的15%"],
        "c": ["判断一个数是否为质数", "反转字符串"], "y": ["老师", "房东"], "z": ["请假三天", "说明暖气坏了"],
    },
    "pt": {
        "templates": [
            "Escreva um poema sobre {x}.",
            "Calcule {m} e explique.",
            "Escreva uma carta para {y} pedindo {z}.",
        ],
        "x": ["o mar", "a saudade", "uma cidade à noite"], "m": ["18% de 450", "2x - 4 = 10"],
        "y": ["meu chefe", "o síndico"], "z": ["um aumento", "o conserto do elevador"],
    },
}
