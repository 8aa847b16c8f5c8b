"""Audio in and out: sound cards and files, echo cancellation, playback, and the speech pipeline."""

from engine.audio.resample import StreamResampler, resample_clip  # noqa: I001 - first: others build on it
from engine.audio.devices import DeviceSink, DeviceSource, find_device
from engine.audio.echo import EchoCanceller, EchoGuard, EchoGuardOptions
from engine.audio.files import FileSink, FileSource
from engine.audio.frontend import FrontEndStep, SpeechFrontEnd
from engine.audio.playback import Clip, ClipReport, Player, PlayerOptions
from engine.audio.pipeline import (
    AudioSink,
    AudioSource,
    SpeechPipeline,
    SpeechTurn,
    device_notices,
    make_synthesizer,
    make_transcriber,
)

__all__ = [
    "AudioSink", "AudioSource", "Clip", "ClipReport", "DeviceSink", "DeviceSource", "EchoCanceller", "EchoGuard",
    "EchoGuardOptions", "FileSink", "FileSource", "FrontEndStep", "Player", "PlayerOptions", "SpeechFrontEnd",
    "SpeechPipeline", "SpeechTurn", "StreamResampler", "device_notices", "find_device", "make_synthesizer", "make_transcriber",
    "resample_clip",
]
