"""Chat templates: the model's own Jinja template from the GGUF metadata, split into per-message pieces.

Incremental context needs each message to render to the same text wherever it sits in the conversation, so
a template is accepted only when rendering message by message gives exactly the whole-conversation render
(checked on a probe conversation). Templates that fail that check fall back to a built-in one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

log = logging.getLogger(__name__)

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Gemma has no system role; its system text goes in a user turn of its own, which keeps pieces independent.
GEMMA_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first %}{{ bos_token }}{% endif %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] + '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)

# A model with no chat template in its file is a base (pretrained) model: it has read text, not turns, and a turn
# marker it never saw makes it babble ("mendatanguser", "</caption>" loops, seen on Gemma 3 270M base). It does
# know a written dialogue, one line per turn: the persona as a preface, then "User:" and "Venus:" lines, and the
# answer ends where its line ends.
TRANSCRIPT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ message['content'] + '\n\n' }}"
    "{% elif message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n' }}"
    "{% elif message['role'] == 'tool' %}{{ message['content'] + '\n' }}"
    "{% else %}{{ 'Venus: ' + message['content'] + '\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Venus:' }}{% endif %}"
)

_SENTINEL = "\u0001venus-content\u0001"
_ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ChatMessage:
    """One message of the rendered conversation."""

    role: str  # "system", "user", "assistant", or "tool": data from a tool, a file or the camera (never orders)
    content: str  # the text the model reads (for assistant turns: what was said or heard)
    control: str = ""  # assistant only: the control-decision line that opened the turn

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"ChatMessage.role must be one of {_ROLES}, got {self.role!r}")

    def full_content(self) -> str:
        """The content as an in-process model sees it: the control line, then the answer."""
        return f"{self.control}\n{self.content}" if self.control else self.content


@dataclass(frozen=True)
class MessagePiece:
    """How one message renders: fixed template text around the message's own content."""

    head: str
    content: str
    tail: str

    @property
    def text(self) -> str:
        """The whole piece."""
        return self.head + self.content + self.tail


class ChatTemplate:
    """A chat template that renders a conversation as independent per-message pieces."""

    def __init__(self, source: str, *, name: str, bos_token: str = "", eos_token: str = "",
                 stops: tuple[str, ...] = ()) -> None:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self.name = name
        self.source = source
        self.stops = stops  # text that ends an answer besides the model's end-of-turn token (a transcript's newline)
        self._template = env.from_string(source)
        self._bos_token = bos_token
        self._eos_token = eos_token
        self._heads: dict[str, tuple[str, str]] = {}
        self._spaced: dict[str, bool] = {}
        for role in _ROLES:
            head, tail = self._split_data() if role == "tool" else self._split(role)
            # "User: " + "Hi" tokenizes as a lone space before "Hi", which text models rarely see; the space goes
            # with the content instead (" Hi" is one token), and an open answer starts right after "Venus:"
            self._heads[role] = (head[:-1], tail) if head.endswith(" ") else (head, tail)
            self._spaced[role] = head.endswith(" ")
        self.generation_prompt = self._render([_msg("system", "S")], True)[len(self._render([_msg("system", "S")], False)):]
        self._verify()

    @classmethod
    def for_model(cls, metadata: dict[str, str], *, bos_token: str = "", eos_token: str = "") -> ChatTemplate:
        """The model's own template if it renders piecewise, else a built-in one that suits the architecture; a
        model without a template (a base model) gets a written dialogue whose answers end at the line's end."""
        source = metadata.get("tokenizer.chat_template", "")
        if not source:
            return cls(TRANSCRIPT_TEMPLATE, name="transcript", bos_token=bos_token, eos_token=eos_token,
                       stops=("\n",))
        try:
            return cls(source, name="gguf", bos_token=bos_token, eos_token=eos_token)
        except (TemplateError, ValueError, TypeError) as exc:
            log.warning("the model's chat template cannot render incrementally (%s); using a built-in one", exc)
        if metadata.get("general.architecture", "").startswith("gemma"):
            return cls(GEMMA_TEMPLATE, name="gemma", bos_token=bos_token, eos_token=eos_token)
        return cls(CHATML_TEMPLATE, name="chatml", bos_token=bos_token, eos_token=eos_token)

    def piece(self, message: ChatMessage) -> MessagePiece:
        """The rendered piece of one message (its content includes the control line, if any)."""
        head, tail = self._heads[message.role]
        content = message.full_content()
        if self._spaced[message.role] and content:
            content = " " + content.lstrip()  # an answer written after "Venus:" brings its own space
        return MessagePiece(head, content, tail)

    def render(self, messages: list[ChatMessage], add_generation_prompt: bool = False) -> str:
        """The whole conversation as one string, exactly the concatenation of its pieces."""
        text = "".join(self.piece(m).text for m in messages)
        return text + self.generation_prompt if add_generation_prompt else text

    # ---- internals -------------------------------------------------------------------------------------

    def _render(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        return self._template.render(
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            bos_token=self._bos_token,
            eos_token=self._eos_token,
        )

    def _split(self, role: str) -> tuple[str, str]:
        if role == "system":
            before, text = "", self._render([_msg("system", _SENTINEL)], False)
        else:
            before = self._render([_msg("system", "S")], False)
            text = self._render([_msg("system", "S"), _msg(role, _SENTINEL)], False)
            if not text.startswith(before):
                raise ValueError(f"adding a {role} message changes the text before it")
            text = text[len(before):]
        if text.count(_SENTINEL) != 1:
            raise ValueError(f"the {role} content does not appear exactly once")
        head, tail = text.split(_SENTINEL)
        return head, tail

    def _split_data(self) -> tuple[str, str]:
        # Data goes where the model's own template puts tool output, when it has such a place and it renders
        # piecewise; otherwise in a user turn of its own. Never in the system turn: that one is Venus's alone.
        if "tool" in self.source:
            try:
                return self._split("tool")
            except (TemplateError, ValueError, TypeError) as exc:
                log.info("the %s template's tool turn does not render piecewise (%s); data goes in a user turn",
                         self.name, exc)
        return self._split("user")

    def _verify(self) -> None:
        probe = [
            ChatMessage("system", "Be brief."),
            ChatMessage("user", "Hi there."),
            ChatMessage("assistant", "Hello!"),
            ChatMessage("user", "What time is it?"),
            ChatMessage("assistant", "Noon."),
        ]
        whole = self._render([_msg(m.role, m.content) for m in probe], True)
        if whole != self.render(probe, add_generation_prompt=True):
            raise ValueError("rendering message by message differs from rendering the whole conversation")


def _msg(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def _raise_exception(message: str) -> None:
    raise TemplateError(message)
