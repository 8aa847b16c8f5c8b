"""The pure reply interpreter the runtime calls on the user's transcripts."""

from __future__ import annotations

import pytest

from harness import interpret_reply


@pytest.mark.parametrize("text, expected", [
    ("Yes, go ahead.", "yes"), ("yeah do it", "yes"), ("Okay.", "yes"), ("Um, sure", "yes"), ("go for it!", "yes"),
    ("No.", "no"), ("nope", "no"), ("Don't do that", "no"), ("no thanks", "no"), ("Well, no.", "no"),
    ("Never mind, stop looking.", "cancel"), ("nevermind", "cancel"), ("Cancel that", "cancel"),
    ("No, stop searching", "cancel"), ("forget it", "cancel"), ("Venus, stop looking", "cancel"),
    ("What's the weather like?", None), ("", None), ("I know what you mean", None), ("yesterday was fun", None),
    ("nothing much", None), ("Is it okay to cancel my gym membership?", None),
    ("Okay, never mind.", "cancel"), ("no stop looking", "cancel"), ("Cancel.", "cancel"),
])
def test_interpret_reply(text, expected):
    assert interpret_reply(text) == expected
