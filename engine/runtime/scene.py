"""The conversation as the overlap policy sees it: the clause Venus is speaking, what the user asked last, and
the people around the user (from settings, and named in what the user said: "my wife Anna")."""

from __future__ import annotations

from collections.abc import Callable

from engine.runtime.addressee import names_mentioned, overlap_hint
from engine.runtime.overlap import ConversationContext
from engine.settings import Settings


class Scene:
    """What the runtime knows of the conversation around speech over Venus, kept up to date as events go by."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.last_request = ""  # the user's last turn: the topic Venus is talking about
        self.other_names: list[str] = [n.strip() for n in settings.conversation.household_names if n.strip()]
        self.speaking_clause: tuple[str, str] = ("", "")  # (turn id, text) of the last clause Venus spoke
        self.tool_request: Callable[[str], bool] | None = None  # words the local intents parse for a tool
        self.addressee_score: Callable[[str], float | None] | None = None  # the chat LLM's reading of who is addressed

    def learn_names(self, text: str) -> bool:
        """Add the people the user named in `text`; True when there was someone new."""
        known = {n.lower() for n in self.other_names}
        new = [n for n in names_mentioned(text) if n.lower() not in known
               and n.lower() != self.settings.conversation.assistant_name.lower()]
        self.other_names.extend(new)
        return bool(new)

    def asr_hint(self) -> str:
        """The words that prime the ASR for speech over Venus (the household's and the assistant's names)."""
        return overlap_hint(self.other_names, self.settings.conversation.assistant_name)

    def context(self, turn_id: str | None) -> ConversationContext:
        """The context for judging an overlap of Venus's turn `turn_id` (None: no turn of hers)."""
        conv = self.settings.conversation
        clause_turn, clause = self.speaking_clause
        speaking = clause if turn_id is not None and clause_turn == turn_id else ""
        return ConversationContext(assistant_name=conv.assistant_name, speaking_text=speaking,
                                   user_name=conv.user_name, topic_text=self.last_request,
                                   other_names=tuple(self.other_names), tool_request=self.tool_request,
                                   addressee_score=self.addressee_score)
