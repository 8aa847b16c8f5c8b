"""Fit the end-of-turn probe: a logistic model over the chat LLM's next-token log-probabilities after the user's words.

The runtime already has the user's words in the LLM's KV cache (prefilled from the partials), so one read of the
logits gives, besides the chance that the message ends here, how likely the words continue with "the", "to",
"and"... A cut-off request ("Can you find me a cheap flight to") puts its mass on continuations; a whole one on
the end marker and on words that start a new sentence. The model reads that distribution; this script learns how
to weigh it, on text only:

* whole utterances of the benchmark's *train* split (every category: questions, requests, paused requests once
  finished, short turns, backchannels, remarks to others, TV) and the intent bench's train requests: label 1;
* the paused requests cut at their pause, and every other utterance cut at random word boundaries: label 0.

The L2 strength is chosen on the *dev* split's decoded speech (bench/out/turn-rows, made by turn_signals), and the
AUC is reported on dev and test rows the fit never saw. `--write` stores the weights in
engine/runtime/_eot_probe_weights.py.

Run: .venv/bin/python -m bench.duplex.eot_probe [--write]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import yaml

from bench.duplex import pools
from bench.duplex.train_end_of_turn import fit_logistic
from bench.duplex.turn_signals import CACHE, SYSTEM, strip_asr_punctuation
from engine.runtime.turn_taking import PROBE_WORDS, probe_features

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


def cached_rows(split: str) -> list[tuple[str, int]]:
    """Decoded speech of a split (turn_signals' cache): the words at each pause (0) and at each turn's end (1)."""
    rows = []
    for path in sorted(CACHE.glob(f"{split}-*.json")):
        for row in json.loads(path.read_text()):
            rows.append((strip_asr_punctuation(row["text"]), int(row["label"])))
    if not rows:
        raise SystemExit(f"no cached rows for {split}: run python -m bench.duplex.turn_signals --split {split} first")
    return rows


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The chance that a whole turn scores above a cut-off one (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


class _Reader:
    def __init__(self) -> None:
        from engine.llm import ChatMessage, open_backend
        from engine.settings import Settings

        self.backend = open_backend(Settings().llm)
        self.context = [ChatMessage("system", SYSTEM)]
        self.groups = probe_groups(self.backend)

    def features(self, text: str) -> np.ndarray:
        logprobs = self.backend.next_token_logprobs(self.context, text, self.groups)
        return probe_features(logprobs, len(text.split()))


def probe_groups(backend) -> list[list[int]]:
    """The token groups the probe reads: the closers, then each of PROBE_WORDS (a word that is not one token in
    this model's vocabulary reads as impossible, -inf, which probe_features clips)."""
    groups = [backend.closing_tokens()]
    for word in PROBE_WORDS:
        token = backend.word_token(word)
        groups.append([token] if token is not None else [])
    return groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the fitted weights in engine/runtime")
    args = parser.parse_args(argv)
    reader = _Reader()
    train = training_texts()
    print(f"train: {sum(y for _, y in train)} whole, {sum(1 - y for _, y in train)} cut (text of the train split)")
    x_train = np.array([reader.features(t) for t, _ in train])
    y_train = np.array([y for _, y in train], dtype=float)
    held = {split: cached_rows(split) for split in ("dev", "test")}
    x_held = {s: np.array([reader.features(t) for t, _ in rows]) for s, rows in held.items()}
    y_held = {s: np.array([y for _, y in rows]) for s, rows in held.items()}
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6

    def design(x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(x), 1)), (x - mean) / scale])

    best = None
    for l2 in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3):
        w = fit_logistic(design(x_train), y_train, l2=l2, steps=4000, rate=0.3)
        dev = auc(design(x_held["dev"]) @ w, y_held["dev"])
        print(f"l2 {l2:g}: dev AUC {dev:.3f}")
        if best is None or dev > best[0]:
            best = (dev, l2, w)
    _, l2, w = best
    closers_only = {s: auc(x_held[s][:, 0], y_held[s]) for s in held}
    for split in held:
        print(f"{split}: probe AUC {auc(design(x_held[split]) @ w, y_held[split]):.3f} "
              f"(end-of-message probability alone {closers_only[split]:.3f}), l2 {l2:g}, {len(held[split])} rows")
    if args.write:
        _write(w, mean, scale, l2)
        print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")
    return 0


def _write(w: np.ndarray, mean: np.ndarray, scale: np.ndarray, l2: float) -> None:
    def floats(values) -> str:
        return "(" + ", ".join(f"{float(v):.6g}" for v in values) + ",)"

    WEIGHTS_FILE.write_text(
        '"""Generated by `python -m bench.duplex.eot_probe --write`: the end-of-turn probe over the chat LLM\'s\n'
        f'next-token log-probabilities (train split text, L2 {l2:g} chosen on dev). Do not edit by hand."""\n\n'
        f"BIAS = {float(w[0]):.6g}\n"
        f"WEIGHTS = {floats(w[1:])}\n"
        f"MEAN = {floats(mean)}\n"
        f"SCALE = {floats(scale)}\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
