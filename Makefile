# Sluice: the two commands of the README. Each installs what it needs (Debian 12, as root),
# builds, and runs. See README.md.
.PHONY: run test build deps package fuzz clean

deps:
	scripts/install-deps.sh

# Every target of the release build (the app, tests, benchmarks) in build/.
build: deps
	scripts/build.sh release

# The main job: the app with the demo model and sample file (headless without a display). Builds
# only the sluice binary, with CUDA only for this machine's GPU (none: no CUDA backend).
run: deps
	scripts/build.sh app
	scripts/run-demo.sh

# Every test: release build (all tests), then the sanitizer build (the engine's unit tests), then
# a short fuzzing pass (15 s per harness). FLAVOUR=release, asan or fuzz runs one of them.
test: deps
	scripts/test.sh

# The libFuzzer harnesses (tests/fuzz), each for FUZZ_SECONDS (default 30), e.g.
# FUZZ_SECONDS=600 make fuzz; FUZZ_HARNESSES="gguf_file dataset_file" picks some.
fuzz: deps
	scripts/fuzz.sh

# The Debian package: build/sluice_<version>_<arch>.deb (CUDA for every supported architecture).
package: deps
	scripts/package.sh

clean:
	rm -rf build build-asan build-fuzz
