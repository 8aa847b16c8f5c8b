"""The conversation store on a real SQLite file: every event kind round-trips, conversations list and reopen."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from engine.errors import ConversationNotFound, StorageError
from engine.timeline import (
    EVENT_TYPES,
    Action,
    AsrFinal,
    AsrPartial,
    AssistantToken,
    AssistantTurnEnd,
    ConfirmationAnswered,
    ConfirmationRequested,
    ControlDecision,
    DelegationCancelled,
    DelegationDispatched,
    DelegationFailed,
    DelegationProgress,
    DelegationResult,
    Interruption,
    OverlapDecision,
    OverlapKind,
    ReminderFired,
    RuntimeState,
    RuntimeStateName,
    SpeechSpan,
    StoreOptions,
    Summary,
    SystemNotice,
    UserSpeechEnd,
    UserSpeechStart,
    UserText,
    VideoObservation,
    Word,
    WriterOptions,
    open_store,
)


def one_of_each_kind() -> list:
    """One event of every kind, every field set away from its default."""
    events = [
        UserSpeechStart(t_ms=10, start_ms=4, overlapping_assistant=True),
        UserSpeechEnd(t_ms=900, start_ms=4, end_ms=880),
        AsrPartial(t_ms=500, text="what is the", segment_start_ms=4),
        AsrFinal(
            t_ms=950,
            text="what is the weather",
            words=(
                Word(text="what", start_ms=4, end_ms=200, probability=0.93),
                Word(text="is", start_ms=210, end_ms=300),
            ),
            segment_start_ms=4,
            segment_end_ms=880,
            language="de",
            speaker_similarity=0.81,
        ),
        UserText(t_ms=1000, text='naïve café — ☕ and "quotes"\nsecond line'),
        VideoObservation(
            t_ms=1010,
            person_present=True,
            facing_screen=False,
            text_seen="EXIT",
            description="a door",
            frame_ref="f1",
        ),
        ControlDecision(
            t_ms=1100,
            turn_id="t1",
            action=Action.DELEGATE,
            tool="weather",
            arguments={"city": "Oslo", "days": [1, 2], "nested": {"unit": "C"}},
            error="",
        ),
        AssistantToken(t_ms=1150, turn_id="t1", text=" Sure", index=3),
        AssistantTurnEnd(
            t_ms=1300,
            turn_id="t1",
            text="Sure, one moment.",
            heard_text="Sure,",
            interrupted=True,
            reason="interrupted",
        ),
        SpeechSpan(
            t_ms=1310,
            turn_id="t1",
            planned_text="Sure, one moment.",
            start_sample=100,
            end_sample=22050,
            sample_rate=22050,
            heard_words=("Sure",),
            truncated=True,
        ),
        RuntimeState(t_ms=1320, state=RuntimeStateName.YIELDING, previous=RuntimeStateName.SPEAKING),
        OverlapDecision(
            t_ms=1330,
            verdict=OverlapKind.BACKCHANNEL,
            reason="short 'mhm'",
            scores={"vad": 0.9, "echo": 0.1},
            latency_ms=180,
        ),
        Interruption(
            t_ms=1340, turn_id="t1", heard_text="Sure,", unheard_text=" one moment.", reason="user spoke"
        ),
        DelegationDispatched(
            t_ms=1400, task_id="k1", tool="weather", arguments={"city": "Oslo"}, turn_id="t1"
        ),
        DelegationProgress(t_ms=1500, task_id="k1", percent=42.5, status="fetching", state="queued"),
        ConfirmationRequested(
            t_ms=1600,
            task_id="k1",
            tool="send_mail",
            arguments={"to": "a@b.c"},
            prompt="Send it?",
            timeout_s=30.0,
        ),
        ConfirmationAnswered(t_ms=1700, task_id="k1", approved=True, source="voice"),
        DelegationResult(
            t_ms=1800,
            task_id="k1",
            tool="weather",
            summary="4 °C",
            result={"temp": 4, "list": [1, "a", None]},
            urgent=True,
        ),
        DelegationFailed(t_ms=1900, task_id="k2", tool="web", error="timed out", code="timeout"),
        DelegationCancelled(t_ms=2000, task_id="k3", tool="web", reason="user said stop"),
        ReminderFired(t_ms=2100, reminder_id="r1", text="tea is ready"),
        SystemNotice(t_ms=2200, level="error", code="audio-device-lost", text="the microphone went away"),
        Summary(t_ms=2300, text="They talked about the weather.", covers_until_seq=7),
    ]
    assert {type(e) for e in events} == set(EVENT_TYPES.values()), "add the new event kind to this test"
    return events


def test_every_event_kind_round_trips_through_the_database(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        timeline = store.new_conversation("round trip")
        appended = [timeline.append(event) for event in one_of_each_kind()]
        conversation_id = timeline.conversation_id

    with open_store(db) as store:
        reloaded = store.open_conversation(conversation_id).events()

    assert reloaded == appended
    assert [type(e) for e in reloaded] == [type(e) for e in appended]
    by_kind = {type(e): e for e in reloaded}
    # enums come back as enums, tuples as tuples, words as Word objects
    assert by_kind[ControlDecision].action is Action.DELEGATE
    assert by_kind[RuntimeState].previous is RuntimeStateName.SPEAKING
    assert by_kind[OverlapDecision].verdict is OverlapKind.BACKCHANNEL
    assert by_kind[AsrFinal].words[0] == Word(text="what", start_ms=4, end_ms=200, probability=0.93)
    assert by_kind[SpeechSpan].heard_words == ("Sure",)


def test_conversations_list_and_reopen_with_clock_and_numbering_continuing(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        first = store.new_conversation("first")
        for i in range(3):
            first.append(UserText(text=f"one {i}"))
        store.flush()
        second = store.new_conversation("second")
        second.append(UserText(t_ms=5000, text="late"))
        store.flush()
        empty = store.new_conversation()
        listed = store.list_conversations()
    assert [(c.title, c.event_count) for c in listed] == [("", 0), ("second", 1), ("first", 3)]
    assert {c.id for c in listed} == {first.conversation_id, second.conversation_id, empty.conversation_id}
    assert all(c.created <= c.updated and c.created.tzinfo is not None for c in listed)

    with open_store(db) as store:
        again = store.open_conversation(second.conversation_id)
        assert [e.text for e in again.events()] == ["late"]
        assert again.now_ms() > 5000  # the clock continues after the last stored event
        added = again.append(UserText(text="after reopening"))
        assert added.seq == 1 and added.t_ms > 5000
        assert store.open_conversation(second.conversation_id) is again  # one live timeline per conversation
        store.set_title(second.conversation_id, "renamed")

    with open_store(db) as store:
        texts = [e.text for e in store.open_conversation(second.conversation_id).events()]
        titles = {c.id: (c.title, c.event_count) for c in store.list_conversations()}
    assert texts == ["late", "after reopening"]
    assert titles[second.conversation_id] == ("renamed", 2)


def test_a_start_reuses_the_newest_conversation_while_nothing_was_said_in_it(tmp_path):
    # Found trying the app: every start opened a conversation of its own, and the list filled with empty chats
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        first = store.new_or_unused()  # an empty file: a new conversation
        first.append(RuntimeState(state=RuntimeStateName.LISTENING))
        first.append(SystemNotice(level="warning", code="no-mic", text="No microphone: type to Venus"))
        first_id = first.conversation_id
    with open_store(db) as store:
        again = store.new_or_unused()  # only a state and a notice in it: the same one, its events kept
        assert again.conversation_id == first_id and len(again.events()) == 2
        again.append(UserText(text="Hi"))
    with open_store(db) as store:
        third = store.new_or_unused()  # words were said in it: a new one
        assert third.conversation_id != first_id
        store.set_title(third.conversation_id, "Plans")
    with open_store(db) as store:
        fourth = store.new_or_unused()  # named by the user: kept as it is, a new one
        assert fourth.conversation_id not in (first_id, third.conversation_id)
        assert store.new_or_unused() is not fourth  # one open here already (live): a new one, not the same twice
        assert len(store.list_conversations()) == 4


def test_unknown_conversation_and_closed_store_give_clear_errors(tmp_path):
    store = open_store(tmp_path / "venus.db")
    with pytest.raises(ConversationNotFound, match="nope"):
        store.open_conversation("nope")
    with pytest.raises(ConversationNotFound):
        store.set_title("nope", "x")
    store.close()
    with pytest.raises(StorageError, match="closed"):
        store.new_conversation()


def test_events_reach_the_file_without_close_or_flush(tmp_path):
    db = tmp_path / "venus.db"
    store = open_store(db)
    try:
        timeline = store.new_conversation()
        timeline.append(UserText(text="soon on disk"))
        reader = sqlite3.connect(db)
        deadline = time.monotonic() + 5.0
        rows = []
        while not rows and time.monotonic() < deadline:  # the writer thread flushes on its own
            rows = reader.execute("SELECT kind, payload FROM events").fetchall()
            time.sleep(0.01)
        reader.close()
        assert rows == [("user_text", '{"text": "soon on disk"}')]
    finally:
        store.close()


def test_close_writes_everything_appended_from_several_threads(tmp_path):
    db = tmp_path / "venus.db"
    store = open_store(db, StoreOptions(writer=WriterOptions(flush_interval_ms=250, max_batch=64)))
    timeline = store.new_conversation()

    def producer(name: str) -> None:
        for i in range(500):
            timeline.append(AssistantToken(turn_id=name, text=f"{name}{i}", index=i))

    threads = [threading.Thread(target=producer, args=(f"p{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()

    reader = sqlite3.connect(db)
    seqs = [r[0] for r in reader.execute("SELECT seq FROM events ORDER BY seq")]
    texts = {r[0] for r in reader.execute("SELECT json_extract(payload, '$.text') FROM events")}
    reader.close()
    assert seqs == list(range(2000))
    assert texts == {f"p{n}{i}" for n in range(4) for i in range(500)}


def test_values_json_cannot_express_are_kept_as_text_without_losing_the_batch(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        timeline = store.new_conversation()
        timeline.append(UserText(text="before"))
        timeline.append(DelegationResult(task_id="k", result={"blob": b"\x00\x01"}))
        timeline.append(UserText(text="after"))
        conversation_id = timeline.conversation_id
    with open_store(db) as store:
        events = store.open_conversation(conversation_id).events()
    assert [e.kind for e in events] == ["user_text", "delegation_result", "user_text"]
    assert events[1].result == {"blob": "b'\\x00\\x01'"}


def test_events_from_a_newer_version_keep_their_place(tmp_path):
    db = tmp_path / "venus.db"
    with open_store(db) as store:
        timeline = store.new_conversation()
        timeline.append(UserText(text="zero"))
        conversation_id = timeline.conversation_id
    raw = sqlite3.connect(db)
    with raw:  # a later Venus wrote a kind this one does not know, and seq 2 is missing
        raw.execute(
            "INSERT INTO events (conversation_id, seq, t_ms, kind, payload) VALUES (?, 1, 50, 'hologram', '{}')",
            (conversation_id,),
        )
        raw.execute(
            "INSERT INTO events (conversation_id, seq, t_ms, kind, payload) VALUES (?, 3, 60, 'user_text', ?)",
            (conversation_id, '{"text": "three", "from_the_future": 1}'),
        )
    raw.close()
    with open_store(db) as store:
        timeline = store.open_conversation(conversation_id)
        events = timeline.events()
        assert [e.seq for e in events] == [0, 1, 2, 3]
        assert isinstance(events[1], SystemNotice) and "hologram" in events[1].text
        assert isinstance(events[2], SystemNotice) and "missing" in events[2].text
        assert events[3] == UserText(seq=3, t_ms=60, text="three")
        assert timeline.append(UserText(text="four")).seq == 4


def test_writer_options_are_validated_up_front():
    with pytest.raises(ValueError, match="flush_interval_ms"):
        WriterOptions(flush_interval_ms=400)
    with pytest.raises(ValueError, match="max_batch"):
        WriterOptions(max_batch=0)
    with pytest.raises(ValueError, match="writer"):
        StoreOptions(writer=100)  # type: ignore[arg-type]
