# Venus: `make run` sets everything up and starts Venus; `make test` sets up and runs the tests.
.PHONY: setup run test bench soak lint clean installer installer-test
# setup also installs the torch LLM backend's extra [torch] (its tests need it); TORCH=0 skips it (README)
TORCH ?= 1

setup:
	bash scripts/setup.sh
	[ "$(TORCH)" = 0 ] || .venv/bin/python -c "import torch, gguf" 2>/dev/null || .venv/bin/python -m pip install -q -e ".[torch]"

run: setup
	bash scripts/run.sh

test: setup
	bash scripts/run-tests.sh -q

bench: setup
	. scripts/test-services.sh; .venv/bin/python -m bench
	.venv/bin/python -m bench.intents.run --split test --spoken --smalltalk
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
