"""The whole speech pipeline on file-backed I/O: espeak-ng speech in → the right words out on the timeline,
streamed TTS out with the heard words, an instant stop, and clear errors for bad inputs."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
import soundfile as sf
from speech_helpers import RecordingTranscriber, espeak, have_tools, pad, write_wav

from engine.audio import FileSink, FileSource, SpeechPipeline, find_device, make_transcriber
from engine.errors import AudioDeviceError
from engine.settings import Settings
from engine.timeline import Kind, Timeline
from engine.tts import EspeakSynthesizer

pytestmark = pytest.mark.skipif(not have_tools(), reason="espeak-ng and sox are needed to make speech inputs")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("VENUS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("VENUS_LOG_DIR", str(tmp_path / "log"))
    made = []

    def make(mic_audio: np.ndarray, settings: Settings | None = None, realtime: bool = True, transcriber=None):
        mic = write_wav(tmp_path / "mic.wav", mic_audio)
        timeline = Timeline()
        source = FileSource(mic, realtime=realtime, tail_s=1.0)
        sink = FileSink(tmp_path / "speaker.wav", session_ms=timeline.now_ms)
        pipeline = SpeechPipeline(timeline, source, sink, settings, transcriber=transcriber)
        made.append(pipeline)
        return pipeline, timeline, source, tmp_path / "speaker.wav"

    yield make
    for pipeline in made:
        pipeline.close()


def test_spoken_request_becomes_partials_and_a_final_with_word_times(session):
    pipeline, timeline, source, _ = session(pad(espeak("Please set a timer for ten minutes."), 0.6, 0.2))
    pipeline.start()
    assert source.finished.wait(30) and pipeline.wait_idle(30)
    kinds = [e.kind for e in timeline.events()]
    assert kinds.count(Kind.USER_SPEECH_START) == 1 and kinds.count(Kind.USER_SPEECH_END) == 1
    assert Kind.ASR_PARTIAL in kinds
    start, end, final = (timeline.events(kinds=[k])[0] for k in
                         (Kind.USER_SPEECH_START, Kind.USER_SPEECH_END, Kind.ASR_FINAL))
    assert kinds.index(Kind.ASR_FINAL) > kinds.index(Kind.USER_SPEECH_END)
    words = _words(final.text)
    assert {"set", "timer", "minutes"} <= set(words) and ("ten" in words or "10" in words), final.text
    assert final.words and final.words[0].start_ms >= start.start_ms
    assert final.words[-1].end_ms <= end.end_ms + 200
    assert not start.overlapping_assistant


def test_the_users_turn_ends_on_a_decode_with_the_turn_beam_from_settings(session):
    settings = Settings()
    settings.asr.turn_beam_size = 3
    recording = RecordingTranscriber(make_transcriber(settings))
    pipeline, timeline, source, _ = session(pad(espeak("How much does it cost to fly to Tokyo?"), 0.6, 0.2),
                                            settings, transcriber=recording)
    pipeline.start()
    assert source.finished.wait(30) and pipeline.wait_idle(30)
    assert timeline.events(kinds=[Kind.ASR_FINAL])
    beams: dict[str, set] = {}
    for kind, beam in recording.beams:
        beams.setdefault(kind, set()).add(beam)
    assert beams.get("partial") == {None}, recording.beams  # partials stay greedy
    ending = beams.get("prefinal", set()) | beams.get("final", set())
    assert ending == {3}, recording.beams


def test_the_words_that_end_a_turn_are_read_after_the_request_hint_with_the_beams_other_readings(session):
    from engine.asr import REQUEST_HINT

    recording = RecordingTranscriber(make_transcriber(Settings()))
    pipeline, timeline, source, _ = session(pad(espeak("Copy the address to my clipboard."), 0.6, 0.2),
                                            transcriber=recording)
    pipeline.start()
    assert source.finished.wait(30) and pipeline.wait_idle(30)
    final = timeline.events(kinds=[Kind.ASR_FINAL])[0]
    ending = {hint for kind, hint in recording.hints if kind in ("prefinal", "final")}
    assert ending == {REQUEST_HINT}, recording.hints
    assert {hint for kind, hint in recording.hints if kind == "partial"} <= {""}  # partials stay unprimed
    # the turn beam's other readings ride along, best first, none the same as the text
    assert final.text and final.text not in final.alternatives
    assert len(set(final.alternatives)) == len(final.alternatives) <= Settings().asr.turn_beam_size - 1


def test_without_the_request_hint_no_decode_is_primed(session):
    settings = Settings()
    settings.asr.request_hint = False
    recording = RecordingTranscriber(make_transcriber(settings))
    pipeline, timeline, source, _ = session(pad(espeak("Copy the address to my clipboard."), 0.6, 0.2),
                                            settings, transcriber=recording)
    pipeline.start()
    assert source.finished.wait(30) and pipeline.wait_idle(30)
    assert timeline.events(kinds=[Kind.ASR_FINAL]) and {hint for _, hint in recording.hints} == {""}


def test_speak_streams_clauses_and_records_what_was_heard(session):
    pipeline, timeline, _, speaker = session(np.zeros(16000, np.float32))
    pipeline.start()
    first_chunk_sent = threading.Event()

    def llm_tokens():  # text arrives in pieces, like tokens from the model
        for piece in ["Sure", ", I have set", " a timer. It ", "will ring in ten ", "minutes."]:
            first_chunk_sent.set()
            yield piece

    turn = pipeline.speak("turn-1", llm_tokens())
    assert turn.done.wait(30)
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert [s.planned_text for s in spans] == ["Sure, I have set a timer.", "It will ring in ten minutes."]
    assert all(not s.truncated and s.heard_words == tuple(s.planned_text.split()) for s in spans)
    assert spans[1].start_sample >= spans[0].end_sample
    pipeline.close()
    audio, rate = sf.read(speaker, dtype="float32")
    assert rate == pipeline.output_rate
    lead = pipeline.sink.lead_samples
    played = audio[lead + spans[0].start_sample: lead + spans[1].end_sample]
    assert np.max(np.abs(played)) > 0.2  # the voice really went to the speaker file
    assert np.max(np.abs(audio[lead + spans[1].end_sample + 2000:])) < 1e-3  # and nothing after it


def test_stop_silences_the_speaker_and_cuts_the_turn_to_the_heard_words(session):
    pipeline, timeline, _, speaker = session(np.zeros(16000, np.float32))
    pipeline.start()
    text = "This is a long answer that keeps going on and on, so the user will want to stop it early."
    turn = pipeline.speak("turn-2", iter([text]))
    while pipeline.playback_position == 0 or not pipeline.speaking:
        time.sleep(0.01)
    time.sleep(0.8)
    at_stop = pipeline.playback_position
    pipeline.stop()
    assert turn.done.wait(10)
    assert not pipeline.speaking
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert spans and all(s.truncated for s in spans)
    heard = spans[0].heard_words  # the clause playing at the stop; later clauses were never heard
    clause = spans[0].planned_text.split()
    assert 0 < len(heard) < len(clause) and heard == tuple(clause[: len(heard)])
    assert all(s.heard_words == () and s.start_sample == s.end_sample for s in spans[1:])
    pipeline.close()
    audio, rate = sf.read(speaker, dtype="float32")
    after_stop = audio[pipeline.sink.lead_samples + at_stop:]
    loud = np.flatnonzero(np.abs(after_stop) > 1e-3)
    assert len(loud) and loud[-1] < rate * 0.05  # silent within 50 ms of the call, on the sink's own clock


def test_espeak_engine_is_the_light_fallback(session):
    settings = Settings()
    settings.tts.engine = "espeak"
    pipeline, timeline, _, speaker = session(np.zeros(16000, np.float32), settings)
    pipeline.start()
    text = "Hello there, this is the fallback voice."
    assert isinstance(pipeline.synthesizer, EspeakSynthesizer), pipeline.synthesizer
    assert pipeline.speak("t", iter([text])).done.wait(20)
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert spans and not any(s.truncated for s in spans)
    assert tuple(w for s in spans for w in s.heard_words) == tuple(text.split())  # every word timed and played
    pipeline.close()
    audio, _ = sf.read(speaker, dtype="float32")
    lead = pipeline.sink.lead_samples
    for span in spans:  # and it went to the speaker
        assert np.max(np.abs(audio[lead + span.start_sample: lead + span.end_sample])) > 0.1


def test_unreadable_input_file_names_the_file(tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("this is not audio")
    with pytest.raises(AudioDeviceError, match="notes.wav"):
        FileSource(bad)


def test_unknown_device_name_lists_the_choices():
    try:
        import sounddevice  # noqa: F401
    except OSError:
        pytest.skip("PortAudio is not installed")
    with pytest.raises(AudioDeviceError, match="audio.input_device"):
        find_device("no-such-microphone-xyz", "input")


def test_speech_over_venus_is_scored_against_the_enrolled_voice(session):
    # The user's first turn (not over Venus) enrols their voice. While Venus speaks, another person (a
    # female espeak voice) talks, then the user again: each final carries its similarity to the user.
    user_1 = espeak("Hello, I would like some help with my calendar for the coming week.")
    other = espeak("Dinner is ready, come and eat before it gets cold.", voice="en-us+f4")
    user_2 = espeak("What is the weather going to be like tomorrow afternoon?")
    gap = np.zeros(int(1.2 * 16000), np.float32)
    mic = np.concatenate([pad(user_1, 0.5, 1.5), gap, other, gap, user_2, gap])
    settings = Settings()  # the mic file does not hear Venus (a headset): no echo canceller or guard
    settings.audio.echo_cancellation, settings.audio.echo_guard = False, False
    pipeline, timeline, source, _ = session(mic, settings)
    assert pipeline.voice_profile is not None and not pipeline.voice_profile.enrolled
    first_final = threading.Event()
    timeline.subscribe(lambda e: first_final.set() if e.kind == Kind.ASR_FINAL else None)
    pipeline.start()
    assert first_final.wait(30)
    talk = "The water cycle moves water between the oceans, the sky and the land, over and over again. " * 3
    pipeline.speak("turn-1", [talk])  # Venus talks through the rest of the input
    assert source.finished.wait(60) and pipeline.wait_idle(30)
    assert pipeline.voice_profile.enrolled
    starts = {e.start_ms: e.overlapping_assistant for e in timeline.events(kinds=[Kind.USER_SPEECH_START])}
    finals = [f for f in timeline.events(kinds=[Kind.ASR_FINAL]) if f.text]
    assert len(finals) == 3, [f.text for f in finals]
    assert not starts[finals[0].segment_start_ms] and finals[0].speaker_similarity is None  # enrolment turn
    assert starts[finals[1].segment_start_ms] and starts[finals[2].segment_start_ms]
    other_score, user_score = finals[1].speaker_similarity, finals[2].speaker_similarity
    assert other_score is not None and user_score is not None
    assert other_score < 0.4 and user_score > 0.6 and user_score > other_score + 0.3, (other_score, user_score)
    partials = [p for p in timeline.events(kinds=[Kind.ASR_PARTIAL])
                if p.segment_start_ms == finals[1].segment_start_ms and p.speaker_similarity is not None]
    assert partials and all(p.speaker_similarity < 0.5 for p in partials)  # known before the segment ends


def test_voice_matching_can_be_turned_off(session):
    settings = Settings()
    settings.conversation.voice_matching = False
    pipeline, _, _, _ = session(np.zeros(1600, np.float32), settings)
    assert pipeline.voice_profile is None and pipeline.recognizer._on_audio is None


def test_an_answer_to_an_open_question_is_scored_against_the_enrolled_voice(session):
    # Not over Venus: an answer to a question she asked ("yes" to a task) is scored too while one is open,
    # since whose voice says yes decides whether it counts (docs/SECURITY.md); other turns are not scored.
    user_1 = espeak("Hello, I would like some help with my calendar for the coming week.")
    other_yes = espeak("Yes, go ahead and do it right now please.", voice="en-us+f4")
    user_yes = espeak("Yes, go ahead and do it right now please.")
    gap = np.zeros(int(1.5 * 16000), np.float32)
    mic = np.concatenate([pad(user_1, 0.5, 1.5), gap, other_yes, gap, user_yes, gap])
    settings = Settings()
    settings.audio.echo_cancellation, settings.audio.echo_guard = False, False
    pipeline, timeline, source, _ = session(mic, settings)
    asking = threading.Event()
    pipeline.wants_voice_score = asking.is_set
    first_final = threading.Event()
    timeline.subscribe(lambda e: first_final.set() if e.kind == Kind.ASR_FINAL else None)
    pipeline.start()
    assert first_final.wait(30)
    asking.set()  # Venus asked "May I ...? Say yes or no." and waits for the answer
    assert source.finished.wait(60) and pipeline.wait_idle(30)
    finals = [f for f in timeline.events(kinds=[Kind.ASR_FINAL]) if f.text]
    assert len(finals) == 3, [f.text for f in finals]
    assert finals[0].speaker_similarity is None  # the enrolment turn, before any question
    other_score, user_score = finals[1].speaker_similarity, finals[2].speaker_similarity
    assert other_score is not None and user_score is not None
    assert other_score < 0.2 < 0.5 < user_score, (other_score, user_score)  # measured 0.03 and 0.90
