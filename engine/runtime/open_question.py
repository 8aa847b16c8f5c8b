"""The yes/no question Venus asked aloud about a tool call, and what the user's next turn means for it.

A spoken "yes" approves only once the question was heard to its end, and only in the user's voice when voice
matching is on: the TV, a guest or a recording answering approves nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engine.runtime.deliveries import confirmation_text
from engine.runtime.overlap import OverlapPolicy
from engine.settings import Settings
from engine.timeline import events as ev
from engine.timeline.timeline import Timeline

log = logging.getLogger(__name__)


class OpenQuestion:
    """The confirmation Venus asked about last, the turn that asked it, and the voice of the user's answer."""

    def __init__(self, timeline: Timeline, harness: Any, heard_text: Callable[[str], str], settings: Settings,
                 overlap: OverlapPolicy) -> None:
        self.timeline = timeline
        self.harness = harness  # harness.Harness: pending confirmations and the answers to them
        self._heard_text = heard_text  # the words of one of Venus's turns that were played
        self.settings = settings  # conversation.voice_matching
        self.overlap = overlap  # its same_speaker_threshold: below it, the voice is someone else's
        self.task_id: str | None = None  # the task whose confirmation Venus asked about last
        self._turn_id = ""  # the turn that asked it aloud: its heard words tell whether the user heard it
        self._words = 0  # how many words of that turn make the question itself
        self.turn_voice: float | None = None  # lowest similarity to the enrolled voice in this user turn

    def pending(self) -> list[str]:
        """The tasks whose confirmation is still unanswered."""
        return self.harness.pending_confirmations() if self.harness is not None else []

    @property
    def open(self) -> bool:
        """Venus asked a yes/no question that is still open: the voice of what the user says next matters."""
        return self.task_id is not None and self.harness is not None \
            and self.task_id in self.harness.pending_confirmations()

    def replied(self, text: str) -> bool:
        """The words answer the open question ("No.", "Yes, go ahead."): a whole turn, however short."""
        return self.open and self.harness.reads_as_answer(text)

    def asked(self, task_id: str, turn_id: str, text: str) -> None:
        """Venus's turn `turn_id` asks about `task_id` with `text` (its question, then " Say yes or no")."""
        self.task_id, self._turn_id = task_id, turn_id
        self._words = len(text.split(" Say yes or no")[0].split())

    def note_voice(self, similarity: float | None) -> None:
        """A segment of the user's turn was scored against the enrolled voice."""
        if similarity is not None:
            self.turn_voice = similarity if self.turn_voice is None else min(self.turn_voice, similarity)

    def answer(self, text: str, *, typed: bool) -> str | None:
        """The turn as an answer to the question or a cancel: "yes", "no", "cancel", "unclear", "not-you", or None
        when it is neither (the harness decides from the words)."""
        if typed:
            return self.harness.handle_user_text(text, source="ui", asked=self.task_id)
        asked = self.task_id if self._heard() else None
        if asked is not None and not self._sounds_like_user():
            # the words would approve, but not in the user's voice: the TV, a guest, a recording. A no declines
            # whoever says it (the user's own short "No." scores under the line about 1 time in 7).
            if self.harness.reads_as_approval(text):
                log.info("an answer %r in another voice (similarity %.2f) approves nothing", text, self.turn_voice)
                return "not-you"
        return self.harness.handle_user_text(text, source="voice", asked=asked)

    def again(self) -> str:
        """The question once more, for an answer that was neither yes nor no."""
        request = next((e for e in reversed(self.timeline.events(kinds=[ev.Kind.CONFIRMATION_REQUESTED]))
                        if isinstance(e, ev.ConfirmationRequested) and e.task_id == self.task_id), None)
        if request is None or self.task_id not in self.pending():
            return "Say yes or no."
        return f"{confirmation_text(request)} Say yes or no."

    def _heard(self) -> bool:
        # the question was played up to its end (its words are in the heard words)
        if self.task_id is None or not self._turn_id:
            return False
        return len(self._heard_text(self._turn_id).split()) >= self._words

    def _sounds_like_user(self) -> bool:
        # only with voice matching on and a score for this turn (the pipeline scores answers to open questions
        # against the enrolled voice); the threshold is the overlap policy's "someone other than the user"
        if not self.settings.conversation.voice_matching or self.turn_voice is None:
            return True
        return self.turn_voice >= self.overlap.options.same_speaker_threshold
