"""Real PortAudio streams against the PulseAudio test server (null sink `vsink`, its monitor `vmic`).

Started by scripts/test-services.sh (sourced by .ci/run, which sets VENUS_TEST_AUDIO=pulse).
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import numpy as np
import pytest
from speech_helpers import espeak, have_tools, pad, write_wav

from engine.audio import SpeechPipeline
from engine.timeline import Kind, Timeline

pytestmark = [
    pytest.mark.audio,
    pytest.mark.skipif(os.environ.get("VENUS_TEST_AUDIO") != "pulse",
                       reason="needs the PulseAudio test server: source scripts/test-services.sh first"),
    pytest.mark.skipif(not have_tools(), reason="espeak-ng and sox are needed to make speech inputs"),
]


def _say_into_the_room(path) -> None:
    # a separate PulseAudio client plays the "user" into vsink; vmic (Venus's mic) hears it
    subprocess.run(["paplay", "-d", "vsink", str(path)], check=True, timeout=30)


def _wait_for(timeline: Timeline, kind: Kind, since: int, timeout: float = 20.0, *, with_words: bool = False):
    # with_words: the first final that holds words (a click of the virtual sound card, an ALSA underrun on a
    # fresh server, can make a segment of its own whose final is empty)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in timeline.events(since_seq=since, kinds=[kind]) if not with_words or e.text.strip()]
        if found:
            return found[0]
        time.sleep(0.05)
    return None


@pytest.fixture
def live(tmp_path, monkeypatch):
    monkeypatch.setenv("VENUS_CONFIG_DIR", str(tmp_path / "cfg"))
    import sounddevice as sd

    sd.playrec(np.zeros((1600, 1), np.float32), samplerate=16000, channels=1, blocking=True)  # first-stream xrun
    timeline = Timeline()
    levels: list[float] = []
    pipeline = SpeechPipeline.for_devices(timeline, on_level=levels.append)
    pipeline.start()
    yield pipeline, timeline, levels
    pipeline.close()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def test_mic_stream_hears_speech_and_transcribes_it(live, tmp_path):
    pipeline, timeline, levels = live
    wav = write_wav(tmp_path / "user.wav", pad(espeak("Open the calendar for tomorrow."), 0.3, 0.3))
    since = len(timeline)
    _say_into_the_room(wav)
    final = _wait_for(timeline, Kind.ASR_FINAL, since, with_words=True)
    assert final is not None, [(e.kind, getattr(e, "text", "")) for e in timeline.events(since)]
    assert {"calendar", "tomorrow"} <= _words(final.text), final.text
    assert levels and max(levels) > -40  # the meter saw the speech


def test_a_killed_mic_stream_is_reported_and_reopened(live, tmp_path):
    pipeline, timeline, _ = live
    if subprocess.run(["pactl", "list", "short", "modules"], capture_output=True, text=True).stdout.find(
            "module-cli-protocol-unix") < 0:
        subprocess.run(["pactl", "load-module", "module-cli-protocol-unix"], check=True, capture_output=True)
    listing = subprocess.run(["pactl", "list", "source-outputs"], capture_output=True, text=True).stdout
    ours = [block.split("\n")[0].strip() for block in listing.split("Source Output #")[1:]
            if f'application.process.id = "{os.getpid()}"' in block]
    assert ours, "the mic stream is not visible on the server"
    for index in ours:
        subprocess.run(["pacmd", "kill-source-output", index], check=True)
    notice = _wait_for(timeline, Kind.SYSTEM_NOTICE, 0, timeout=10)
    assert notice is not None and notice.code == "audio-device-lost" and "input" in notice.text
    deadline = time.monotonic() + 10  # the warning comes first; the reopen follows once the dead stream is closed
    while pipeline.source.reopened < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pipeline.source.reopened >= 1
    # and Venus still hears afterwards
    wav = write_wav(tmp_path / "after.wav", pad(espeak("Are you still listening?"), 0.3, 0.3))
    since = len(timeline)
    _say_into_the_room(wav)
    final = _wait_for(timeline, Kind.ASR_FINAL, since, with_words=True)
    assert final is not None and {"still", "listening"} <= _words(final.text), final and final.text


def test_speaking_through_the_speaker_stream_records_spans(live):
    pipeline, timeline, _ = live
    turn = pipeline.speak("t-dev", iter(["Hello, this goes through the real output stream."]))
    assert turn.done.wait(20)
    spans = timeline.events(kinds=[Kind.SPEECH_SPAN])
    assert spans and not spans[0].truncated and spans[0].end_sample > spans[0].start_sample
    assert spans[0].sample_rate == pipeline.output_rate
    # Venus heard its own loud zero-delay echo on vmic, yet no user speech was opened
    assert not timeline.events(kinds=[Kind.USER_SPEECH_START])
