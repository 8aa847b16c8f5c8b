"""Fit the threshold of the addressee probe (engine/runtime/addressee_probe.py) on the train split's text.

The probe is asked only where the overlap policy's word rules would stop Venus for the words alone (a request
form, or words that claim the floor). Those rows of the pools' sentences said over her voice (interruptions:
said to Venus; talk to people in the room and backchannels: not) are read by the chat LLM after a conversation
like the runtime's: Venus's system message, the user's question, her answer so far. The threshold is the one with
the least cost on train + dev, where an interruption let pass costs twice a needless stop (a user who cannot stop
her is worse off than one she pauses for; ties: the lowest threshold); test is reported with the rules alone and
with the probe. `--write` stores it in engine/runtime/_addressee_weights.py.

Run: .venv/bin/python -m bench.duplex.addressee_fit [--write]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.duplex import pools
from engine.llm import ChatMessage
from engine.runtime.addressee_probe import FRAME
from engine.runtime.overlap import ConversationContext, OverlapFeatures, OverlapPolicy
from engine.timeline.events import OverlapKind

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS_FILE = ROOT / "engine" / "runtime" / "_addressee_weights.py"
TOPIC = "Tell me about the Eiffel Tower."
SPEAKING = "The Eiffel Tower was built for the World's Fair in eighteen eighty nine, and it"


def labelled(split: str) -> list[tuple[str, int]]:
    """(words, 1 if said to Venus) for the split's overlapping speech."""
    rows = [(words, 1) for words, _ in pools.pool("interruptions", split)]
    rows += [(words, 0) for words, _ in pools.pool("other_addressed", split)]
    rows += [(words, 0) for words in pools.pool("backchannels", split)]
    return rows


def asked(policy: OverlapPolicy, words: str) -> bool:
    """Whether the policy asks the probe about these final words (its word rules would stop Venus)."""
    seen: list[str] = []
    context = ConversationContext(speaking_text=SPEAKING, topic_text=TOPIC,
                                  addressee_score=lambda text: seen.append(text))
    features = OverlapFeatures(elapsed_ms=2500, speech_active=False, words=words, is_final=True, loudness_db=0.0,
                               speaker_similarity=0.9, duration_ms=2500)
    verdict = policy.decide(features, context)
    return bool(seen) and verdict.kind == OverlapKind.INTERRUPTION


MISSED_INTERRUPTION_COST = 2.0


def cost(rows: list[dict], threshold: float) -> float:
    """Needless stops plus MISSED_INTERRUPTION_COST per interruption let pass (stop when score >= threshold)."""
    return sum(MISSED_INTERRUPTION_COST if r["to_venus"] else 1.0
               for r in rows if (r["score"] >= threshold) != bool(r["to_venus"]))


def best_threshold(rows: list[dict]) -> float:
    """The threshold of least cost; ties go to the lowest (Venus rather stops)."""
    scores = sorted({r["score"] for r in rows})
    candidates = [scores[0] - 0.01] + [(a + b) / 2 for a, b in zip(scores, scores[1:], strict=False)]
    return min(candidates, key=lambda t: (cost(rows, t), t))


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="store the threshold in the weights file")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "addressee-rows.json")
    args = parser.parse_args(argv)
    from engine.llm import Conversation, ConversationOptions, open_backend
    from engine.settings import Settings
    from engine.timeline import Timeline

    settings = Settings()
    backend = open_backend(settings.llm)
    system = Conversation(Timeline(), backend, ConversationOptions.from_settings(settings.llm)).messages()
    messages = [*system, ChatMessage("user", TOPIC), ChatMessage("assistant", SPEAKING)]
    policy = OverlapPolicy()
    by_split: dict[str, list[dict]] = {}
    for split in pools.SPLITS:
        rows = []
        for words, to_venus in labelled(split):
            if not asked(policy, words):
                continue
            in_chat, at_home, tokens = backend.words_logprob(messages, words, FRAME)
            rows.append({"words": words, "to_venus": to_venus, "score": round((in_chat - at_home) / tokens, 4)})
        by_split[split] = rows
    threshold = round(best_threshold(by_split["train"] + by_split["dev"]), 3)
    print(f"threshold (chosen on train + dev): {threshold:+.3f} nats a token, model {settings.llm.model}")
    print("rows the word rules would stop Venus for; right with the rules alone / with the probe:")
    for split, rows in by_split.items():
        rules = sum(r["to_venus"] for r in rows)
        probe = sum((r["score"] >= threshold) == bool(r["to_venus"]) for r in rows)
        lost = [r["words"] for r in rows if r["to_venus"] and r["score"] < threshold]
        print(f"  {split}: {len(rows)} rows ({rules} said to Venus): rules {rules}/{len(rows)}, probe {probe}/{len(rows)}"
              f"; interruptions the probe lets pass: {len(lost)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"threshold": threshold, "rows": by_split}, indent=1), encoding="utf-8")
    if args.write:
        WEIGHTS_FILE.write_text(
            '"""Generated by `python -m bench.duplex.addressee_fit --write`: the threshold of the addressee probe,\n'
            "chosen on the train and dev splits' text (the rows the word rules would stop Venus for). Do not edit by hand.\"\"\"\n\n"
            f"MODEL = {settings.llm.model!r}  # the chat model whose logits it was fitted on\n"
            f"THRESHOLD = {threshold}  # nats a token: below it, words the rules would stop Venus for are said to the room\n",
            encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
