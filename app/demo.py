"""A realistic scripted conversation on a real Timeline, for the screenshot, the bench and trying the window.

Every event is one the runtime and harness append in a real session; nothing here touches widgets.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from engine.timeline import Timeline
from engine.timeline.events import (
    Action,
    AsrFinal,
    AsrPartial,
    AssistantToken,
    AssistantTurnEnd,
    ConfirmationRequested,
    ControlDecision,
    DelegationDispatched,
    DelegationProgress,
    DelegationResult,
    Interruption,
    RuntimeState,
    RuntimeStateName,
    UserSpeechEnd,
    UserSpeechStart,
)


@dataclass(frozen=True)
class DemoIds:
    """Ids the scripted conversation used, so callers can find its rows."""

    finished_task: str = "task-weather"  # delegated, reaches 100 % with a result
    waiting_task: str = "task-delete"  # an 'ask' tool waiting for the user's confirmation
    interrupted_turn: str = "turn-2"


def _state(timeline: Timeline, state: RuntimeStateName) -> None:
    timeline.append(RuntimeState(state=state))


def user_says(timeline: Timeline, text: str, pause_s: float = 0.0) -> None:
    """Append the events of one spoken user utterance: VAD start, growing partials, final transcript."""
    _state(timeline, RuntimeStateName.USER_SPEAKING)
    timeline.append(UserSpeechStart())
    words = text.split()
    for n in range(1, len(words)):
        timeline.append(AsrPartial(text=" ".join(words[:n])))
        time.sleep(pause_s)
    timeline.append(UserSpeechEnd())
    timeline.append(AsrFinal(text=text))
    _state(timeline, RuntimeStateName.THINKING)


def venus_says(timeline: Timeline, turn_id: str, text: str, *, heard_words: int | None = None,
               pause_s: float = 0.0) -> None:
    """Append a streamed answer; with `heard_words`, the user interrupts after hearing that many words."""
    timeline.append(ControlDecision(turn_id=turn_id, action=Action.RESPOND))
    _state(timeline, RuntimeStateName.SPEAKING)
    pieces = re.findall(r"\S+\s*", text)  # words with the spaces and line breaks after them (Markdown keeps its lines)
    for index, piece in enumerate(pieces):
        timeline.append(AssistantToken(turn_id=turn_id, text=piece, index=index))
        time.sleep(pause_s)
    full = "".join(pieces).strip()
    if heard_words is None:
        timeline.append(AssistantTurnEnd(turn_id=turn_id, text=full, heard_text=full, reason="complete"))
    else:
        heard = "".join(pieces[:heard_words]).strip()
        _state(timeline, RuntimeStateName.YIELDING)
        timeline.append(Interruption(turn_id=turn_id, heard_text=heard, unheard_text=full[len(heard):],
                                     reason="user spoke over Venus"))
        timeline.append(AssistantTurnEnd(turn_id=turn_id, text=full, heard_text=heard, interrupted=True,
                                         reason="interrupted"))
    _state(timeline, RuntimeStateName.LISTENING)


def run_task(timeline: Timeline, task_id: str, tool: str, arguments: dict, steps: list[str], result: str,
             pause_s: float = 0.0) -> None:
    """Append a delegated task from dispatch through progress steps to its result."""
    timeline.append(DelegationDispatched(task_id=task_id, tool=tool, arguments=arguments))
    for n, status in enumerate(steps, start=1):
        timeline.append(DelegationProgress(task_id=task_id, percent=100.0 * n / (len(steps) + 1), status=status))
        time.sleep(pause_s)
    timeline.append(DelegationResult(task_id=task_id, tool=tool, summary=result))


def play_demo_conversation(timeline: Timeline, pause_s: float = 0.0) -> DemoIds:
    """Fill `timeline` with a short conversation: speech, a reply, an interrupted reply, a finished task and
    an 'ask' confirmation still waiting. `pause_s` paces tokens and progress like a live session."""
    ids = DemoIds()
    _state(timeline, RuntimeStateName.LISTENING)
    user_says(timeline, "Hi Venus, what's on my plate this afternoon?", pause_s)
    venus_says(timeline, "turn-1", "You have **two things** this afternoon:\n\n- the *design review* at 3 pm\n"
               "- a call with Sam at 4:30 pm", pause_s=pause_s)
    user_says(timeline, "Can you tell me more about the design review?", pause_s)
    venus_says(timeline, ids.interrupted_turn,
               "Sure. The review covers the new onboarding flow, the settings page and the icon set, "
               "and Priya asked everyone to read the notes first.", heard_words=9, pause_s=pause_s)
    user_says(timeline, "Actually, check the weather in Lisbon for the weekend.", pause_s)
    timeline.append(ControlDecision(turn_id="turn-3", action=Action.DELEGATE, tool="weather",
                                    arguments={"city": "Lisbon", "days": 2}))
    venus_says(timeline, "turn-3", "I'm checking the Lisbon forecast in the background.", pause_s=pause_s)
    run_task(timeline, ids.finished_task, "weather", {"city": "Lisbon", "days": 2},
             ["contacting the forecast service", "reading Saturday and Sunday"],
             "Saturday 24 °C and sunny; Sunday 21 °C with light rain in the afternoon.", pause_s)
    user_says(timeline, "And delete the old screenshots folder on my desktop.", pause_s)
    arguments = {"path": "~/Desktop/Old screenshots", "recursive": True}
    timeline.append(DelegationDispatched(task_id=ids.waiting_task, tool="delete_files", arguments=arguments))
    timeline.append(ConfirmationRequested(task_id=ids.waiting_task, tool="delete_files", arguments=arguments,
                                          prompt="Delete ~/Desktop/Old screenshots and everything in it?"))
    venus_says(timeline, "turn-4", "That deletes 212 files. Please confirm on screen or say yes.", pause_s=pause_s)
    return ids
