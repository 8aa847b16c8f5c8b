"""Local-intent benchmark (issue #23 item 4): held-out utterances for the built-in tools, typed and spoken, and a
small-talk set answered by the default LLMs. `python -m bench.intents.run --help`."""
