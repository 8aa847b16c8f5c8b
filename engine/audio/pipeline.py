"""SpeechPipeline: mic in → AEC → VAD → streaming ASR → timeline, and text → streaming TTS → speaker.

One source and one sink (sound cards or files), one timeline. Urgent control (`stop`, `duck`) acts on the
player directly and never waits behind queued text or audio.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.asr import (
    REQUEST_HINT,
    StreamingRecognizer,
    Transcriber,
    Transcript,
    WhisperOptions,
    WhisperTranscriber,
)
from engine.audio.devices import DeviceSink, DeviceSource
from engine.audio.echo import EchoCanceller, EchoGuard, EchoGuardOptions
from engine.audio.files import FileSink, FileSource
from engine.audio.frontend import SpeechFrontEnd
from engine.audio.playback import Clip, ClipReport, Player, PlayerOptions
from engine.audio.resample import StreamResampler, resample_clip
from engine.errors import AudioDeviceError
from engine.models.registry import resolve
from engine.settings import Settings
from engine.speaker import SpeakerProfile, default_embedder
from engine.timeline.events import (
    AsrFinal,
    AsrPartial,
    SpeechSpan,
    SystemNotice,
    UserSpeechEnd,
    UserSpeechStart,
    Word,
)
from engine.timeline.timeline import Timeline
from engine.tts import (
    EspeakSynthesizer,
    PiperSynthesizer,
    Synthesizer,
    TimedWord,
    VoiceOptions,
    split_clauses,
)
from engine.vad import SAMPLE_RATE, SegmenterOptions, SileroVad

log = logging.getLogger(__name__)

LevelCallback = Callable[[float], None]  # mic level in dBFS after echo cancellation, about every 50 ms


_IDLE_BATCH_S = 0.03  # while nobody speaks, mic blocks are handled about this often instead of every block
_MAX_BATCH_S = 0.1  # never join more mic audio than this into one step
_ENROLL_DELAY_S = 1.0  # a user turn is learned for the voice profile this long after its final


class _History:
    """The newest `capacity` samples of cleaned audio, in one buffer reused for the whole session."""

    def __init__(self, capacity: int) -> None:
        self._buffer = np.zeros(capacity, np.float32)
        self.end = 0  # samples appended so far (the perception clock)

    def append(self, audio: np.ndarray) -> None:
        """Add the newest audio, forgetting the oldest."""
        n, capacity = len(audio), len(self._buffer)
        if n >= capacity:
            self._buffer[:] = audio[n - capacity:]
        elif n:
            self._buffer[:capacity - n] = self._buffer[n:]
            self._buffer[capacity - n:] = audio
        self.end += n

    def since(self, sample: int) -> np.ndarray:
        """The audio from `sample` on (as much of it as is still kept); a view, copy it to keep it."""
        kept = min(self.end - max(sample, 0), self.end, len(self._buffer))
        return self._buffer[len(self._buffer) - max(kept, 0):]


class AudioSource(Protocol):
    """A microphone or a file: delivers mono float32 blocks at `sample_rate` to a consumer."""

    sample_rate: int

    def start(self, consumer: Callable[[np.ndarray], None]) -> None: ...

    def stop(self) -> None: ...


class AudioSink(Protocol):
    """A speaker or a file: asks a renderer for mono float32 blocks at `sample_rate`."""

    sample_rate: int

    def start(self, render: Callable[[np.ndarray], None]) -> None: ...

    def stop(self) -> None: ...


@dataclass
class SpeechTurn:
    """Handle of one `speak` call; `done` is set once every clause played or was stopped."""

    turn_id: str
    done: threading.Event


def make_synthesizer(settings: Settings) -> Synthesizer:
    """The voice named in settings: a Piper model id or .onnx path, or an espeak-ng voice name."""
    voice = VoiceOptions(rate=settings.tts.rate, volume=settings.tts.volume, threads=settings.tts.n_threads)
    if settings.tts.engine == "espeak":
        name = settings.tts.voice if not settings.tts.voice.startswith("piper-") else settings.tts.espeak_voice
        return EspeakSynthesizer(name, voice)
    return PiperSynthesizer(resolve(settings.tts.voice, "tts"), voice)


def make_transcriber(settings: Settings) -> Transcriber:
    """faster-whisper with the model, language and threads from settings."""
    return WhisperTranscriber(WhisperOptions(resolve(settings.asr.model, "asr"), language=settings.asr.language,
                                             threads=settings.asr.n_threads, beam_size=settings.asr.beam_size,
                                             window_s=settings.asr.window_s))


def device_notices(timeline: Timeline) -> Callable[[str, str], None]:
    """A notice callback for DeviceSource/DeviceSink that puts a SystemNotice on the timeline."""

    def notice(level: str, text: str) -> None:
        timeline.append(SystemNotice(level=level, code=AudioDeviceError.code, text=text))

    return notice


class SpeechPipeline:
    """The speech front and back end of one conversation, writing its events to `timeline`."""

    @classmethod
    def for_devices(cls, timeline: Timeline, settings: Settings | None = None, **kwargs) -> SpeechPipeline:
        """Mic and speakers chosen by audio.input_device / audio.output_device (None = system default)."""
        settings = settings or Settings()
        notice = device_notices(timeline)
        source = DeviceSource(settings.audio.input_device, blocksize_ms=settings.audio.blocksize_ms, on_notice=notice)
        sink = DeviceSink(settings.audio.output_device, blocksize_ms=settings.audio.blocksize_ms, on_notice=notice)
        return cls(timeline, source, sink, settings, **kwargs)

    @classmethod
    def for_files(cls, timeline: Timeline, mic: Path, speaker: Path, settings: Settings | None = None, *,
                  realtime: bool = True, **kwargs) -> SpeechPipeline:
        """A WAV as the mic and a WAV as the speaker (placed on the session clock); no devices needed."""
        source = FileSource(mic, realtime=realtime)
        sink = FileSink(speaker, session_ms=timeline.now_ms)
        return cls(timeline, source, sink, settings, **kwargs)

    def __init__(self, timeline: Timeline, source: AudioSource, sink: AudioSink, settings: Settings | None = None,
                 *, transcriber: Transcriber | None = None, synthesizer: Synthesizer | None = None,
                 on_level: LevelCallback | None = None, speaker_profile: SpeakerProfile | None = None) -> None:
        self.settings = settings = settings or Settings()
        self.timeline = timeline
        self.source = source
        self.sink = sink
        self._underflows_seen = 0  # the sink's underrun count the echo guard has reacted to
        self.on_level = on_level
        a, v = settings.audio, settings.vad
        self.player = Player(PlayerOptions(sink.sample_rate, fade_ms=a.stop_fade_ms, duck_gain=a.duck_gain))
        self.synthesizer = synthesizer or make_synthesizer(settings)
        echo = EchoCanceller(noise_suppression=a.noise_suppression) if a.echo_cancellation else None
        guard = EchoGuard(EchoGuardOptions(threshold=a.echo_guard_threshold, margin_db=a.echo_guard_margin_db)) \
            if a.echo_guard else None
        self.frontend = SpeechFrontEnd(
            SileroVad(resolve("silero-vad-v6", "vad")),
            SegmenterOptions(v.threshold, v.neg_threshold, v.min_speech_ms, v.min_silence_ms, v.speech_pad_ms),
            echo, guard, echo_hold_ms=a.echo_hold_ms)
        # The user's voice, learned from their first utterances (not over Venus's voice), scores speech that
        # overlaps Venus: the ASR worker computes it beside the words (engine.speaker).
        self.voice_profile = speaker_profile if speaker_profile is not None else (
            SpeakerProfile(default_embedder()) if settings.conversation.voice_matching else None)
        self._overlap_segments: set[int] = set()  # start samples of segments that began over Venus's voice
        self._overlap_hint = ""  # words whisper should expect in speech over Venus's voice (set_overlap_hint)
        self._voice_scores: dict[int, float | None] = {}  # segment start -> similarity (ASR worker only)
        # set by the session: True while the user's next words answer a question (their voice is scored then)
        self.wants_voice_score: Callable[[], bool] = lambda: False
        self._enroll_audio: np.ndarray | None = None
        self._profile_lock = threading.Lock()  # enrolment (a timer thread) vs similarity (the ASR worker)
        self.recognizer = StreamingRecognizer(transcriber or make_transcriber(settings), self._post_partial,
                                              self._post_final, partial_interval_ms=settings.asr.partial_interval_ms,
                                              on_audio=self._on_audio if self.voice_profile is not None else None,
                                              on_pause_partial=self._post_pause_partial)
        self._mic_in: queue.SimpleQueue[np.ndarray] = queue.SimpleQueue()
        self._mic_resampler = StreamResampler(source.sample_rate, SAMPLE_RATE)
        self._ref_resampler = StreamResampler(sink.sample_rate, SAMPLE_RATE)
        # cleaned audio kept for the segment look-back: pad + min speech + a VAD frame + one batch, with room
        self._recent = _History((v.speech_pad_ms + v.min_speech_ms + 400) * SAMPLE_RATE // 1000)
        self._speech_open = False
        self._prefinal_at = -1
        self._turns: queue.SimpleQueue[tuple[SpeechTurn, Iterable[str], int] | None] = queue.SimpleQueue()
        self._handles: dict[str, SpeechTurn] = {}
        self._generation = 0  # bumped by stop(): clauses of older turns are dropped
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._start_ms = 0
        self._level_samples = 0  # cleaned samples since the last on_level call

    # ---- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker threads, then the sink and the source."""
        self._start_ms = self.timeline.now_ms()
        for target, name in ((self._perceive, "venus-perception"), (self._speak_worker, "venus-tts"),
                             (self._report_worker, "venus-playback-report")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        self.sink.start(self.player.render)
        self.source.start(self._mic_in.put)

    def close(self) -> None:
        """Stop everything; pending finals are delivered first."""
        self.source.stop()
        self.player.stop()
        self._closing.set()
        self._turns.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        self.sink.stop()
        self.recognizer.close()

    # ---- speaking ----------------------------------------------------------------------------------------

    def speak(self, turn_id: str, text_chunks: Iterable[str]) -> SpeechTurn:
        """Speak streamed text clause by clause; synthesis starts as soon as the first clause is complete."""
        turn = SpeechTurn(turn_id, threading.Event())
        self._handles[turn_id] = turn
        self._turns.put((turn, text_chunks, self._generation))
        return turn

    def set_overlap_hint(self, hint: str) -> None:
        """Words to prime the ASR with for speech heard over Venus's voice (names of people in the room)."""
        self._overlap_hint = hint

    def stop(self) -> None:
        """Silence the output now (short fade) and drop every clause not yet played."""
        self._generation += 1
        self.player.stop()

    def pause(self) -> None:
        """Hold the voice silent in place (a provisional yield); `resume` continues it, `stop` drops it."""
        self.player.pause()

    def resume(self) -> None:
        """Continue after `pause`."""
        self.player.resume()

    def duck(self) -> None:
        """Lower the output volume without stopping."""
        self.player.duck()

    def unduck(self) -> None:
        """Restore the output volume."""
        self.player.unduck()

    @property
    def speaking(self) -> bool:
        """True while Venus's audio is playing or queued."""
        return self.player.speaking

    @property
    def playback_position(self) -> int:
        """Output samples played so far (at `output_rate`)."""
        return self.player.position

    @property
    def output_rate(self) -> int:
        """The output stream's sample rate."""
        return self.sink.sample_rate

    def _speak_worker(self) -> None:
        while (item := self._turns.get()) is not None:
            turn, chunks, generation = item
            try:
                # chunks already cut into clauses upstream (the LLM's chunker marks them `presplit`) are kept
                for clause in (chunks if getattr(chunks, "presplit", False) else split_clauses(chunks)):
                    if generation != self._generation:
                        break
                    spoken = self.synthesizer.synthesize(clause)
                    if generation != self._generation:
                        break
                    if not spoken.text:  # nothing speakable (an emoji, a code fence): an empty clip ends the turn
                        continue
                    self.player.enqueue(self._to_clip(turn.turn_id, spoken))
            except Exception as exc:  # a voice failure ends this turn's speech, not the session
                log.exception("speaking turn %s failed", turn.turn_id)
                self.timeline.append(SystemNotice(level="error", code="tts-failed", text=f"speech output failed: {exc}"))
            self.player.enqueue(Clip(turn.turn_id, "", np.zeros(0, np.float32)))  # end marker

    def _to_clip(self, turn_id: str, spoken) -> Clip:
        rate_in, rate_out = spoken.sample_rate, self.sink.sample_rate
        audio = resample_clip(spoken.audio, rate_in, rate_out)
        scale = rate_out / rate_in
        words = tuple(TimedWord(w.text, int(w.start_sample * scale), int(w.end_sample * scale)) for w in spoken.words)
        return Clip(turn_id, spoken.text, audio, words)

    def _report_worker(self) -> None:
        while not (self._closing.is_set() and not self.player.speaking):
            try:
                report: ClipReport = self.player.reports.get(timeout=0.1)
            except queue.Empty:
                continue
            clip = report.clip
            if not clip.text:
                turn = self._handles.pop(clip.turn_id, None)
                if turn is not None:
                    turn.done.set()
                continue
            self.timeline.append(SpeechSpan(
                turn_id=clip.turn_id, planned_text=clip.text, start_sample=report.start_sample,
                end_sample=report.end_sample, sample_rate=self.sink.sample_rate,
                heard_words=report.heard_words(), truncated=report.truncated))

    # ---- hearing -----------------------------------------------------------------------------------------

    def _ms(self, sample: int) -> int:
        return self._start_ms + sample * 1000 // SAMPLE_RATE

    def _perceive(self) -> None:
        while not self._closing.is_set():
            try:
                first = self._mic_in.get(timeout=0.1)
            except queue.Empty:
                continue
            if not self._speech_open and not self.frontend.echo_active and self._mic_in.empty():
                self._closing.wait(_IDLE_BATCH_S)  # nothing urgent: let blocks gather and handle them in one pass
            block = self._gather(first)
            try:
                self._perceive_block(block)
            except Exception:  # keep listening; one bad block must not deafen Venus
                log.exception("perception failed on a block")

    def _gather(self, first: np.ndarray) -> np.ndarray:
        # joins the mic blocks already waiting, up to a batch that the look-back can still cover
        limit = int(self.source.sample_rate * _MAX_BATCH_S)
        blocks, total = [first], len(first)
        while total < limit:
            try:
                block = self._mic_in.get_nowait()
            except queue.Empty:
                break
            blocks.append(block)
            total += len(block)
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)

    def _watch_underflows(self) -> None:
        # An output underrun while Venus speaks plays her voice late against the canceller's reference: the
        # echo guard then distrusts the canceller for a moment (EchoGuardOptions.underrun_hold_ms).
        underflows = getattr(self.sink, "underflows", 0)
        if underflows == self._underflows_seen:
            return
        self._underflows_seen = underflows
        guard = self.frontend.guard
        if guard is not None and (self.player.speaking or guard.active):
            guard.distrust()
            log.info("output underrun while speaking: the echo guard holds for %d ms", guard.options.underrun_hold_ms)

    def _drain_reference(self) -> None:
        silent = 0  # output samples that played nothing, merged into one step
        while True:
            try:
                played = self.player.reference.get_nowait()
            except queue.Empty:
                break
            if isinstance(played, int):
                silent += played
                continue
            if silent:
                self.frontend.add_reference(self._ref_resampler.process_silence(silent))
                silent = 0
            self.frontend.add_reference(self._ref_resampler.process(played))
        if silent:
            self.frontend.add_reference(self._ref_resampler.process_silence(silent))

    def _perceive_block(self, block: np.ndarray) -> None:
        self._drain_reference()
        self._watch_underflows()
        step = self.frontend.process(self._mic_resampler.process(block))
        self._recent.append(step.cleaned)
        fed = False  # this step's audio already went to the recognizer (as look-back or feed)
        for transition in step.transitions:
            if transition.started:
                self._speech_open, self._prefinal_at, fed = True, -1, True
                start = transition.start_sample
                overlapping = self.frontend.guard.active if self.frontend.guard else self.player.speaking
                # paused in place, Venus still holds the floor: the user going on ("Okay, ... stop.") is overlap
                overlapping = overlapping or self.player.paused
                if overlapping:
                    self._overlap_segments.add(start)
                asr = self.settings.asr
                self.recognizer.begin(
                    start, self._recent.since(start),
                    partial_interval_ms=asr.overlap_partial_interval_ms if overlapping else None,
                    first_partial_ms=asr.overlap_first_partial_ms if overlapping else None,
                    hint=self._overlap_hint if overlapping else "",
                    final_beam_size=None if overlapping else asr.turn_beam_size,
                    final_hint=REQUEST_HINT if asr.request_hint and not overlapping else "")
                self.timeline.append(UserSpeechStart(start_ms=self._ms(start), overlapping_assistant=overlapping))
            else:
                if self._speech_open and not fed:
                    self.recognizer.feed(step.cleaned)
                    fed = True
                self._speech_open = False
                self.recognizer.end(transition.end_sample)
                self.timeline.append(UserSpeechEnd(start_ms=self._ms(transition.start_sample),
                                                   end_ms=self._ms(transition.end_sample)))
        if self._speech_open and not fed:
            self.recognizer.feed(step.cleaned, allow_partial=self.frontend.silence_pending_since < 0)
        pause = self.frontend.silence_pending_since
        if self._speech_open and pause >= 0 and pause != self._prefinal_at:
            # The user paused: decode what was heard now, at the first silent VAD frame; kept as the final if
            # the pause holds (the VAD's padding after the pause is silence, by its own judgement).
            self._prefinal_at = pause
            self.recognizer.prefinal(pause + self.frontend.segmenter.options.speech_pad_ms * SAMPLE_RATE // 1000)
        self._level_samples += len(step.cleaned)
        if self.on_level is not None and self._level_samples >= SAMPLE_RATE // 20:
            self._level_samples = 0
            self.on_level(step.level_db)

    def _on_audio(self, audio: np.ndarray, start_sample: int, final: bool) -> None:
        # ASR worker, before a partial or final is posted: score speech over Venus against the user's voice
        # (from 1 s of it: shorter is too noisy); keep the user's own turns to enrol after their final.
        profile = self.voice_profile
        assert profile is not None
        if start_sample in self._overlap_segments:
            if (final or len(audio) >= SAMPLE_RATE) and profile.enrolled:
                try:
                    with self._profile_lock:
                        self._voice_scores[start_sample] = profile.similarity(audio)
                except Exception:  # a failing embedder costs the cue, not the words
                    log.exception("speaker similarity failed")
                    self._voice_scores[start_sample] = None
        elif final and profile.enrolled and self.wants_voice_score():
            # an answer to a question Venus asked (a yes to a task): whose voice it is decides whether it counts
            try:
                with self._profile_lock:
                    self._voice_scores[start_sample] = profile.similarity(audio)
            except Exception:
                log.exception("speaker similarity failed")
        elif final and len(audio) >= SAMPLE_RATE and profile.utterance_count < profile.max_utterances:
            self._enroll_audio = audio

    def _post_partial(self, text: str, start_sample: int, at_pause: bool = False) -> None:
        self.timeline.append(AsrPartial(text=text, segment_start_ms=self._ms(start_sample),
                                        speaker_similarity=self._voice_scores.get(start_sample), at_pause=at_pause))

    def _post_pause_partial(self, text: str, start_sample: int) -> None:
        self._post_partial(text, start_sample, at_pause=True)

    def _post_final(self, transcript: Transcript, start_sample: int, end_sample: int) -> None:
        base = self._ms(start_sample)
        words = tuple(Word(text=w.text, start_ms=base + w.start_ms, end_ms=base + w.end_ms,
                           probability=w.probability) for w in transcript.words)
        similarity = self._voice_scores.pop(start_sample, None)
        self._overlap_segments.discard(start_sample)
        self.timeline.append(AsrFinal(text=transcript.text, words=words, segment_start_ms=base,
                                      alternatives=transcript.alternatives,
                                      segment_end_ms=self._ms(end_sample), language=self.settings.asr.language,
                                      speaker_similarity=similarity))
        enroll, self._enroll_audio = self._enroll_audio, None
        if enroll is not None and transcript.text and self.voice_profile is not None:
            # a moment after the final: the answer's decision and first clause run on every core right after
            # it (the runtime lends the LLM the cores), and learning the voice can wait for them
            timer = threading.Timer(_ENROLL_DELAY_S, self._enroll, args=(enroll,))
            timer.daemon = True
            timer.start()

    def _enroll(self, audio: np.ndarray) -> None:
        if self._closing.is_set() or self.voice_profile is None:
            return
        try:
            with self._profile_lock:
                self.voice_profile.enroll(audio)
        except Exception:
            log.exception("speaker enrolment failed")

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until the mic input has been processed and recognition has caught up (for file sources)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._mic_in.empty() and not self._speech_open and self.recognizer.idle:
                return True
            time.sleep(0.02)
        return False
