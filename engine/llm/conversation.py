"""A conversation bound to a timeline: keeps the model's context in step and runs assistant turns.

The runtime drives it with four calls: `sync()` when the user's words arrive (pre-fills the cache),
`respond()` when the user's turn ends (decision, then streamed answer and clause chunks for TTS),
`apply_interruption()` when the user barges in, and `cancel()` for an urgent stop.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engine.errors import BackendError
from engine.llm.backend import GenerateRequest, LLMBackend, SyncStats
from engine.llm.budget import OFFER, SentenceBudget, asks_for_more, continued_answer
from engine.llm.chunker import ChunkerOptions, ClauseChunker
from engine.llm.context import (
    INTERRUPTED_MARK,
    SMALL_MODEL_PROMPT,
    RenderOptions,
    extractive_summary,
    last_interrupted,
    render_messages,
)
from engine.llm.control import (
    DECISION_PREFIX,
    ToolSpec,
    allowed_actions,
    as_tool_specs,
    decision_grammar,
    decision_schema,
    format_decision,
    parse_decision,
)
from engine.llm.guard import FALLBACK, ReplyGuard
from engine.llm.template import ChatMessage
from engine.timeline import Timeline
from engine.timeline import events as ev

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConversationOptions:
    """How turns are generated and how the context is kept inside the window."""

    render: RenderOptions = field(default_factory=RenderOptions)  # system prompt and context notes
    answer: GenerateRequest = field(default_factory=GenerateRequest)  # sampling of the spoken answer
    chunker: ChunkerOptions = field(default_factory=ChunkerOptions)  # clause cuts for TTS
    n_ctx: int = 4096  # the model's window; the rendered context is trimmed to fit it
    decision_max_tokens: int = 96  # cap on the decision line (a longer one is reported as malformed)
    decision_retries: int = 1  # how often an invalid decision goes back to the model before falling back
    overflow_target: float = 0.6  # after trimming, the context fills at most this share of the free room
    # Tokens the cache may hold after the system prompt (summary + recent turns) before the oldest turns are
    # folded into the summary, after an answer: each new turn then costs the same however long the talk.
    # 0 = sized from the model (attention over the window costs at most `window_attention_share` of the
    # weights per token); -1 = no working window, only the n_ctx overflow trimming.
    working_window: int = 0
    window_attention_share: float = 0.15
    # Evaluate the decision line's fixed start with the prompt (in-process backends) instead of generating it:
    # fewer decode steps, more batched tokens; bench_llm measured no gain on one CPU thread, so it is off.
    prefill_decision: bool = False
    # Pick respond / silent / resume from the model's logits over those fixed lines (in-process backends):
    # one batch plus a step where the actions part, instead of a grammar step per token (~8 for the default).
    # A delegation then writes its tool and arguments under the grammar.
    choose_decision: bool = True
    # The model writes control decisions and tool calls. Off (the tiny defaults, which recite the format
    # instead): the context holds no format text and no tools, and every turn is a plain answer (see _decide).
    tool_calls: bool = True
    # A spoken answer stops after this many sentences and offers to go on (engine/llm/budget.py); 0 = no budget.
    max_spoken_sentences: int = 0

    def __post_init__(self) -> None:
        if self.n_ctx < 256:
            raise ValueError(f"n_ctx must be at least 256, got {self.n_ctx}")
        if self.answer.max_tokens + self.decision_max_tokens >= self.n_ctx // 2:
            raise ValueError(
                f"answer.max_tokens ({self.answer.max_tokens}) + decision_max_tokens ({self.decision_max_tokens}) "
                f"must stay under half of n_ctx ({self.n_ctx})"
            )
        if self.decision_retries < 0:
            raise ValueError(f"decision_retries must be 0 or more, got {self.decision_retries}")
        if not 0.1 <= self.overflow_target <= 0.95:
            raise ValueError(f"overflow_target must be within 0.1..0.95, got {self.overflow_target}")
        if self.working_window < -1 or 0 < self.working_window < 64:
            raise ValueError(f"working_window must be -1 (off), 0 (auto) or at least 64 tokens, got {self.working_window}")
        if not 0.01 <= self.window_attention_share <= 1.0:
            raise ValueError(f"window_attention_share must be within 0.01..1, got {self.window_attention_share}")
        if self.max_spoken_sentences < 0:
            raise ValueError(f"max_spoken_sentences must be 0 (no budget) or more, got {self.max_spoken_sentences}")

    @classmethod
    def from_settings(cls, llm: Any) -> ConversationOptions:
        """From the `llm` section of the settings (engine.settings.LLMSettings)."""
        tool_calls = tool_calls_enabled(llm)
        prompt = llm.system_prompt
        if not tool_calls and prompt == type(llm).model_fields["system_prompt"].default:
            prompt = SMALL_MODEL_PROMPT  # the shipped prompt is written for capable models; the user's own stays
        return cls(
            render=RenderOptions(system_prompt=prompt, include_control=tool_calls),
            answer=GenerateRequest(max_tokens=llm.max_tokens, temperature=llm.temperature, top_p=llm.top_p),
            n_ctx=llm.n_ctx,
            working_window=llm.working_window if llm.working_window <= 0 else max(64, llm.working_window),
            tool_calls=tool_calls,
            max_spoken_sentences=llm.max_spoken_sentences,
        )


def tool_calls_enabled(llm: Any) -> bool:
    """Whether the model of the `llm` settings makes control decisions and tool calls.

    "on"/"off" say so; "auto" asks the model registry (off for the tiny defaults), and keeps them on for a
    remote server and for a model the registry has not measured (what Venus did before the capability).
    """
    if llm.tool_calls != "auto":
        return llm.tool_calls == "on"
    if llm.backend == "remote":
        return True
    from engine.models.registry import tool_calls_capability

    capable = tool_calls_capability(llm.model)
    return True if capable is None else capable


_END = object()
# Characters a spoken answer never needs: braces (a small model drifts into JSON after its decision line),
# markdown emphasis and headings (read aloud as noise) and backticks (SmolLM2 ran into endless ``` fences in a
# benchmark answer, and went silent mid-answer: nothing in them can be spoken).
SPOKEN_AVOID = "{}*#`"


class AssistantTurn:
    """One assistant turn in progress: its decision, its clause chunks, and a way to stop it."""

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.decision: ev.ControlDecision | None = None
        self.end: ev.AssistantTurnEnd | None = None
        self.error: BaseException | None = None
        self.decided = threading.Event()
        self.done = threading.Event()
        self._chunks: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._cancelled = threading.Event()
        self._heard: str | None = None
        self._stream_lock = threading.Lock()
        self._stream: Any = None
        self._held = False
        self._actions: tuple[ev.Action, ...] | None = None

    def chunks(self) -> Iterator[str]:
        """Clause chunks for TTS as they complete; ends when the turn ends."""
        while (item := self._chunks.get()) is not _END:
            yield item  # type: ignore[misc]
        self._chunks.put(_END)

    def cancel(self) -> None:
        """Stop generating before the next decode step (the turn ends with reason "cancelled")."""
        self._cancelled.set()
        with self._stream_lock:
            if self._stream is not None:
                self._stream.cancel()

    def hold(self, held: bool = True) -> None:
        """Pause (or with False, resume) the answer's decoding between steps; what was generated stays queued.

        For CPU sharing: the answer runs seconds ahead of the voice, so pausing it costs nothing audible.
        """
        with self._stream_lock:
            self._held = held
            if self._stream is not None:
                (self._stream.hold if held else self._stream.release)()

    def wait(self, timeout: float | None = None) -> ev.AssistantTurnEnd | None:
        """Block until the turn ended; returns its AssistantTurnEnd (None on timeout)."""
        self.done.wait(timeout)
        if self.error is not None:
            raise self.error
        return self.end

    @property
    def cancelled(self) -> bool:
        """True once cancel() or an interruption stopped the turn."""
        return self._cancelled.is_set()


class Conversation:
    """The model's side of one timeline."""

    def __init__(
        self,
        timeline: Timeline,
        backend: LLMBackend,
        options: ConversationOptions | None = None,
        tools: Iterable[ToolSpec | Mapping[str, Any]] = (),
        summarizer: Any = None,
    ) -> None:
        self.timeline = timeline
        self.backend = backend
        options = options or ConversationOptions()
        if not options.tool_calls and options.render.include_control:
            options = replace(options, render=replace(options.render, include_control=False))
        self.options = options
        self.tools: tuple[ToolSpec, ...] = as_tool_specs(tools)
        self.summarize = summarizer or (lambda prev, dropped: extractive_summary(prev, dropped, self.options.render.summary_chars))
        self.last_sync: SyncStats | None = None
        self._current: AssistantTurn | None = None
        self._lock = threading.RLock()
        self._prefix_count: int | None = None  # tokens of the system message without a summary
        self.folds = 0  # how often the working window folded old turns into the summary

    # ---- context ----------------------------------------------------------------------------------------

    def messages(self) -> list[ChatMessage]:
        """The context as the model will read it, after trimming old turns into the summary if needed."""
        with self._lock:
            events = self.timeline.events()
            messages = render_messages(events, self.tools, self.options.render)
            if self._fits(messages):
                return messages
            budget = self._budget()
            self._fold(events, target=int(budget * self.options.overflow_target), limit=budget)
            return self._splice()

    def sync(self) -> SyncStats:
        """Evaluate whatever the timeline added since the last call; the unchanged prefix stays cached."""
        with self._lock:
            self.last_sync = self.backend.sync(self.messages())
            return self.last_sync

    def compact(self) -> ev.Summary | None:
        """Fold the oldest turns into the summary once the cache outgrows the working window.

        Called after each answer, while the user listens: the system prompt and the recent turns stay in the
        cache (the backend splices the new summary in between), so nothing already there is evaluated again.
        Returns the new Summary event, or None when the context still fits.
        """
        with self._lock:
            limit = self.window_limit()
            if limit is None:
                return None
            events = self.timeline.events()
            if self._count(render_messages(events, self.tools, self.options.render)) <= limit:
                return None
            prefix = self._prefix_tokens()
            room = limit - prefix
            # the summary is evaluated at each fold (~130 tokens/s on one thread here), so it gets a quarter of the room
            summary = self._fold(events, target=prefix + int(room * 0.6), limit=limit, summary_tokens=room // 4)
            self.folds += 1
            self._splice()
            return summary

    def window_limit(self) -> int | None:
        """Most tokens the cache holds before `compact()` folds; None without a working window."""
        window = self.options.working_window
        if window < 0:
            return None
        if window == 0:
            break_even = getattr(self.backend, "attention_break_even", None)
            if break_even is None:
                return None  # a remote model: its server keeps its own cache
            window = max(64, int(break_even() * self.options.window_attention_share))
        return min(self._budget(), self._prefix_tokens() + window)

    def _prefix_tokens(self) -> int:
        if self._prefix_count is None:
            self._prefix_count = self._count(render_messages([], self.tools, self.options.render))
        return self._prefix_count

    def _splice(self) -> list[ChatMessage]:
        # after a fold: the backend keeps the cached recent turns and evaluates only the new summary
        messages = render_messages(self.timeline.events(), self.tools, self.options.render)
        splice = getattr(self.backend, "splice", None)
        if splice is not None:
            self.last_sync = splice(messages)
        return messages

    def warm_up(self) -> SyncStats:
        """At start-up, while nobody waits: evaluate the system prompt and work out the answer's banned tokens."""
        prepare = getattr(self.backend, "prepare", None)
        if prepare is not None:
            prepare(self._answer_request())
        return self.sync()

    def _answer_request(self) -> GenerateRequest:
        # small models copy the interruption mark, or start reciting the decision format, otherwise
        answer = self.options.answer
        template = getattr(self.backend, "template", None)  # a base model's transcript ends an answer at its line
        stops = tuple(getattr(template, "stops", ()))
        return replace(answer, stop=(*answer.stop, *stops, INTERRUPTED_MARK, '{"action'),
                       avoid_chars=answer.avoid_chars or SPOKEN_AVOID)

    def prefill(self, unfinished_user_text: str = "") -> SyncStats:
        """sync(), plus words the user is still saying (a partial transcript) as their open turn.

        Called while the user speaks, so that when the final transcript lands (usually the same words) the
        answer finds them already evaluated and only the part that differs is evaluated again.
        """
        with self._lock:
            messages = self.messages()
            text = unfinished_user_text.strip()
            if text and messages[-1].role == "user":
                messages[-1] = ChatMessage("user", f"{messages[-1].content} {text}")
            elif text:
                messages.append(ChatMessage("user", text))
            self.last_sync = self.backend.sync(messages)
            return self.last_sync

    def next_token_logprobs(self, text: str, groups: Sequence[Sequence[int]]) -> np.ndarray | None:
        """log P(the next token is one of each group) after the user's words `text`, read as their still open
        message after the conversation so far (the KV cache holds it, and the words from the partials); None
        when the backend cannot read its logits (a remote server).

        `text` is the user's whole turn so far: it stands in for the user message the timeline may already hold
        (the finals of this turn are on it as they come).
        """
        return self._read_after_conversation("next_token_logprobs", text, groups)

    def words_logprob(self, text: str, frame: str) -> tuple[float, float, int] | None:
        """(log P(`text` as the user's next message here), log P(`text` after the plain text `frame`), its tokens);
        None when the backend cannot read its logits. See engine.runtime.addressee_probe."""
        return self._read_after_conversation("words_logprob", text, frame)

    def _read_after_conversation(self, method: str, text: str, extra: Any) -> Any:
        # a backend read of the user's words `text` as their open message after the conversation so far (the
        # user message the timeline may already hold for this turn is left out); None if it cannot read logits
        read = getattr(self.backend, method, None)
        if read is None:
            return None
        with self._lock:
            messages = self.messages()
            if messages[-1].role == "user":
                messages = messages[:-1]
            return read(messages, text, extra)

    # ---- turns --------------------------------------------------------------------------------------------

    def respond(self, turn_id: str | None = None, actions: Sequence[ev.Action] | None = None) -> AssistantTurn:
        """Start an assistant turn on its own thread: decision, then the streamed answer.

        `actions` narrows what the model may decide this turn (e.g. only DELEGATE after a tool button).
        """
        with self._lock:
            if self._current is not None and not self._current.done.is_set():
                self._current.cancel()
                self._current.done.wait(10)
            turn = AssistantTurn(turn_id or uuid.uuid4().hex[:12])
            turn._actions = tuple(actions) if actions else None
            self._current = turn
        threading.Thread(target=self._run_turn, args=(turn,), name=f"venus-turn-{turn.turn_id}", daemon=True).start()
        return turn

    def cancel(self) -> None:
        """Urgent stop of the running turn (and anything queued in the backend)."""
        turn = self._current
        if turn is not None:
            turn.cancel()
        self.backend.cancel()

    def apply_interruption(self, turn_id: str, heard_text: str, reason: str = "user interrupted") -> ev.Interruption:
        """Cut the turn to the words the user heard, mark it interrupted and roll the KV cache back to there."""
        turn = self._current
        if turn is not None and turn.turn_id == turn_id and not turn.done.is_set():
            turn._heard = heard_text
            turn.cancel()
            turn.done.wait(10)
        with self._lock:
            generated = next(
                (e.text for e in reversed(self.timeline.events(kinds=[ev.Kind.ASSISTANT_TURN_END]))
                 if e.turn_id == turn_id), "",
            )
            unheard = generated[len(heard_text):].strip() if generated.startswith(heard_text) else ""
            event = self.timeline.append(
                ev.Interruption(turn_id=turn_id, heard_text=heard_text, unheard_text=unheard, reason=reason)
            )
            self.last_sync = self.backend.sync(self.messages(), evaluate=False)
            return event  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the running turn; the backend stays open (its owner closes it)."""
        self.cancel()
        if self._current is not None:
            self._current.done.wait(10)

    # ---- internals ----------------------------------------------------------------------------------------

    def _run_turn(self, turn: AssistantTurn) -> None:
        try:
            self._decide_and_answer(turn)
        except BaseException as exc:  # reported on the timeline and to whoever waits
            log.exception("assistant turn %s failed", turn.turn_id)
            turn.error = exc
            if turn.end is None:
                turn.end = self.timeline.append(ev.AssistantTurnEnd(turn_id=turn.turn_id, reason=f"error: {exc}"))  # type: ignore[assignment]
        finally:
            turn.decided.set()
            turn._chunks.put(_END)
            try:
                if turn.error is None and not turn.cancelled:
                    self.compact()  # the answer is still being spoken: a good moment to fold old turns
            except Exception:  # the answer is already on the timeline: a failed fold must not lose the turn
                log.exception("folding old turns into the summary failed; the next sync re-evaluates instead")
            finally:
                turn.done.set()

    def _generate(self, turn: AssistantTurn, messages: Sequence[ChatMessage], request: GenerateRequest) -> Any:
        with turn._stream_lock:
            stream = self.backend.generate(messages, request)
            turn._stream = stream
            if turn._held:
                stream.hold()
            if turn.cancelled:
                stream.cancel()
        return stream

    def _decide_and_answer(self, turn: AssistantTurn) -> None:
        decision = self._decide(turn)
        if decision is None:
            self._end(turn, "", "cancelled")
            return
        turn.decision = decision
        turn.decided.set()
        if decision.action == ev.Action.SILENT:
            self._end(turn, "", "silent")
            return
        prefix = ""
        if decision.action == ev.Action.RESUME:
            interrupted = last_interrupted(self.timeline.events())
            prefix = interrupted.unheard_text if interrupted is not None else ""
        with self._lock:
            messages = self.messages()
        control = format_decision(decision.action, decision.tool, decision.arguments) if self.options.tool_calls else ""
        text = f"{prefix} " if prefix else ""
        # a yes to "Want me to go on?": the model goes on from the cut answer's last words, which are not said again
        context = (continued_answer(messages) if not prefix else None) or [
            *messages, ChatMessage("assistant", text, control=control)]
        chunker = ClauseChunker(self.options.chunker)
        index = 0
        spoken: list[str] = []  # the clauses handed to the voice
        for chunk in chunker.push(text):
            turn._chunks.put(chunk)
            spoken.append(chunk)
        answer = self._answer_request()
        # every clause is checked before it goes to the voice: a small model may recite its instructions or loop
        # (against the instructions only: the summary of earlier turns in the system message may be said again)
        guard = ReplyGuard(render_messages([], self.tools, self.options.render)[0].content)
        stopped: str | None = None
        # the spoken-length budget: once it is full, the next words mean the answer goes on, so it stops there
        budget = SentenceBudget(0 if asks_for_more(messages) else self.options.max_spoken_sentences)
        over_budget = False
        for attempt in range(2):
            stream = self._generate(turn, context, answer)
            for piece in stream:
                past_cut = ""  # words of this piece that belong after the budget's cut (never said, never shown)
                if budget.full and piece.strip():
                    past_cut = piece
                else:
                    text += piece
                    chunks = chunker.push(piece)
                    stopped = guard.check(text) if chunks else None
                    for n, chunk in enumerate([] if stopped else chunks):
                        if budget.full:
                            past_cut = " ".join(chunks[n:])
                            break
                        turn._chunks.put(chunk)
                        spoken.append(chunk)
                        budget.add(chunk)
                    if budget.full and chunker.pending.strip():
                        past_cut = f"{past_cut} {chunker.pending}".strip()
                over_budget = bool(past_cut)
                shown = piece[: max(0, len(piece) - len(past_cut))] if past_cut else piece
                if shown.strip() or not past_cut:
                    self.timeline.append(ev.AssistantToken(turn_id=turn.turn_id, text=shown, index=index))
                    index += 1
                if stopped or over_budget:
                    stream.cancel()
                    for _ in stream:  # let the backend finish the step it is on before the turn ends
                        pass
                    break
            if text.strip() or turn.cancelled or attempt or stopped:
                break
            # A small model sometimes ends a "respond" turn at once; one sampled retry says something instead.
            answer = replace(answer, temperature=max(0.7, answer.temperature), seed=answer.seed + 1)
        if over_budget and stopped is None:
            # the words after the cut were never generated: the answer ends with an offer to go on
            log.info("turn %s: %d sentences said, the rest offered", turn.turn_id, budget.sentences)
            self.timeline.append(ev.AssistantToken(turn_id=turn.turn_id, text=f" {OFFER}", index=index))
            turn._chunks.put(OFFER)
            text = " ".join([*(c.strip() for c in spoken), OFFER])
            self._end(turn, text, "budget")
            return
        if stopped is None and (stopped := guard.check(text)) is None:
            for chunk in chunker.flush():
                turn._chunks.put(chunk)
        if stopped is not None:
            # info, not a warning: the turn's end on the timeline says it (the chat shows it), and a console line
            # repeated it in the middle of the conversation
            log.info("turn %s stopped: %s", turn.turn_id, stopped)
            text = " ".join(c.strip() for c in spoken).strip()
            if not text:
                text = FALLBACK
                turn._chunks.put(FALLBACK)
            self._end(turn, text, f"guard: {stopped}")
            return
        self._end(turn, text, stream.finish.reason)

    def _decide(self, turn: AssistantTurn) -> ev.ControlDecision | None:
        can_resume = last_interrupted(self.timeline.events()) is not None
        actions = allowed_actions(self.tools if self.options.tool_calls else (), can_resume=can_resume)
        if turn._actions is not None:
            actions = tuple(a for a in actions if a in turn._actions) or (ev.Action.RESPOND,)
        if not self.options.tool_calls:
            return self._decide_without_model(turn, actions)
        choose = getattr(self.backend, "choose", None)
        if choose is not None and self.options.choose_decision and len(actions) > 1:
            picked = self._choose_action(turn, choose, actions)
            if picked is None:
                return None
            if picked != ev.Action.DELEGATE:
                return self.timeline.append(ev.ControlDecision(turn_id=turn.turn_id, action=picked))  # type: ignore[return-value]
            actions = (ev.Action.DELEGATE,)  # the tool and its arguments come from the grammar below
        prefill = self.options.prefill_decision and getattr(self.backend, "continues_open_turn", False)
        prefix = DECISION_PREFIX if prefill else ""
        request = GenerateRequest(
            max_tokens=self.options.decision_max_tokens, temperature=0.0, stop=("\n",),
            grammar=decision_grammar(self.tools, actions, after_prefix=bool(prefix)),
            json_schema=decision_schema(self.tools, actions),
        )
        for _attempt in range(self.options.decision_retries + 1):
            if turn.cancelled:
                return None
            with self._lock:
                messages = self.messages()
            if prefix:
                messages = [*messages, ChatMessage("assistant", prefix)]
            stream = self._generate(turn, messages, request)
            text = prefix + stream.text()
            if stream.finish.reason == "cancelled" or turn.cancelled:
                return None
            decision = parse_decision(text, self.tools, actions)
            if decision.error and stream.finish.reason == "max_tokens":
                decision = ev.ControlDecision(action=decision.action, tool=decision.tool, arguments=decision.arguments,
                                              error=f"the decision was cut off after {request.max_tokens} tokens; {decision.error}")
            stamped = self.timeline.append(ev.ControlDecision(
                turn_id=turn.turn_id, action=decision.action, tool=decision.tool,
                arguments=decision.arguments, error=decision.error,
            ))
            if not decision.error:
                return stamped  # type: ignore[return-value]
        # the model kept producing invalid decisions: answer in words instead
        return self.timeline.append(ev.ControlDecision(turn_id=turn.turn_id, action=ev.Action.RESPOND))  # type: ignore[return-value]

    def _decide_without_model(self, turn: AssistantTurn, actions: Sequence[ev.Action]) -> ev.ControlDecision | None:
        """The decision of a model without tool calls, made here so that the model never writes one.

        Resume when that is allowed and nothing was said to Venus since she was cut off (a false interruption:
        the cut answer is still the last message); otherwise respond. Silent only when it is all the runtime
        allows: without the format instructions the model has nothing to judge by whether speech was meant for
        Venus, so speech that reaches a turn is answered; telling speech to others apart is left to the
        runtime's overlap and addressee policies, which keep it out of the turns.
        """
        if turn.cancelled:
            return None
        action = ev.Action.RESPOND if ev.Action.RESPOND in actions else actions[0]
        if ev.Action.RESUME in actions:
            with self._lock:
                spoken = [m for m in self.messages() if m.role in ("user", "assistant")]
            if spoken and spoken[-1].role == "assistant" and spoken[-1].content.endswith(INTERRUPTED_MARK):
                action = ev.Action.RESUME
        return self.timeline.append(ev.ControlDecision(turn_id=turn.turn_id, action=action))  # type: ignore[return-value]

    def _choose_action(self, turn: AssistantTurn, choose: Any, actions: Sequence[ev.Action]) -> ev.Action | None:
        """The action the model rates highest, read from its logits (one step per point where actions part)."""
        openings = []
        for action in actions:
            line = format_decision(action)
            # a delegation goes on with its tool: only the part that names the action is compared
            openings.append(line[: line.index('"', len(DECISION_PREFIX)) + 1] if action == ev.Action.DELEGATE
                            else line)
        with self._lock:
            messages = self.messages()
        if turn.cancelled:
            return None
        index = int(choose(messages, openings))
        if index < 0 or turn.cancelled:
            return None
        return actions[index]

    def _end(self, turn: AssistantTurn, text: str, reason: str) -> None:
        interrupted = turn._heard is not None
        end = ev.AssistantTurnEnd(
            turn_id=turn.turn_id, text=text, heard_text=turn._heard if interrupted else text,
            interrupted=interrupted, reason="interrupted" if interrupted else reason,
        )
        turn.end = self.timeline.append(end)  # type: ignore[assignment]

    def _budget(self) -> int:
        window = getattr(self.backend, "n_ctx", self.options.n_ctx)
        return min(window, self.options.n_ctx) - self.options.answer.max_tokens - self.options.decision_max_tokens - 16

    def _count(self, messages: Sequence[ChatMessage]) -> int:
        counter = getattr(self.backend, "token_count", None)
        if counter is not None:
            return int(counter(messages))
        return sum(len(m.full_content()) // 3 + 8 for m in messages)  # conservative estimate for remote models

    def _fits(self, messages: Sequence[ChatMessage]) -> bool:
        return self._count(messages) <= self._budget()

    def _fold(self, events: list[ev.Event], *, target: int, limit: int, summary_tokens: int | None = None) -> ev.Summary:
        """Fold the oldest whole turns into a Summary event until the rest renders to at most `target` tokens.

        The newest user turn is always kept; if even that does not fit `limit`, the summary is shortened.
        """
        previous = next((e for e in reversed(events) if isinstance(e, ev.Summary)), None)
        start = previous.covers_until_seq + 1 if previous is not None else 0
        first = next((i for i, e in enumerate(events) if e.seq >= start), len(events))
        render = self.options.render
        cuts = sorted({events[i - 1].seq for i in _user_turn_starts(events, first + 1)})
        if not cuts:
            cuts = [start - 1]  # nothing new to fold: only the summary can shrink
        candidate: ev.Summary | None = None
        for cut_seq in cuts:
            dropped = render_messages([e for e in events if start <= e.seq <= cut_seq], self.tools, render)[1:]
            text = self.summarize(previous.text if previous is not None else "", dropped)
            if summary_tokens is not None:
                text = self._shorten(text, summary_tokens)
            candidate = ev.Summary(text=text, covers_until_seq=cut_seq)
            if self._count(render_messages([*events, candidate], self.tools, render)) <= target:
                break
        assert candidate is not None
        while self._count(render_messages([*events, candidate], self.tools, render)) > limit:
            if not candidate.text:
                raise BackendError(
                    f"the system prompt and the newest user turn alone need more than the {limit} tokens "
                    "the window leaves",
                    fix="raise llm.n_ctx or shorten llm.system_prompt in settings",
                )
            keep = len(candidate.text) // 2
            shorter = "…" + candidate.text[-keep:] if keep > 20 else ""
            candidate = ev.Summary(text=shorter, covers_until_seq=candidate.covers_until_seq)
        self.timeline.append(candidate)
        log.info("context: turns up to seq %d folded into the summary", candidate.covers_until_seq)
        return candidate

    def _shorten(self, text: str, tokens: int) -> str:
        """The newest part of a summary that fits in about `tokens` tokens."""
        empty = self._count([ChatMessage("system", "")])
        while text and self._count([ChatMessage("system", text)]) - empty > tokens:
            keep = int(len(text) * 0.8)
            text = "…" + text[-keep:] if keep > 20 else ""
        return text


def _user_turn_starts(events: Sequence[ev.Event], begin: int) -> list[int]:
    """Indices (from `begin`) of events that open a user turn."""
    user = (ev.AsrFinal, ev.UserText)
    return [i for i in range(max(begin, 1), len(events))
            if isinstance(events[i], user) and not isinstance(events[i - 1], user)]
