"""Speech benchmarks: idle listening CPU, ASR final latency, TTS first audio, stop-to-silence (file sink and
the PulseAudio test sink).

Run: .venv/bin/python bench/bench_speech.py [--asr-threads 2] [--utterances 5]
(after `. scripts/test-services.sh` for the PulseAudio stop measurement)
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
    """CPU of the listening path on room noise, as a fraction of one core: the VAD alone, the front end while
    nobody speaks (the AEC rests), and the front end while Venus speaks (the AEC runs on every 10 ms frame)."""
    noise = (np.random.default_rng(0).standard_normal(int(seconds * RATE)) * 0.003).astype(np.float32)
    voice = (np.sin(np.arange(len(noise)) * 0.07) * 0.2).astype(np.float32)  # a steady "Venus is speaking"
    vad = SileroVad(resolve("silero-vad-v6"))
    began = time.process_time()
    for i in range(0, len(noise) - 511, 512):
        vad(noise[i:i + 512])
    vad_cpu = time.process_time() - began
    cost = {}
    for name, played in (("idle", np.zeros_like(noise)), ("speaking", voice)):
        front = SpeechFrontEnd(SileroVad(resolve("silero-vad-v6")), SegmenterOptions(), EchoCanceller(), EchoGuard())
        began = time.process_time()
        for i in range(0, len(noise), 160):
            front.add_reference(played[i:i + 160])
            front.process(noise[i:i + 160])
        cost[name] = time.process_time() - began
    print(f"listening, offline (10 ms blocks, as fast as possible): VAD only {100 * vad_cpu / seconds:.2f}% of one "
          f"core; front end while nobody speaks (AEC resting) {100 * cost['idle'] / seconds:.2f}%; while Venus "
          f"speaks (AEC + guard) {100 * cost['speaking'] / seconds:.2f}%")


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process, by thread name (Linux /proc; empty elsewhere)."""
    import os
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[str, float] = {}
    try:
        tids = os.listdir(f"/proc/{os.getpid()}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            stat = Path(f"/proc/{os.getpid()}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        name = names.get(int(tid), stat[stat.index("(") + 1:stat.rindex(")")])
        found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return found


def bench_idle_live(seconds: float, tmp: Path) -> None:
    """The whole pipeline running in real time on a quiet file source: process CPU over wall time, by thread."""
    mic = write_wav(tmp / "quiet.wav", (np.random.default_rng(1).standard_normal(int((seconds + 8) * RATE)) * 0.003))
    timeline = Timeline()
    pipeline = SpeechPipeline(timeline, FileSource(mic, tail_s=0.0), FileSink(tmp / "o.wav"), Settings())
    pipeline.start()
    while not pipeline.recognizer.idle:  # the ASR warm-up decode is start-up work, not listening
        time.sleep(0.05)
    time.sleep(0.5)
    threads0, cpu0, wall0 = _thread_cpu(), time.process_time(), time.monotonic()
    time.sleep(seconds)
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    threads = {name: used - threads0.get(name, 0.0) for name, used in _thread_cpu().items()}
    pipeline.close()
    busiest = ", ".join(f"{name} {100 * used / wall:.1f}%" for name, used in
                        sorted(threads.items(), key=lambda kv: -kv[1])[:4] if used > 0)
    print(f"idle listening (live pipeline, file source+sink in 10 ms blocks, all threads): {100 * cpu / wall:.2f}% "
          f"of one core  (target <= 5%)  [{busiest}]")


def bench_asr(threads: int, count: int, tmp: Path) -> None:
    """Final transcript latency after the end of speech, through the live pipeline, against plain decodes."""
    settings = Settings()
    settings.asr.n_threads = threads
    after_vad_end, after_speech, lengths, reused = [], [], [], 0
    transcriber = WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en"), threads=threads))
    clips = []
    for text in UTTERANCES[:count]:
        speech = espeak(text, wpm=150)
        clips.append(speech)
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
        reused += pipeline.recognizer.finals_from_prefinal
        pipeline.close()
        print(f"  {len(speech) / RATE:.1f} s  {final.t_ms - end.t_ms:4d} ms  {final.text!r}")
    med = statistics.median
    print(f"ASR final (tiny.en, {threads} threads, utterances {min(lengths):.1f}-{max(lengths):.1f} s): median "
          f"{med(after_vad_end):.0f} ms after the VAD's end-of-speech event (target <= 300 ms), "
          f"{med(after_speech):.0f} ms after the last spoken sample (VAD waits {settings.vad.min_silence_ms} ms of "
          f"silence); {reused}/{len(clips)} finals reused the decode started at the pause")
    full_window = WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en"), threads=threads, window_s=30.0))
    beam = settings.asr.turn_beam_size
    runs = {"final (15 s window, word times)": (transcriber, True, 1),
            f"same with the turn beam ({beam})": (transcriber, True, beam),
            "same without word times": (transcriber, False, 1),
            "whisper's own 30 s window, word times": (full_window, True, 1)}
    plain: dict[str, list[float]] = {name: [] for name in runs}
    for speech in clips:  # the decodes side by side, interleaved, so load hits them alike
        for name, (model, words, width) in runs.items():
            began = time.perf_counter()
            model.transcribe(speech, word_timestamps=words, beam_size=width)
            plain[name].append((time.perf_counter() - began) * 1000)
    base = med(plain["final (15 s window, word times)"])
    print("  plain decodes of the same audio, median: " + "; ".join(
        f"{name} {med(v):.0f} ms ({med(v) / base:.2f}x)" for name, v in plain.items()))


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


def bench_stop_device(rounds: int = 5) -> None:
    """stop() → silence on the PulseAudio test sink's monitor, through real PortAudio streams.

    A second input stream records the monitor of the default sink (vmic = vsink.monitor) and stamps each block
    with the monotonic clock; the stop latency is the time from the stop() call to the last loud recorded
    sample. The capture path's own latency is included, so this is an upper bound.
    """
    import os

    if os.environ.get("VENUS_TEST_AUDIO") != "pulse":
        print("stop → silence through PulseAudio: skipped (source scripts/test-services.sh first)")
        return
    import sounddevice as sd

    sd.playrec(np.zeros((1600, 1), np.float32), samplerate=16000, channels=1, blocking=True)  # first-stream xrun
    rate, recorded = 48000, []

    def record(indata, frames, time_info, status) -> None:
        recorded.append((time.monotonic(), indata[:, 0].copy()))

    monitor = sd.InputStream(samplerate=rate, channels=1, dtype="float32", blocksize=rate // 200, latency="low",
                             callback=record)
    timeline = Timeline()
    pipeline = SpeechPipeline.for_devices(timeline, Settings())
    pipeline.start()
    monitor.start()
    pipeline.synthesizer.synthesize("Warm up.")
    stops = []
    try:
        for i in range(rounds):
            turn = pipeline.speak(f"s{i}", iter(["This sentence keeps going for a good while, so that it can be "
                                                 "stopped right in the middle of a word."]))
            while pipeline.playback_position == 0 or not pipeline.speaking:
                time.sleep(0.002)
            time.sleep(0.7)
            stops.append(time.monotonic())
            pipeline.stop()
            turn.done.wait(5)
            time.sleep(0.5)
    finally:
        monitor.stop()
        monitor.close()
        latency = getattr(pipeline.sink, "latency_s", 0.0)
        pipeline.close()
    stamps = np.concatenate([at - (np.arange(len(block))[::-1]) / rate for at, block in recorded])
    audio = np.concatenate([block for _, block in recorded])
    delays = []
    for at in stops:
        before = audio[(stamps > at - 0.2) & (stamps <= at)]
        after = np.flatnonzero((stamps > at) & (stamps < at + 0.4) & (np.abs(audio) > 1e-3))
        if len(before) and np.max(np.abs(before)) > 1e-2:  # Venus was audibly speaking at the call
            delays.append((stamps[after[-1]] - at) * 1000 if len(after) else 0.0)
    if not delays:
        print("stop → silence through PulseAudio: the monitor heard no speech (is vsink the default sink?)")
        return
    print(f"stop → silence on the PulseAudio sink monitor (real PortAudio streams, {len(delays)} stops): median "
          f"{statistics.median(delays):.0f} ms, max {max(delays):.0f} ms (target <= 50 ms; an upper bound: includes "
          f"the monitor's capture latency; PortAudio reports {1000 * latency:.0f} ms output latency)")


def bench_partial_beside_the_answer(rounds: int = 6) -> None:
    """A partial transcript's decode while the LLM writes an answer: answer decoding held (as the runtime does
    while speech over Venus is judged) vs left running, alternated A B A B, one thread each, as on 2 cores."""
    from engine.llm import ChatMessage, GenerateRequest
    from engine.llm.llama_backend import LlamaBackend, LlamaOptions

    backend = LlamaBackend(LlamaOptions(model_path=str(resolve("smollm2-135m-instruct-q4_1", kind="llm")),
                                        n_ctx=2048, n_threads=1))
    whisper = WhisperTranscriber(WhisperOptions(resolve("whisper-tiny-en"), threads=1))
    whisper.warm_up()
    clip = espeak("Mike, did you feed the cat this morning?", wpm=150)[: RATE]  # a 1 s partial's audio
    story = [ChatMessage("system", "You tell stories."), ChatMessage("user", "Tell me a long story about a fox.")]
    times: dict[str, list[float]] = {"held": [], "running": []}
    try:
        for _ in range(rounds):
            for name in ("held", "running"):
                stream = backend.generate(story, GenerateRequest(temperature=0.7, max_tokens=400, seed=3))
                pieces = iter(stream)
                next(pieces)  # the answer is being decoded
                if name == "held":
                    stream.hold()
                began = time.perf_counter()
                whisper.transcribe_quick(clip, word_timestamps=False)
                times[name].append((time.perf_counter() - began) * 1000)
                stream.cancel()
                list(pieces)
    finally:
        backend.close()
    held, running = statistics.median(times["held"]), statistics.median(times["running"])
    print(f"partial decode (1 s of speech) beside the LLM's answer: held {held:.0f} ms, running {running:.0f} ms "
          f"(running / held {running / held:.2f}, {rounds} rounds alternated)")


def main() -> None:
    """Run all speech benchmarks."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--asr-threads", type=int, default=2)
    parser.add_argument("--utterances", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_idle(20.0)
        bench_idle_live(8.0, Path(tmp))
        bench_tts_and_stop(Path(tmp))
        bench_stop_device()
        bench_asr(args.asr_threads, args.utterances, Path(tmp))
    bench_partial_beside_the_answer()


if __name__ == "__main__":
    main()
