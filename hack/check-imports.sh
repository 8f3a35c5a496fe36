#!/usr/bin/env bash
# Fails when a package of the root module (tests included) imports client-go's own
# informer machinery or leader election: the library rebuilds them, so it must not lean
# on them. Only bench/, parity/ and hack/ (their own modules) may import them.
set -euo pipefail
cd "$(dirname "$0")/.."
forbidden='^k8s.io/client-go/(tools/cache|tools/pager|tools/leaderelection|util/workqueue|informers|listers|kubernetes|dynamic)(/|$)'
# One listing for both rules: "package import code" or "package import test".
imports=$(go list -f '{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}} code{{"\n"}}{{end}}{{range .TestImports}}{{$p}} {{.}} test{{"\n"}}{{end}}{{range .XTestImports}}{{$p}} {{.}} test{{"\n"}}{{end}}' ./...)
bad=$(awk -v re="$forbidden" '$2 ~ re {print $1, $2}' <<<"$imports" | sort -u)
if [ -n "$bad" ]; then
	echo "forbidden imports of client-go's informer machinery (only bench/, parity/ and hack/ may):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "imports ok: no root-module package imports client-go's tools/cache, tools/pager, tools/leaderelection, util/workqueue, informers, listers, kubernetes or dynamic"

# internal/testrig holds what tests run on (fake and real API servers, a browser driver,
# doc checks, sample objects); internal/'s other packages are compiled into the library.
# A library package's own code (not its tests) must not reach a rig. The examples may:
# their programs start the embedded control plane (internal/testrig/testenv).
rigs=$(awk '$3 == "code" && $2 ~ /\/internal\/testrig(\/|$)/ && $1 !~ /\/(examples|internal\/testrig)(\/|$)/ {print $1, $2}' <<<"$imports" | sort -u)
if [ -n "$rigs" ]; then
	echo "library code imports a test rig (internal/testrig is for tests and the examples):" >&2
	echo "$rigs" >&2
	exit 1
fi
echo "imports ok: no library package's code imports internal/testrig"
