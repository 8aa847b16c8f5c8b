"""Speakable answers (#23 item 3): written text is turned into the words the voice should say, before the voice."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
import soundfile as sf
from speech_helpers import RATE, have_tools, piper_voice, write_wav

from engine.audio import FileSink, FileSource, SpeechPipeline, make_transcriber, resample_clip
from engine.settings import Settings
from engine.timeline import Kind, Timeline
from engine.tts import EspeakSynthesizer
from engine.tts.normalize import speakable

CASES = {
    "numbers": [
        ("There are 7 days.", "There are seven days."),
        ("It has 1,234 rows.", "It has one thousand two hundred thirty-four rows."),
        ("Pi is about 3.14.", "Pi is about three point one four."),
        ("The total is 1,234.5 now.", "The total is one thousand two hundred thirty-four point five now."),
        ("It fell to -3 overnight.", "It fell to minus three overnight."),
        ("That is 1000000 people.", "That is one million people."),
        ("Agent 007 is here.", "Agent zero zero seven is here."),
        ("Add 0.5 cups.", "Add zero point five cups."),
        ("The range is 3-5 days.", "The range is three to five days."),
        ("Pages 10–20 cover it.", "Pages ten to twenty cover it."),
        ("It takes 3 - 5 days.", "It takes three to five days."),
        ("So 10 - 3 is 7.", "So ten minus three is seven."),
        ("It runs 5x faster.", "It runs five times faster."),
        ("It is 1.5x faster.", "It is one point five times faster."),
        ("Over 100+ people came.", "Over one hundred plus people came."),
        ("Turn on 2FA for 3D and 4K.", "Turn on 2FA for 3D and 4K."),
        ("Call 911 now.", "Call nine one one now."),
    ],
    "ordinals": [
        ("She came 1st and he came 22nd.", "She came first and he came twenty-second."),
        ("The 3rd time, the 101st try.", "The third time, the one hundred first try."),
    ],
    "arithmetic": [
        ("12 x 14 = 168", "twelve times fourteen equals one hundred sixty-eight"),
        ("12 × 14 = 168", "twelve times fourteen equals one hundred sixty-eight"),
        ("So 2+2=4.", "So two plus two equals four."),
        ("Then 10 - 3 = 7.", "Then ten minus three equals seven."),
        ("We get 6 * 7 = 42.", "We get six times seven equals forty-two."),
        ("And 10 / 4 = 2.5 exactly.", "And ten divided by four equals two point five exactly."),
        ("Also 9 ÷ 3 = 3.", "Also nine divided by three equals three."),
        ("Note 2^10 = 1024.", "Note two to the power of ten equals one thousand twenty-four."),
        ("The area is 5^2 = 25.", "The area is five squared equals twenty-five."),
        ("It is 12/14 of the way.", "It is twelve over fourteen of the way."),
        ("Use 3/4 of a cup.", "Use three quarters of a cup."),
        ("Add 1/2 a spoon.", "Add one half a spoon."),
        ("It is a 50/50 chance.", "It is a fifty-fifty chance."),
        ("Open 24/7.", "Open twenty-four seven."),
        ("A 1920x1080 screen.", "A one thousand nine hundred twenty by one thousand eighty screen."),
        ("Check that 5 > 3.", "Check that five is greater than three."),
    ],
    "percentages": [
        ("It is 50% done.", "It is fifty percent done."),
        ("Rates rose 2.5 % today.", "Rates rose two point five percent today."),
        ("Expect 10-20% more.", "Expect ten to twenty percent more."),
    ],
    "currency": [
        ("It costs $5.", "It costs five dollars."),
        ("It costs $1.", "It costs one dollar."),
        ("That is $5.50 each.", "That is five dollars and fifty cents each."),
        ("Only $0.99 today.", "Only ninety-nine cents today."),
        ("A fee of €20 applies.", "A fee of twenty euros applies."),
        ("It was £3.20 then.", "It was three pounds and twenty pence then."),
        ("They raised $5 million.", "They raised five million dollars."),
        ("Revenue hit $1.5B.", "Revenue hit one point five billion dollars."),
        ("A loss of -$40.", "A loss of minus forty dollars."),
        ("It costs $1,200.", "It costs one thousand two hundred dollars."),
        ("It is 15 € here.", "It is fifteen euros here."),
        ("Plans start at $50/month.", "Plans start at fifty dollars per month."),
        ("It costs ~$50.", "It costs about fifty dollars."),
        ("That is 30 USD.", "That is thirty dollars."),
    ],
    "times": [
        ("Meet at 3:40.", "Meet at three forty."),
        ("The train leaves at 15:05.", "The train leaves at fifteen oh five."),
        ("Lunch is at 3:40 pm.", "Lunch is at three forty PM."),
        ("Wake me at 9am.", "Wake me at nine AM."),
        ("It starts at 7 p.m. Be there.", "It starts at seven PM. Be there."),
        ("Call at 10:00.", "Call at ten o'clock."),
        ("Land at 18:00.", "Land at eighteen hundred."),
        ("Set it for 6:30 AM tomorrow.", "Set it for six thirty AM tomorrow."),
        ("Open 10 a.m.–2 p.m. daily.", "Open ten AM to two PM daily."),
    ],
    "dates": [
        ("It is due 2026-05-01.", "It is due May first, twenty twenty-six."),
        ("Born on 12/25/1990.", "Born on December twenty-fifth, nineteen ninety."),
        ("On May 1, 2026 we start.", "On May first, twenty twenty-six we start."),
        ("See you on March 3rd.", "See you on March third."),
        ("Due on 1 May 2026.", "Due on the first of May, twenty twenty-six."),
        ("It opened in Jan. 2020.", "It opened in January twenty twenty."),
    ],
    "years": [
        ("It happened in 1999.", "It happened in nineteen ninety-nine."),
        ("Since 2010, prices rose.", "Since twenty ten, prices rose."),
        ("From 1999-2005 it grew.", "From nineteen ninety-nine to two thousand five it grew."),
        ("Music of the 1980s.", "Music of the nineteen eighties."),
        ("Back in the '90s.", "Back in the nineties."),
        ("Rome fell in 476 AD.", "Rome fell in four hundred seventy-six AD."),
        ("Built around 1200 BC.", "Built around twelve hundred BC."),
        ("It dates to 1200 BC.", "It dates to twelve hundred BC."),
        ("We sold 1999 units.", "We sold one thousand nine hundred ninety-nine units."),
        ("Sales rose in Q3 2024.", "Sales rose in Q3 twenty twenty-four."),
        ("2024 was a leap year.", "twenty twenty-four was a leap year."),
    ],
    "units": [
        ("It is 5 km away.", "It is five kilometers away."),
        ("Run 1 km first.", "Run one kilometer first."),
        ("It weighs 70kg.", "It weighs seventy kilograms."),
        ("The room is 4 m wide.", "The room is four meters wide."),
        ("Cut 30 cm and 5 mm.", "Cut thirty centimeters and five millimeters."),
        ("Walk 3 mi or 6 ft.", "Walk three miles or six feet."),
        ("It is 13in wide.", "It is thirteen inches wide."),
        ("Put 5 in the box.", "Put five in the box."),
        ("Add 2 lb and 8 oz.", "Add two pounds and eight ounces."),
        ("It is 20°C outside.", "It is twenty degrees Celsius outside."),
        ("It is 68 °F there.", "It is sixty-eight degrees Fahrenheit there."),
        ("Turn 90° left.", "Turn ninety degrees left."),
        ("Drive at 50 km/h.", "Drive at fifty kilometers per hour."),
        ("Drive at 30 mph.", "Drive at thirty miles per hour."),
        ("It has 16 GB of memory and 512 MB free.", "It has sixteen gigabytes of memory and five hundred twelve megabytes free."),
        ("Latency is 200 ms.", "Latency is two hundred milliseconds."),
        ("Wait 5 s then 2 min.", "Wait five seconds then two minutes."),
        ("It takes 3 h total.", "It takes three hours total."),
        ("Drink 2-3 l a day.", "Drink two to three liters a day."),
    ],
    "urls and emails": [
        ("Go to https://example.com/a?b=1&c=2.", "Go to example dot com slash a."),
        ("Visit https://www.python.org/downloads/ today.", "Visit python dot org slash downloads today."),
        ("See http://example.com/docs/very/deep/path/page.html for more.", "See example dot com for more."),
        ("Check www.wikipedia.org for that.", "Check wikipedia dot org for that."),
        ("Try example.com instead.", "Try example dot com instead."),
        ("Email john.smith@example.com please.", "Email john dot smith at example dot com please."),
    ],
    "paths": [
        ("Open ~/Documents/notes.txt now.", "Open notes dot t x t in the Documents folder now."),
        ("Edit /etc/hosts.", "Edit hosts in the etc folder."),
        ("It is in ~/Downloads/ already.", "It is in the Downloads folder in your home folder already."),
        ("Open ~/todo.md first.", "Open todo dot m d in your home folder first."),
        ("Run ../src/main.py now.", "Run main dot p y in the src folder now."),
        ("Edit src/engine/main.py first.", "Edit main dot p y in the engine folder first."),
        ("Run scripts/test-services.sh.", "Run test services dot s h in the scripts folder."),
        ("See C:\\Users\\me\\file.txt.", "See file dot t x t in the me folder."),
        ("Read it at example.com/docs.", "Read it at example dot com slash docs."),
        ("Try example.com.", "Try example dot com."),
        ("Open report.pdf please.", "Open report dot p d f please."),
        ("Read config.json first.", "Read config dot json first."),
        ("Open report.pdf.", "Open report dot p d f."),
    ],
    "markdown": [
        ("This is **very** important.", "This is very important."),
        ("This is *quite* _nice_ and __bold__.", "This is quite nice and bold."),
        ("## Steps", "Steps"),
        ("You need:\n- flour\n- eggs\n- milk", "You need: flour, eggs, milk"),
        ("Do this:\n1. Mix\n2. Bake", "Do this: one. Mix, two. Bake"),
        ("See [the docs](https://example.com/docs) for details.", "See the docs for details."),
        ("Run `ls` to list.", "Run ls to list."),
        ("Try `x = [i * 2 for i in y]` here.", "Try (code omitted) here."),
        ("Like this:\n```python\nprint('hi')\n```\nDone.", "Like this: (code omitted) Done."),
        ("| Name | Age |\n|---|---|\n| Ann | 30 |", "Name, Age, Ann, thirty"),
        ("> Quoted text here.", "Quoted text here."),
        ("~~old~~ new", "old new"),
    ],
    "abbreviations": [
        ("Bring fruit, e.g. apples.", "Bring fruit, for example, apples."),
        ("Bring fruit, i.e., apples.", "Bring fruit, that is, apples."),
        ("Apples, pears, etc.", "Apples, pears, et cetera."),
        ("Apples, pears, etc. are fine.", "Apples, pears, et cetera are fine."),
        ("Cats vs. dogs.", "Cats versus dogs."),
        ("He is John Smith Jr. He came.", "He is John Smith Junior. He came."),
        ("No. 5 is here.", "Number five is here."),
        ("Open VS Code.", "Open VS Code."),
        ("E.g. this one.", "For example, this one."),
        ("Dr. Smith and Mr. Jones met Mrs. Lee.", "Doctor Smith and Mister Jones met Missus Lee."),
        ("It is approx. 5 km.", "It is approximately five kilometers."),
        ("Ask for No. 5 please.", "Ask for number five please."),
        ("Salt & pepper.", "Salt and pepper."),
    ],
    "emoji and symbols": [
        ("Great job! 🎉🎉", "Great job!"),
        ("I ❤️ this.", "I this."),
        ("Done ✅ and dusted.", "Done and dusted."),
        ("Wow!!! Really???", "Wow! Really?"),
        ("Wait.... what?!", "Wait... what?"),
        ("Use C++ and Python.", "Use C plus plus and Python."),
        ("Click Settings → Privacy.", "Click Settings to Privacy."),
        ("Call #5 now.", "Call number five now."),
        ("It is ~5 minutes.", "It is about five minutes."),
        ("Score: +5 points.", "Score: plus five points."),
        ("his/her choice", "his or her choice"),
        ("Pick one and/or two.", "Pick one and or two."),
        ("Half ½ a cup.", "Half one half a cup."),
    ],
    "markup": [  # tags a small model copies are not said ("</data>" was said as "data")
        ("The capital of France is Paris.\n</data>", "The capital of France is Paris."),
        ("<caption>A cat</caption> on a mat.", "A cat on a mat."),
        ('<data source="web">It rains.</data>', "It rains."),
    ],
}

TABLE = [(category, written, said) for category, cases in CASES.items() for written, said in cases]


@pytest.mark.parametrize(("category", "written", "said"), TABLE, ids=[f"{c}: {w[:40]}" for c, w, _ in TABLE])
def test_written_text_is_said_in_words(category, written, said):
    assert speakable(written) == said


PROSE = """\
The morning was quiet, and the kettle had only just begun to sing when Anna opened the window.
Outside, the street was still wet from the night's rain; a cyclist passed, then a woman walking a small dog.
She thought about the letter she had not yet answered. It was not a difficult letter, but it was a careful one.
Her brother wanted to know whether she would come home for the summer, and she did not know what to say.
There were reasons to go: the garden, her mother's cooking, the long evenings by the lake.
There were reasons to stay, too, and most of them had to do with work.
I can help you with that. Would you like me to set a reminder for tomorrow morning?
Sure, here is a quick summary of what we talked about.
The weather today is mild and sunny, with a light breeze from the west.
If you want, I can read the first paragraph again, or we can move on to the next section.
That's a good question! Honestly, I'm not sure, but I think it depends on what you mean by "better."
Let me check. The meeting with Priya is on the calendar, and she asked everyone to read the notes first.
He said, "We'll see." Then he left — without another word — and closed the door behind him.
Some people prefer tea; others can't start the day without coffee.
You're welcome. Is there anything else I can do for you?
It's a well-known story, told and retold over many generations (though rarely the same way twice).
Okay, I stopped the timer. Nothing else is running right now.
Rivers carry sand and silt down from the mountains and spread them across the plain.
The old library smelled of paper, dust and polished wood, and the floor creaked under every step.
We'll start with the basics and work our way up to the harder parts later on.
Hmm, that didn't work. Let's try something different… maybe a shorter route?
No problem at all! I'm glad that helped.
In the end, the choice is yours, and either way will be fine.
Where would you like to go for dinner tonight: the Italian place or the new Thai restaurant?"""


def test_ordinary_prose_is_unchanged():
    sentences = PROSE.splitlines()
    assert sum(len(s.split()) for s in sentences) >= 300
    changed = [(s, speakable(s)) for s in sentences if speakable(s) != s]
    assert not changed, changed


@pytest.mark.parametrize(("category", "written", "said"), TABLE, ids=[f"{c}: {w[:40]}" for c, w, _ in TABLE])
def test_saying_it_twice_changes_nothing(category, written, said):
    once = speakable(written)
    assert speakable(once) == once


def _random_text(rng: random.Random) -> str:
    pools = [
        "0123456789", " .,:;!?-+*/=^%$€£°#@&~_|`'\"()[]<>\n", "abcxyzABC", "kmhgsftinlbozGBMB",
        "".join(chr(c) for c in range(0x80, 0x3000, 7)), "😀🎉❤️✅→×÷±½²\u200d\ufe0f\u2212",
    ]
    parts = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.05:
            parts.append(chr(rng.randint(0, 0x10FFFF)))
        else:
            parts.append(rng.choice(rng.choice(pools)))
    return "".join(parts)


def test_random_text_never_raises_and_settles_at_once():
    rng = random.Random(23)
    written = [w for _, w, _ in TABLE]
    for _ in range(3000):
        text = _random_text(rng)
        if rng.random() < 0.3:  # mix real cases with noise, so the rules fire on broken input too
            text = f"{rng.choice(written)}{text}{rng.choice(written)}"
        language = rng.choice(["en", "en", "en-us", "de", "fr-FR", "ja", "zz"])
        once = speakable(text, language)
        assert isinstance(once, str)
        assert speakable(once, language) == once, (text, language, once)


def test_other_languages_get_their_own_number_words_and_no_english_symbol_words():
    assert speakable("Ich habe 3 Katzen.", "de") == "Ich habe drei Katzen."
    assert speakable("Es sind -2,5 Grad.", "de") == "Es sind minus zwei Komma fünf Grad."
    assert speakable("J'ai 21 ans.", "fr-FR") == "J'ai vingt et un ans."
    assert speakable("Es kostet 5 €.", "de") == "Es kostet fünf."  # no English "euros" in German speech
    assert speakable("**Hallo** 🎉", "de") == "Hallo"
    assert speakable("It has 3 cats.", "xx") == "It has 3 cats."  # a language num2words lacks: digits stay


def test_non_text_and_empty_input():
    assert speakable("") == ""
    assert speakable("   ") == ""
    assert speakable("🎉🎉") == ""
    assert speakable("🎉 ...!") == ""
    assert speakable(42) == "forty-two"  # type: ignore[arg-type]


# ---- held out: written after the rules were done, never tuned on -----------------------------------------
# Sentences of the kind a small LLM writes, with the reading a person would give. Measured once when written:
# 27 of 30 read right. The three misses were general bugs, then fixed ("vs." kept a period before a capital; a
# path or bare domain swallowed the sentence's period; "github.com/a/b" lost its path), and paths became "in the
# X folder" (one expected reading here changed with that). So the list is no longer held out: it is a floor.

HELD_OUT = [
    ("Sure! The answer is 15 + 27 = 42.", "Sure! The answer is fifteen plus twenty-seven equals forty-two."),
    ("Your meeting is scheduled for 2:30 PM on Friday.", "Your meeting is scheduled for two thirty PM on Friday."),
    ("The temperature today will reach 25°C, so bring sunscreen.",
     "The temperature today will reach twenty-five degrees Celsius, so bring sunscreen."),
    ("**Tip:** drink at least 8 glasses of water a day.", "Tip: drink at least eight glasses of water a day."),
    ("That would cost about $12.99 plus tax.", "That would cost about twelve dollars and ninety-nine cents plus tax."),
    ("The Eiffel Tower is 330 m tall and was built in 1889.",
     "The Eiffel Tower is three hundred thirty meters tall and was built in eighteen eighty-nine."),
    ("You can find more info at https://www.nasa.gov/missions?id=42.",
     "You can find more info at nasa dot gov slash missions."),
    ("I set a timer for 10 min.", "I set a timer for ten minutes."),
    ("The population is roughly 8.1 billion people.", "The population is roughly eight point one billion people."),
    ("1. Preheat the oven to 350°F.", "one. Preheat the oven to three hundred fifty degrees Fahrenheit."),
    ("Your flight departs on 2025-03-14 at 07:45.",
     "Your flight departs on March fourteenth, twenty twenty-five at seven forty-five."),
    ("About 70% of the Earth is covered by water 🌊.", "About seventy percent of the Earth is covered by water."),
    ("The speed limit here is 65 mph.", "The speed limit here is sixty-five miles per hour."),
    ("Let's compare Python vs. JavaScript!", "Let's compare Python versus JavaScript!"),
    ("The file is saved as ~/Desktop/report_final.docx.",
     "The file is saved as report final dot d o c x in the Desktop folder."),
    ("It weighs about 2.5 kg (5.5 lbs).", "It weighs about two point five kilograms (five point five pounds)."),
    ("Email me at support@venus-app.io if you need help.",
     "Email me at support at venus app dot io if you need help."),
    ("World War II ended in 1945.", "World War II ended in nineteen forty-five."),
    ("A marathon is 42.195 km long.", "A marathon is forty-two point one nine five kilometers long."),
    ("Here are 3 quick tips:\n- Sleep 7-9 hours\n- Exercise 30 minutes a day\n- Eat more vegetables",
     "Here are three quick tips: Sleep seven to nine hours, Exercise thirty minutes a day, Eat more vegetables"),
    ("The 21st century began on January 1, 2001.", "The twenty-first century began on January first, two thousand one."),
    ("Your battery is at 15%, please charge it soon.", "Your battery is at fifteen percent, please charge it soon."),
    ("The store opens at 9am and closes at 6pm.", "The store opens at nine AM and closes at six PM."),
    ("Mix 1/4 cup of sugar with 2 eggs.", "Mix one quarter cup of sugar with two eggs."),
    ("The iPhone 15 has 128 GB of storage.", "The iPhone fifteen has one hundred twenty-eight gigabytes of storage."),
    ("Dr. Lee said the results look great 👍", "Doctor Lee said the results look great"),
    ("Download it from github.com/venus/venus.", "Download it from github dot com slash venus slash venus."),
    ("The total comes to €1,250.00.", "The total comes to one thousand two hundred fifty euros."),
    ("Water boils at 100 °C at sea level.", "Water boils at one hundred degrees Celsius at sea level."),
    ("Step 2: Add 500ml of milk and stir for 3-4 minutes.",
     "Step two: Add five hundred milliliters of milk and stir for three to four minutes."),
]
HELD_OUT_READ_RIGHT = 30  # 27 at the first, untuned measurement


def test_held_out_sentences_read_right():
    wrong = [(written, speakable(written), said) for written, said in HELD_OUT if speakable(written) != said]
    assert len(HELD_OUT) == 30
    assert len(HELD_OUT) - len(wrong) >= HELD_OUT_READ_RIGHT, "\n".join(f"{w!r} -> {got!r}" for w, got, _ in wrong)


# A second batch, written after the fixes above and left untuned: 16 of 20 read right. The misses are
# known gaps: "tsp", "Mon"/"Fri" and "5k" are not expanded, and a unit before a noun stays plural ("gigabytes SSD").
HELD_OUT_2 = [
    ("Great question! The square root of 144 is 12.", "Great question! The square root of one hundred forty-four is twelve."),
    ("You have 3 unread messages and 1 missed call.", "You have three unread messages and one missed call."),
    ("The event runs from 6:00 PM to 9:30 PM.", "The event runs from six PM to nine thirty PM."),
    ("Bitcoin dropped 5.2% to $61,000 overnight.",
     "Bitcoin dropped five point two percent to sixty-one thousand dollars overnight."),
    ("### Ingredients\n* 2 cups flour\n* 1 tsp salt", "Ingredients, two cups flour, one teaspoon salt"),
    ("It is 5 hours ahead, i.e. it's already evening there.",
     "It is five hours ahead, that is, it's already evening there."),
    ("The Moon is about 384,400 km from Earth.",
     "The Moon is about three hundred eighty-four thousand four hundred kilometers from Earth."),
    ("Please call (555) 123-4567 to confirm.", "Please call five five five, one two three, four five six seven to confirm."),
    ("Shakespeare was born in 1564 and died in 1616.",
     "Shakespeare was born in fifteen sixty-four and died in sixteen sixteen."),
    ("Set the thermostat to 68°F at night.", "Set the thermostat to sixty-eight degrees Fahrenheit at night."),
    ("That's 3 × 7 = 21, so you need 21 tiles.", "That's three times seven equals twenty-one, so you need twenty-one tiles."),
    ("Your package arrives Tuesday, Nov. 12.", "Your package arrives Tuesday, November twelfth."),
    ("Use `git status` to check your changes.", "Use git status to check your changes."),
    ("Our office is open Mon–Fri, 9–5.", "Our office is open Monday to Friday, nine to five."),
    ("The recipe serves 4–6 people.", "The recipe serves four to six people."),
    ("I found 2 results on wikipedia.org 📚", "I found two results on wikipedia dot org"),
    ("A 500 GB SSD costs around €60.", "A five hundred gigabyte SSD costs around sixty euros."),
    ("Run 5k in under 25 min!", "Run five K in under twenty-five minutes!"),
    ("The answer is -7.", "The answer is minus seven."),
    ("See section 4.2 for details.", "See section four point two for details."),
]
HELD_OUT_2_READ_RIGHT = 16


def test_second_held_out_batch_reads_right():
    wrong = [(written, speakable(written)) for written, said in HELD_OUT_2 if speakable(written) != said]
    assert len(HELD_OUT_2) == 20
    assert len(HELD_OUT_2) - len(wrong) >= HELD_OUT_2_READ_RIGHT, "\n".join(f"{w!r} -> {got!r}" for w, got in wrong)


# ---- through the real voice ------------------------------------------------------------------------------

SAID = "twelve times fourteen equals one hundred sixty-eight."


def test_the_piper_voice_times_the_words_it_says_not_the_symbols():
    clause = piper_voice().synthesize("12 × 14 = 168.")
    assert clause.text == SAID
    assert [w.text for w in clause.words] == SAID.split()
    assert clause.words[-1].end_sample <= len(clause.audio) and np.max(np.abs(clause.audio)) > 0.1


@pytest.mark.skipif(not have_tools(), reason="espeak-ng and sox are needed (apt-get install espeak-ng sox)")
def test_the_espeak_voice_reads_through_the_normalizer_too():
    clause = EspeakSynthesizer().synthesize("Turn 90° left at 3:40 pm.")
    assert [w.text for w in clause.words] == "Turn ninety degrees left at three forty PM.".split()


@pytest.fixture
def speaking_pipeline(tmp_path, monkeypatch):
    """The speech pipeline on the default voice (Piper), a silent mic file and a speaker file."""
    for name, folder in (("VENUS_CONFIG_DIR", "cfg"), ("VENUS_DATA_DIR", "data"), ("VENUS_LOG_DIR", "log")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    timeline = Timeline()
    source = FileSource(write_wav(tmp_path / "mic.wav", np.zeros(RATE, np.float32)), realtime=True, tail_s=1.0)
    sink = FileSink(tmp_path / "speaker.wav", session_ms=timeline.now_ms)
    pipeline = SpeechPipeline(timeline, source, sink, Settings())
    pipeline.start()
    yield pipeline, timeline, tmp_path / "speaker.wav"
    pipeline.close()


def test_heard_words_are_the_spoken_words_and_whisper_hears_them_in_the_audio(speaking_pipeline):
    pipeline, timeline, speaker = speaking_pipeline
    assert pipeline.speak("t1", iter(["12 × 14 = 168."])).done.wait(60)
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert [s.planned_text for s in spans] == [SAID]
    assert spans[0].heard_words == tuple(SAID.split()) and not spans[0].truncated
    pipeline.close()
    audio, rate = sf.read(speaker, dtype="float32")
    start = pipeline.sink.lead_samples + spans[0].start_sample
    played = resample_clip(audio[start: pipeline.sink.lead_samples + spans[0].end_sample], rate, RATE)
    heard_by_whisper = speakable(make_transcriber(Settings()).transcribe(played, word_timestamps=False).text)
    words = set(re.findall(r"[a-z]+", heard_by_whisper.lower()))
    # the audio says what the heard words say (whisper-tiny may hear "fourteen" as "forty": not asked)
    assert {"twelve", "hundred", "sixty"} <= words and words & {"times", "equals", "is"}, heard_by_whisper
    assert len(words & set(SAID.rstrip(".").split())) >= 5, heard_by_whisper


def test_a_clause_with_nothing_speakable_does_not_end_the_turn(speaking_pipeline):
    pipeline, timeline, _ = speaking_pipeline
    turn = pipeline.speak("t2", iter(["🎉🎉! ", "Done, all set."]))  # two clauses: "🎉🎉!" says nothing
    assert turn.done.wait(60)
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert [s.planned_text for s in spans] == ["Done, all set."]  # reported before the turn counted as done
