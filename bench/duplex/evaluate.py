"""Duplex evaluator: judges each case's output.wav (Venus's side only) against its metadata.json.

Timing comes from an energy VAD over output.wav (it holds only Venus's clean synthetic voice, so an energy gate
is exact); words and their times from faster-whisper tiny.en. The judge is timing- and transcript-based, in
place of Full-Duplex-Bench's hosted LLM judge:

* smooth turn-taking / pause handling: take-over = Venus starts within `respond_window_s` of the user's turn end;
  response latency = that onset minus the turn end; false cut-in = Venus audible inside the user's pause.
* overlaps: only cases where Venus was speaking at the overlap onset are judged (the rest are "n/a").
  Venus *stopped* when its speech run (gaps under `stop_gap_s` bridged) ends within `stop_window_s` of the
  onset; stop latency = run end minus onset. An interruption is *responded* when Venus stopped and spoke again
  within `respond_window_s` of the overlap's end. Backchannel / other-addressee / background cases *continue*
  when the run lasts past the overlap's end (plus `continue_margin_s`), or ended on a finished sentence with
  nothing after it (the answer simply ended).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

SAMPLE_RATE = 16000
CONTINUATION_CATEGORIES = ("backchannel", "talking_to_others", "background_speech")


@dataclass(frozen=True)
class EvaluatorOptions:
    """Thresholds of the timing judge."""

    speech_threshold_db: float = -50.0  # frame RMS (dBFS) above which output.wav holds speech
    frame_ms: int = 20  # VAD frame
    min_segment_s: float = 0.08  # shorter bursts are clicks, not speech
    merge_gap_s: float = 0.25  # gaps inside a word or between words are bridged
    stop_gap_s: float = 0.8  # silence this long means Venus stopped (clause pauses are shorter)
    stop_window_s: float = 2.0  # an interruption counts as stopped within this time from its onset
    respond_window_s: float = 4.0  # a response must start within this time after the user's turn end
    continue_margin_s: float = 0.5  # continuing means still speaking this long after the overlap ends
    early_tolerance_s: float = 0.3  # an onset this early before the turn end still counts as a take-over
    use_asr: bool = True  # transcribe output.wav (keywords, finished-sentence check)

    def __post_init__(self) -> None:
        if self.speech_threshold_db >= 0:
            raise ValueError(f"speech_threshold_db must be negative dBFS, got {self.speech_threshold_db}")
        if not 5 <= self.frame_ms <= 100:
            raise ValueError(f"frame_ms must be 5-100, got {self.frame_ms}")
        for name in ("min_segment_s", "merge_gap_s", "stop_gap_s", "stop_window_s", "respond_window_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.merge_gap_s >= self.stop_gap_s:
            raise ValueError("merge_gap_s must be shorter than stop_gap_s")


@dataclass(frozen=True)
class WordTime:
    """A word Venus said, with its time span in seconds."""

    text: str
    start: float
    end: float


@dataclass
class CaseResult:
    """The judge's verdict on one case."""

    case: str
    category: str
    applicable: bool = True  # overlap cases: Venus was speaking at the onset
    took_over: bool | None = None
    response_latency_s: float | None = None
    false_cut_in: bool | None = None
    stopped: bool | None = None
    stop_latency_s: float | None = None
    responded: bool | None = None
    continued: bool | None = None
    behavior: str = ""  # respond / continue / finished / stop / yield / silent / n/a
    keyword_hit: bool | None = None
    transcript: str = ""
    notes: list[str] = field(default_factory=list)


def load_mono_16k(path: Path) -> np.ndarray:
    """output.wav as 16 kHz mono float32; a wrong rate is an error that names the file and the fix."""
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{path} is {rate} Hz; output.wav must be 16 kHz mono (resample it with "
                         f"`sox {path.name} -r 16000 -c 1 out.wav`)")
    return audio.mean(axis=1)


def speech_segments(audio: np.ndarray, options: EvaluatorOptions | None = None) -> list[tuple[float, float]]:
    """(start_s, end_s) of speech in a clean track, from frame energy, small gaps bridged."""
    o = options or EvaluatorOptions()
    hop = SAMPLE_RATE * o.frame_ms // 1000
    count = audio.size // hop
    if count == 0:
        return []
    frames = audio[: count * hop].reshape(count, hop).astype(np.float64)
    loud = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12) > o.speech_threshold_db
    segments: list[list[float]] = []
    for i in np.flatnonzero(loud):
        start, end = i * hop / SAMPLE_RATE, (i + 1) * hop / SAMPLE_RATE
        if segments and start - segments[-1][1] <= o.merge_gap_s:
            segments[-1][1] = end
        else:
            segments.append([start, end])
    return [(round(float(s), 3), round(float(e), 3)) for s, e in segments if e - s >= o.min_segment_s]


def runs(segments: list[tuple[float, float]], gap_s: float) -> list[tuple[float, float]]:
    """Segments joined across gaps shorter than `gap_s`: stretches of uninterrupted talking."""
    joined: list[list[float]] = []
    for start, end in segments:
        if joined and start - joined[-1][1] < gap_s:
            joined[-1][1] = end
        else:
            joined.append([start, end])
    return [(s, e) for s, e in joined]


class Transcriber:
    """faster-whisper tiny.en with word times, loaded once for all cases."""

    def __init__(self, threads: int = 1) -> None:
        from faster_whisper import WhisperModel

        from engine.models.registry import resolve

        self._model = WhisperModel(str(resolve("whisper-tiny-en")), device="cpu", compute_type="int8",
                                   cpu_threads=threads)

    def words(self, audio: np.ndarray) -> list[WordTime]:
        """Words with times (seconds from the start of `audio`)."""
        segments, _ = self._model.transcribe(audio, language="en", beam_size=1, word_timestamps=True,
                                             condition_on_previous_text=False, vad_filter=False)
        return [WordTime(w.word.strip(), float(w.start), float(w.end)) for s in segments for w in (s.words or [])]


def _words_in(words: list[WordTime], start: float, end: float) -> list[WordTime]:
    return [w for w in words if w.end > start + 0.05 and w.start < end - 0.05]


def _covering(spans: list[tuple[float, float]], t: float, tolerance: float = 0.1) -> tuple[float, float] | None:
    return next(((s, e) for s, e in spans if s - tolerance <= t <= e), None)


def _first_onset(spans: list[tuple[float, float]], after: float, until: float) -> float | None:
    return next((s for s, _ in spans if after <= s <= until), None)


def judge(meta: dict, segments: list[tuple[float, float]], words: list[WordTime] | None,
          options: EvaluatorOptions | None = None) -> CaseResult:
    """Judge one case from its metadata, Venus's speech segments and (optionally) Venus's words."""
    o = options or EvaluatorOptions()
    result = CaseResult(case=meta.get("id", ""), category=meta["category"])
    words = words or []
    result.transcript = " ".join(w.text for w in words)
    turn_end = float(meta["turn_end"])
    talk = runs(segments, o.stop_gap_s)
    if "overlap" not in meta:
        onset = _first_onset(segments, turn_end - o.early_tolerance_s, turn_end + o.respond_window_s)
        result.took_over = onset is not None
        result.response_latency_s = None if onset is None else round(max(0.0, onset - turn_end), 3)
        result.behavior = "respond" if onset is not None else "silent"
        if "pause" in meta:
            lo, hi = float(meta["pause"]["start"]) + 0.1, float(meta["pause"]["end"])
            result.false_cut_in = any(s < hi and e > lo for s, e in segments)
        return result
    start, end = float(meta["overlap"]["start"]), float(meta["overlap"]["end"])
    run = _covering(talk, start)
    if run is None:
        result.applicable, result.behavior = False, "n/a"
        result.notes.append(f"Venus was not speaking at the overlap onset ({start:.2f} s)")
        return result
    run_end = run[1]
    result.stopped = bool(run_end <= start + o.stop_window_s and run_end < end + o.continue_margin_s)
    if result.stopped:
        result.stop_latency_s = round(max(0.0, run_end - start), 3)
    later = _first_onset(segments, max(run_end + o.merge_gap_s, end - o.early_tolerance_s), end + o.respond_window_s)
    if meta["category"] == "user_interruption":
        result.responded = bool(result.stopped and later is not None)
        result.response_latency_s = None if not result.responded else round(max(0.0, later - end), 3)
        result.behavior = "respond" if result.responded else "stop" if result.stopped else "continue"
        if result.responded and words and meta.get("keywords"):
            heard = " ".join(w.text.lower() for w in _words_in(words, later, later + 8.0))
            result.keyword_hit = any(k.lower() in heard for k in meta["keywords"])
        return result
    if run_end >= end + o.continue_margin_s:
        result.continued, result.behavior = True, "continue"
    elif later is not None:
        result.continued, result.behavior = False, "yield"
    else:
        tail = _words_in(words, run[0], run_end)
        finished = bool(tail) and tail[-1].text.rstrip().endswith((".", "!", "?"))
        result.continued, result.behavior = finished, "finished" if finished else "stop"
    return result


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 3) if present else None


def _rate(flags: Iterable[bool | None]) -> float | None:
    present = [bool(f) for f in flags if f is not None]
    return round(sum(present) / len(present), 3) if present else None


def summarize(results: list[CaseResult]) -> dict[str, dict]:
    """Per-category metrics from the case verdicts."""
    summary: dict[str, dict] = {}
    for category in sorted({r.category for r in results}):
        rows = [r for r in results if r.category == category]
        judged = [r for r in rows if r.applicable]
        m: dict = {"cases": len(rows), "judged": len(judged)}
        if category in ("smooth_turn_taking", "pause_handling"):
            m["take_over_rate"] = _rate(r.took_over for r in rows)
            m["median_response_latency_s"] = _median(r.response_latency_s for r in rows)
            if category == "pause_handling":
                m["false_cut_in_rate"] = _rate(r.false_cut_in for r in rows)
        elif category == "user_interruption":
            m["respond_rate"] = _rate(r.responded for r in judged)
            m["stop_rate"] = _rate(r.stopped for r in judged)
            m["median_stop_latency_s"] = _median(r.stop_latency_s for r in judged)
            m["median_response_latency_s"] = _median(r.response_latency_s for r in judged)
            m["keyword_hit_rate"] = _rate(r.keyword_hit for r in judged)
        else:
            m["continuation_rate"] = _rate(r.continued for r in judged)
            m["median_stop_latency_s"] = _median(r.stop_latency_s for r in judged)
        summary[category] = m
    return summary


def evaluate_dir(root: Path, options: EvaluatorOptions | None = None,
                 transcriber: Transcriber | None = None) -> list[CaseResult]:
    """Judge every root/<case>/ holding metadata.json and output.wav; writes result.json beside each."""
    o = options or EvaluatorOptions()
    if o.use_asr and transcriber is None:
        transcriber = Transcriber()
    results = []
    for meta_path in sorted(Path(root).glob("*/metadata.json")):
        output = meta_path.parent / "output.wav"
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta.setdefault("id", meta_path.parent.name)
        if not output.exists():
            raise FileNotFoundError(f"{output} is missing; run `venus duplex --input-dir {root}` first")
        audio = load_mono_16k(output)
        segments = speech_segments(audio, o)
        words = transcriber.words(audio) if (o.use_asr and transcriber and segments) else []
        result = judge(meta, segments, words, o)
        (meta_path.parent / "result.json").write_text(json.dumps(asdict(result), indent=2), encoding="utf-8")
        results.append(result)
    if not results:
        raise FileNotFoundError(f"no cases under {root} (expected {root}/<case>/metadata.json)")
    return results
