# Set-up and everyday commands. `make demo` runs the main job; `make test` runs every test.
SWIFT ?= swift

.PHONY: setup build demo test
setup:
	./scripts/setup.sh

build: setup
	$(SWIFT) build

demo: setup
	./scripts/demo.sh

# The test command (README and .ci/run use exactly this): builds the executables first, since
# integration tests start the real userlistd and userctl binaries.
test: setup
	$(SWIFT) build && $(SWIFT) test
