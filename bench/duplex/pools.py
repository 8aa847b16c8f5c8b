"""Held-out sentence pools for the duplex benchmark: templates with slots, split by template and by name.

scenario_text.py is one fixed list per category, so every seed replays the same sentences. Here each category is a
set of templates written by hand for this benchmark (2025, no text taken from elsewhere). A template belongs to one
split, chosen by a stable hash of its text (about 60/20/20), and so does every sentence it makes; names are split
the same way, by the name's own hash, and a template is only ever filled with names of its own split. So weights
and thresholds fitted on "train"/"dev" are reported on "test" sentences and names no fitting ever saw.

Template syntax: `{slot}` takes a value from `_SLOTS` (`{name}`, `{name2}`: given names of the split; `{who}`: a
given name or a role such as "Mom" or "kids"), `[a|b|c]` picks one alternative, and in a paused request ` | ` marks
where the user pauses. Each template yields a few fills, chosen by a generator seeded with the template's hash.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from functools import cache

SPLITS = ("train", "dev", "test")
CATEGORIES = ("questions", "long_requests", "paused", "interruptions", "backchannels", "other_addressed",
              "background", "short_turns")

# Explicit claims of the floor; an interruption without any of them must be recognised from what it asks.
STOP_CUES = ("wait", "stop", "hold on", "hang on", "venus", "pause", "one second", "one sec", "enough", "cancel",
             "never mind", "excuse me", "sorry", "actually", "listen", "no no", "quiet", "shut up")
PAUSE_KINDS = ("preposition", "determiner", "verb", "conjunction", "number", "filler", "before_name", "auxiliary")
VOCATIVE_POSITIONS = ("start", "middle", "end", "none")

# Given names from many languages; none is also a common English word, a place or a slot value below.
GIVEN_NAMES = (
    # English-speaking countries
    "Jessica", "Lauren", "Ethan", "Tyler", "Logan", "Brandon", "Heather", "Nicole", "Derek", "Keisha", "Dashawn",
    "Shauna", "Tremaine", "Siobhan", "Niamh", "Ciaran", "Aoife", "Declan", "Eilidh", "Callum", "Morag",
    "Rhys", "Cerys", "Dylan", "Gwen", "John", "Sarah", "Mike", "Tom", "Daniel",
    # Spanish and Portuguese
    "Sofia", "Mateo", "Diego", "Lucia", "Camila", "Javier", "Alejandro", "Valentina", "Santiago", "Ximena",
    "Rodrigo", "Paloma", "Esteban", "Guadalupe", "Joaquin", "Ignacio", "Renata", "Beatriz", "Thiago", "Joao",
    "Larissa", "Carlos", "Nayeli", "Itzel",
    # Italian, French, German, Dutch, Nordic
    "Giulia", "Francesca", "Lorenzo", "Chiara", "Giovanni", "Alessandro", "Camille", "Margaux", "Theo", "Juliette",
    "Mathieu", "Amelie", "Benoit", "Chloe", "Lukas", "Jannik", "Anneke", "Greta", "Lotte", "Jurgen", "Freya",
    "Astrid", "Bjorn", "Ingrid", "Lars", "Sigrid", "Elin", "Mikkel", "Sven", "Anna",
    # Slavic, Greek, Baltic
    "Dmitri", "Katya", "Natasha", "Oksana", "Pavel", "Bogdan", "Zofia", "Milena", "Tomasz", "Irina", "Vesna",
    "Goran", "Eleni", "Nikos", "Dimitra", "Yannis", "Katarzyna", "Aleksander",
    # Arabic, Turkish, Persian, Hebrew
    "Omar", "Layla", "Yusuf", "Fatima", "Karim", "Amira", "Zainab", "Tariq", "Hassan", "Nour", "Samir", "Rania",
    "Emre", "Elif", "Mehmet", "Zeynep", "Burak", "Ayse", "Darius", "Shirin", "Reza", "Parisa", "Farhad", "Noa",
    "Yael", "Avi", "Eitan", "Tamar", "Shira",
    # South Asian
    "Arjun", "Ananya", "Rohan", "Kavya", "Vikram", "Deepa", "Sanjay", "Meera", "Rahul", "Aditi", "Nikhil",
    "Lakshmi", "Ravi", "Pooja", "Suresh", "Divya", "Imran", "Ayesha", "Farhan", "Nadia", "Priya", "Anil",
    # East and Southeast Asian
    "Wei", "Mei", "Jun", "Ming", "Jing", "Xiaoling", "Hao", "Lian", "Yuki", "Haruto", "Kenji", "Aiko", "Hiroshi",
    "Emi", "Takumi", "Yui", "Minjun", "Jiwoo", "Seojun", "Hana", "Jisoo", "Eunji", "Dohyun", "Linh", "Minh",
    "Thao", "Tuan", "Huong", "Somchai", "Niran", "Malee", "Putri", "Budi", "Dewi", "Agus", "Maricel", "Paolo",
    # African
    "Amara", "Kwame", "Chidi", "Ngozi", "Thabo", "Zanele", "Kofi", "Abena", "Tunde", "Folake", "Ayodele", "Wanjiru",
    "Otieno", "Amani", "Sipho", "Nomvula", "Kemi", "Chiamaka", "Femi", "Nia",
    # Pacific
    "Aroha", "Tane", "Keala", "Moana",
)
# How people address family and friends instead of a name. Common words, so they are split like names.
ROLES = ("Mom", "Dad", "Mum", "honey", "sweetie", "kids", "guys", "buddy", "babe", "darling", "Grandma", "Grandpa",
         "Nana", "Granny", "sweetheart", "Auntie", "Papa", "Mama", "kiddo", "champ", "sis", "folks", "Mommy", "Daddy",
         "Uncle", "Granddad", "Nonna", "Abuela", "Ma", "Pa", "mate", "bro", "son", "dear", "boys", "girls", "ladies",
         "Nanny", "pal", "chief")
# Names and roles the old fixed lists (scenario_text, turn_corpus) or the runtime's own name lexicons
# (engine/runtime/cues.py GIVEN_NAMES, OTHER_VOCATIVES) already hold: rules were tuned with them, so they are
# always train, never dev or test.
_SEEN_BEFORE = frozenset({"John", "Sarah", "Mike", "Tom", "Anna", "Daniel", "Carlos", "Priya", "Mom", "Dad", "Mum",
                          "honey", "sweetie", "kids", "guys", "buddy", "babe", "darling"})
NAMES = GIVEN_NAMES + ROLES

# Slot values shared by all splits (the split is by template and by name, not by city or dish).
_SLOTS: dict[str, tuple[str, ...]] = {
    "city": ("Nairobi", "Lima", "Osaka", "Denver", "Hanoi", "Marseille", "Dublin", "Cape Town", "Vancouver",
             "Krakow", "Melbourne", "Istanbul", "Bogota", "Oslo", "Mumbai", "Seattle", "Reykjavik", "Manila",
             "Prague", "Buenos Aires"),
    "city2": ("Montreal", "Athens", "Singapore", "Houston", "Edinburgh", "Accra", "Valparaiso", "Busan",
              "Valencia", "Perth"),
    "country": ("Kenya", "Peru", "Portugal", "Vietnam", "Norway", "Chile", "Egypt", "Mongolia", "New Zealand",
                "Morocco", "Finland", "Argentina", "Thailand", "Ghana", "Iceland"),
    "day": ("today", "tomorrow", "this weekend", "on Saturday", "tonight", "tomorrow afternoon"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "language": ("Spanish", "Italian", "Korean", "German", "Portuguese", "Swahili", "Hindi", "Greek", "Turkish",
                 "Dutch", "Arabic", "Polish"),
    "phrase": ("good night", "excuse me", "how are you", "I'm hungry", "see you tomorrow", "happy birthday",
               "where is the bathroom", "nice to meet you"),
    "num": ("seven", "twelve", "fifteen", "eight", "twenty three", "nine", "forty", "sixty six", "eleven"),
    "num2": ("three", "six", "four", "thirteen", "nineteen", "five", "twenty"),
    "minutes": ("five", "ten", "fifteen", "twenty", "twenty five", "forty", "forty five", "ninety"),
    "clock": ("six thirty", "a quarter past seven", "eight", "noon", "half past four", "nine fifteen", "ten"),
    "book": ("Pride and Prejudice", "The Odyssey", "Don Quixote", "Frankenstein", "Moby Dick", "The Little Prince",
             "One Hundred Years of Solitude", "War and Peace"),
    "film": ("Jaws", "Casablanca", "Spirited Away", "The Godfather", "Jurassic Park", "Amelie", "Parasite"),
    "store": ("the pharmacy", "the post office", "the hardware store", "the bakery", "the bank",
              "the farmers market", "the swimming pool", "the garden center"),
    "oven_food": ("a whole chicken", "sweet potatoes", "a salmon fillet", "a pork shoulder", "banana bread",
                  "stuffed peppers"),
    "snack": ("a banana", "an avocado", "a slice of pizza", "a cup of rice", "a boiled egg", "a handful of almonds"),
    "dog_food": ("grapes", "carrots", "chocolate", "cheese", "blueberries", "peanut butter", "popcorn"),
    "animal": ("a cheetah", "an ostrich", "a horse", "a kangaroo", "a greyhound", "a grizzly bear"),
    "animals": ("tortoises", "parrots", "house cats", "goldfish", "elephants", "hamsters", "sea turtles"),
    "planet": ("Mars", "Jupiter", "Saturn", "Neptune", "Uranus", "Mercury"),
    "holiday": ("Thanksgiving", "Easter", "Diwali", "Lunar New Year", "Hanukkah", "Mother's Day", "Eid"),
    "word": ("serendipity", "ubiquitous", "ephemeral", "melancholy", "pragmatic", "nostalgia", "resilient"),
    "spell": ("necessary", "rhythm", "Wednesday", "restaurant", "definitely", "separate", "accommodate"),
    "adj": ("happy", "tired", "big", "angry", "quick", "beautiful", "boring"),
    "produce": ("a tomato", "an avocado", "a cucumber", "a pumpkin", "an eggplant", "rhubarb", "a peanut"),
    "sport": ("soccer", "basketball", "volleyball", "rugby", "baseball", "ice hockey", "water polo"),
    "continent": ("Africa", "Europe", "South America", "Asia", "North America"),
    "ocean": ("Pacific", "Atlantic", "Indian", "Arctic"),
    "grocery": ("oat milk", "bananas", "dish soap", "a bag of rice", "paper towels", "frozen peas", "olive oil",
                "cat food", "tortillas"),
    "pet": ("black cat", "tortoise", "parrot", "hamster", "rescue puppy", "pair of goldfish"),
    "team": ("the Lakers", "the Yankees", "Arsenal", "Barcelona", "the Blue Jays", "the All Blacks"),
    "team2": ("the Celtics", "the Red Sox", "Chelsea", "Real Madrid", "the Dodgers", "the Wallabies"),
    "chore": ("water the plants", "call the plumber", "take out the recycling", "charge my phone", "feed the fish",
              "pay the electricity bill", "defrost the chicken", "book a haircut"),
    "landmark": ("the Great Wall of China", "the Colosseum", "Machu Picchu", "the Golden Gate Bridge",
                 "Stonehenge", "the Taj Mahal", "Angkor Wat", "the Panama Canal"),
    "machine": ("a refrigerator", "a nuclear reactor", "a microwave oven", "GPS", "a jet engine", "a solar panel",
                "a digital camera", "an electric motor", "a 3D printer"),
    "dish": ("lasagna", "ramen", "paella", "dumplings", "croissants", "a chocolate cake", "chicken tikka masala",
             "pad thai"),
    "character": ("a lost robot", "a pirate who is afraid of water", "a fox and a clever crow",
                  "two kids who find a secret door", "a lighthouse keeper", "a very sleepy dragon"),
    "era": ("in medieval England", "during the Ming dynasty", "in ancient Egypt", "in the Viking age",
            "during the gold rush", "during the Industrial Revolution"),
    "game": ("chess", "cricket", "American football", "poker", "mahjong", "rugby", "the board game Go", "bridge"),
    "creature": ("blue whales", "wolves", "monarch butterflies", "ants", "crows", "tardigrades", "mushrooms",
                 "sea otters"),
    "pair": ("weather and climate", "stocks and bonds", "a virus and a bacterium", "baking soda and baking powder",
             "alligators and crocodiles", "a latte and a cappuccino"),
    "famous": ("Leonardo da Vinci", "Nelson Mandela", "Ada Lovelace", "Frida Kahlo", "Albert Einstein",
               "Nikola Tesla", "Jane Austen", "Genghis Khan"),
    "process": ("a hurricane forms", "a star is born", "mountains form", "a caterpillar turns into a butterfly",
                "a bill becomes a law", "a wound heals"),
    "goal": ("building strength at home", "my first marathon", "someone with a bad back",
             "beginners with no equipment"),
    "work": ("Hamlet", "The Lord of the Rings", "Romeo and Juliet", "The Great Gatsby", "the first Star Wars film",
             "Les Miserables"),
    "war": ("the First World War", "the American Civil War", "the Hundred Years War", "the Cold War"),
    "choice": ("renting versus buying a house", "electric versus petrol cars", "working from home",
               "learning piano versus guitar", "public versus private schools"),
    "system": ("the human heart", "the stock exchange", "a mortgage", "the immune system", "the electoral college",
               "a search engine", "the kidneys"),
    "plant": ("tomatoes", "roses", "lavender", "strawberries", "chili peppers", "potatoes", "an apple tree"),
    "skill": ("photography", "investing", "knitting", "playing the guitar", "coding in Python", "sailing",
              "public speaking"),
    "poem": ("autumn in the mountains", "a city at night", "my grandmother's kitchen", "the first day of spring",
             "a long train ride"),
    "tech": ("the bicycle", "photography", "video games", "the printing press", "aviation", "the radio"),
    "event": ("the Apollo thirteen mission", "the fall of the Roman Empire", "the Cuban missile crisis",
              "the first modern Olympic Games", "the Chernobyl disaster"),
    "theory": ("the theory of relativity", "supply and demand", "natural selection", "compound interest",
               "the greenhouse effect", "plate tectonics"),
    "discovery": ("penicillin", "the structure of DNA", "electricity", "the planet Neptune", "X-rays"),
    "artist": ("Adele", "Coldplay", "Bob Marley", "Miles Davis", "Fela Kuti", "Nina Simone", "the Rolling Stones"),
    "relative": ("aunt", "brother", "grandfather", "cousin", "neighbor", "best friend"),
    "hobby": ("gardening", "rock climbing", "old maps", "baking", "board games", "birdwatching"),
    "district": ("the old town", "the harbor", "the university", "the stadium", "the north side", "the city center"),
    "room": ("kitchen", "bedroom", "hallway", "living room", "garage", "porch"),
    "metric": ("air quality", "humidity", "wind speed", "UV index", "pollen count"),
    "appt": ("dentist appointment", "haircut", "team meeting", "yoga class", "parent teacher meeting"),
    "news": ("sports", "business", "science", "local", "world"),
    "takeaway": ("Thai food", "two large pizzas", "sushi", "burritos", "a curry"),
    "count": ("two", "three", "four", "six", "eight"),
    "status": ("running late", "on my way", "stuck in traffic", "at the store", "almost home"),
    "genre": ("jazz", "reggae", "classical", "country", "lo-fi", "Brazilian", "piano"),
    "cuisine": ("Ethiopian", "Mexican", "Lebanese", "Korean", "vegetarian", "Greek"),
    "topic": ("volcanoes in Iceland", "the history of chocolate", "how tides work", "the Silk Road",
              "deep sea creatures", "the first computers"),
    "appliance": ("oven", "iron", "heater", "coffee machine", "stove"),
    "subject": ("the party", "the contract", "the trip", "the new schedule", "dinner on Friday"),
    "term": ("inflation", "a black hole", "an algorithm", "photosynthesis", "a filibuster", "entropy"),
    "place": ("Patagonia", "Zanzibar", "Tasmania", "Bhutan", "Lapland", "Sardinia"),
    "animal2": ("jellyfish", "owls", "bats", "koalas", "hummingbirds"),
    "region": ("the coast", "the northern valleys", "the capital", "the mountains", "the islands"),
    "weather": ("heavy rain", "clear skies", "strong winds", "light snow", "thunderstorms", "thick fog"),
    "road": ("ring road", "bridge on Fifth Avenue", "northbound motorway", "tunnel under the river"),
    "station": ("Radio Sunrise", "ninety nine point five FM", "City Talk Radio", "Golden Oldies FM"),
    "show": ("Home Makeover", "The Morning Couch", "Kitchen Heroes", "Garden Rescue"),
    "ingredient": ("butter and sugar", "cream", "egg whites", "chocolate", "onions"),
    "product": ("a second blender", "two memory foam pillows", "a free carving knife", "a travel mug"),
    "sale": ("shoes", "garden furniture", "paint", "mattresses", "winter coats"),
    "lost": ("phone", "glasses", "wallet", "blue scarf", "car keys", "headphones"),
}

# Complete turns that get a short answer (smooth turn-taking).
_QUESTIONS = (
    "What's the weather [going to be|looking] like in {city} {day}?",
    "Do I need an umbrella {day}?",
    "What's the capital of {country}?",
    "How do you say {phrase} in {language}?",
    "What time is it in {city} right now?",
    "[How many ounces are in a pound|How many feet are in a mile|How many grams are in a kilo|"
    "How many seconds are in an hour|How many teaspoons are in a tablespoon]?",
    "What's {num} [times|plus|minus] {num2}?",
    "What's [ten|fifteen|twenty] percent of [eighty|two hundred|sixty five]?",
    "Who wrote {book}?",
    "When does {store} close {day}?",
    "How long should I [bake|roast] {oven_food} for?",
    "How many calories are in {snack}?",
    "Can dogs eat {dog_food}?",
    "How fast can {animal} run?",
    "How long do {animals} usually live?",
    "What's the population of {city}?",
    "How far is it from {city} to {city2}?",
    "What's the time difference between here and {city2}?",
    "How many moons does {planet} have?",
    "When is {holiday} this year?",
    "What does {word} mean?",
    "How do you spell {spell}?",
    "What's another word for {adj}?",
    "Is {produce} a fruit or a vegetable?",
    "How much is [fifty|a hundred|twenty] [euros|pounds|dollars] in [yen|rupees|pesos]?",
    "What's the [boiling|freezing] point of water in [Fahrenheit|Kelvin]?",
    "How many players are on a {sport} team?",
    "Who was the first person to [climb Everest|reach the South Pole|fly solo across the Atlantic|swim the Channel]?",
    "What year did [the Berlin Wall fall|the Titanic sink|the first iPhone come out|women first vote in {country}]?",
    "What's the [tallest mountain|longest river|biggest desert|largest lake] in {continent}?",
    "How deep is the {ocean} Ocean?",
    "Can you set a timer for {minutes} minutes?",
    "Remind me to {chore} at {clock}.",
    "Put {grocery} on the shopping list, please.",
    "What's a good [movie|board game|podcast] for a [rainy afternoon|family night|long drive]?",
    "Should I wear a [jacket|coat|sweater] {day}?",
    "What's on my schedule for {weekday}?",
    "What's the [quickest|easiest] way to [get a coffee stain out of a shirt|get rid of fruit flies|"
    "unclog a sink|clean a cast iron pan]?",
    "Can you suggest a name for a {pet}?",
    "Why do [cats purr|we yawn|onions make you cry|stars twinkle|our ears pop on a plane]?",
    "Who [directed|starred in] {film}?",
    "Is it [warmer|colder] in {city} or in {city2} {day}?",
    "Could you turn the [volume|heating|lights] [up|down] a little?",
    "Can you [flip a coin|roll a die|pick a number between one and ten] for me?",
    "What day of the week is [New Year's Day|Halloween|the fourth of July|Christmas Eve] this year?",
    "How many days are left until [the weekend|{holiday}|the end of the month]?",
    "Did {team} win last night?",
    "Is {store} open on {weekday}?",
    "How do I convert [Celsius to Fahrenheit|miles to kilometers|cups to milliliters]?",
    "What's a good substitute for [eggs|butter|buttermilk|heavy cream] in baking?",
    "Did {name} send me anything [today|this morning]?",
    "Where's the nearest [gas station|ATM|coffee shop|pharmacy that's still open]?",
    "How long does it take to hard boil [an egg|a duck egg|a quail egg]?",
    "Which [is bigger|is heavier|came first], [a lion or a tiger|the chicken or the egg|an elephant or a blue whale]?",
    "What's the score in the {team} game?",
    "Is there a full moon [tonight|this week]?",
    "What's my [next meeting|first appointment] [tomorrow|on {weekday}]?",
    "Are there any [delays|strikes] on the trains [today|this morning]?",
)

# Requests that invite a long answer (Venus should still be talking seconds later).
_LONG_REQUESTS = (
    "Tell me the [whole|full] history of {landmark}.",
    "Explain how {machine} works, [step by step|from start to finish|in detail].",
    "Walk me through [how to make|a recipe for] {dish} from scratch.",
    "Tell me a long [bedtime|adventure|mystery] story about {character}.",
    "Describe what everyday life was like {era}, in as much detail as you can.",
    "Can you explain the rules of {game} [to me|from the very beginning]?",
    "Give me a detailed plan for [a week|three days|a long weekend] in {country}.",
    "Tell me everything you know about {creature}.",
    "Explain the difference between {pair}, with examples.",
    "I'd like to hear the life story of {famous}.",
    "Talk me through how {process}.",
    "Could you put together a full workout plan for {goal}?",
    "Explain the plot of {work} from beginning to end.",
    "Tell me about the causes of {war} and what happened afterwards.",
    "Go through the pros and cons of {choice} in detail.",
    "How does {system} work? Take your time and explain it properly.",
    "I'm planning a garden this spring, tell me everything about growing {plant}.",
    "Teach me the basics of {skill}, starting from zero.",
    "Make up a long poem about {poem}.",
    "Summarize the history of {tech} from the beginning until today.",
    "What happened during {event}? Give me the whole story.",
    "Explain climate change to me like I'm [twelve|new to the topic|a first year student], with lots of examples.",
    "Tell me how [tea|coffee|chocolate|paper|glass|cheese] is made, from the raw material to the shop.",
    "Describe the [geography|culture|food] of {country} in detail.",
    "Help me understand {theory}, with a few everyday examples.",
    "Tell me the story of how {discovery} was discovered.",
    "I want to start [running|meditating|journaling|learning a language], so tell me how to begin and what to "
    "expect in the first few months.",
    "Compare {city} and {city2} as places to live, and be thorough.",
    "Explain what happens to [a letter|a parcel|an email] from the moment I send it until it arrives.",
    "Give me a complete beginner's guide to [camping|growing herbs indoors|brewing coffee at home].",
    "Describe, one by one, the planets of the solar system and what makes each of them special.",
    "Tell me about the history of {city}, from when it was founded until now.",
    "Explain how [a recording studio|a hospital|an airport|a newspaper] works behind the scenes.",
    "Can you tell me a really long story set {era}, with lots of twists?",
    "Walk me through everything I need to know before adopting a {pet}.",
    "What's the full story behind {holiday}, and how do people celebrate it around the world?",
    "Describe how {famous} changed the world, and why people still talk about it.",
    "Go through the main arguments for and against [nuclear power|a four day work week|school uniforms].",
    "Explain how {sport} started and how the rules changed over the years.",
    "Tell me about daily life for astronauts on the space station, from waking up to going to sleep.",
    "Could you describe the journey of a coffee bean, from the farm in {country} to my cup?",
    "Explain how {system} can go wrong, and what doctors or experts do about it.",
    "Give me a long list of ideas for a rainy weekend with [kids|friends|my parents], and explain each one.",
    "Describe a walking tour of {city}, one sight at a time.",
    "Read me a long story about {character}, and take your time.",
    "Tell me all about the food of {country}, dish by dish.",
    "Explain, in detail, how to train for a [five kilometer race|long bike ride|mountain hike].",
    "I'd love a long explanation of how {creature} live and find their food.",
    "Could you go through the whole history of {sport}, from the first games to today?",
    "Describe the best road trip through {country}, day by day.",
    "Explain how money works, from barter to credit cards, with examples.",
    "Tell me about the life of {famous}, starting from childhood.",
    "Explain everything I should know about {theory}, as if I had never heard of it.",
    "Tell me about the most important inventions of the last two hundred years and why they mattered.",
)

# (pause point, template): the user pauses at " | " for 0.6-2.5 s and then finishes the sentence.
_PAUSED = (
    ("preposition", "Can you find me a cheap flight to | {city} for next weekend?"),
    ("preposition", "Remind me to pick up the dry cleaning on | {weekday} afternoon."),
    ("preposition", "What's a good place for brunch near | {district}?"),
    ("preposition", "Play the new album by | {artist}, please."),
    ("preposition", "I'm looking for a birthday present for | my {relative} who loves {hobby}."),
    ("preposition", "How long does it take to get from the airport to | {district}?"),
    ("determiner", "Could you turn on the | {room} lights?"),
    ("determiner", "What's the | {metric} in {city} right now?"),
    ("determiner", "Move my | {appt} to {weekday} morning."),
    ("determiner", "Can you read me the | {news} headlines?"),
    ("determiner", "Add a | bag of flour and {grocery} to the list."),
    ("determiner", "I need to buy some | new running shoes before {weekday}."),
    ("verb", "Can you remind me to | {chore} when I get home?"),
    ("verb", "I'd like to | learn how to make {dish} this weekend."),
    ("verb", "Please order | {takeaway} for {count} people."),
    ("verb", "Could you check | whether {store} is still open?"),
    ("verb", "I want to cancel | my gym membership at the end of the month."),
    ("verb", "Don't let me | forget to {chore} tomorrow."),
    ("conjunction", "I need flour, sugar and | {grocery} for the cake."),
    ("conjunction", "Turn off the lights and | lock the back door."),
    ("conjunction", "What can I cook if I only have rice, eggs and | some spinach?"),
    ("conjunction", "Book a table for two, but | not before {clock}."),
    ("conjunction", "Let me know when | the washing machine is done."),
    ("conjunction", "I'd go for a run now, but | is it going to rain in the next hour?"),
    ("number", "Set a timer for {minutes} | minutes for the rice."),
    ("number", "Wake me up at [six|seven|five] | [forty five|fifteen|thirty] tomorrow."),
    ("number", "Book a table for {count} | at half past seven on {weekday}."),
    ("number", "How much is [two hundred|fifty|eighty] | [euros|pounds] in dollars?"),
    ("number", "Add [two|three|six] | cartons of oat milk to the list."),
    ("number", "Is flight [three|seven|nine] [forty|sixty|twenty] | [two|one|eight] on time today?"),
    ("filler", "Play some, um, | {genre} music."),
    ("filler", "What's the name of that, uh, | movie with the talking toys?"),
    ("filler", "Can you, um, | tell me how tides work?"),
    ("filler", "I was wondering if, uh, | you could help me plan a birthday party."),
    ("filler", "Find me a, um, | {cuisine} restaurant that's open late."),
    ("filler", "Tell me about, uh, | {topic}."),
    ("filler", "So I need to, um, | send an email to my landlord about the heating."),
    ("before_name", "Send a message to | {name} saying I'll be there in {minutes} minutes."),
    ("before_name", "Call | {name} on speaker."),
    ("before_name", "Did | {name} reply to my email about {subject}?"),
    ("before_name", "Remind me to wish | {name} a happy birthday on {weekday}."),
    ("before_name", "Share the grocery list with | {name}."),
    ("before_name", "Invite | {name} and {name2} to dinner on {weekday}."),
    ("before_name", "Text | {name} that I'm {status}."),
    ("auxiliary", "Could you | help me write a thank you note to my {relative}?"),
    ("auxiliary", "I think I | left the {appliance} on, can you check?"),
    ("auxiliary", "Would it be | cheaper to take the train or drive to {city}?"),
    ("auxiliary", "Is there | a pharmacy open near me right now?"),
    ("auxiliary", "Do you | know any good hiking trails near {city}?"),
    ("auxiliary", "Can you | tell me what's on my calendar for {weekday}?"),
    ("preposition", "Put the [cereal|olive oil|dish soap] back in | the cupboard above the sink."),
    ("preposition", "What's the fastest route from here to | {store}?"),
    ("determiner", "Turn the | [heating|air conditioning] down a couple of degrees."),
    ("determiner", "Remind me about the | {appt} an hour before it starts."),
    ("verb", "Could you play | the podcast I was listening to yesterday?"),
    ("verb", "I need to buy | a present for my {relative} before {weekday}."),
    ("conjunction", "Do I have time to go for a walk or | is it going to rain soon?"),
    ("conjunction", "Set an alarm for {clock} and | another one ten minutes later."),
    ("conjunction", "Find me a recipe with chickpeas, spinach and | something spicy."),
    ("number", "Set the oven to [one eighty|two hundred|two twenty] | degrees."),
    ("number", "Remind me in [twenty|thirty|ninety] | minutes to check the laundry."),
    ("filler", "What was the, uh, | name of that bakery we went to last week?"),
    ("filler", "Let me think, I want, um, | something light for dinner tonight."),
    ("filler", "How do you, like, | get candle wax out of a carpet?"),
    ("before_name", "What time is | {name} landing [tonight|tomorrow]?"),
    ("before_name", "Put lunch with | {name} in my calendar for {weekday}."),
    ("before_name", "Tell | {name} I'll be there at {clock}."),
    ("auxiliary", "Should I | bring an umbrella to work {day}?"),
    ("auxiliary", "I'd | like to hear something relaxing."),
    ("auxiliary", "Are we | out of eggs, or did I buy some on {weekday}?"),
)

# (template, keywords a relevant answer would contain); about half open with an explicit stop cue.
_INTERRUPTIONS = (
    # with a stop cue
    ("[Wait|Hold on], how tall is it exactly?", ("meters", "feet", "tall", "high")),
    ("Stop, stop. What time is it in {city}?", ("time", "o'clock", "{city}")),
    ("[Wait|Hang on], can you say that again more slowly?", ("sure", "again", "slowly", "okay")),
    ("Hold on, what does {term} mean?", ("means", "{term}")),
    ("Wait a second, who [built|designed] it?", ("built", "designed", "architect", "engineer")),
    ("Venus, [stop|wait], set a timer for {minutes} minutes.", ("timer", "{minutes}", "minutes", "set")),
    ("Stop, that's enough. Just give me the summary.", ("summary", "short", "basically", "in short")),
    ("Hold on, is that really true?", ("yes", "true", "actually", "correct")),
    ("Wait, wait, how do you spell that?", ("spelled", "letters", "spell")),
    ("Venus, what's the weather in {city} {day}?", ("weather", "{city}", "rain", "sun", "degrees")),
    ("Hang on, how much does it cost?", ("cost", "price", "dollars", "euros")),
    ("Wait, go back. What was the first step again?", ("first", "step", "start")),
    ("Hold on, I missed the name. Who was that?", ("name", "was", "called")),
    ("Venus, hold on. Where is {place} exactly?", ("located", "{place}", "north", "south", "east", "west")),
    ("Venus, stop, I have to go. Remind me about this later.", ("remind", "later", "okay", "sure")),
    ("Wait, how many people live there?", ("million", "people", "population")),
    ("Stop for a second, can you say that in {language}?", ("{language}",)),
    ("Hold on, how far is that from here?", ("kilometers", "miles", "far", "away")),
    ("Wait, is that safe for [children|dogs]?", ("safe", "dangerous", "children", "dogs")),
    ("Hang on, let me grab a pen. Okay, what were the ingredients?", ("ingredients", "you need", "cups", "grams")),
    ("Venus, one second. What's {num} times {num2}?", ("times", "equals", "is")),
    ("Wait, which year was that?", ("year", "in", "nineteen", "century")),
    ("Venus, pause. Can you turn the volume down?", ("volume", "down", "okay", "sure", "lower")),
    ("Hold on, hold on. Does that apply to {country} too?", ("{country}", "yes", "no", "also")),
    # without one
    ("[Can|Could] we [switch topics|talk about something else]?", ("sure", "topic", "what", "talk")),
    ("What's the weather going to be like {day}, by the way?", ("weather", "rain", "sun", "degrees")),
    ("I meant the one in {city}, not this one.", ("{city}", "oh", "the one")),
    ("How old is {landmark}?", ("years", "old", "built", "century")),
    ("Just give me the quick version, please.", ("quick", "short", "basically", "in short")),
    ("That's not what I asked. I wanted to know about {topic}.", ("{topic}",)),
    ("Okay, but how does that compare to {city2}?", ("{city2}", "compared", "than")),
    ("I already know that part. What happened next?", ("next", "then", "after")),
    ("Do you know how to say that in {language}?", ("{language}",)),
    ("Let's do something else. Tell me a joke instead.", ("joke", "why", "because")),
    ("Can you tell me about {animal2} instead?", ("{animal2}",)),
    ("No, I asked about {city}, not {city2}.", ("{city}", "oh", "okay")),
    ("Skip the details, how does it end?", ("end", "finally", "in the end")),
    ("So how long does the whole thing take?", ("minutes", "hours", "long", "takes")),
    ("Is there a simpler way to do that?", ("simpler", "easier", "yes", "way")),
    ("Can you just send me the recipe instead?", ("sent", "send", "message", "recipe")),
    ("Which one would you recommend?", ("recommend", "best", "suggest")),
    ("Oh, I forgot to ask, is {store} open on Sundays?", ("open", "sunday", "closed")),
    ("I think that's wrong, it was built much later.", ("later", "built", "correct", "right")),
    ("How is that spelled?", ("spelled", "letters", "spell")),
    ("Can you put on some {genre} music now?", ("playing", "{genre}", "music")),
    ("Okay, and what should I do if it [rains|gets cold]?", ("if", "rain", "cold", "should")),
    ("Did {name} call me back yet?", ("{name}", "call", "missed", "no")),
    ("Hmm, what's the cheapest option?", ("cheapest", "price", "cost", "option")),
    ("Wait, what's the difference between the two?", ("difference", "while", "whereas", "both")),
    ("Venus, that's wrong. It's in {country}.", ("{country}", "right", "correct", "mistake")),
    ("How many of those are there in {city}?", ("{city}", "about", "around", "there are")),
    ("Could you make it shorter? I only have a minute.", ("short", "quick", "minute", "sure")),
)

# Short listener reactions while Venus talks (the lexicon is small, so forms, doublings and reactions vary).
_BACKCHANNELS = (
    "[Uh-huh|Mm-hmm|Mhm|Mm].",
    "[Uh-huh|Mm-hmm], [uh-huh|mm-hmm].",
    "[Yeah|Yep|Yup][.|, yeah.]",
    "Yeah, yeah, yeah.",
    "[Okay|Alright][.|, okay.|, cool.]",
    "[Right|Right, right|Right, yeah].",
    "[Oh|Ah], [I see|okay|right|got it].",
    "Oh, [really|seriously|yeah]?",
    "[Really|Seriously|No way]?",
    "[Wow|Whoa|Huh|Hmm][.|!]",
    "[Makes sense|That makes sense|Fair enough|Good point].",
    "[Interesting|Oh, interesting|Huh, interesting].",
    "[Nice|Cool|Neat|Great][.|!]",
    "[Oh no|Oh dear|Yikes].",
    "[Exactly|Totally|Definitely|Absolutely].",
    "[Gotcha|Got you|Got it, got it].",
    "[I see, I see|I see, yeah|Oh, I see].",
    "[Mm|Hmm], [interesting|okay|I see].",
    "[Sure, sure|Sure thing|Yeah, sure].",
    "[Ha|Haha|Ha, funny].",
    "[True|That's true|So true].",
    "[Go on.|Keep going.|And then?]",
    "Uh-huh, [go on|and then]?",
    "[Wow|Oh wow], [okay|that's a lot|I didn't know that].",
    "[Yeah|Mm-hmm], that's [right|true|cool].",
    "[No kidding|You don't say].",
    "[Ooh|Aha|Oh]!",
    "Right, [okay|yeah|I remember that].",
    "[Okay, okay|Yes, yes|Yeah, okay].",
    "Oh, [nice|cool|wow], [okay|yeah].",
)

# Everyday whole turns of one to five words said to the assistant: greetings, thanks, yes and no, short questions
# and commands. Not a duplex category of its own: end of turn must not make these wait (a two-word turn can be
# whole), which the longer questions and paused requests alone never show.
_SHORT_TURNS = (
    "[Hi|Hey|Hello][.|!|, Venus.]",
    "Good [morning|afternoon|evening][.|, Venus.]",
    "[Thanks|Thank you|Thanks a lot|Cheers][.|!]",
    "[Yes|Yeah|Yep|Sure][, please.|, do it.|, go ahead.|.]",
    "[No|Nope][, thanks.|, not now.|, that's fine.|.]",
    "What time is it[?| now?| in {city}?]",
    "What day is it [today|tomorrow]?",
    "What's the date today?",
    "How are you[?| today?| doing?]",
    "[Who are you|What can you do|What's your name]?",
    "[Stop|Pause|Cancel] [that|it|the timer].",
    "[Next|Skip the] [song|track|one].",
    "Turn it [up|down][.|, please.]",
    "[Never mind|Forget it|That's all for now].",
    "Is it [raining|cold|windy] [outside|in {city}]?",
    "What's the weather [like|today]?",
    "Play [some jazz|the news|my playlist].",
    "[Louder|Quieter|Slower|Faster], please.",
    "[Say that again|Sorry, what|Come again]?",
    "[Good night|Bye|See you later][.|, Venus.]",
    "Set a timer for [five|ten|twenty] minutes.",
    "Call {name}[.|, please.]",
    "Open [my email|the calendar|the browser].",
    "Repeat that, please.",
    "Tell me a [riddle|fun fact].",
    "[Are you there|Can you hear me|Are you listening]?",
    "What's [two|seven|twelve] plus [three|nine|four]?",
    "[Okay|Alright], [thanks|thank you|good].",
    "That's [perfect|great|wrong|not right].",
    "I'm [back|home|done|ready].",
    "How [long|far] is it?",
    "Where am I?",
)

# (template, reply from the other person or "", where the vocative sits): the user talks to someone in the room.
_OTHER_ADDRESSED = (
    ("{who}, can you get the door?", "[Got it|I'm going|Yep, coming].", "start"),
    ("{who}, did you remember to [lock the car|buy milk|call the vet]?", "[Oh no, I forgot|Yes, this morning|Not yet].",
     "start"),
    ("{who}, the food is getting cold, come to the table.", "[On my way|One minute|Be right there]!", "start"),
    ("{who}, have you seen my {lost}?", "[It's on the couch|Check the kitchen|No, sorry].", "start"),
    ("{who}, please turn the TV down a bit.", "Okay, okay.", "start"),
    ("{who}, are you ready? We're already late.", "Two more minutes!", "start"),
    ("Hey {who}, what do you want for lunch?", "[Anything is fine|Maybe sandwiches|I'm not hungry yet].", "start"),
    ("{who}, your phone is ringing.", "Can you answer it for me?", "start"),
    ("{who}, don't forget your [lunch|jacket|umbrella].", "Thanks!", "start"),
    ("Oh {who}, thank you for the flowers, they're lovely.", "You're welcome.", "start"),
    ("{who}, did {name2} call you back about the weekend?", "No, not yet.", "start"),
    ("Can you, {who}, [take the trash out|walk the dog] before you go?", "Sure.", "middle"),
    ("I think, {who}, we should leave in ten minutes.", "Okay, I'll get my shoes.", "middle"),
    ("Listen, {who}, the plumber is coming at [three|noon].", "Good to know.", "middle"),
    ("You know what, {who}, let's order pizza tonight.", "Yes, good idea!", "middle"),
    ("So {who}, how was your day at [school|work]?", "[Pretty good|Long|Fine, thanks].", "middle"),
    ("Okay {who}, I'm [heading out|going to the store], need anything?", "[Some bread, please|No, I'm good].",
     "middle"),
    ("And {who}, don't eat all the cookies this time.", "", "middle"),
    ("Is this your [cup|bag|charger], {who}?", "[Yes, thanks|No, it's not mine].", "end"),
    ("Where did you park the car, {who}?", "Right outside.", "end"),
    ("Can you help me carry these boxes, {who}?", "Sure, one second.", "end"),
    ("We're out of coffee again, {who}.", "I'll buy some later.", "end"),
    ("Good morning, {who}!", "Morning!", "end"),
    ("Thanks for cooking tonight, {who}.", "My pleasure.", "end"),
    ("Did you call your [grandmother|sister|coach] back, {who}?", "Not yet.", "end"),
    ("Time for bed, {who}.", "Five more minutes!", "end"),
    ("I'll be in the garden if you need me, {who}.", "", "end"),
    ("Can somebody get the door, please?", "I'll get it!", "none"),
    ("Who finished the orange juice?", "Sorry, that was me.", "none"),
    ("Has anyone seen the remote?", "It's under the cushion.", "none"),
    ("Are you coming with us or staying home?", "I'll stay, thanks.", "none"),
    ("Could you pass me the salt?", "Here you go.", "none"),
    ("Don't touch that, it's hot!", "", "none"),
    ("I'll be back in twenty minutes, okay?", "Okay, see you.", "none"),
    ("Did you hear that noise outside?", "I think it's the neighbors.", "none"),
    ("Do you want the last piece of cake?", "No, you have it.", "none"),
    ("Can you [keep it down|turn that music down|close the window], please? I'm on a call.", "Sorry!", "none"),
    ("Is anyone using the car [tonight|tomorrow morning]?", "[I need it at eight|Not me].", "none"),
    ("Would you like [tea|coffee|some water]?", "[Oh yes, please|No, thank you].", "none"),
    ("Whose turn is it to [do the dishes|walk the dog|cook]?", "[Yours|Not mine, I did it yesterday].", "none"),
)

# What a TV, a radio or people in the next room say while Venus talks.
_BACKGROUND = (
    "[And now|Coming up next], the weather for {region}, with {weather} [through the weekend|for the rest of the week].",
    "In {sport} tonight, {team} beat {team2} [two to one|in overtime|by a single point].",
    "Police are asking drivers to avoid the {road} after a [crash|flood|fire] this morning.",
    "Stay with us, after the break we'll talk to {name} about the new book.",
    "Call now and get {product} at no extra cost.",
    "This [summer|winter], discover {city} with our special travel deals.",
    "The central bank has [raised|cut|held] interest rates for the [second|third] time this year.",
    "Now [stir|whisk] the {ingredient} slowly, and don't let it boil.",
    "The mayor of {city} promised new bike lanes before the election.",
    "Thousands of fans gathered outside the stadium to welcome the team home.",
    "You're listening to {station}, the best mix of [jazz|old favorites|today's hits].",
    "That was {artist} with a [brand new single|classic from the seventies].",
    "Tonight on the program, we meet the families rebuilding their homes after the storm.",
    "Detective, I think the [butler|neighbor] was lying about where he was that night.",
    "I can't believe you kept this from me for [three years|so long]!",
    "Captain, the engines won't hold much longer!",
    "Did {name} say she'd be home for dinner?",
    "Can you bring the laundry up when you come?",
    "The kettle's on if anyone wants tea.",
    "No, I told you, the meeting got moved to {weekday}.",
    "I'm going to take a shower, back in ten minutes.",
    "Who left the back door open again?",
    "Turn that down, I'm on the phone!",
    "Last week's episode ended with a shocking twist.",
    "Prices at the pump rose again this week, hitting a [three|five] year high.",
    "Experts recommend drinking plenty of water during this heat wave.",
    "And the goal is disallowed! The referee spotted an offside.",
    "Tomorrow will be mostly cloudy with a high of [eighteen|twenty two|nine] degrees.",
    "Our reporter {name} is live at the scene.",
    "Welcome back to {show}, where today we're [renovating a tiny kitchen|saving an overgrown garden].",
    "Buy one, get one free on all {sale} this weekend only.",
    "He's going for the record, the crowd is on its feet!",
    "I said I'd call her back, but I completely forgot.",
    "Has anybody seen the charger for the laptop?",
    "Researchers in {city} have developed a new kind of battery that charges in minutes.",
    "Breaking news: a power cut has left parts of {city} without electricity.",
    "And {name} takes the lead with just two laps to go!",
    "The museum in {city} reopens this [weekend|month] after a two year renovation.",
    "Add a pinch of salt, then let the {ingredient} rest for [ten|five] minutes.",
    "[Officials|Organizers] say the festival in {city} drew a record crowd this year.",
    "Don't miss our [big spring|end of season] sale, with up to half off on {sale}.",
    "We've got a caller on the line. Go ahead, {name}, you're on the air.",
    "Flights out of {city2} are delayed this [morning|evening] because of {weather}.",
    "[Mom|Grandpa], where did you put the big pot?",
    "I'll be there in five minutes, just let me find my [keys|shoes|bag].",
    "Could you grab some bread on your way back from {store}?",
    "You never listen to me, that's the problem!",
    "[Coming up|Later] in the show, {name} shows us how to make {dish} at home.",
    "The final score is [three to two|one all|two nil], and what a match it has been.",
    "Scientists in {country} have spotted a rare [bird|frog|butterfly] not seen in fifty years.",
    "[Sunny spells|Scattered showers] in the morning, turning [windy|colder] later in the day.",
    "This program is brought to you by [Fresh Farms|Sunny Bank|Bright Dental].",
    "[No|Yes], the blue one, it's in the second drawer.",
    "Dinner will be ready in about [twenty|forty] minutes.",
)

_PER_TEMPLATE = {"questions": 5, "long_requests": 5, "paused": 3, "interruptions": 4, "backchannels": 6,
                 "other_addressed": 6, "background": 4, "short_turns": 4}
_TOKEN = re.compile(r"\{(\w+)\}|\[([^\]]*)\]")


def stable_fraction(text: str) -> float:
    """A number in [0, 1) fixed by `text` alone (sha1), the same on every machine and Python version."""
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:12], 16) / 16**12


def split_of(text: str) -> str:
    """The split a template or a name belongs to: about 60% train, 20% dev, 20% test."""
    fraction = stable_fraction(text)
    return "train" if fraction < 0.6 else "dev" if fraction < 0.8 else "test"


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")


def _normalized(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


@cache
def _previous_sentences() -> frozenset[str]:
    """Every sentence of the fixed lists (scenario_text) and of the end-of-turn corpus, normalized."""
    from bench.duplex import scenario_text as fixed
    from bench.duplex import turn_corpus

    texts: list[str] = [*fixed.QUESTIONS, *fixed.LONG_REQUESTS, *fixed.BACKCHANNELS, *fixed.BACKGROUND]
    texts += [f"{a} {b}" for a, b in fixed.PAUSED] + [w for w, _ in fixed.INTERRUPTIONS]
    texts += [w for w, _ in fixed.OTHER_ADDRESSED] + [r for _, r in fixed.OTHER_ADDRESSED if r]
    slots = {"place": turn_corpus._PLACES, "thing": turn_corpus._THINGS, "person": turn_corpus._PEOPLE,
             "time": turn_corpus._TIMES, "topic": turn_corpus._TOPICS}
    for template in turn_corpus._TEMPLATES:
        keys = re.findall(r"\{(\w+)\}", template)
        for values in itertools.product(*(slots[k] for k in keys)):
            texts.append(template.format(**dict(zip(keys, values, strict=True))))
    return frozenset(_normalized(t) for t in texts)


def _name_split(name: str) -> str:
    return "train" if name in _SEEN_BEFORE else split_of(name)


def names(split: str) -> list[str]:
    """The given names and roles of a split, in NAMES order; no name is in two splits."""
    _check_split(split)
    return [n for n in NAMES if _name_split(n) == split]


def _fill(template: str, rng: random.Random, split: str) -> tuple[str, dict[str, str]]:
    given = [n for n in names(split) if n in GIVEN_NAMES]
    slots = dict(_SLOTS, name=tuple(given), who=tuple(names(split)))
    chosen: dict[str, str] = {}

    def pick(match: re.Match) -> str:
        slot, alternatives = match.group(1), match.group(2)
        if alternatives is not None:
            return _TOKEN.sub(pick, rng.choice(alternatives.split("|")))
        if slot not in chosen:
            if slot == "name2":
                chosen[slot] = rng.choice([n for n in given if n != chosen.get("name")] or given)
            else:
                chosen[slot] = rng.choice(slots[slot])
        return chosen[slot]

    text = _TOKEN.sub(pick, template)  # an alternative may hold a slot ("[the weekend|{holiday}]"): pick recurses
    return text[:1].upper() + text[1:], chosen


def _fills(template: str, count: int, split: str) -> list[tuple[str, dict[str, str]]]:
    rng = random.Random(template)  # str seeds are hashed with sha512: stable across runs
    seen: dict[str, dict[str, str]] = {}
    for _ in range(count * 25):
        text, chosen = _fill(template, rng, split)
        seen.setdefault(text, chosen)
        if len(seen) == count:
            break
    return list(seen.items())


def _templates(category: str) -> list[tuple[str, object]]:
    """(template text, its extra data) for one category; the split is decided by the template text."""
    if category == "questions":
        return [(t, None) for t in _QUESTIONS]
    if category == "long_requests":
        return [(t, None) for t in _LONG_REQUESTS]
    if category == "paused":
        return [(t, kind) for kind, t in _PAUSED]
    if category == "interruptions":
        return list(_INTERRUPTIONS)
    if category == "backchannels":
        return [(t, None) for t in _BACKCHANNELS]
    if category == "other_addressed":
        return [(t, (reply, position)) for t, reply, position in _OTHER_ADDRESSED]
    if category == "background":
        return [(t, None) for t in _BACKGROUND]
    if category == "short_turns":
        return [(t, None) for t in _SHORT_TURNS]
    raise ValueError(f"unknown category {category!r}; choose from {list(CATEGORIES)}")


def has_stop_cue(words: str) -> bool:
    """Whether an utterance carries an explicit stop cue (STOP_CUES) as whole words."""
    text = f" {_normalized(words)} "
    return any(f" {cue} " in text for cue in STOP_CUES)


def _item(category: str, split: str, text: str, chosen: dict[str, str], extra: object,
          rng: random.Random) -> tuple[object, str]:
    if category == "paused":
        first, second = (part.strip() for part in text.split(" | "))
        return (first, second), str(extra)
    if category == "interruptions":
        keywords = tuple(k.format(**{s: v.lower() for s, v in chosen.items()}) for k in extra)
        return (text, keywords), "cue" if has_stop_cue(text) else "no_cue"
    if category == "other_addressed":
        reply_template, position = extra
        reply = _fill(reply_template, rng, split)[0] if reply_template else ""
        return (text, reply), position
    return text, ""


def _keys(category: str, item: object) -> list[str]:
    """The normalized sentences an item has someone say (a paused request as one sentence)."""
    if category == "paused":
        return [_normalized(" ".join(item))]
    if category in ("interruptions", "other_addressed"):
        return [_normalized(t) for t in item if isinstance(t, str) and t]
    return [_normalized(item)]


@cache
def _made(category: str, split: str) -> tuple[tuple[str, object], ...]:
    """Every (tag, item) the split's templates make, one per distinct sentence, in template order."""
    items: list[tuple[str, object]] = []
    seen: set[str] = set()
    for template, extra in _templates(category):
        if split_of(template) != split:
            continue
        rng = random.Random("reply|" + template)
        for text, chosen in _fills(template, _PER_TEMPLATE[category], split):
            item, tag = _item(category, split, text, chosen, extra, rng)
            key = _keys(category, item)[0]
            if key not in seen:
                seen.add(key)
                items.append((tag, item))
    return tuple(items)


@cache
def _claimed_before(split: str) -> frozenset[str]:
    """Sentences an earlier split (train before dev before test) already says, in any category."""
    earlier = SPLITS[: SPLITS.index(split)]
    return frozenset(k for s in earlier for c in CATEGORIES for _, item in _made(c, s) for k in _keys(c, item))


@cache
def _tagged(category: str, split: str) -> tuple[tuple[str, object], ...]:
    # Two templates can make the same short sentence ("Right, yeah."): the earlier split keeps it, so no sentence
    # is in two splits; the test split also never says a sentence of the fixed lists or the end-of-turn corpus.
    banned = _claimed_before(split) | (_previous_sentences() if split == "test" else frozenset())
    items = []
    for tag, item in _made(category, split):
        if category == "other_addressed" and item[1] and _normalized(item[1]) in banned:
            item = (item[0], "")  # a reply ("Sure.") heard in an earlier split: the other person stays quiet
        if not set(_keys(category, item)) & banned:
            items.append((tag, item))
    return tuple(items)


def tagged(category: str, split: str) -> list[tuple[str, object]]:
    """(tag, item) pairs: the pause point of a paused request, "cue"/"no_cue" for an interruption, the vocative
    position of talking to others, "" otherwise."""
    _check_split(split)
    return list(_tagged(category, split))


def pool(category: str, split: str) -> list:
    """A category's items for one split, in the shapes scenario_text uses: str, (first, second) for paused,
    (words, keywords) for interruptions, (words, reply) for other_addressed."""
    return [item for _, item in tagged(category, split)]
