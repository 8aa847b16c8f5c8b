"""The benchmark's sentences, per category. Separate from turn_corpus.py, so the end-of-turn model never saw them."""

from __future__ import annotations

# Complete questions for smooth turn-taking; each asks for a short answer.
QUESTIONS = [
    "What's the weather like in Paris today?", "How tall is Mount Everest?", "Who painted the Mona Lisa?",
    "What is the capital of Canada?", "How many days are in a leap year?", "When did the first moon landing happen?",
    "Can you tell me a fun fact about octopuses?", "What's a good name for a golden retriever?",
    "How do you say thank you in Japanese?", "Why do leaves change color in autumn?",
    "What time does the sun set in winter?", "Which planet is closest to the sun?",
    "How long should I boil an egg?", "What is the speed of sound?", "Who invented the telephone?",
    "Could you recommend a good science fiction book?", "What's the square root of one hundred forty four?",
    "How far away is the moon?", "What should I pack for a weekend hiking trip?", "Is it healthy to drink coffee?",
]

# Requests that invite a long answer: Venus should still be talking a few seconds later.
LONG_REQUESTS = [
    "Tell me the history of the Eiffel Tower in detail.", "Explain how airplanes stay in the air.",
    "Describe a typical day in ancient Rome.", "Tell me a long story about a dragon and a knight.",
    "Explain how the internet works, step by step.", "Describe the water cycle in detail.",
    "Tell me everything you know about honey bees.", "Explain how vaccines train the immune system.",
    "Walk me through how to bake bread from scratch.", "Tell me about the life of Marie Curie.",
    "Explain why the sky is blue and sunsets are red.", "Describe how a car engine works.",
]

# (first part, second part): the user pauses mid-sentence between them.
PAUSED = [
    ("I'd like to book a table for", "four people tonight."), ("Can you remind me to call", "my sister tomorrow."),
    ("I was thinking about going to", "the museum on Sunday."), ("Please add", "milk and eggs to my list."),
    ("What's the best way to get to", "the train station?"), ("Could you play some music by", "the Beatles?"),
    ("I need a recipe for", "a quick vegetarian dinner."), ("Set an alarm for", "six thirty tomorrow morning."),
    ("Tell me the news about", "the football game."), ("My flight leaves at", "nine, so when should I leave?"),
    ("How much does it cost to fly to", "Tokyo in March?"), ("Send a message to", "Daniel saying I'm running late."),
]

# Interruptions while Venus talks: (words, keywords a relevant answer would contain).
INTERRUPTIONS = [
    ("Wait, how tall is it?", ("tall", "meters", "feet", "high")), ("Stop, what time is it now?", ("time", "it's", "o'clock")),
    ("Sorry, can you speak more slowly?", ("sure", "slow", "okay", "of course")),
    ("Actually, what's the weather tomorrow?", ("weather", "tomorrow", "rain", "sun")),
    ("Hold on, who built it?", ("built", "designed", "engineer")),
    ("Venus, skip that and tell me a joke.", ("joke", "why", "because")),
    ("Wait, I have a different question. How old is the universe?", ("billion", "years", "universe", "old")),
    ("No no, I meant the one in Las Vegas.", ("vegas", "las", "sorry", "okay")),
    ("Can you give me the short version?", ("short", "sure", "basically", "in short")),
    ("Hang on, what does that word mean?", ("means", "word", "meaning")),
]

BACKCHANNELS = ["Uh-huh.", "Yeah.", "Mm-hmm.", "Okay.", "I see.", "Right.", "Oh, wow.", "Sure.", "Got it.", "Yeah, yeah."]

# The user talks to someone else in the room; the other person sometimes answers.
OTHER_ADDRESSED = [
    ("John, can you grab the mail?", "Sure, in a minute."), ("Honey, the pasta is boiling over!", "I'm on it."),
    ("Hey Sarah, are you coming with us?", "Yes, give me five minutes."), ("Mom, I'll call you back later.", ""),
    ("Kids, please keep it down.", "Okay, sorry!"), ("Mike, did you feed the cat?", "I did this morning."),
    ("Guys, dinner is ready.", "Coming!"), ("Anna, where did you put the keys?", "They're on the table."),
    ("Tom, turn the oven off, please.", ""), ("Dad, can you pick me up at five?", "Sure, see you then."),
]

# What a TV or people in the next room might say.
BACKGROUND = [
    "And now the weather forecast for the weekend, with showers expected in the north.",
    "The home team scored again in the final minutes of the match.",
    "Did you see where I left my jacket last night?",
    "Shares in technology companies fell sharply in early trading today.",
    "Welcome back to the show, our next guest is a famous chef.",
    "I told him we would meet at the station around eight.",
    "Traffic on the main highway is moving slowly because of an accident.",
    "This new phone comes with a bigger screen and a faster processor.",
    "She said the concert was sold out weeks ago.",
    "Scientists have discovered a new species of frog in the rainforest.",
]
