"""Offline benchmark of the turn-taking policies alone, on the generated cases' input.wav (no runtime needed).

For every case it plays the part of the runtime with oracle segmentation (the metadata's event times):
the user's first turn calibrates the level and enrols the voice (with the runtime's speaker embedding: the learned
voice encoder and the MFCC-and-pitch one); whisper tiny.en transcribes what the policy would have heard. Then
* end of turn: the silence the detector requires after the user's words (smooth / pause cases), and whether it
  would have ended the turn inside the mid-sentence pause (a false cut-in);
* overlap: each later speech segment is judged at 150 ms and at the 300 ms deadline (words = ASR of the first
  300 ms), then reviewed with the final transcript, as the runtime would; the case "continues" when no segment
  ends as an interruption, and an interruption's stop latency is the time of the first stop verdict.

Run: .venv/bin/python -m bench.duplex.policy_bench --cases bench/out/duplex-ideal --per-category 15
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex.evaluate import Transcriber
from bench.duplex.generate import CATEGORIES
from engine.intents import IntentMatcher
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapOptions, OverlapPolicy
from engine.runtime.turn_taking import EndOfTurnDetector, strip_asr_punctuation
from engine.speaker import SpeakerProfile
from engine.speaker.profile import SpeakerEmbedder, default_embedder
from engine.timeline.events import OverlapKind

RATE = 16000
VAD_HANGOVER_S = 0.2  # the runtime's VAD declares the end of speech this long after the last voiced frame
VENUS_SPEAKING = "The Eiffel Tower was built for the World's Fair in eighteen eighty nine, and it"


def _cut(audio: np.ndarray, start: float, end: float) -> np.ndarray:
    return audio[int(start * RATE) : int(end * RATE)]


def _db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio.astype(np.float64) ** 2)) + 1e-12))


class CachedTranscriber:
    """whisper tiny.en text of a clip, remembered on disk by the clip's bytes (reruns only re-judge the policy)."""

    def __init__(self, cache_file: Path | None, threads: int = 1) -> None:
        self._asr: Transcriber | None = None
        self._threads = threads
        self._file = cache_file
        self._texts: dict[str, str] = {}
        if cache_file is not None and cache_file.exists():
            self._texts = json.loads(cache_file.read_text(encoding="utf-8"))

    def text(self, audio: np.ndarray) -> str:
        """The transcript of 16 kHz mono float audio."""
        key = hashlib.sha1(np.ascontiguousarray(audio, dtype=np.float32).tobytes()).hexdigest()
        if key not in self._texts:
            if self._asr is None:
                self._asr = Transcriber(threads=self._threads)
            self._texts[key] = " ".join(w.text for w in self._asr.words(audio)).strip()
        return self._texts[key]

    def save(self) -> None:
        """Write the cache file (when there is one)."""
        if self._file is not None:
            self._file.write_text(json.dumps(self._texts), encoding="utf-8")


def _text(asr: CachedTranscriber, audio: np.ndarray) -> str:
    return asr.text(audio)


class WordsProbe:
    """The runtime's LLM probe of a transcript (engine.runtime.turn_probe), read after a fresh Venus
    conversation's system message; `None` for a backend that cannot read its logits."""

    def __init__(self) -> None:
        from engine.llm import Conversation, ConversationOptions, open_backend
        from engine.runtime.turn_probe import probe_groups
        from engine.settings import Settings
        from engine.timeline import Timeline

        settings = Settings()
        self.backend = open_backend(settings.llm)
        self.conversation = Conversation(Timeline(), self.backend, ConversationOptions.from_settings(settings.llm))
        self.groups = probe_groups(self.backend)

    def __call__(self, text: str) -> float | None:
        from engine.runtime.turn_probe import judge_words

        return judge_words(self.conversation, self.groups, text) if strip_asr_punctuation(text) else None


class AddresseeReader:
    """The runtime's addressee probe (engine.runtime.addressee_probe) of final words over Venus's voice, read after
    a conversation like the runtime's: Venus's system message, the user's question, her answer so far."""

    def __init__(self, words_probe: WordsProbe) -> None:
        self.backend = words_probe.backend
        self.system = words_probe.conversation.messages()
        self._seen: dict[tuple[str, str], float] = {}

    def __call__(self, words: str, topic: str) -> float | None:
        from engine.llm import ChatMessage
        from engine.runtime.addressee_probe import FRAME

        key = (topic, words)
        if key not in self._seen:
            messages = [*self.system, ChatMessage("user", topic), ChatMessage("assistant", VENUS_SPEAKING)]
            in_chat, at_home, tokens = self.backend.words_logprob(messages, words.strip(), FRAME)
            self._seen[key] = (in_chat - at_home) / tokens if tokens else None
        return self._seen[key]


def judge_turn_end(meta: dict, audio: np.ndarray, asr: CachedTranscriber, detector: EndOfTurnDetector,
                   probe: WordsProbe | None = None) -> dict:
    """Required silence after the full turn; for pause cases, whether the pause would have ended the turn.
    `probe`: the LLM's judgement, as the runtime reads it with a local model (None: the lexical model)."""
    turns = [e for e in meta["events"] if e["type"] == "user_turn"]
    full = _text(asr, _cut(audio, turns[0]["start"], turns[-1]["end"]))
    llm = probe(full) if probe is not None else None
    row = {"text": full, "required_silence_ms": detector.decide(0, full, is_final=True,
                                                                llm_probability=llm).required_silence_ms}
    if "pause" in meta:
        first = _text(asr, _cut(audio, turns[0]["start"], turns[0]["end"]))
        pause_ms = int((meta["pause"]["end"] - meta["pause"]["start"]) * 1000)
        verdict = detector.decide(pause_ms, first, is_final=True,
                                  llm_probability=probe(first) if probe is not None else None)
        # Words that decode to nothing end no turn: the runtime goes back to listening (nothing was said) and
        # says nothing in the pause; the request's first half is lost instead, counted apart.
        heard = bool(strip_asr_punctuation(first))
        row.update(first_part=first, pause_ms=pause_ms, false_cut_in=verdict.end_of_turn and heard,
                   first_part_lost=not heard, pause_probability=round(verdict.probability, 3))
    return row


def judge_overlaps(meta: dict, audio: np.ndarray, asr: CachedTranscriber, policy: OverlapPolicy,
                   partial_step_s: float = 0.3, embedder: SpeakerEmbedder | None = None,
                   tool_request: Callable[[str], bool] | None = None,
                   addressee: AddresseeReader | None = None) -> dict:
    """Run the overlap policy over every speech segment that overlaps Venus's expected answer.

    After the deadline a provisional verdict is reviewed on partial transcripts every `partial_step_s` while
    the segment goes on, then on the final one (assumed ready `partial_step_s` after the segment ends); the time
    Venus spends paused by a provisional stop that is later revised is the segment's `paused_ms`.
    `embedder`: the speaker embedding, as the runtime's (`default_embedder()`: the learned voice encoder and the
    MFCC-and-pitch one; None: MFCC and pitch alone).
    """
    first = meta["events"][0]
    profile = SpeakerProfile(embedder)
    profile.enroll(_cut(audio, first["start"], first["end"]))
    user_level = _db(_cut(audio, first["start"], first["end"]))
    topic = _text(asr, _cut(audio, first["start"], first["end"]))
    segments, stop_ms, side_conversation = [], None, False
    score = (lambda words: addressee(words, topic)) if addressee is not None else None
    for event in meta["events"][1:]:
        context = ConversationContext(speaking_text=VENUS_SPEAKING, side_conversation=side_conversation,
                                      topic_text=topic, tool_request=tool_request, addressee_score=score)
        duration = event["end"] - event["start"]

        def features(elapsed_s: float, final: bool, _event=event) -> OverlapFeatures:
            end = min(_event["end"], _event["start"] + elapsed_s)
            clip = _cut(audio, _event["start"], end)
            words = _text(asr, clip) if elapsed_s >= 0.3 else ""
            return OverlapFeatures(elapsed_ms=round((end - _event["start"]) * 1000), speech_active=not final,
                                   words=words, is_final=final, loudness_db=_db(clip) - user_level,
                                   speaker_similarity=profile.similarity(clip))
        verdict = policy.decide(features(0.15, False), context)
        if not verdict.decided:
            verdict = policy.decide(features(min(0.3, duration), duration <= 0.3), context)
        at_deadline = verdict
        paused_from = verdict.elapsed_ms if verdict.stop else None
        first_stop_ms = paused_from
        paused_ms = 0
        elapsed = 0.3 + partial_step_s
        while verdict.provisional and elapsed < duration:
            later = policy.review(verdict, features(elapsed, False), context)
            if later.stop != verdict.stop:
                if later.stop:
                    paused_from = round(elapsed * 1000)
                    first_stop_ms = first_stop_ms if first_stop_ms is not None else paused_from
                else:
                    paused_ms += round(elapsed * 1000) - paused_from
                    paused_from = None
            verdict, elapsed = later, elapsed + partial_step_s
        # the VAD closes the segment (after its hangover) before the final transcript: review on the last partial
        last_partial = features(elapsed - partial_step_s, False)
        vad_closed = OverlapFeatures(elapsed_ms=round(duration * 1000), speech_active=False,
                                     words=last_partial.words if elapsed - partial_step_s >= 0.3 else "",
                                     loudness_db=last_partial.loudness_db,
                                     speaker_similarity=last_partial.speaker_similarity)
        if verdict.provisional:
            later = policy.review(verdict, vad_closed, context)
            if verdict.stop and not later.stop:
                paused_ms += round((duration + VAD_HANGOVER_S) * 1000) - paused_from
                paused_from = None
            elif later.stop and not verdict.stop:
                paused_from = round((duration + VAD_HANGOVER_S) * 1000)
                first_stop_ms = first_stop_ms if first_stop_ms is not None else paused_from
            verdict = later
        closing = features(duration, True)
        final = policy.review(verdict, closing, context) if verdict.decided else policy.decide(closing, context)
        if paused_from is not None and not final.stop:
            paused_ms += round((duration + VAD_HANGOVER_S + partial_step_s) * 1000) - paused_from
        if final.stop and first_stop_ms is None:
            first_stop_ms = round((duration + VAD_HANGOVER_S + partial_step_s) * 1000)
        side_conversation = final.kind == OverlapKind.OTHER_ADDRESSEE
        if stop_ms is None and final.stop:
            stop_ms = first_stop_ms  # when Venus first stopped (or paused) for the segment that interrupted
        segments.append({"text": event["text"], "heard": closing.words, "at_deadline": str(at_deadline.kind),
                         "provisional": at_deadline.provisional, "final": str(final.kind), "reason": final.reason,
                         "paused_ms": paused_ms})
    interrupted = any(s["final"] == OverlapKind.INTERRUPTION for s in segments)
    paused = any(s["at_deadline"] == OverlapKind.INTERRUPTION for s in segments)
    longest_pause = max((s["paused_ms"] for s in segments), default=0)
    return {"segments": segments, "interrupted": interrupted, "paused_briefly": paused and not interrupted,
            "longest_pause_ms": longest_pause, "stop_ms": stop_ms}


def summarize(rows: list[dict]) -> dict[str, dict]:
    """Per-category numbers."""
    by = defaultdict(list)
    for row in rows:
        by[row["category"]].append(row)
    out = {}
    for category in CATEGORIES:
        items = by.get(category, [])
        if not items:
            continue
        m: dict = {"cases": len(items)}
        if category in ("smooth_turn_taking", "pause_handling"):
            m["median_required_silence_ms"] = statistics.median(r["required_silence_ms"] for r in items)
            if category == "pause_handling":
                m["false_cut_in_rate"] = round(sum(r["false_cut_in"] for r in items) / len(items), 3)
                m["first_part_heard_as_nothing"] = sum(r.get("first_part_lost", False) for r in items)
        elif category == "user_interruption":
            m["respond_rate"] = round(sum(r["interrupted"] for r in items) / len(items), 3)
            stops = [r["stop_ms"] for r in items if r["stop_ms"] is not None]
            m["median_stop_decision_ms"] = statistics.median(stops) if stops else None
        else:
            m["continuation_rate"] = round(sum(not r["interrupted"] for r in items) / len(items), 3)
            m["paused_then_resumed_rate"] = round(sum(r["paused_briefly"] for r in items) / len(items), 3)
            # as the evaluator judges the runtime: a pause of 0.8 s or more ends Venus's speech run
            m["continued_without_long_pause"] = round(
                sum(not r["interrupted"] and r["longest_pause_ms"] < 800 for r in items) / len(items), 3)
        out[category] = m
    return out


def _options(pairs: list[str]) -> dict[str, float]:
    fields = OverlapOptions.__dataclass_fields__
    out = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields:
            raise SystemExit(f"--option {pair!r}: OverlapOptions has no field {name!r}")
        out[name] = type(getattr(OverlapOptions(), name))(float(value))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, required=True, help="a folder written by bench.duplex.generate")
    parser.add_argument("--per-category", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None, help="JSON with every case (default: CASES/policy.json)")
    parser.add_argument("--asr-cache", type=Path, default=None,
                        help="JSON of transcripts by clip (default: CASES/asr-cache.json)")
    parser.add_argument("--sensitivity", type=float, default=OverlapOptions().sensitivity,
                        help="OverlapOptions.sensitivity (settings.conversation.duplex_sensitivity)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an OverlapOptions field for a sweep on train/dev, e.g. background_level_db=-12")
    parser.add_argument("--end-of-turn", choices=["llm", "lexical"], default="llm",
                        help="settings.conversation.end_of_turn_model: the LLM probe (default) or the lexical model")
    parser.add_argument("--no-intents", action="store_true",
                        help="judge overlaps without the local intents' reading of the words (as before 2026-12-07)")
    parser.add_argument("--no-addressee", action="store_true",
                        help="judge overlaps without the chat LLM's reading of who is addressed (as before 2026-12-07)")
    args = parser.parse_args(argv)
    probe = WordsProbe() if args.end_of_turn == "llm" or not args.no_addressee else None
    addressee = AddresseeReader(probe) if probe is not None and not args.no_addressee else None
    if args.end_of_turn != "llm":
        probe = None
    asr = CachedTranscriber(args.asr_cache or args.cases / "asr-cache.json")
    detector, policy = EndOfTurnDetector(), OverlapPolicy(OverlapOptions(sensitivity=args.sensitivity,
                                                                 **_options(args.option)))
    embedder = default_embedder()  # the runtime's (conversation.voice_matching on, the default)
    tool_request = None
    if not args.no_intents:  # as the runtime: words the local intents parse for one of Venus's tools
        matcher = IntentMatcher.load()

        def tool_request(text: str) -> bool:
            match = matcher.match(text)
            return match is not None and bool(match.tool)
    rows, started = [], time.perf_counter()
    for category in CATEGORIES:
        for folder in sorted(args.cases.glob(f"{category}_*"))[: args.per_category]:
            meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
            audio, _ = sf.read(folder / "input.wav", dtype="float32")
            judged = judge_overlaps(meta, audio, asr, policy, embedder=embedder, tool_request=tool_request,
                               addressee=addressee) \
                if "overlap" in meta else \
                judge_turn_end(meta, audio, asr, detector, probe)
            rows.append({"case": folder.name, "category": category, **judged})
    asr.save()
    summary = summarize(rows)
    out = args.out or args.cases / "policy.json"
    out.write_text(json.dumps({"summary": summary, "cases": rows}, indent=2, default=str), encoding="utf-8")
    for category, metrics in summary.items():
        print(category, json.dumps(metrics))
    print(f"{len(rows)} cases in {time.perf_counter() - started:.0f} s; details in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
