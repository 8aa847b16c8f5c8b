"""Fit the end-of-turn probe: a logistic model over the chat LLM's next-token log-probabilities after the user's words.

The runtime already has the user's words in the LLM's KV cache (prefilled from the partials), so one read of the
logits gives, besides the chance that the message ends here, how likely the words continue with "the", "to",
"and"... A cut-off request ("Can you find me a cheap flight to") puts its mass on continuations; a whole one on
the end marker and on words that start a new sentence. The model reads that distribution; this script learns how
to weigh it, on text only:

* whole utterances of the benchmark's *train* split (every category: questions, requests, paused requests once
  finished, short turns, backchannels, remarks to others, TV) and the intent bench's train requests: label 1;
* the paused requests cut at their pause, and every other utterance cut at random word boundaries: label 0.

The words are read as the runtime reads them: after the system message of a fresh Venus conversation. The L2
strength is chosen on the *dev* split's decoded speech (bench/out/turn-rows, made by turn_signals), and the AUC is
reported on dev and test rows the fit never saw.

Then the detector the runtime uses (`EndOfTurnDetector.decide(llm_probability=...)`): the probe's log-odds
calibrated on the *train* split's decoded speech, and the silence they require, a falling logistic curve chosen on
train + dev for the fewest errors (the share of pauses cut into plus the share of whole turns kept waiting past
400 ms). It prints the cut-ins and slow turns of the lexical detector (the one without a probe) and of the probe's
on train, dev and test. `--write` stores all the weights in
engine/runtime/_eot_probe_weights.py.

Run: .venv/bin/python -m bench.duplex.eot_probe [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from pathlib import Path

import numpy as np
import yaml

from bench.duplex import pools
from bench.duplex.train_end_of_turn import fit_logistic
from bench.duplex.turn_signals import CACHE, SLOW_MS
from engine.runtime.turn_probe import probe_groups
from engine.runtime.turn_taking import PROBE_WORDS, EndOfTurnDetector, probe_features, strip_asr_punctuation
from engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS_FILE = ROOT / "engine" / "runtime" / "_eot_probe_weights.py"
INTENTS_TRAIN = ROOT / "bench" / "intents" / "tasks_train.yaml"


def _words(text: str) -> list[str]:
    return strip_asr_punctuation(text).split()


def training_texts(seed: int = 5, cuts_per_sentence: int = 2) -> list[tuple[str, int]]:
    """(text, label) pairs from the train split only: whole utterances 1, cut ones 0."""
    whole: list[str] = []
    cut: list[str] = []
    for category in pools.CATEGORIES:
        for item in pools.pool(category, "train"):
            if category == "paused":
                first, second = item
                whole.append(f"{first} {second}")
                cut.append(first)
            elif isinstance(item, tuple):
                whole.extend(t for t in item if isinstance(t, str) and t)
            else:
                whole.append(item)
    for pattern in yaml.safe_load(INTENTS_TRAIN.read_text(encoding="utf-8"))["patterns"]:
        whole.extend(item["say"] for item in pattern["items"] if isinstance(item.get("say"), str))
    rng = random.Random(seed)
    for text in whole:
        words = _words(text)
        if len(words) < 3:
            continue
        for end in rng.sample(range(1, len(words)), min(cuts_per_sentence, len(words) - 1)):
            cut.append(" ".join(words[:end]))
    whole_set = {strip_asr_punctuation(t).lower() for t in whole}
    rows = [(strip_asr_punctuation(t), 1) for t in whole]
    # a cut that is itself a whole utterance somewhere ("Set a timer") is not a negative
    rows += [(strip_asr_punctuation(t), 0) for t in cut if strip_asr_punctuation(t).lower() not in whole_set]
    return rows


def decoded_rows(split: str) -> list[dict]:
    """Decoded speech of a split (turn_signals' cache): the words at each pause (label 0, with the pause's
    length) and at each turn's end (label 1)."""
    rows = [row for path in sorted(CACHE.glob(f"{split}-*.json")) for row in json.loads(path.read_text())]
    if not rows:
        raise SystemExit(f"no cached rows for {split}: run python -m bench.duplex.turn_signals --split {split} first")
    return rows


def cached_rows(split: str) -> list[tuple[str, int]]:
    """(words without ASR punctuation, label) of a split's decoded speech."""
    return [(strip_asr_punctuation(row["text"]), int(row["label"])) for row in decoded_rows(split)]


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The chance that a whole turn scores above a cut-off one (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


class _Reader:
    def __init__(self) -> None:
        from engine.llm import Conversation, ConversationOptions, open_backend
        from engine.settings import Settings
        from engine.timeline import Timeline

        settings = Settings()
        self.backend = open_backend(settings.llm)
        # the context the runtime's probe reads the words after: a fresh conversation's system message
        self.context = Conversation(Timeline(), self.backend, ConversationOptions.from_settings(settings.llm)).messages()
        self.groups = probe_groups(self.backend)
        # the reads are remembered per model and context (bench/out), so refitting does not read them again
        key = hashlib.sha1(f"{settings.llm.model}|{self.context}|{PROBE_WORDS}".encode()).hexdigest()[:12]
        self._cache_file = CACHE.parent / f"eot-probe-reads-{key}.json"
        self._reads: dict[str, list[float]] = {}
        if self._cache_file.exists():
            self._reads = json.loads(self._cache_file.read_text(encoding="utf-8"))

    def features(self, text: str) -> np.ndarray:
        if text not in self._reads:
            logprobs = self.backend.next_token_logprobs(self.context, text, self.groups)
            self._reads[text] = [max(-1e9, float(v)) for v in logprobs]
        return probe_features(self._reads[text], len(text.split()))

    def save(self) -> None:
        self._cache_file.parent.mkdir(parents=True, exist_ok=True)
        self._cache_file.write_text(json.dumps(self._reads), encoding="utf-8")


def _logit(p: float) -> float:
    p = min(1 - 1e-4, max(1e-4, p))
    return math.log(p / (1 - p))


def outcomes(rows: list[dict], needed: list[float]) -> tuple[int, int, int, int, float]:
    """(pauses cut into, pauses, whole turns waiting past SLOW_MS, whole turns, median wait of a whole turn)."""
    pauses = [(r, ms) for r, ms in zip(rows, needed, strict=True) if r["label"] == 0]
    whole = [ms for r, ms in zip(rows, needed, strict=True) if r["label"] == 1]
    cut = sum(ms < r["pause_s"] * 1000 for r, ms in pauses)
    return cut, len(pauses), sum(ms > SLOW_MS for ms in whole), len(whole), float(np.median(whole))


def silence_for(odds: np.ndarray, mid: float, width: float, top: int, low: int = 200) -> np.ndarray:
    """The engine's mapping (EndOfTurnDetector.fused_silence_ms): `low` for sure whole turns, `top` for sure
    fragments, halfway at log-odds `mid`, over a band of about `width`."""
    return low + (top - low) / (1.0 + np.exp(-(mid - odds) / width))


def choose_silence(rows: list[dict], odds: np.ndarray) -> tuple[float, float, int]:
    """(mid, width, top) of the silence mapping with the fewest errors, a cut-in counting as much as a whole
    turn kept waiting past SLOW_MS (the share of pauses cut into plus the share of whole turns kept waiting)."""
    best = None
    for top in (2000, 2500, 3000):
        for mid in np.arange(-2.0, 4.01, 0.05):
            for width in (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2):
                cut, pauses, slow, whole, _ = outcomes(rows, list(silence_for(odds, float(mid), width, top)))
                key = cut / pauses + slow / whole
                if best is None or key < best[0]:
                    best = (key, (round(float(mid), 2), width, top))
    return best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the fitted weights in engine/runtime")
    args = parser.parse_args(argv)
    reader = _Reader()
    train = training_texts()
    print(f"train: {sum(y for _, y in train)} whole, {sum(1 - y for _, y in train)} cut (text of the train split)")
    x_train = np.array([reader.features(t) for t, _ in train])
    y_train = np.array([y for _, y in train], dtype=float)
    splits = ("train", "dev", "test")
    rows = {split: decoded_rows(split) for split in splits}
    x_rows = {s: np.array([reader.features(strip_asr_punctuation(r["text"])) for r in rows[s]]) for s in splits}
    y_rows = {s: np.array([r["label"] for r in rows[s]], dtype=float) for s in splits}
    reader.save()
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6

    def design(x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(x), 1)), (x - mean) / scale])

    best = None
    for l2 in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3):
        w = fit_logistic(design(x_train), y_train, l2=l2, steps=4000, rate=0.3)
        dev = auc(design(x_rows["dev"]) @ w, y_rows["dev"])
        print(f"l2 {l2:g}: dev AUC {dev:.3f}")
        if best is None or dev > best[0]:
            best = (dev, l2, w)
    _, l2, w = best
    for split in ("dev", "test"):
        print(f"{split}: probe AUC {auc(design(x_rows[split]) @ w, y_rows[split]):.3f} "
              f"(end-of-message probability alone {auc(x_rows[split][:, 0], y_rows[split]):.3f}), l2 {l2:g}, "
              f"{len(rows[split])} rows")

    # the probe's calibration on decoded speech, and the silence it requires
    shipped = EndOfTurnDetector()
    probe = {s: np.array([_logit(float(1 / (1 + np.exp(-(design(x_rows[s][i:i + 1]) @ w)[0]))))
                          if strip_asr_punctuation(r["text"]) else _logit(0.0) for i, r in enumerate(rows[s])])
             for s in splits}
    center, spread = probe["train"].mean(), probe["train"].std() + 1e-6
    scaled = fit_logistic(np.column_stack([np.ones(len(probe["train"])), (probe["train"] - center) / spread]),
                          y_rows["train"], l2=1e-3, steps=6000, rate=0.3)
    calibration = np.array([scaled[0] - scaled[1] * center / spread, scaled[1] / spread])
    odds = {s: calibration[0] + calibration[1] * probe[s] for s in splits}
    tuning = rows["train"] + rows["dev"]
    mid, width, top = choose_silence(tuning, np.concatenate([odds["train"], odds["dev"]]))
    print(f"calibration: {calibration[0]:.3f} + {calibration[1]:.3f} x probe log-odds; silence 200..{top} ms, "
          f"halfway at log-odds {mid:.2f}, width {width} (chosen on train + dev)")
    for split in splits:
        old = [shipped.decide(0, r["text"], is_final=True, last_word_probability=r["last_word_p"])
               .required_silence_ms for r in rows[split]]
        new = list(silence_for(odds[split], mid, width, top))
        print(f"{split}: AUC shipped {auc(-np.array(old, dtype=float), y_rows[split]):.3f}, "
              f"probe {auc(odds[split], y_rows[split]):.3f}")
        for name, needed in (("lexical", old), ("probe", new)):
            cut, pauses, slow, whole, median = outcomes(rows[split], needed)
            mean_wait = float(np.mean([ms for r, ms in zip(rows[split], needed, strict=True) if r["label"] == 1]))
            print(f"  {name:8s} cut into {cut}/{pauses} pauses; {slow}/{whole} whole turns wait > {SLOW_MS} ms; "
                  f"median wait {median:.0f} ms, mean {mean_wait:.0f} ms")
    if args.write:
        _write(w, mean, scale, l2, calibration, (mid, width, top))
        print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")
    return 0


def _write(w: np.ndarray, mean: np.ndarray, scale: np.ndarray, l2: float, calibration: np.ndarray,
           silence: tuple[float, float, int]) -> None:
    def floats(values) -> str:
        return "(" + ", ".join(f"{float(v):.6g}" for v in values) + ",)"

    WEIGHTS_FILE.write_text(
        '"""Generated by `python -m bench.duplex.eot_probe --write`: the end-of-turn probe over the chat LLM\'s\n'
        f'next-token log-probabilities (train split text, L2 {l2:g} chosen on dev), its calibration on the train\n'
        'split\'s decoded speech and the silence its odds require (train + dev). Do not edit by hand."""\n\n'
        f"MODEL = {Settings().llm.model!r}  # the chat model whose logits it reads; others use the lexical model\n"
        f"BIAS = {float(w[0]):.6g}\n"
        f"WEIGHTS = {floats(w[1:])}\n"
        f"MEAN = {floats(mean)}\n"
        f"SCALE = {floats(scale)}\n"
        f"CALIBRATION = {floats(calibration)}  # odds of a whole turn = [0] + [1] x the probe's log-odds\n"
        f"SILENCE_MID_ODDS = {silence[0]:.6g}  # the calibrated log-odds at which the silence is halfway\n"
        f"SILENCE_WIDTH = {silence[1]:.6g}\n"
        f"SILENCE_MAX_MS = {silence[2]}\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
