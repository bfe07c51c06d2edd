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
exec node "$(dirname "$0")/chatctx.js" serve "$@"
