"""Speaker similarity: cost of the learned voice encoder next to the MFCC-and-pitch embedding, and how well
each tells the enrolled (espeak-ng) voice from others.

Run: .venv/bin/python -m bench.bench_speaker   Both embedders run side by side, alternated, on the same clips.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.duplex.synth import SpeechCache, Voice  # noqa: E402
from engine.models.registry import resolve  # noqa: E402
from engine.speaker import (  # noqa: E402
    CombinedEmbedder,
    MfccPitchEmbedder,
    SpeakerProfile,
    VoiceEncoder,
    VoiceEncoderEmbedder,
)

ENROL = ["Hello, I would like some help with my calendar today.", "Please read me my new messages.",
         "Set a timer for ten minutes while I cook."]
PROBES = ["What is the weather going to be like tomorrow afternoon?", "Dinner is ready, come and eat.",
          "Can you pick me up at five?", "I think we should buy some more bread."]
OTHERS = ["en-us+f3", "en-us+f4", "en+m3", "en-us+m7", "en-gb"]


def main() -> int:
    import tempfile

    cache = SpeechCache(Path(tempfile.mkdtemp(prefix="venus-bench-speaker-")))
    say = lambda text, voice: cache.render(text, Voice(voice))  # noqa: E731
    learned = VoiceEncoderEmbedder(VoiceEncoder(resolve("resemblyzer-voice-encoder", kind="speaker")))
    classic = MfccPitchEmbedder()
    clips = [say(t, "en-us") for t in PROBES]
    seconds = sum(len(c) for c in clips) / 16000
    times: dict[str, list[float]] = {"voice encoder": [], "MFCC + pitch": []}
    for _ in range(3):  # alternated, A B A B
        for name, embedder in (("voice encoder", learned), ("MFCC + pitch", classic)):
            started = time.perf_counter()
            for clip in clips:
                embedder.embed(clip)
            times[name].append(time.perf_counter() - started)
    for name, runs in times.items():
        print(f"{name:14s}: {statistics.median(runs) / seconds * 1000:5.1f} ms per second of speech")
    ratio = statistics.median(times["voice encoder"]) / statistics.median(times["MFCC + pitch"])
    print(f"cost ratio voice encoder / MFCC + pitch: {ratio:.1f}")
    both = CombinedEmbedder([learned, classic])  # what Venus uses (engine.speaker.default_embedder)
    for name, embedder in (("voice encoder", learned), ("MFCC + pitch", classic), ("both (default)", both)):
        profile = SpeakerProfile(embedder)
        for text in ENROL:
            profile.enroll(say(text, "en-us"))
        own = [profile.similarity(say(t, "en-us")) for t in PROBES]
        other = [profile.similarity(say(t, v)) for t in PROBES for v in OTHERS]
        caught = sum(1 for s in other if s is not None and s < 0.2)
        print(f"{name:14s}: enrolled voice min {min(own):.2f} median {statistics.median(own):.2f}; other voices "
              f"median {statistics.median(other):.2f}, {caught}/{len(other)} under the policy's 0.2 'not the user'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
