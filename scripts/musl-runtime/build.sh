#!/usr/bin/env bash
# Lays out what scripts/release-run.ts needs to run the musl release
# executables on an x86-64 Debian machine, which packages musl's loader but
# no C++ runtime built for musl:
#   dist/.cache/musl-runtime/x64/    a library folder for musl's x86-64
#       loader (Debian's `musl`): Debian's own libstdc++.so.6 and
#       libgcc_s.so.1 (built for glibc) and glibc-compat.c built with
#       musl-gcc under the name of glibc's loader, which libstdc++ needs;
#   dist/.cache/musl-runtime/arm64/  a root for qemu-aarch64 -L: Debian's
#       arm64 musl (the .deb pinned in .ci/musl-debs, unpacked, not
#       installed), Debian's arm64 libstdc++ and libgcc_s (the -arm64-cross
#       packages) and glibc-compat.c built for it, preloaded by the runner.
# Every piece comes from Debian's archive or this repository. Needs the
# packages .ci/run installs: musl musl-tools gcc-aarch64-linux-gnu
# libstdc++6-arm64-cross.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=scripts/musl-runtime/glibc-compat.c
out=dist/.cache/musl-runtime

fail() {
  echo "musl-runtime: error: $1" >&2
  [ -z "${2:-}" ] || echo "musl-runtime: hint: $2" >&2
  exit 1
}
install="apt-get install -y musl musl-tools gcc-aarch64-linux-gnu libstdc++6-arm64-cross"
for f in /lib/ld-musl-x86_64.so.1 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 \
  /usr/aarch64-linux-gnu/lib/libstdc++.so.6 /usr/aarch64-linux-gnu/lib/libgcc_s.so.1; do
  [ -e "$f" ] || fail "$f is missing" "$install"
done
command -v musl-gcc >/dev/null || fail "musl-gcc is missing" "$install"
command -v aarch64-linux-gnu-gcc >/dev/null || fail "aarch64-linux-gnu-gcc is missing" "$install"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out/debs" "$work/x64" "$work/arm64"

# The pinned .debs: kept in dist/.cache once their digest matched.
host=$(dpkg --print-architecture)
grep -v '^#' .ci/musl-debs | while read -r pkg version sha; do
  deb="$out/debs/${pkg%%:*}_${version}_${pkg##*:}.deb"
  if ! { [ -f "$deb" ] && echo "$sha  $deb" | sha256sum -c --status; }; then
    apt=(-o "APT::Architectures::=$host" -o "APT::Architectures::=${pkg##*:}" -o APT::Sandbox::User=root)
    # The foreign architecture's index for this call only: dpkg's own list of architectures is left alone.
    apt-get "${apt[@]}" update -qq
    (cd "$work" && apt-get "${apt[@]}" download -qq "$pkg=$version")
    got=$(sha256sum "$work/$(basename "$deb")" | cut -d' ' -f1)
    [ "$got" = "$sha" ] ||
      fail "$pkg $version: sha256 $got, pinned $sha in .ci/musl-debs" "check the new upload before changing the pin"
    mv "$work/$(basename "$deb")" "$deb"
  fi
  dpkg-deb -x "$deb" "$work/arm64"
done

flags=(-O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror -Wl,-z,defs)
ln -s /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 "$work/x64/"
musl-gcc "${flags[@]}" -Wl,-soname,ld-linux-x86-64.so.2 -o "$work/x64/ld-linux-x86-64.so.2" "$src"

lib="$work/arm64/lib/aarch64-linux-musl"
[ -e "$work/arm64/lib/ld-musl-aarch64.so.1" ] || fail "the arm64 musl package has no lib/ld-musl-aarch64.so.1"
ln -s /usr/aarch64-linux-gnu/lib/libstdc++.so.6 /usr/aarch64-linux-gnu/lib/libgcc_s.so.1 "$lib/"
aarch64-linux-gnu-gcc "${flags[@]}" -nostdlib -Wl,-soname,ld-linux-aarch64.so.1 -o "$lib/ld-linux-aarch64.so.1" \
  "$src" -L"$lib" -l:libc.so

rm -rf "$out/x64" "$out/arm64"
mv "$work/x64" "$work/arm64" "$out/"
echo "musl-runtime: $out/x64 and $out/arm64 ready"
