#!/usr/bin/env bash
# Builds the .deb from a build directory into a temporary folder and checks it: the files a
# desktop install needs are there, the .desktop entry and AppStream metadata validate, the
# dependencies name Qt, and the packaged binary runs `sluice --version`.
set -euo pipefail
build_dir=${1:?usage: check-package.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$build_dir" && cpack -G DEB -B "$work" >/dev/null)
deb=$(ls "$work"/*.deb)
dpkg-deb -x "$deb" "$work/root"
for f in usr/bin/sluice usr/share/applications/sluice.desktop usr/share/icons/hicolor/scalable/apps/sluice.svg \
         usr/share/metainfo/dev.sluice.Sluice.metainfo.xml; do
  [ -e "$work/root/$f" ] || { echo "check-package: $f is missing from $deb" >&2; exit 1; }
done
desktop-file-validate "$work/root/usr/share/applications/sluice.desktop"
appstreamcli validate --no-net --pedantic "$work/root/usr/share/metainfo/dev.sluice.Sluice.metainfo.xml" >/dev/null \
  || appstreamcli validate --no-net "$work/root/usr/share/metainfo/dev.sluice.Sluice.metainfo.xml"
depends=$(dpkg-deb -f "$deb" Depends)
echo "$depends" | grep -q "libqt6widgets6" || { echo "check-package: Depends lacks Qt Widgets: $depends" >&2; exit 1; }
echo "$depends" | grep -q "libsentencepiece" || { echo "check-package: Depends lacks SentencePiece: $depends" >&2; exit 1; }
"$work/root/usr/bin/sluice" --version | grep -q "^sluice " || { echo "check-package: the packaged binary does not run" >&2; exit 1; }
echo "check-package: $(basename "$deb") OK (Depends: $depends)"
