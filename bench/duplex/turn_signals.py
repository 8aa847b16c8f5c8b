"""End-of-turn signals on the benchmark's held-out splits: how the shipped detector does on sentences, names
and voices it was never fitted on, and how much each candidate signal of issue #22 knows.

For every pause-handling and smooth-turn-taking case of a split (bench/duplex/pools.py, generate --split) it
decodes, as the pipeline's pre-final does (whisper tiny.en, `asr.turn_beam_size`, word timestamps), the user's
speech up to each stop:
* the mid-sentence pause: label 0 (ending the turn there is a cut-in), with the pause's length;
* the end of the turn (a complete question, or the paused request once finished): label 1;
* short whole turns, 20 each from the split's backchannel pool said on their own ("Got it.", "Oh, really?") and
  its everyday short turns ("Next song.", "What time is it?"): label 1.
Each row keeps the signals: the default chat LLM's end-of-message probability after the words (its end marker
plus sentence-final punctuation, ASR punctuation stripped: `LlamaBackend.end_of_turn_probability`), whisper's
confidence in the last word, the word count, and Smart Turn v3.2's probability on the audio. Rows are cached
under bench/out/turn-rows/ per (split, seed, count).

It prints the shipped detector's cut-ins and slow whole turns, each signal's AUC (the chance that a whole turn
scores above a cut-off one), a logistic fusion of the signals fitted on train and scored on the asked split (a
candidate, not shipped: see docs/BENCHMARKS.md), and what one LLM judgement costs beside a whisper decode.

Run: .venv/bin/python -m bench.duplex.turn_signals --split test --seeds 1 --per-category 40
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.duplex import pools
from bench.duplex.generate import GeneratorOptions, _SplitSource, generate
from bench.duplex.synth import SpeechCache
from engine.runtime.turn_taking import strip_asr_punctuation

PAD_S = 0.25  # the VAD's padding after the last voiced frame, which the pre-final decodes with
SLOW_MS = 400  # a whole turn that needs more silence than this answers late (response latency target 0.6 s)
CACHE = Path(__file__).resolve().parents[1] / "out" / "turn-rows"
SYSTEM = "You are a helpful voice assistant. The user's words are transcribed from speech."


class _Signals:
    """The models that read a clip: whisper as the pre-final decodes, the chat LLM, Smart Turn."""

    def __init__(self) -> None:
        from engine.audio import make_transcriber
        from engine.llm import ChatMessage
        from engine.llm.llama_backend import LlamaBackend, LlamaOptions
        from engine.models.registry import resolve
        from engine.runtime.smart_turn import SmartTurn
        from engine.settings import Settings

        self.settings = Settings()
        self.transcriber = make_transcriber(self.settings)
        self.llm = LlamaBackend(LlamaOptions(model_path=str(resolve(self.settings.llm.model, kind="llm")), n_ctx=512,
                                             n_batch=64, n_threads=1))
        self.context = [ChatMessage("system", SYSTEM)]
        self.prosody = SmartTurn(resolve("smart-turn-v3.2", "turn"))

    def end_of_message(self, words: str) -> float:
        return self.llm.end_of_turn_probability(self.context, words) if words else 0.0

    def row(self, case: str, clip: np.ndarray, label: int, pause: float | None) -> dict:
        heard = self.transcriber.transcribe(clip, word_timestamps=True, beam_size=self.settings.asr.turn_beam_size)
        words = strip_asr_punctuation(heard.text)
        return {"case": case, "label": label, "pause_s": pause, "text": heard.text, "llm": self.end_of_message(words),
                "last_word_p": heard.words[-1].probability if heard.words else None,
                "words": len(words.split()), "smart_turn": self.prosody.probability_complete(clip)}


def _cached(name: str, make) -> list[dict]:
    cache = CACHE / f"{name}.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    rows = make()
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return rows


def _case_rows(split: str, seed: int, per_category: int) -> list[dict]:
    signals, rows = _Signals(), []
    with tempfile.TemporaryDirectory() as tmp:
        for case in generate(GeneratorOptions(out_dir=Path(tmp), per_category=per_category, seed=seed, split=split,
                                              categories=("pause_handling", "smooth_turn_taking"))):
            meta = json.loads((case / "metadata.json").read_text(encoding="utf-8"))
            audio, rate = sf.read(case / "input.wav", dtype="float32")
            begin = max(0, int((min(e["start"] for e in meta["events"] if e["type"] == "user_turn") - 0.2) * rate))
            if meta.get("pause"):
                pause = meta["pause"]
                rows.append(signals.row(case.name, audio[begin: int((pause["start"] + PAD_S) * rate)], 0,
                                        pause["end"] - pause["start"]))
            rows.append(signals.row(case.name, audio[begin: int((meta["turn_end"] + PAD_S) * rate)], 1, None))
    return rows


def _short_rows(split: str, seed: int, count: int, category: str) -> list[dict]:
    signals, speech, source = _Signals(), SpeechCache(), _SplitSource(split)
    rng = random.Random(f"short-{split}-{seed}" if category == "backchannels" else f"{category}-{split}-{seed}")
    items = pools.pool(category, split)
    rows = []
    for index in range(count // 2):
        clip = speech.render(rng.choice(items), source.user_voice(rng))
        clip = np.concatenate([np.zeros(3200, np.float32), clip, np.zeros(int(PAD_S * 16000), np.float32)])
        rows.append(signals.row(f"short_{index:03d}", clip, 1, None))
    return rows


def collect(split: str, seed: int, per_category: int) -> list[dict]:
    """The rows of one split and seed (computed once, then read from the cache)."""
    rows = _cached(f"{split}-seed{seed}-n{per_category}", lambda: _case_rows(split, seed, per_category))
    for category in ("backchannels", "short_turns"):
        rows += _cached(f"{split}-{category}-seed{seed}-n{per_category}",
                        lambda c=category: _short_rows(split, seed, per_category, c))
    return rows


def auc(rows: list[dict], key: str) -> float:
    """P(a whole turn's score > a cut-off one's), ties counting half."""
    whole = np.array([r[key] for r in rows if r["label"] == 1 and r[key] is not None], dtype=float)
    cut = np.array([r[key] for r in rows if r["label"] == 0 and r[key] is not None], dtype=float)
    if not whole.size or not cut.size:
        return float("nan")
    return float(np.mean((whole[:, None] > cut[None, :]) + 0.5 * (whole[:, None] == cut[None, :])))


def _logit(p: float) -> float:
    p = min(1 - 1e-4, max(1e-4, p))
    return math.log(p / (1 - p))


def add_probe(rows: list[dict]) -> None:
    """The runtime's LLM probe of each row's words (engine.runtime.turn_probe), read after a fresh Venus
    conversation's system message, as the runtime reads it."""
    from engine.llm import Conversation, ConversationOptions, open_backend
    from engine.runtime.turn_probe import judge_words, probe_groups
    from engine.settings import Settings
    from engine.timeline import Timeline

    settings = Settings()
    backend = open_backend(settings.llm)
    try:
        conversation = Conversation(Timeline(), backend, ConversationOptions.from_settings(settings.llm))
        groups = probe_groups(backend)
        for r in rows:
            r["probe"] = judge_words(conversation, groups, r["text"]) if strip_asr_punctuation(r["text"]) else None
    finally:
        backend.close()


def add_product_scores(rows: list[dict]) -> None:
    """The shipped detector's probability and required silence for each row (with the LLM probe, as the runtime
    decides with the default models), the lexical model alone with its caps (as it decides without a probe:
    a remote model), and the lexical model's raw odds."""
    from engine.runtime.turn_taking import EndOfTurnDetector, LexicalTurnModel

    detector, lexical = EndOfTurnDetector(), LexicalTurnModel()
    for r in rows:
        verdict = detector.decide(0, r["text"], is_final=True, last_word_probability=r["last_word_p"],
                                  llm_probability=r.get("probe"))
        r["product"], r["product_needed_ms"] = verdict.probability, verdict.required_silence_ms
        alone = detector.decide(0, r["text"], is_final=True, last_word_probability=r["last_word_p"])
        r["lexical_capped"], r["lexical_needed_ms"] = alone.probability, alone.required_silence_ms
        r["lexical"] = _logit(lexical.probability_complete(strip_asr_punctuation(r["text"]) or r["text"]))


def _candidate_features(r: dict) -> list[float]:
    return [1.0, r["lexical"], math.log10(max(1e-6, r["llm"])), math.log(max(0.05, r["last_word_p"] or 1.0)),
            math.log1p(r["words"])]


def fit_candidate(train: list[dict], l2: float = 1e-2, steps: int = 20000, rate: float = 0.1) -> np.ndarray:
    """A class-balanced logistic fusion of lexical odds, log LLM probability, log last-word confidence, length."""
    x = np.array([_candidate_features(r) for r in train])
    y = np.array([r["label"] for r in train], dtype=float)
    balance = np.where(y > 0.5, 0.5 / y.mean(), 0.5 / (1.0 - y.mean()))
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ ((p - y) * balance) / len(y)
        grad[1:] += l2 * w[1:]
        w -= rate * grad
    return w


def product_outcomes(rows: list[dict], key: str = "product_needed_ms") -> str:
    """Cut-ins into pauses and slow whole turns of a detector (its required silence under `key`)."""
    pauses = [r for r in rows if r["label"] == 0]
    whole = [r[key] for r in rows if r["label"] == 1]
    cut_ins = sum(r[key] < r["pause_s"] * 1000 for r in pauses)
    slow = sum(ms > SLOW_MS for ms in whole)
    return (f"cut into {cut_ins}/{len(pauses)} pauses ({cut_ins / max(1, len(pauses)):.3f}); {slow}/{len(whole)} "
            f"whole turns need > {SLOW_MS} ms ({slow / max(1, len(whole)):.3f}); median {statistics.median(whole):.0f} "
            f"ms, 90th percentile {np.percentile(whole, 90):.0f} ms")


def cost(texts: list[str], repeats: int = 3) -> str:
    """One LLM judgement of a transcript beside a greedy whisper decode of it (a partial's cost), alternated."""
    from bench.duplex.synth import Voice

    signals, speech = _Signals(), SpeechCache()
    clips = [speech.render(t, Voice("en-us")) for t in texts]
    llm_s = asr_s = 0.0
    for _ in range(repeats):
        for text, clip in zip(texts, clips, strict=True):
            began = time.perf_counter()
            signals.transcriber.transcribe(clip, word_timestamps=True, beam_size=1)
            asr_s += time.perf_counter() - began
            began = time.perf_counter()
            signals.end_of_message(strip_asr_punctuation(text))
            llm_s += time.perf_counter() - began
    n = repeats * len(texts)
    return (f"one LLM judgement {llm_s / n * 1000:.0f} ms, a greedy whisper decode of the same turn "
            f"{asr_s / n * 1000:.0f} ms ({llm_s / asr_s:.2f}x)")


def probe_cost(texts: list[str], repeats: int = 3) -> str:
    """What the runtime's probe adds to a turn, CPU time measured side by side: the partial's prefill (done
    today) then the probe of the final words, against the prefill alone, alternated, on one thread."""
    from engine.llm import Conversation, ConversationOptions, open_backend
    from engine.runtime.turn_probe import probe_groups
    from engine.settings import Settings
    from engine.timeline import Timeline

    settings = Settings()
    settings.llm.n_threads = 1
    backend = open_backend(settings.llm)
    try:
        conversation = Conversation(Timeline(), backend, ConversationOptions.from_settings(settings.llm))
        groups = probe_groups(backend)
        conversation.warm_up()
        with_probe = without = 0.0
        for _ in range(repeats):
            for text in texts:
                words = strip_asr_punctuation(text)
                partial = " ".join(words.split()[:-1])  # the last partial lacks the last word
                for probe in (True, False):
                    conversation.prefill("")  # back to the conversation without the user's words
                    began = time.process_time()
                    conversation.prefill(partial)
                    if probe:
                        conversation.next_token_logprobs(words, groups)
                    spent = time.process_time() - began
                    with_probe, without = (with_probe + spent, without) if probe else (with_probe, without + spent)
    finally:
        backend.close()
    n = repeats * len(texts)
    extra_ms = (with_probe - without) / n * 1000
    return (f"prefill + probe {with_probe / n * 1000:.0f} ms of CPU a turn, prefill alone {without / n * 1000:.0f} ms; "
            f"the probe adds {extra_ms:.0f} ms a turn, {extra_ms / 30:.1f} % of one core at a turn every 3 s")


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="test", choices=pools.SPLITS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--per-category", type=int, default=40)
    args = parser.parse_args(argv)
    rows = [r for s in args.seeds for r in collect(args.split, s, args.per_category)]
    train = [r for s in args.seeds for r in collect("train", s, args.per_category)]
    add_probe(rows)
    add_product_scores(rows)
    add_product_scores(train)
    print(f"End of turn on the {args.split} split, seeds {args.seeds}: {sum(r['label'] == 0 for r in rows)} "
          f"mid-sentence pauses (0.6-2.5 s), {sum(r['label'] == 1 for r in rows)} whole turns")
    print(f"  shipped detector (the LLM probe):             {product_outcomes(rows)}")
    print(f"  lexical model and its caps alone (no probe):  {product_outcomes(rows, 'lexical_needed_ms')}")
    w = fit_candidate(train)
    for r in rows:
        r["candidate"] = float(np.dot(w, _candidate_features(r)))
    for key in ("product", "lexical_capped", "probe", "lexical", "llm", "last_word_p", "smart_turn", "candidate"):
        print(f"  AUC {key:12s} {auc(rows, key):.3f}")
    print(f"  (candidate = logistic fusion of lexical, LLM, last word, length fitted on train: "
          f"{np.round(w, 3).tolist()})")
    print(f"  cost: {cost([r['text'] for r in rows if r['label'] == 1][:8])}")
    print(f"  cost in the runtime: {probe_cost([r['text'] for r in rows if r['label'] == 1][:12])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
