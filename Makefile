# Sluice: the two commands of the README. Each installs what it needs (Debian 12, as root),
# builds, and runs. See README.md.
.PHONY: run test build deps package clean

deps:
	scripts/install-deps.sh

build: deps
	scripts/build.sh release

# The main job: the app with the demo model and sample file (headless without a display).
run: build
	scripts/run-demo.sh

# Every test: release build (all tests), then the sanitizer build (unit + integration).
# FLAVOUR=release or FLAVOUR=asan runs one of them.
test: deps
	scripts/test.sh

# The Debian package: build/sluice_<version>_<arch>.deb.
package: deps
	scripts/package.sh

clean:
	rm -rf build build-asan
