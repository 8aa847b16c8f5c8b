"""LLM decode and context: loop speed against llama-cpp-python, append cost vs history, roll-back, first token.

Run: .venv/bin/python -m bench.bench_llm   Everything is measured side by side in this one run (A B A B
alternation) with the default model at one thread; on a shared machine read the ratios, not the times.
"""

from __future__ import annotations

import statistics
import sys
import time

import llama_cpp
import psutil
from llama_cpp import Llama

from engine.llm import ChatMessage, Conversation, ConversationOptions, GenerateRequest, RenderOptions
from engine.llm.llama_backend import LlamaBackend, LlamaOptions
from engine.models.registry import resolve
from engine.timeline import Timeline
from engine.timeline import events as ev

THREADS = 1
ROUNDS = 6
GEN_TOKENS = 64
SAMPLING = {"temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05}


def bench_decode_speed(path: str) -> float:
    """Tokens/s of the Venus loop vs Llama.create_completion(stream=True): same model, prompt, sampling."""
    venus = LlamaBackend(LlamaOptions(model_path=path, n_ctx=2048, n_batch=256, n_threads=THREADS))
    reference = Llama(path, n_ctx=2048, n_batch=256, n_ubatch=256, n_threads=THREADS, n_threads_batch=THREADS,
                      verbose=False, seed=1234)
    messages = [ChatMessage("system", "You are a storyteller."),
                ChatMessage("user", "Tell me a very long story about a fox and a crow, with many details.")]
    prompt_tokens = venus.context_tokens(messages + [ChatMessage("assistant", "")], open_last=True)
    prompt_text = venus.detokenize(prompt_tokens)
    rates: dict[str, list[float]] = {"venus": [], "llama-cpp-python": []}
    for round_no in range(ROUNDS + 1):  # round 0 warms both up and is not counted
        seed = 1000 + round_no
        venus.sync_tokens(prompt_tokens)
        started = time.perf_counter()
        stream = venus.generate_from_tokens(prompt_tokens, GenerateRequest(max_tokens=GEN_TOKENS, seed=seed, **SAMPLING))
        stream.text()
        venus_s = time.perf_counter() - started
        venus_n = len(stream.finish.tokens)

        reference.create_completion(prompt_text, max_tokens=1, temperature=0.0)  # prompt in its cache too
        started = time.perf_counter()
        text, reason = "", ""
        for chunk in reference.create_completion(
            prompt_text, max_tokens=GEN_TOKENS, stream=True, seed=seed, repeat_penalty=1.0,
            temperature=SAMPLING["temperature"], top_p=SAMPLING["top_p"], top_k=SAMPLING["top_k"],
            min_p=SAMPLING["min_p"],
        ):
            text += chunk["choices"][0]["text"]
            reason = chunk["choices"][0]["finish_reason"] or reason
        ref_s = time.perf_counter() - started
        ref_n = GEN_TOKENS if reason == "length" else len(reference.tokenize(text.encode(), add_bos=False, special=False))
        if round_no:
            rates["venus"].append(venus_n / venus_s)
            rates["llama-cpp-python"].append(ref_n / ref_s)
    venus.close()
    reference.close()
    ours, theirs = statistics.median(rates["venus"]), statistics.median(rates["llama-cpp-python"])
    print(f"decode, Venus loop:              {ours:7.1f} tok/s  (runs: {', '.join(f'{r:.1f}' for r in rates['venus'])})")
    print(f"decode, create_completion stream: {theirs:6.1f} tok/s  "
          f"(runs: {', '.join(f'{r:.1f}' for r in rates['llama-cpp-python'])})")
    ratio = ours / theirs
    print(f"decode speed ratio Venus / llama-cpp-python: {ratio:.3f}  (target >= 0.95)")
    return ratio


def _history(turns: int) -> list[ChatMessage]:
    messages = [ChatMessage("system", "You are Venus, a friendly voice assistant. Answer briefly.")]
    for i in range(turns):
        messages.append(ChatMessage("user", f"Question {i}: what is a good name for pet number {i}?"))
        messages.append(ChatMessage("assistant", f"How about Biscuit {i}? It is short and friendly.",
                                    control='{"action": "respond"}'))
    return messages


def _macs_per_token(backend: LlamaBackend) -> tuple[float, float]:
    """Multiply-adds per evaluated token: in the weight matrices, and in attention per cached token (QK and AV)."""
    meta = backend.metadata
    arch = meta["general.architecture"]
    layers, heads = int(meta[f"{arch}.block_count"]), int(meta[f"{arch}.attention.head_count"])
    head_dim = int(meta.get(f"{arch}.attention.key_length", int(meta[f"{arch}.embedding_length"]) // heads))
    model = backend._model.model
    embeddings = backend.n_vocab * llama_cpp.llama_model_n_embd(model)  # a lookup, not a matmul (output: last token)
    return float(llama_cpp.llama_model_n_params(model) - embeddings), float(2 * layers * heads * head_dim)


def bench_append_cost(path: str) -> float:
    """Cost of appending one 20-token user turn after 2 vs after 60 earlier turns (incremental cache)."""
    short = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
    long = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
    histories = {"2 turns": (short, _history(2)), "60 turns": (long, _history(60))}
    new_turn = ChatMessage("user", "Could you also suggest three names for a small grey kitten please?")
    for backend, history in histories.values():
        backend.sync(history)
    added = len(short.context_tokens([*histories["2 turns"][1], new_turn])) - len(short.context_tokens(histories["2 turns"][1]))
    costs: dict[str, list[float]] = {name: [] for name in histories}
    decode: dict[str, list[float]] = {name: [] for name in histories}
    for _ in range(9):
        for name, (backend, history) in histories.items():
            backend.sync(history, evaluate=False)  # drop the previous appended turn
            started = time.perf_counter()
            stats = backend.sync([*history, new_turn])
            costs[name].append(time.perf_counter() - started)
            decode[name].append(stats.decode_s)
            assert stats.evaluated <= added + 1, stats
    sizes = {name: len(b.cached_tokens) for name, (b, _h) in histories.items()}
    weights, attention = _macs_per_token(short)
    long_tokens = long.cached_tokens
    scratch = []
    for _ in range(1):  # what every append would cost without the incremental cache
        long.sync_tokens([], evaluate=False)
        started = time.perf_counter()
        long.sync_tokens(long_tokens)
        scratch.append(time.perf_counter() - started)
    short.close()
    long.close()
    a, b = statistics.median(costs["2 turns"]), statistics.median(costs["60 turns"])
    da, db = statistics.median(decode["2 turns"]), statistics.median(decode["60 turns"])
    print(f"append a {added}-token user turn after 2 turns  ({sizes['2 turns']:4d} tokens cached): {a * 1000:6.1f} ms "
          f"(llama_decode alone {da * 1000:6.1f} ms)")
    print(f"append a {added}-token user turn after 60 turns ({sizes['60 turns']:4d} tokens cached): {b * 1000:6.1f} ms "
          f"(llama_decode alone {db * 1000:6.1f} ms)")
    print(f"append cost ratio 60 turns / 2 turns: {b / a:.3f}  (target <= 1.2); llama_decode alone: {db / da:.3f}; "
          f"rendering, tokenizing and prefix matching: {(a - da) * 1000:.1f} / {(b - db) * 1000:.1f} ms")
    predicted = (weights + attention * (sizes["60 turns"] + added / 2)) / (weights + attention * (sizes["2 turns"] + added / 2))
    print(f"  arithmetic per appended token: {weights / 1e6:.0f}M multiply-adds in the weights + "
          f"{attention / 1e3:.1f}K per cached token in attention, so attention over {sizes['60 turns']} cached tokens "
          f"alone predicts a ratio of {predicted:.2f}; nothing is evaluated again ({added} tokens in both cases)")
    print(f"for scale, evaluating the 60-turn context from scratch: {statistics.median(scratch) * 1000:.0f} ms "
          f"({statistics.median(scratch) / b:.0f}x the incremental append)")
    return b / a


def _scripted_turn(timeline: Timeline, i: int) -> None:
    timeline.append(ev.UserText(text=f"Question {i}: what is a good name for pet number {i}?"))
    timeline.append(ev.ControlDecision(turn_id=f"t{i}", action=ev.Action.RESPOND))
    timeline.append(ev.AssistantTurnEnd(turn_id=f"t{i}", text=f"How about Biscuit {i}? It is short and friendly.",
                                        reason="complete"))


def bench_append_in_conversation(path: str) -> float:
    """The append cost as the runtime pays it: a Conversation that folds old turns after each answer.

    Three conversations side by side: 2 turns; 60 turns with the working window (the default: old turns
    folded into the summary once the cache outgrows it, the recent turns kept in the cache by a splice);
    60 turns with the whole window (working_window=-1). Each appends the same user turn (`prefill`, as the
    partial transcripts do), alternated 9 times, and takes it back.
    """
    render = RenderOptions(system_prompt="You are Venus, a friendly voice assistant. Answer briefly.")
    setups = {"2 turns": (2, 0), "60 turns, working window": (60, 0), "60 turns, whole window": (60, -1)}
    convs: dict[str, Conversation] = {}
    fold_s: list[float] = []
    for name, (turns, window) in setups.items():
        backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
        timeline = Timeline()
        conv = Conversation(timeline, backend, ConversationOptions(render=render, n_ctx=4096, working_window=window))
        conv.sync()
        per_turn = 0
        for i in range(turns):
            before = len(backend.cached_tokens)
            _scripted_turn(timeline, i)
            conv.sync()
            per_turn = max(per_turn, len(backend.cached_tokens) - before)
            started = time.perf_counter()
            if conv.compact() is not None:  # what the turn runner does after each answer
                fold_s.append(time.perf_counter() - started)
        if window == 0 and turns > 2:  # measure where the window is fullest, just before its next fold (the worst case)
            while len(backend.cached_tokens) + per_turn <= conv.window_limit():
                turns += 1
                _scripted_turn(timeline, turns)
                conv.sync()
                assert conv.compact() is None
        convs[name] = conv
    question = "Could you also suggest three names for a small grey kitten please?"
    costs: dict[str, list[float]] = {name: [] for name in convs}
    for _ in range(9):
        for name, conv in convs.items():
            started = time.perf_counter()
            stats = conv.prefill(question)
            costs[name].append(time.perf_counter() - started)
            assert stats.evaluated <= 30, (name, stats)
            conv.sync()  # take the unfinished turn back out of the cache
    windowed = convs["60 turns, working window"]
    limit = windowed.window_limit()
    base = statistics.median(costs["2 turns"])
    for name, conv in convs.items():
        value = statistics.median(costs[name])
        print(f"append the user turn, {name:25s}: {value * 1000:6.1f} ms, {len(conv.backend.cached_tokens):4d} tokens "
              f"cached, ratio to 2 turns {value / base:.3f}")
    ratio = statistics.median(costs["60 turns, working window"]) / base
    print(f"append cost ratio 60 turns / 2 turns with the working window (filled to just before its next fold, "
          f"the worst point of its cycle): {ratio:.3f}  (target <= 1.2); window "
          f"{limit} tokens (system prompt {windowed._prefix_tokens()}), {windowed.folds} folds in 60 turns, "
          f"fold (new summary evaluated, recent turns kept) median {statistics.median(fold_s) * 1000:.0f} ms, "
          f"max {max(fold_s) * 1000:.0f} ms")
    # what the splice gives up: the kept turns keep keys/values computed while the dropped turns preceded them
    scratch_backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
    greedy = GenerateRequest(temperature=0.0, max_tokens=16)
    agree, first_same = [], 0
    probes = ["Could you suggest a name for a kitten?", "What was my first question?", "Thanks, that is all.",
              "Which name did you like best?", "Now a name for a goldfish, please."]
    for probe in probes:
        messages = [*windowed.messages(), ChatMessage("user", probe)]
        ours = windowed.backend.generate(messages, greedy)
        ours.text()
        theirs = scratch_backend.generate(messages, greedy)
        theirs.text()
        a_tokens, b_tokens = ours.finish.tokens, theirs.finish.tokens
        same = next((i for i, (x, y) in enumerate(zip(a_tokens, b_tokens, strict=False)) if x != y),
                    min(len(a_tokens), len(b_tokens)))
        agree.append(same)
        first_same += bool(a_tokens[:1] == b_tokens[:1])
    print(f"  after the folds, greedy answers from the spliced cache vs the same context evaluated from scratch: "
          f"same first token {first_same}/{len(probes)}, identical prefix median {statistics.median(agree)} of 16 "
          f"tokens (the kept turns keep keys/values computed with the dropped turns before them)")
    scratch_backend.close()
    for conv in convs.values():
        conv.backend.close()
    return ratio


def bench_rollback_and_first_token(path: str) -> tuple[float, float]:
    """Interruption roll-back time and time to first token after a user turn ends, on real turns."""
    backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
    timeline = Timeline()
    options = ConversationOptions(
        render=RenderOptions(system_prompt="You are Venus, a friendly voice assistant. Answer briefly."),
        answer=GenerateRequest(max_tokens=32, **SAMPLING), n_ctx=4096,
    )
    conv = Conversation(timeline, backend, options)
    questions = ["What should I cook tonight?", "How do plants drink water?", "Why is the sea salty?",
                 "What is a good morning routine?", "How far away is the sun?", "Tell me about owls.",
                 "What is jazz?"]
    first_token, rollback, backend_rollback = [], [], []
    first_seen: dict[str, float] = {}

    def note_first_token(event: ev.Event) -> None:
        if isinstance(event, ev.AssistantToken) and event.turn_id not in first_seen:
            first_seen[event.turn_id] = time.perf_counter()

    timeline.subscribe(note_first_token)
    for question in questions:
        timeline.append(ev.UserText(text=question))  # the user's turn ends here
        started = time.perf_counter()
        turn = conv.respond(actions=[ev.Action.RESPOND])  # the grammar still runs; the tiny model may go silent
        end = turn.wait(120)
        if turn.turn_id in first_seen:
            first_token.append(first_seen[turn.turn_id] - started)
        words = end.text.split()
        if len(words) >= 2:
            # backend-level roll-back alone: cut the turn, then put it back, a few times
            full = conv.messages()
            cut = [*full[:-1], ChatMessage("assistant", " ".join(words[:-1]) + " [interrupted]", control=full[-1].control)]
            for _ in range(3):
                backend.sync(full)
                t0 = time.perf_counter()
                backend.sync(cut, evaluate=False)
                backend_rollback.append(time.perf_counter() - t0)
            backend.sync(full)
            t0 = time.perf_counter()
            conv.apply_interruption(turn.turn_id, " ".join(words[:-1]))
            rollback.append(time.perf_counter() - t0)
    backend.close()
    ttft = statistics.median(first_token)
    rb = statistics.median(rollback)
    print(f"interruption roll-back, Conversation.apply_interruption: median {rb * 1000:.2f} ms over {len(rollback)} "
          f"turns (target <= 5 ms); KV removal alone: median {statistics.median(backend_rollback) * 1000:.2f} ms")
    print(f"time to first token after the user turn ends (decision + first answer token): "
          f"median {ttft * 1000:.0f} ms over {len(first_token)} turns")
    return rb, ttft


def bench_first_token_paths(path: str) -> dict[str, float]:
    """Time to first token after the user's turn ends, for each way of opening the assistant turn.

    grammar: the decision line generated token by token under the GBNF grammar; grammar+prefix: its fixed
    start evaluated with the prompt; logits: the action read from the logits where the actions part (the
    default); logits+partial: also the user's words evaluated while they were still speaking (the runtime
    prefills each partial transcript). Turn by turn, the variants alternated on the same questions.
    """
    variants = {
        "grammar": dict(choose_decision=False, prefill_decision=False),
        "grammar+prefix": dict(choose_decision=False, prefill_decision=True),
        "logits": dict(choose_decision=True),
        "logits+partial": dict(choose_decision=True),
    }
    runs: dict[str, tuple[Timeline, Conversation]] = {}
    for name, flags in variants.items():
        timeline = Timeline()
        options = ConversationOptions(
            render=RenderOptions(system_prompt="You are Venus, a friendly voice assistant. Answer briefly."),
            answer=GenerateRequest(max_tokens=8, **SAMPLING), n_ctx=4096, **flags,
        )
        backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
        runs[name] = (timeline, Conversation(timeline, backend, options))
        runs[name][1].sync()  # the system prompt is evaluated at start-up, as the runtime does
    questions = ["Where do bees sleep?", "What is a good book for a train ride?", "Why do cats purr?",
                 "How do I fix a squeaky door?", "What is the tallest tree?", "Can you recommend a film?",
                 "How do clouds form?", "What is a haiku?"]
    first_token: dict[str, list[float]] = {name: [] for name in variants}
    first_seen: dict[str, float] = {}

    def note_first_token(event: ev.Event) -> None:
        if isinstance(event, ev.AssistantToken) and event.turn_id not in first_seen:
            first_seen[event.turn_id] = time.perf_counter()

    for timeline, _conv in runs.values():
        timeline.subscribe(note_first_token)
    for question in questions:
        for name, (timeline, conv) in runs.items():  # alternated, so all see the same machine load
            if name.endswith("+partial"):
                conv.prefill(question)  # what the partial transcripts put in the cache during the speech
            timeline.append(ev.UserText(text=question))
            started = time.perf_counter()
            turn = conv.respond(actions=[ev.Action.RESPOND, ev.Action.SILENT])
            turn.wait(120)
            if turn.turn_id in first_seen:
                first_token[name].append(first_seen[turn.turn_id] - started)
    for _timeline, conv in runs.values():
        conv.backend.close()
    return _report_medians(first_token, "grammar", "time to first token, decision by")


def _report_medians(samples: dict[str, list[float]], base_name: str, label: str) -> dict[str, float]:
    """Print each variant's median and its ratio to `base_name`'s; return the medians."""
    medians = {name: statistics.median(values) for name, values in samples.items() if values}
    base = medians[base_name]
    for name, value in medians.items():
        print(f"{label} {name:18s}: median {value * 1000:4.0f} ms  (ratio to {base_name}: {value / base:.2f}, "
              f"{len(samples[name])} turns)")
    return medians


def bench_answer_start(path: str) -> dict[str, float]:
    """Time from the end of the user's turn to Venus's first clause (what the voice waits for), four ways.

    first clause 5 words or 3 (ChunkerOptions.first_max_words), and the decision plus the first words on one
    thread or on every core (what the runtime lends the LLM until the voice takes the first clause; the rest
    of the answer goes back to one thread). Same questions, the variants alternated turn by turn.
    """
    import psutil

    from engine.llm.chunker import ChunkerOptions

    cores = psutil.cpu_count(logical=False) or 1
    variants = {"5 words, 1 thread": (5, 1), "3 words, 1 thread": (3, 1), f"5 words, {cores} threads": (5, cores),
                f"3 words, {cores} threads": (3, cores)}
    backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=4096, n_batch=256, n_threads=THREADS))
    runs = {}
    for name, (words, _threads) in variants.items():
        timeline = Timeline()
        options = ConversationOptions(
            render=RenderOptions(system_prompt="You are Venus, a friendly voice assistant. Answer briefly."),
            answer=GenerateRequest(max_tokens=24, temperature=0.0), n_ctx=4096,
            chunker=ChunkerOptions(first_max_words=words))
        runs[name] = (timeline, Conversation(timeline, backend, options))
    questions = ["Where do bees sleep?", "What is a good book for a train ride?", "Why do cats purr?",
                 "How do I fix a squeaky door?", "What is the tallest tree?", "Can you recommend a film?",
                 "How do clouds form?", "What is a haiku?", "Who wrote Hamlet?", "How far is the moon?"]
    waits: dict[str, list[float]] = {name: [] for name in variants}
    for question in questions:
        for name, (timeline, conv) in runs.items():
            threads = variants[name][1]
            timeline.append(ev.UserText(text=question))
            conv.sync()  # one shared backend: each context, with the user's words, is in the cache before the clock
            backend.use_threads(threads if threads > 1 else None)
            started = time.perf_counter()
            turn = conv.respond(actions=[ev.Action.RESPOND])
            first = next(iter(turn.chunks()), None)
            waited = time.perf_counter() - started
            backend.use_threads(None)  # the voice takes its core
            turn.wait(120)
            if first:
                waits[name].append(waited)
    backend.close()
    return _report_medians(waits, "5 words, 1 thread", "end of the user's turn -> first clause,")


def bench_words_read(path: str) -> dict[str, float]:
    """The addressee probe's read of words over Venus's voice (engine.runtime.addressee_probe): its cost beside the
    end-of-turn probe's read of the same words, and how long it waits while her answer is still being decoded:
    with the decode held for the overlap (what the runtime does; the read runs between two decode steps) against
    decoding on (the read waits for the answer to end: how every read waited before it became a side job)."""
    from engine.runtime.addressee_probe import FRAME
    from engine.runtime.turn_probe import probe_groups

    backend = LlamaBackend(LlamaOptions(model_path=path, n_ctx=2048, n_batch=256, n_threads=THREADS))
    try:
        system = Conversation(Timeline(), backend, ConversationOptions()).messages()
        history = [*system, ChatMessage("user", "How do bees make honey?"),
                   ChatMessage("assistant", "Bees gather nectar from flowers and carry it back to the hive, where")]
        said = ["Could you say that part again?", "Is the kettle still on?", "Why do they need so much of it?",
                "I'll be there in a minute, okay?", "What do they eat in the winter?"]
        groups = probe_groups(backend)
        backend.sync(history)
        cores = psutil.cpu_count(logical=False) or 1
        samples: dict[str, list[float]] = {"end-of-turn read": [], "addressee read": [],
                                           f"addressee, {cores} cores": []}
        for _ in range(ROUNDS):
            for words in said:
                for name in samples:
                    backend.sync(history)  # each starts from the conversation in the cache, as in the runtime
                    # the runtime lends the read every core (whisper is idle at an overlap's final)
                    backend.use_threads(cores if "cores" in name else None)
                    started = time.perf_counter()
                    if name.startswith("addressee"):
                        backend.words_logprob(history, words, FRAME)
                    else:
                        backend.next_token_logprobs(history, words, groups)
                    samples[name].append(time.perf_counter() - started)
                    backend.use_threads(None)
        medians = _report_medians(samples, "end-of-turn read", "words read")
        story = [*system, ChatMessage("user", "Tell me a long story about a lighthouse keeper.")]
        waits: dict[str, list[float]] = {"answer held": [], "answer decoding": []}
        for _ in range(3):
            for name in waits:
                stream = backend.generate(story, GenerateRequest(max_tokens=GEN_TOKENS, temperature=0.0))
                pieces = iter(stream)
                next(pieces)  # the answer is under way
                if name == "answer held":
                    stream.hold()
                started = time.perf_counter()
                backend.words_logprob(story, said[1], FRAME)
                waits[name].append(time.perf_counter() - started)
                stream.release()
                stream.text()
        medians |= _report_medians(waits, "answer held", "read during an answer")
        return medians
    finally:
        backend.close()


def bench_torch_backend(path: str) -> dict[str, float]:
    """The torch backend beside LlamaBackend, through the same interface, A B alternating: decode tokens/s, time
    to the first token after a 20-token user message is appended to a cached conversation, roll-back time."""
    from engine.llm.torch import TorchBackend, TorchOptions

    backends = {"llama.cpp": LlamaBackend(LlamaOptions(model_path=path, n_ctx=2048, n_batch=256, n_threads=THREADS)),
                "torch": TorchBackend(TorchOptions(model_path=path, n_ctx=2048, n_batch=256, n_threads=THREADS,
                                                   device="cpu")),
                # the layout a CUDA device gets (int8 per output row), here on the CPU
                "torch int8": TorchBackend(TorchOptions(model_path=path, n_ctx=2048, n_batch=256, n_threads=THREADS,
                                                        device="cpu", weights="int8"))}
    history = _history(4)
    request = GenerateRequest(max_tokens=GEN_TOKENS, seed=7, **SAMPLING)
    samples: dict[str, dict[str, list[float]]] = {n: {"tok/s": [], "ttft ms": [], "rollback ms": []} for n in backends}
    for round_no in range(ROUNDS + 1):
        for name, backend in backends.items():
            question = [*history, ChatMessage("user", f"Round {round_no}: what should I pack for a walk in the hills?")]
            backend.sync(history)
            appended = backend.token_count(question) - backend.token_count(history)
            started = time.perf_counter()
            stream = backend.generate(question, request)
            first = None
            for _piece in stream:
                first = first or time.perf_counter()
            done = time.perf_counter()
            n = len(stream.finish.tokens)
            keep = backend.token_count(history)
            rolled = time.perf_counter()
            backend.sync_tokens(backend.cached_tokens[:keep], evaluate=False)
            rollback_s = time.perf_counter() - rolled
            if round_no and first is not None and n > 1:
                samples[name]["tok/s"].append((n - 1) / (done - first))
                samples[name]["ttft ms"].append((first - started) * 1000)
                samples[name]["rollback ms"].append(rollback_s * 1000)
    for backend in backends.values():
        backend.close()
    medians = {f"{name} {k}": statistics.median(v) for name, d in samples.items() for k, v in d.items()}
    print(f"torch vs llama.cpp on {path.rsplit('/', 1)[-1]}, CPU, {THREADS} thread, append of ~{appended} tokens:")
    for key in ("tok/s", "ttft ms", "rollback ms"):
        llama_v = medians[f"llama.cpp {key}"]
        row = "   ".join(f"{name} {medians[f'{name} {key}']:8.3f} ({medians[f'{name} {key}'] / llama_v:4.2f}x)"
                         for name in ("torch", "torch int8"))
        print(f"  {key:12s} llama.cpp {llama_v:8.3f}   {row}")
    return medians


def bench_torch(path: str) -> None:
    """The torch section on both shipped models (skipped without the `torch` extra)."""
    try:
        import gguf  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        print("torch backend: not installed (pip install -e '.[torch]'), skipped")
        return
    bench_torch_backend(path)
    gemma = resolve("gemma3-270m-q4_k_m", kind="llm", check=False)
    if gemma.exists():
        bench_torch_backend(str(gemma))


def main() -> int:
    path = str(resolve("smollm2-135m-instruct-q4_1", kind="llm"))
    print(f"model: {path}, threads: {THREADS}")
    if sys.argv[1:] == ["torch"]:  # python -m bench.bench_llm torch: only the torch backend's section
        bench_torch(path)
        return 0
    bench_decode_speed(path)
    bench_append_cost(path)
    bench_append_in_conversation(path)
    # The same measurement on the second shipped model: Gemma 3's sliding-window layers attend to at most 512
    # keys, so only its few global layers grow with the history.
    gemma = resolve("gemma3-270m-q4_k_m", kind="llm", check=False)
    if gemma.exists():
        print(f"append cost on {gemma.name}:")
        bench_append_cost(str(gemma))
    bench_rollback_and_first_token(path)
    bench_first_token_paths(path)
    bench_answer_start(path)
    bench_words_read(path)
    bench_torch(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
