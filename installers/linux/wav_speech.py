"""Exit 1 unless a WAV file holds speech-like energy: at least 0.5 s of 30 ms frames above -40 dBFS RMS."""

import sys

import numpy as np
import soundfile as sf

audio, rate = sf.read(sys.argv[1], dtype="float32", always_2d=True)
mono = audio.mean(axis=1)
frame = int(0.03 * rate)
frames = mono[: len(mono) // frame * frame].reshape(-1, frame)
rms_db = 20 * np.log10(np.sqrt((frames**2).mean(axis=1)) + 1e-9)
voiced_s = float((rms_db > -40).sum() * 0.03)
print(f"{sys.argv[1]}: {len(mono) / rate:.1f} s, {voiced_s:.1f} s above -40 dBFS, peak {rms_db.max():.1f} dBFS")
sys.exit(0 if voiced_s >= 0.5 else 1)
