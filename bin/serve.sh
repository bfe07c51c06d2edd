#!/bin/sh
# `npm start`: `chatctx serve` (arguments pass through), run in place of this shell so
# that its process is the server's and a signal sent to it reaches the server.
#
# On Linux it first fixes glibc's mmap threshold at its starting value (128 KiB). By
# default glibc raises the threshold to the size of any large block freed, after which
# blocks up to that size come from its heaps and stay there once freed: loading the
# encoder's weights, PGlite's files and the first start's import leave a server holding
# about a third more than it uses. With the threshold fixed, large blocks go back to the
# system when freed (docs/testing.md, "A leaner server", has the measurements). Other
# C libraries ignore the variable; one already set is kept.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}"
# On two cores or fewer, V8's pool of helper threads (four by default, whatever the
# machine) shrinks to one. The server already runs three threads of its own (HTTP, the
# store's, the encoder's); with four more compiling WebAssembly (PGlite's, the encoder's)
# in parallel, a start on two cores spent about half a second more CPU for nothing
# (capping V8's WebAssembly compile tasks at one did nearly as much). Measured on two
# cores: a restart ready in 1.46 s instead of 1.80, a first start in 5.7 s instead of
# 6.8, and the load benchmark's rows unchanged (docs/testing.md, "A leaner server").
# On more cores Node's default is kept; a pool size set in NODE_OPTIONS is kept too.
pool=""
cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)"
case "${NODE_OPTIONS:-}" in
  *--v8-pool-size*) ;;
  *) if [ "$cores" -ge 1 ] 2>/dev/null && [ "$cores" -le 2 ]; then pool="--v8-pool-size=1"; fi ;;
esac
exec node $pool "$(dirname "$0")/chatctx.js" serve "$@"
