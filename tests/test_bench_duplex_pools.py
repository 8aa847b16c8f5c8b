"""The held-out sentence pools: big enough, split by template and by name with nothing shared, stable, and a
split-generated benchmark that uses only its own split's words, names and voices."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package

import itertools
import json
import re
import shutil
import subprocess

import pytest

from bench.duplex import (
    pools,  # noqa: E402
    turn_corpus,  # noqa: E402
)
from bench.duplex import scenario_text as fixed  # noqa: E402
from bench.duplex.generate import (  # noqa: E402
    SPLIT_ACCENTS,
    SPLIT_VARIANTS,
    TEST_ONLY_ACCENTS,
    USER_VOICES,
    GeneratorOptions,
    build_case,
    generate,
)
from engine.runtime.overlap import GIVEN_NAMES as RUNTIME_NAMES  # noqa: E402
from engine.runtime.overlap import OTHER_VOCATIVES  # noqa: E402

FLOORS = {"questions": 100, "long_requests": 60, "paused": 60, "interruptions": 50, "backchannels": 50,
          "other_addressed": 50, "background": 50}
FIXED = {"questions": fixed.QUESTIONS, "long_requests": fixed.LONG_REQUESTS, "paused": fixed.PAUSED,
         "interruptions": fixed.INTERRUPTIONS, "backchannels": fixed.BACKCHANNELS,
         "other_addressed": fixed.OTHER_ADDRESSED, "background": fixed.BACKGROUND}
TEMPLATE_LISTS = {"questions": pools._QUESTIONS, "long_requests": pools._LONG_REQUESTS,
                  "paused": [t for _, t in pools._PAUSED], "interruptions": [t for t, _ in pools._INTERRUPTIONS],
                  "backchannels": pools._BACKCHANNELS, "other_addressed": [t for t, _, _ in pools._OTHER_ADDRESSED],
                  "background": pools._BACKGROUND}


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


def _texts(category: str, item: object) -> list[str]:
    """The words an item makes someone say: a paused request as one sentence, a reply on its own."""
    if category == "paused":
        return [" ".join(item)]
    if category == "interruptions":
        return [item[0]]
    if category == "other_addressed":
        return [t for t in item if t]
    return [item]


def _split_texts(split: str) -> set[str]:
    return {_norm(t) for c in pools.CATEGORIES for item in pools.pool(c, split) for t in _texts(c, item)}


def _old_sentences() -> set[str]:
    """Every sentence the fixed lists hold and every complete turn the end-of-turn corpus can make."""
    texts = [t for category, items in FIXED.items() for item in items for t in _texts(category, item)]
    slots = {"place": turn_corpus._PLACES, "thing": turn_corpus._THINGS, "person": turn_corpus._PEOPLE,
             "time": turn_corpus._TIMES, "topic": turn_corpus._TOPICS}
    for template in turn_corpus._TEMPLATES:
        keys = re.findall(r"\{(\w+)\}", template)
        texts += [template.format(**dict(zip(keys, v, strict=True))) for v in itertools.product(*(slots[k] for k in keys))]
    return {_norm(t) for t in texts}


def _template_regex(template: str) -> re.Pattern:
    """A template as a pattern: a slot matches any words, an alternative any of its choices."""
    def convert(part: str) -> str:
        out, pos = [], 0
        for m in re.finditer(r"\{(\w+)\}|\[([^\]]*)\]", part):
            out.append(re.escape(part[pos : m.start()]))
            out.append(".+?" if m.group(1) else "(?:" + "|".join(convert(a) for a in m.group(2).split("|")) + ")")
            pos = m.end()
        return "".join(out) + re.escape(part[pos:])

    return re.compile(convert(template.replace(" | ", " ")), re.IGNORECASE)


def test_names_are_many_cultures_split_by_name_and_never_seen_by_the_runtime() -> None:
    assert len(pools.GIVEN_NAMES) >= 150
    assert len(set(pools.NAMES)) == len(pools.NAMES)
    splits = {s: set(pools.names(s)) for s in pools.SPLITS}
    for a, b in itertools.combinations(pools.SPLITS, 2):
        assert not splits[a] & splits[b], (a, b, splits[a] & splits[b])
    assert set().union(*splits.values()) == set(pools.NAMES)
    for split in pools.SPLITS:
        assert len([n for n in splits[split] if n in pools.GIVEN_NAMES]) >= 25, split
        assert [n for n in splits[split] if n in pools.ROLES], f"{split} has no role such as 'Mom'"
    # Names the fixed lists or the runtime's lexicons already hold were tuned on: they must never be test names.
    seen = {n.lower() for n in RUNTIME_NAMES | OTHER_VOCATIVES | set(turn_corpus._PEOPLE)}
    seen |= {w.strip(",!?.").lower() for words, _ in fixed.OTHER_ADDRESSED for w in words.split()[:2]}
    leaked = sorted(n for n in splits["test"] | splits["dev"] if n.lower() in seen)
    assert not leaked, f"add {leaked} to pools._SEEN_BEFORE: the runtime or the fixed lists already know them"


def test_each_category_is_at_least_five_times_the_fixed_list_and_every_split_has_cases() -> None:
    for category, floor in FLOORS.items():
        sizes = {s: len(pools.pool(category, s)) for s in pools.SPLITS}
        assert sum(sizes.values()) >= max(floor, 5 * len(FIXED[category])), (category, sizes)
        assert min(sizes.values()) >= 10, (category, sizes)
        assert sizes["train"] > sizes["test"], (category, sizes)


def test_items_have_the_shapes_scenario_text_uses() -> None:
    for split in pools.SPLITS:
        for category in pools.CATEGORIES:
            items = pools.pool(category, split)
            assert len({repr(i) for i in items}) == len(items), (category, split)
            for item in items:
                texts = [item] if isinstance(item, str) else [item[0]] if category == "interruptions" else list(item)
                for text in texts:
                    assert isinstance(text, str) and not re.search(r"[{}\[\]|]", text), (category, item)
                if category in ("questions", "long_requests", "backchannels", "background", "short_turns"):
                    assert isinstance(item, str) and item[-1] in ".?!", item
                elif category == "paused":
                    first, second = item
                    assert first and second and first[-1] not in ".?!" and second[-1] in ".?!", item
                elif category == "interruptions":
                    words, keywords = item
                    assert isinstance(keywords, tuple) and keywords, item
                    assert all(k and k == k.lower() and "{" not in k for k in keywords), item
                else:
                    words, reply = item
                    assert isinstance(reply, str) and words[-1] in ".?!", item


def test_no_sentence_and_no_template_is_in_two_splits() -> None:
    texts = {s: _split_texts(s) for s in pools.SPLITS}
    for a, b in itertools.combinations(pools.SPLITS, 2):
        assert not texts[a] & texts[b], (a, b, sorted(texts[a] & texts[b])[:5])
    # A test sentence no train or dev template could have made: fails if a template's fills leaked across splits.
    for category, templates in TEMPLATE_LISTS.items():
        fitted = [_template_regex(t) for t in templates if pools.split_of(t) != "test"]
        for item in pools.pool(category, "test"):
            sentence = _texts(category, item)[0]
            assert not [p.pattern for p in fitted if p.fullmatch(sentence)], (category, sentence)
    counts = {s: sum(pools.split_of(t) == s for ts in TEMPLATE_LISTS.values() for t in ts) for s in pools.SPLITS}
    total = sum(counts.values())
    assert 0.5 < counts["train"] / total < 0.7 and 0.12 < counts["test"] / total < 0.28, counts


def test_test_split_never_repeats_a_fixed_or_end_of_turn_sentence() -> None:
    old = _old_sentences()
    assert _norm("Yeah, yeah.") in old and _norm("what time is it in Berlin") in old  # the check sees both sources
    assert not _split_texts("test") & old, sorted(_split_texts("test") & old)[:5]


def test_no_name_of_another_split_appears_in_a_split() -> None:
    given = set(pools.GIVEN_NAMES)
    for split in pools.SPLITS:
        foreign = set(pools.NAMES) - set(pools.names(split))
        for category in pools.CATEGORIES:
            for item in pools.pool(category, split):
                for text in _texts(category, item):
                    tokens = set(re.findall(r"[A-Za-z']+", text))
                    assert not tokens & foreign & given, (split, category, text)
                    if category == "other_addressed":  # roles are common words elsewhere ("safe for kids")
                        assert not tokens & foreign, (split, category, text)


def test_interruptions_half_with_a_stop_cue_and_half_without() -> None:
    tagged = [(tag, item) for s in pools.SPLITS for tag, item in pools.tagged("interruptions", s)]
    cued = [words for tag, (words, _) in tagged if tag == "cue"]
    uncued = [words for tag, (words, _) in tagged if tag == "no_cue"]
    assert 0.35 <= len(cued) / len(tagged) <= 0.65, (len(cued), len(uncued))
    assert all(pools.has_stop_cue(w) for w in cued)
    for words in uncued:
        assert not any(re.search(rf"\b{cue}\b", words, re.IGNORECASE) for cue in pools.STOP_CUES), words
    for split in pools.SPLITS:
        assert {tag for tag, _ in pools.tagged("interruptions", split)} == {"cue", "no_cue"}, split


def test_pauses_fall_at_many_kinds_of_places_not_only_after_prepositions() -> None:
    tagged = [tag for s in pools.SPLITS for tag, _ in pools.tagged("paused", s)]
    assert set(tagged) == set(pools.PAUSE_KINDS)
    assert tagged.count("preposition") / len(tagged) < 0.25
    assert len({tag for tag, _ in pools.tagged("paused", "test")}) >= 5
    fillers = [first for tag, (first, _) in pools.tagged("paused", "train") if tag == "filler"]
    assert fillers and all(re.search(r"\b(um|uh|like)\b,?$", f) for f in fillers), fillers


def test_vocatives_at_the_start_middle_end_or_nowhere() -> None:
    for split in pools.SPLITS:
        addressable = set(pools.names(split))
        for position, (words, _) in pools.tagged("other_addressed", split):
            tokens = re.findall(r"[A-Za-z']+", words)
            named = [i for i, t in enumerate(tokens) if t in addressable or t.lower() in addressable]
            if position == "none":
                assert not named, words
            elif position == "start":
                assert named and named[0] <= 1, words  # "Hey Keala, ..." or "Keala, ..."
            elif position == "end":
                assert named and named[-1] == len(tokens) - 1, words
            else:
                assert named and 0 < named[0] < len(tokens) - 1, words
    positions = {tag for s in pools.SPLITS for tag, _ in pools.tagged("other_addressed", s)}
    assert positions == set(pools.VOCATIVE_POSITIONS)


def test_the_split_is_stable_across_runs_and_hash_seeds() -> None:
    first = {(c, s): pools.pool(c, s) for c in pools.CATEGORIES for s in pools.SPLITS}
    pools._tagged.cache_clear()
    assert first == {(c, s): pools.pool(c, s) for c in pools.CATEGORIES for s in pools.SPLITS}
    script = ("import json, sys; sys.path.insert(0, '.'); from bench.duplex import pools; "
              "print(json.dumps({f'{c}/{s}': pools.pool(c, s) for c in pools.CATEGORIES for s in pools.SPLITS}))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}).stdout
    other = json.loads(out)
    assert other == {f"{c}/{s}": json.loads(json.dumps(v)) for (c, s), v in first.items()}


def test_unknown_category_or_split_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown split"):
        pools.pool("questions", "validation")
    with pytest.raises(ValueError, match="unknown category"):
        pools.pool("jokes", "train")
    with pytest.raises(ValueError, match="split must be one of"):
        GeneratorOptions(Path("/tmp/x"), split="holdout")


def test_split_voices_are_real_espeak_voices_and_test_voices_are_held_out() -> None:
    for a, b in itertools.combinations(pools.SPLITS, 2):
        assert not set(SPLIT_VARIANTS[a]) & set(SPLIT_VARIANTS[b]), (a, b)
    fixed_variants = {v.name.partition("+")[2] for v in USER_VOICES} - {""}
    assert not fixed_variants & set(SPLIT_VARIANTS["test"])
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    version = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout
    data = Path(version.split("Data at:")[1].strip())
    missing = [v for vs in SPLIT_VARIANTS.values() for v in vs if v and not (data / "voices" / "!v" / v).is_file()]
    assert not missing, f"espeak-ng ignores unknown variants silently: {missing}"
    listed = subprocess.run(["espeak-ng", "--voices=en"], capture_output=True, text=True, check=True).stdout
    languages = {line.split()[1] for line in listed.splitlines()[1:]}
    assert set(SPLIT_ACCENTS + TEST_ONLY_ACCENTS) <= languages


needs_synth = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                                 reason="espeak-ng and sox are needed to synthesize speech")


@needs_synth
def test_generating_the_test_split_uses_only_test_words_names_and_voices(tmp_path: Path) -> None:
    folders = generate(GeneratorOptions(tmp_path / "cases", per_category=2, seed=3, cache_dir=tmp_path / "cache",
                                        split="test"))
    test_texts, fitted_texts = _split_texts("test"), _split_texts("train") | _split_texts("dev")
    test_parts = {_norm(p) for item in pools.pool("paused", "test") for p in item}
    test_variants, other_variants = set(SPLIT_VARIANTS["test"]), set(SPLIT_VARIANTS["train"] + SPLIT_VARIANTS["dev"])
    foreign_names = set(pools.GIVEN_NAMES) - set(pools.names("test"))
    spoken = []
    for folder in folders:
        meta = json.loads((folder / "metadata.json").read_text())
        assert meta["split"] == "test"
        for event in meta["events"]:
            text = _norm(event["text"])
            assert text in test_texts or text in test_parts, (folder.name, event["text"])
            assert text not in fitted_texts, (folder.name, event["text"])
            assert not set(re.findall(r"[A-Za-z']+", event["text"])) & foreign_names, event["text"]
            variant = event["voice"].partition("+")[2]
            assert variant in test_variants and variant not in other_variants, event["voice"]
            spoken.append(event["text"])
        if "pause" in meta:
            assert 0.6 <= meta["pause"]["end"] - meta["pause"]["start"] <= 2.5 + 1e-3
            assert meta["pause"]["after"] in pools.PAUSE_KINDS
    assert len(spoken) >= 2 * 6 + 2 * 5  # every overlap case has a question and an overlap; pauses two halves


@needs_synth
def test_without_a_split_the_fixed_lists_and_voices_are_used(tmp_path: Path) -> None:
    from bench.duplex.synth import SpeechCache

    cache = SpeechCache(tmp_path / "cache")
    fixed_texts = {_norm(t) for category, items in FIXED.items() for item in items
                   for t in (item if category == "paused" else _texts(category, item))}
    for category in ("smooth_turn_taking", "pause_handling", "user_interruption"):
        _, meta = build_case(category, 0, 7, cache)
        assert "split" not in meta and meta["user_voice"] in {v.name for v in USER_VOICES}
        assert all(_norm(e["text"]) in fixed_texts for e in meta["events"]), meta["events"]


def _median_f0(audio, rate: int = 16000) -> float:
    """The median fundamental frequency (Hz) of the voiced 40 ms frames: the first autocorrelation peak within 15 %
    of the highest over 50-400 Hz (the highest alone jumps an octave down now and then)."""
    import numpy as np

    size, f0s = int(0.04 * rate), []
    lo, hi = rate // 400, rate // 50
    for start in range(0, audio.size - size, size // 2):
        frame = audio[start : start + size] - audio[start : start + size].mean()
        if np.sqrt(np.mean(frame**2)) < 0.02:
            continue
        corr = np.correlate(frame, frame, "full")[size - 1 :]
        best = corr[lo:hi].max()
        if best < 0.5 * corr[0]:  # not clearly periodic: unvoiced
            continue
        lag = lo + int(np.flatnonzero(corr[lo:hi] >= 0.85 * best)[0])
        while lag + 1 < hi and corr[lag + 1] > corr[lag]:
            lag += 1
        f0s.append(rate / lag)
    assert len(f0s) >= 10, "too few voiced frames"
    return float(np.median(f0s))


@needs_synth
def test_a_piper_user_says_the_same_case_pitch_shifted_by_a_shift_of_its_split(tmp_path: Path) -> None:
    """--user-voice piper: the same words, pause and other voices as the espeak-ng case; the user's speech is the
    Piper voice, shifted by one of the split's pitch shifts (test's are held out, none is Venus's own voice)."""
    import numpy as np

    from bench.duplex.generate import PIPER_SHIFTS
    from bench.duplex.synth import PIPER, SpeechCache, Voice

    assert not set(PIPER_SHIFTS["test"]) & (set(PIPER_SHIFTS["train"]) | set(PIPER_SHIFTS["dev"]))
    assert 0 not in {c for shifts in PIPER_SHIFTS.values() for c in shifts}
    cache = SpeechCache(tmp_path / "cache")
    for category in ("pause_handling", "talking_to_others"):
        espeak_audio, espeak = build_case(category, 3, 7, cache, "test")
        piper_audio, piper = build_case(category, 3, 7, cache, "test", "piper")
        assert [(e["type"], e["text"]) for e in piper["events"]] == [(e["type"], e["text"]) for e in espeak["events"]]
        assert piper["user_voice"] == PIPER and piper["user_voice_pitch_cents"] in PIPER_SHIFTS["test"]
        for mine, theirs in zip(piper["events"], espeak["events"], strict=True):
            if mine["type"] in ("user_turn", "overlap"):
                assert mine["voice"] == PIPER
            else:  # another person: the same espeak-ng voice as in the espeak-ng case
                assert mine["voice"] == theirs["voice"] != PIPER
        if "pause" in piper:
            assert piper["pause"]["end"] - piper["pause"]["start"] == pytest.approx(
                espeak["pause"]["end"] - espeak["pause"]["start"], abs=1e-3)
        assert not np.array_equal(piper_audio[: espeak_audio.size], espeak_audio[: piper_audio.size])
    # the shift is real: 600 cents is a fundamental 2 ** (600 / 1200) = 1.41 times as high (or as low)
    words = "Could you read me the weather forecast for the weekend, please?"
    own, low, high = (_median_f0(cache.render(words, Voice(PIPER, 165, pitch))) for pitch in (50, 20, 80))
    assert 0.6 < low / own < 0.88 and 1.2 < high / own < 1.65, (low, own, high)
    with pytest.raises(ValueError, match="needs a split"):
        build_case("smooth_turn_taking", 0, 7, cache, None, "piper")
    with pytest.raises(ValueError, match="said nothing"):  # a clear error, and no empty file left in the cache
        cache.render("", Voice(PIPER))
    assert not list(cache.folder.glob("*.piper.wav")) and not list(cache.folder.glob("*.tmp.wav"))
