"""Speech benchmarks: idle listening CPU, ASR final latency, TTS first audio, stop-to-silence.

Run: .venv/bin/python bench/bench_speech.py [--asr-threads 2] [--utterances 5]
Numbers depend on the machine and on what else runs; each line says what was measured against what.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from speech_helpers import RATE, espeak, pad, write_wav  # noqa: E402

from engine.asr import WhisperOptions, WhisperTranscriber  # noqa: E402
from engine.audio import EchoCanceller, EchoGuard, FileSink, FileSource, SpeechFrontEnd, SpeechPipeline  # noqa: E402
from engine.models.registry import resolve  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.timeline import Kind, Timeline  # noqa: E402
from engine.vad import SegmenterOptions, SileroVad  # noqa: E402

UTTERANCES = [
    "Please set a timer for ten minutes.",
    "What is the weather like in Paris today?",
    "Remind me to call my sister tonight.",
    "Open the calendar for next Tuesday morning.",
    "How far is it from here to the station?",
]


def bench_idle(seconds: float) -> None:
    """CPU of the listening path (AEC + VAD) on room noise, as a fraction of one core."""
    noise = (np.random.default_rng(0).standard_normal(int(seconds * RATE)) * 0.003).astype(np.float32)
    front = SpeechFrontEnd(SileroVad(resolve("silero-vad-v6")), SegmenterOptions(), EchoCanceller(), EchoGuard())
    silence = np.zeros(160, np.float32)
    began = time.process_time()
    for i in range(0, len(noise), 160):
        front.add_reference(silence)
        front.process(noise[i:i + 160])
    cpu = time.process_time() - began
    vad = SileroVad(resolve("silero-vad-v6"))
    began = time.process_time()
    for i in range(0, len(noise) - 511, 512):
        vad(noise[i:i + 512])
    vad_cpu = time.process_time() - began
    print(f"idle listening, offline: VAD only {100 * vad_cpu / seconds:.2f}% of one core, AEC+VAD+guard "
          f"{100 * cpu / seconds:.2f}%  (target <= 5%)")


def bench_idle_live(seconds: float, tmp: Path) -> None:
    """The whole pipeline running in real time on a silent file source: process CPU over wall time."""
    mic = write_wav(tmp / "quiet.wav", (np.random.default_rng(1).standard_normal(int(seconds * RATE)) * 0.003))
    timeline = Timeline()
    pipeline = SpeechPipeline(timeline, FileSource(mic, tail_s=0.0), FileSink(tmp / "o.wav"), Settings())
    pipeline.start()
    time.sleep(0.5)
    cpu0, wall0 = time.process_time(), time.monotonic()
    pipeline.source.finished.wait(seconds + 5)
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    pipeline.close()
    print(f"idle listening (live pipeline, file source+sink, all threads): {100 * cpu / wall:.2f}% of one core")


def bench_asr(threads: int, count: int, tmp: Path) -> None:
    """Final transcript latency after the end of speech, through the live pipeline, against a plain decode."""
    settings = Settings()
    settings.asr.n_threads = threads
    after_vad_end, after_speech, plain, lengths = [], [], [], []
    transcriber = WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en"), threads=threads))
    for text in UTTERANCES[:count]:
        speech = espeak(text, wpm=150)
        lengths.append(len(speech) / RATE)
        mic = write_wav(tmp / "u.wav", pad(speech, 0.5, 0.0))
        timeline = Timeline()
        pipeline = SpeechPipeline(timeline, FileSource(mic, tail_s=1.5), FileSink(tmp / "o.wav"), settings,
                                  transcriber=transcriber)
        pipeline.start()
        pipeline.source.finished.wait(30)
        pipeline.wait_idle(30)
        end = timeline.events(kinds=[Kind.USER_SPEECH_END])[0]
        final = timeline.events(kinds=[Kind.ASR_FINAL])[0]
        voiced_end = np.flatnonzero(np.abs(speech) > 0.02)[-1] / RATE  # espeak adds trailing silence
        speech_end_ms = pipeline._start_ms + int((0.5 + voiced_end) * 1000)
        after_vad_end.append(final.t_ms - end.t_ms)
        after_speech.append(final.t_ms - speech_end_ms)
        pipeline.close()
        began = time.perf_counter()
        transcriber.transcribe(speech, word_timestamps=True)
        plain.append((time.perf_counter() - began) * 1000)
        print(f"  {len(speech) / RATE:.1f} s  {final.text!r}")
    med = statistics.median
    print(f"ASR final (tiny.en, {threads} threads, utterances {min(lengths):.1f}-{max(lengths):.1f} s): median "
          f"{med(after_vad_end):.0f} ms after the VAD's end-of-speech event, {med(after_speech):.0f} ms after the "
          f"last spoken sample (VAD waits {settings.vad.min_silence_ms} ms of silence); plain decode of the same "
          f"audio {med(plain):.0f} ms; early-final speedup vs plain {med(plain) / max(1, med(after_vad_end)):.2f}x")


def bench_tts_and_stop(tmp: Path, rounds: int = 5) -> None:
    """speak() → first clause queued at the player; stop() → silence in the sink's own output."""
    timeline = Timeline()
    sink_path = tmp / "speaker.wav"
    pipeline = SpeechPipeline(timeline, FileSource(write_wav(tmp / "z.wav", np.zeros(RATE * 60, np.float32))),
                              FileSink(sink_path, session_ms=timeline.now_ms), Settings())
    pipeline.start()
    pipeline.synthesizer.synthesize("Warm up.")
    first_audio, stops = [], []
    for i in range(rounds):
        began = time.perf_counter()
        pipeline.speak(f"t{i}", iter(["Of course, ", "the answer is forty two, and here is a long explanation of it."]))
        while not pipeline.speaking:
            time.sleep(0.0005)
        first_audio.append((time.perf_counter() - began) * 1000)
        time.sleep(0.6)
        stops.append(pipeline.playback_position)
        pipeline.stop()
        time.sleep(0.3)
    pipeline.close()
    audio, rate = sf.read(sink_path, dtype="float32")
    lead = pipeline.sink.lead_samples
    for i, at in enumerate(stops):
        window = audio[lead + at: lead + at + rate // 4]  # the next round starts 300 ms after the stop
        loud = np.flatnonzero(np.abs(window) > 1e-3)
        stops[i] = (loud[-1] + 1) * 1000 / rate if len(loud) else 0.0
    print(f"TTS first clause queued for playback: median {statistics.median(first_audio):.0f} ms "
          f"(max {max(first_audio):.0f})  (target <= 150 ms; Piper joe-medium, 1 thread)")
    print(f"stop → silence at the sink: median {statistics.median(stops):.1f} ms, max {max(stops):.1f} ms "
          f"(target <= 50 ms; file sink, 10 ms blocks, 8 ms fade; a sound card adds its output latency)")


def main() -> None:
    """Run all speech benchmarks."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--asr-threads", type=int, default=2)
    parser.add_argument("--utterances", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_idle(20.0)
        bench_idle_live(6.0, Path(tmp))
        bench_tts_and_stop(Path(tmp))
        bench_asr(args.asr_threads, args.utterances, Path(tmp))


if __name__ == "__main__":
    main()
