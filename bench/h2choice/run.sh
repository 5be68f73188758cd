#!/usr/bin/env bash
# The HTTP/2 library measurement (docs/decisions.md): builds bench/h2choice/h2choice.c against Debian's
# libnghttp2-dev and libcurl4-openssl-dev, runs N calls with each client (3 runs each), and lists what
# each library brings into a runtime image (the shared objects ldd resolves, with their sizes).
#   bench/h2choice/run.sh [N]        (N: calls per run, 10000 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10000}
out=build/h2choice
mkdir -p "$out"
# The contender is needed by this measurement only, so tests/deps.sh does not install it.
for p in libnghttp2-dev libcurl4-openssl-dev; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		{ echo "h2choice: needs $p (apt-get install $p)" >&2; exit 2; }
done
cc -std=c11 -D_GNU_SOURCE -O2 -Itests -o "$out/h2choice" bench/h2choice/h2choice.c -lnghttp2 -lcurl -lpthread
for c in nghttp2 curl; do
	for _ in 1 2 3; do nice "$out/h2choice" "$c" "$n"; done
done
closure() { # the shared objects a program linked with $1 loads, less libc's
	echo 'int main(void){return 0;}' > "$out/empty.c"
	cc -o "$out/with$1" "$out/empty.c" -Wl,--no-as-needed "$1"
	ldd "$out/with$1" | awk '$3 ~ /^\// {print $3}' | grep -vE 'libc\.so|ld-linux|linux-vdso' |
		xargs -r readlink -f | xargs -r du -k | awk -v l="$1" '{s += $1; n++} END {printf "%s: %d shared objects, %d KiB\n", l, n, s}'
}
closure -lnghttp2
closure -lcurl
