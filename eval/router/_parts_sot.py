"""Hand-written parts of SoT-suitable task types: answers made of independent points.

Label rule (every task type here is labelled `sot`): the answer is naturally a set of points
that can each be written without the others (ways, tips, factors, causes, differences, what-ifs,
aspects of a topic), in the user's own words, with no single artefact to compose, nothing to
compute, no code, no pasted text to transform and no stance to defend in one voice.
"""

from __future__ import annotations

TOPICS_LIFE = [
    "my sleep", "my focus when working from home", "my public speaking", "my time management",
    "my running endurance", "my posture at the desk", "my Spanish vocabulary", "my handwriting",
    "my memory for names", "my cooking on a budget", "my savings rate", "my morning routine",
    "my relationship with my teenage son", "my confidence in meetings", "my chess game",
    "the way I handle criticism", "my photography skills", "my mental health during winter",
]
ORGS = [
    "a small bakery", "a 40-person SaaS startup", "a public library", "a rural hospital",
    "a high school", "a non-profit food bank", "a family-owned hardware store", "a city council",
    "an online clothing shop", "a dental clinic", "a university research lab", "a local football club",
    "a mid-size logistics company", "a coworking space", "a regional airline", "a call centre",
]
GOALS = [
    "reduce employee turnover", "attract younger customers", "cut energy costs", "improve customer retention",
    "increase volunteer engagement", "lower no-show rates for appointments", "build a stronger online presence",
    "reduce food waste", "improve internal communication", "prepare for an economic downturn",
    "make the workplace more inclusive", "speed up onboarding of new staff", "reduce paper use",
    "get more five-star reviews", "handle seasonal demand spikes",
]
THINGS_PAIR = [
    ("renting", "buying a home"), ("electric cars", "hybrid cars"), ("public schools", "homeschooling"),
    ("freelancing", "a full-time job"), ("living in a big city", "living in a small town"),
    ("Kindle e-readers", "paper books"), ("SQL databases", "NoSQL databases"), ("yoga", "pilates"),
    ("nuclear power", "solar power"), ("learning piano", "learning guitar"), ("Android", "iOS"),
    ("agile", "waterfall project management"), ("cats", "dogs as pets for a busy person"),
    ("index funds", "picking individual stocks"), ("online degrees", "campus degrees"),
    ("trains", "planes for travel inside Europe"), ("coffee", "tea"), ("Linux", "Windows for a home server"),
    ("microservices", "a monolith for a small team"), ("remote work", "office work"),
]
TOPICS_KNOW = [
    "the Roman Empire's decline", "the Industrial Revolution", "climate change", "social media",
    "antibiotic resistance", "the printing press", "urbanisation in Africa", "the 2008 financial crisis",
    "deforestation in the Amazon", "the Cold War", "artificial intelligence in healthcare",
    "the gig economy", "microplastics in the ocean", "the Renaissance", "fast fashion",
    "the decline of bee populations", "the rise of streaming services", "obesity in children",
    "the French Revolution", "remote work", "cryptocurrency", "aging populations in Japan",
    "the spread of misinformation online", "the Black Death",
]
COUNTERFACTUALS = [
    "the internet had never been invented", "the Roman Empire had never fallen",
    "humans could photosynthesise", "the printing press had been invented 500 years earlier",
    "electricity had never been discovered", "everyone on Earth spoke the same language",
    "the dinosaurs had not gone extinct", "the Spanish Armada had won in 1588",
    "cars had never become popular", "antibiotics had never been discovered",
    "the Moon did not exist", "smartphones were banned worldwide tomorrow",
    "a four-day work week became law everywhere", "the Library of Alexandria had survived",
    "Africa had industrialised first", "the Beatles had never formed",
    "humans lived to 200 years on average", "it never rained in London",
]
EVENTS = [
    "my first half marathon", "a job interview at a big tech company", "a two-week trip to Japan",
    "moving to another country", "hosting Thanksgiving for 15 people", "a week-long camping trip",
    "starting university", "bringing home a new puppy", "a wedding on a tight budget",
    "a product launch", "a hurricane season", "a home renovation", "my first baby",
    "a job fair booth", "a school science fair", "a cross-country road trip",
]
CONTEXTS = [
    "I'm a 34-year-old nurse working night shifts.", "I run a small team of five designers.",
    "We are a family of four living in a two-bedroom flat.", "I just graduated and started my first job.",
    "I'm retired and have a lot of free time now.", "I'm a single dad with two kids under ten.",
    "I work in IT support and my manager asked me to look into this.", "I'm a teacher in a rural school.",
    "My budget is limited, about 200 dollars a month.", "English is not my first language, sorry for mistakes.",
    "I have tried a few things already but nothing stuck.", "Our company has about 120 employees.",
    "I'm a student writing a report and need a starting point.", "I live in a cold climate (Canada).",
]

SOT_TASKS: dict[str, dict[str, list[str]]] = {
    "advice_personal": {
        "templates": [
            "How can I improve {life}?",
            "{ctx} What are some practical ways to improve {life}?",
            "I've been struggling with {life} for months. {ctx} Any tips?",
            "what can i do to get better at {life}? looking for practical suggestions",
            "{ctx} I want to work on {life}. Where should I start, and what habits help most?",
            "Give me some advice on improving {life}. {ctx}",
            "Hi! {ctx} Could you share strategies that actually work for improving {life}? I've read a lot of generic stuff online.",
        ],
        "life": TOPICS_LIFE, "ctx": CONTEXTS,
    },
    "business_strategy": {
        "templates": [
            "How can {org} {goal}?",
            "I manage {org}. {ctx} What strategies could we use to {goal}?",
            "What are effective ways for {org} to {goal}? We have tried a newsletter and a discount already.",
            "Our board asked me to find ideas to {goal}. We are {org}. What options should we look at?",
            "Suggest some approaches {org} could take to {goal}, considering a limited budget.",
            "what would you recommend for {org} that wants to {goal}??",
        ],
        "org": ORGS, "goal": GOALS, "ctx": CONTEXTS,
    },
    "pros_cons": {
        "templates": [
            "What are the pros and cons of {a} versus {b}?",
            "{ctx} I'm trying to decide between {a} and {b}. What are the advantages and disadvantages of each?",
            "Can you list the benefits and drawbacks of {a} compared with {b}?",
            "What should I weigh when choosing between {a} and {b}?",
            "Advantages and disadvantages of {a} vs {b} - please be thorough, I need to make a decision soon.",
        ],
        "pair": [], "ctx": CONTEXTS,
    },
    "compare_contrast": {
        "templates": [
            "What are the main differences between {a} and {b}?",
            "Compare {a} and {b} in terms of cost, convenience and long-term impact.",
            "How do {a} and {b} differ? {ctx}",
            "Explain the key similarities and differences between {a} and {b}.",
            "Could you contrast {a} with {b}? I keep hearing both recommended.",
        ],
        "pair": [], "ctx": CONTEXTS,
    },
    "causes_effects": {
        "templates": [
            "What were the main causes of {topic}?",
            "What are the effects of {topic} on society?",
            "Explain the major factors that contributed to {topic}.",
            "{ctx} What are the consequences of {topic} for ordinary people?",
            "Why did {topic} happen? What were the political, economic and social reasons?",
            "Discuss the long-term impacts of {topic}.",
        ],
        "topic": TOPICS_KNOW, "ctx": CONTEXTS,
    },
    "counterfactual": {
        "templates": [
            "What if {cf}?",
            "What would the world look like today if {cf}?",
            "Imagine {cf}. How would daily life be different?",
            "How might history have changed if {cf}?",
            "Let's speculate: {cf}. What would the consequences be for the economy, culture and technology?",
            "what would happen if {cf}",
        ],
        "cf": COUNTERFACTUALS,
    },
    "event_preparation": {
        "templates": [
            "How should I prepare for {event}?",
            "{ctx} I have {event} coming up. What should I keep in mind?",
            "What do I need to think about before {event}?",
            "Give me a checklist of things to consider for {event}.",
            "Any tips for {event}? It's in three weeks and I'm a bit nervous.",
            "What are common mistakes people make with {event}, and how do I avoid them?",
        ],
        "event": EVENTS, "ctx": CONTEXTS,
    },
    "factors_to_consider": {
        "templates": [
            "What factors should I consider when choosing {choice}?",
            "{ctx} What should I look for when picking {choice}?",
            "Which criteria matter most when selecting {choice}?",
            "I'm shopping for {choice}. What features are important and what can I skip?",
            "What questions should I ask before committing to {choice}?",
        ],
        "choice": [
            "a used car", "a laptop for video editing", "a daycare for my toddler", "a university",
            "a web hosting provider", "a running shoe", "a family doctor", "a mortgage", "a dog breed",
            "a project management tool", "a cloud provider for a startup", "an apartment in a new city",
            "a retirement plan", "a wedding venue", "a coding bootcamp", "a CRM for a sales team",
            "a mattress", "a family car", "a therapist", "a programming language for a first project",
        ],
        "ctx": CONTEXTS,
    },
    "topic_overview": {
        "templates": [
            "Tell me about the key aspects of {field}.",
            "What are the main branches of {field}, and what does each study?",
            "Give me an overview of {field} for a complete beginner.",
            "What are the most important concepts in {field}?",
            "{ctx} Can you explain the basics of {field}?",
            "What are the core principles of {field}?",
        ],
        "field": [
            "behavioural economics", "machine learning", "cybersecurity", "permaculture", "urban planning",
            "stoic philosophy", "nutrition science", "supply chain management", "cognitive psychology",
            "renewable energy", "user experience design", "personal finance", "marine biology",
            "public health", "sports psychology", "digital marketing", "architecture", "linguistics",
        ],
        "ctx": CONTEXTS,
    },
    "health_lifestyle": {
        "templates": [
            "What are the health benefits of {habit}?",
            "{ctx} What lifestyle changes can help with {cond}?",
            "What are natural ways to manage {cond}?",
            "Is {habit} good for you? What are the benefits and possible risks?",
            "What are the warning signs of {cond}, and when should someone see a doctor?",
            "how to deal with {cond} without medication? any tips",
        ],
        "habit": [
            "swimming", "intermittent fasting", "cold showers", "meditation", "walking 10,000 steps a day",
            "drinking green tea", "strength training after 50", "journaling", "a plant-based diet", "yoga",
        ],
        "cond": [
            "high blood pressure", "chronic back pain", "anxiety", "insomnia", "seasonal allergies",
            "burnout", "type 2 diabetes", "migraines", "low energy in the afternoon", "stress at work",
        ],
        "ctx": CONTEXTS,
    },
    "career_education": {
        "templates": [
            "How can I switch careers into {job}? {ctx}",
            "What skills does a good {job} need?",
            "What are the biggest challenges of working as a {job}?",
            "{ctx} What should I learn first if I want to become a {job}?",
            "What does a typical career path look like for a {job}, and what helps people advance?",
            "What are the pros and cons of being a {job}?",
        ],
        "job": [
            "data analyst", "UX designer", "nurse practitioner", "software engineer", "electrician",
            "product manager", "high school teacher", "freelance translator", "cybersecurity analyst",
            "physiotherapist", "chef", "airline pilot", "real estate agent", "social worker",
        ],
        "ctx": CONTEXTS,
    },
    "reasons_why": {
        "templates": [
            "Why do people {behaviour}?",
            "What are the reasons {group} {behaviour2}?",
            "Why might someone {behaviour}? I'm trying to understand it better.",
            "What motivates people to {behaviour}?",
        ],
        "behaviour": [
            "procrastinate", "believe conspiracy theories", "stay in jobs they hate", "collect vintage items",
            "move back to their hometown", "quit social media", "prefer cats over dogs", "buy lottery tickets",
            "get tattoos", "choose to rent instead of buy", "join cults", "run marathons",
        ],
        "group": ["young people", "many companies", "small towns", "some countries", "older adults", "startups"],
        "behaviour2": [
            "are leaving rural areas", "are moving to four-day weeks", "struggle to keep good staff",
            "avoid the stock market", "are delaying having children", "fail in their first year",
            "are switching to electric vehicles", "distrust the news",
        ],
    },
    "challenges_risks": {
        "templates": [
            "What are the main challenges facing {topic}?",
            "What risks come with {tech}?",
            "What are the ethical concerns around {tech}?",
            "{ctx} What problems might we run into when adopting {tech}?",
            "What are the biggest obstacles to {topic}, and how could they be overcome?",
        ],
        "topic": [
            "renewable energy adoption", "public transport in the US", "small farmers", "remote teams",
            "healthcare in rural areas", "ocean conservation", "local journalism", "space exploration",
        ],
        "tech": [
            "facial recognition", "self-driving cars", "gene editing", "AI chatbots in customer service",
            "cloud migration", "smart home devices", "blockchain voting", "telemedicine",
        ],
        "ctx": CONTEXTS,
    },
    "ideas_brainstorm": {
        "templates": [
            "Give me some ideas for {thing}.",
            "Can you brainstorm {thing}? {ctx}",
            "I need inspiration: what are some good options for {thing}?",
            "Suggest a few ideas for {thing}, nothing too expensive.",
            "what are fun ideas for {thing}",
        ],
        "thing": [
            "a 10-year-old's birthday party", "team-building activities for remote staff",
            "rainy-day activities with toddlers", "a first date in a small town", "side hustles for students",
            "weekend trips from Berlin", "healthy lunches to take to work", "ways to celebrate a retirement",
            "fundraising events for a school", "gifts for a coworker who loves gardening",
            "ways to use leftover rice", "hobbies that don't need much space",
        ],
        "ctx": CONTEXTS,
    },
    "best_practices": {
        "templates": [
            "What are best practices for {area}?",
            "{ctx} What guidelines should we follow for {area}?",
            "What are common mistakes in {area}, and how can a team avoid them?",
            "What principles make {area} effective?",
            "What should every beginner know about {area}?",
        ],
        "area": [
            "password security in a small office", "running effective meetings", "code reviews",
            "writing a good CV", "managing a remote team", "backing up family photos", "onboarding new hires",
            "API design", "email etiquette at work", "negotiating a salary", "giving feedback to colleagues",
            "organising a home office", "documentation in software projects", "network security at home",
        ],
        "ctx": CONTEXTS,
    },
    "multi_aspect_explain": {
        "templates": [
            "How does {topic} affect {who}? Please cover economic, social and environmental aspects.",
            "In what ways has {topic} changed {who}?",
            "What role does {topic} play in {who}?",
            "{ctx} How is {topic} influencing {who}?",
            "Describe the impact of {topic} on {who}.",
        ],
        "topic": [
            "social media", "tourism", "automation", "climate change", "the smartphone", "globalisation",
            "streaming music", "online shopping", "remote work", "video games", "immigration",
        ],
        "who": [
            "teenagers", "small businesses", "local communities", "the job market", "family life",
            "mental health", "education", "city centres", "developing countries", "politics",
        ],
        "ctx": CONTEXTS,
    },
    "situation_options": {
        "templates": [
            "{sit} {sit2} What options do I have, and what are the trade-offs of each?",
            "{sit} {sit2} What should I consider before deciding?",
            "Long story short: {sit} {sit2} What would you suggest I look into?",
            "{sit} {sit2} How can I handle this situation? Any advice is welcome.",
            "{sit} {sit2} What are the things I should be careful about here?",
        ],
        "sit": [
            "My landlord wants to raise the rent by 25% when our lease ends in March.",
            "I got two job offers, one at a startup and one at a bank, and I have to answer by Friday.",
            "My elderly father refuses to stop driving even though his eyesight is getting worse.",
            "Our team lead quit suddenly and I've been asked to cover for her without a raise.",
            "I inherited a small apartment in a city I don't live in.",
            "My 15-year-old wants to drop out of school to become a full-time gamer.",
            "The restaurant I own lost a third of its customers after a new chain opened across the street.",
            "I have about 15k in credit card debt and a stable but modest salary.",
        ],
        "sit2": [
            "I don't want to damage the relationship.", "Money is tight right now.", "I've never dealt with this before.",
            "My partner and I disagree about what to do.", "I'd like to decide within a month.", "",
        ],
    },
    "generate_list_items": {
        "templates": [
            "Generate a list of {n} {items}.",
            "Name {n} {items} and say in a sentence why each one is worth it.",
            "Suggest {n} {items}. {ctx}",
            "Can you come up with {n} {items}?",
            "I need {n} {items} - variety please.",
        ],
        "n": ["five", "seven", "ten", "a few", "several", "8"],
        "items": [
            "name ideas for a neighbourhood bakery", "books every new manager should read", "day trips from Lisbon",
            "icebreaker questions for a workshop", "science fair project ideas for 12-year-olds", "cheap date ideas",
            "podcast topics about personal finance", "indoor plants that survive low light", "board games for families",
            "habits that help with focus", "questions to ask at the end of a job interview", "uses for an old smartphone",
        ],
        "ctx": CONTEXTS,
    },
    "guide_howto_generic": {
        "templates": [
            "How do I {task}? I'm a total beginner.",
            "What's the best way to {task}?",
            "{ctx} I want to {task}. What do I need to know?",
            "Tips for someone who wants to {task}?",
            "How to {task} - what are the most important things to get right?",
        ],
        "task": [
            "start a vegetable garden", "train for a 10k", "learn to play chess", "start investing",
            "keep houseplants alive", "make friends in a new city", "become a morning person",
            "declutter my house", "learn a new language as an adult", "start a podcast",
            "save for a house deposit", "raise chickens in the backyard", "get into birdwatching",
            "prepare a house for winter", "care for a senior dog",
        ],
        "ctx": CONTEXTS,
    },
}

SOT_FOREIGN: dict[str, dict[str, list[str]]] = {
    "fr": {
        "templates": [
            "Quels sont les avantages et les inconvénients de {x} ?",
            "Comment puis-je améliorer {y} ? Des conseils ?",
            "Quels facteurs faut-il prendre en compte avant de {z} ?",
            "Que se passerait-il si {w} ?",
        ],
        "x": ["le télétravail", "la voiture électrique", "vivre à la campagne", "l'école à la maison", "le vélo en ville"],
        "y": ["mon sommeil", "ma concentration", "mon anglais", "ma gestion du temps", "mon alimentation"],
        "z": ["acheter un appartement", "changer de métier", "adopter un chien", "partir vivre à l'étranger"],
        "w": ["internet disparaissait", "tout le monde travaillait quatre jours par semaine", "il n'y avait plus de pétrole"],
    },
    "es": {
        "templates": [
            "¿Cuáles son las ventajas y desventajas de {x}?",
            "¿Qué consejos me das para mejorar {y}?",
            "¿Qué factores debo considerar antes de {z}?",
            "¿Qué pasaría si {w}?",
        ],
        "x": ["trabajar desde casa", "los coches eléctricos", "vivir en una gran ciudad", "estudiar en línea", "el transporte público"],
        "y": ["mi productividad", "mi inglés", "mis finanzas personales", "la comunicación en mi equipo", "mi salud mental"],
        "z": ["comprar una casa", "cambiar de carrera", "abrir un restaurante", "mudarme a otro país"],
        "w": ["no existieran los teléfonos móviles", "todos habláramos el mismo idioma", "se prohibieran los coches en las ciudades"],
    },
    "de": {
        "templates": [
            "Welche Vor- und Nachteile hat {x}?",
            "Wie kann ich {y} verbessern? Hast du Tipps?",
            "Worauf sollte ich achten, wenn ich {z}?",
            "Was wäre, wenn {w}?",
        ],
        "x": ["Homeoffice", "ein Elektroauto", "das Leben auf dem Land", "ein Studium im Ausland", "eine Mietwohnung"],
        "y": ["meinen Schlaf", "meine Konzentration", "mein Zeitmanagement", "die Stimmung im Team", "meine Ernährung"],
        "z": ["ein gebrauchtes Auto kaufe", "einen Hund adoptiere", "ein Unternehmen gründe", "eine Wohnung suche"],
        "w": ["es kein Internet gäbe", "alle Menschen 150 Jahre alt würden", "Deutschland keine Autobahnen hätte"],
    },
    "zh": {
        "templates": [
            "{x}有哪些优点和缺点？",
            "如何提高{y}？有什么建议？",
            "选择{z}时应该考虑哪些因素？",
        ],
        "x": ["远程办公", "电动汽车", "在大城市生活", "在线学习", "共享单车"],
        "y": ["睡眠质量", "工作效率", "英语口语", "团队沟通", "记忆力"],
        "z": ["大学", "笔记本电脑", "租房", "保险", "职业方向"],
    },
    "pt": {
        "templates": [
            "Quais são as vantagens e desvantagens de {x}?",
            "Como posso melhorar {y}? Alguma dica?",
            "O que devo considerar antes de {z}?",
        ],
        "x": ["trabalhar em casa", "carros elétricos", "morar no interior", "estudar fora do país"],
        "y": ["meu sono", "minha produtividade", "meu inglês", "minhas finanças"],
        "z": ["comprar um carro usado", "mudar de carreira", "abrir uma loja online", "adotar um gato"],
    },
}
