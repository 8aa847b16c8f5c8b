# Venus: `make run` sets everything up and starts Venus; `make test` sets up and runs the tests.
.PHONY: setup torch run test bench soak lint clean installer installer-test
# The torch LLM backend's extra [torch] (about 1 GB): `make test` and `make bench` install it (its tests and bench
# need it; TORCH=0 skips it), `make run` only with TORCH=1, so the default install stays small (README)
TORCH ?=

setup:
	bash scripts/setup.sh

torch: setup
	[ "$(TORCH)" = 0 ] || .venv/bin/python -c "import torch, gguf" 2>/dev/null || .venv/bin/python -m pip install -q -e ".[torch]"

run: setup
	[ "$(TORCH)" != 1 ] || $(MAKE) torch
	bash scripts/run.sh

test: torch
	bash scripts/run-tests.sh -q

bench: torch
	. scripts/test-services.sh; .venv/bin/python -m bench
	.venv/bin/python -m bench.intents.run --split test --spoken --smalltalk
	.venv/bin/python -m bench.intents.run --split test --spoken --voice piper
	.venv/bin/python -m bench.intents.questions

soak: setup
	.venv/bin/python -m bench.soak.run --minutes 30

installer: setup  # dist/venus_*.deb and the AppImage (docs/INSTALLERS.md)
	bash installers/linux/build.sh

installer-test: installer  # as root: the .deb and the AppImage in a fresh Debian 12 root (debootstrap)
	bash installers/linux/test.sh

lint: setup
	.venv/bin/ruff check app engine harness tests bench

clean:
	rm -rf .venv build *.egg-info .pytest_cache .ruff_cache
