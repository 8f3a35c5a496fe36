#!/usr/bin/env bash
# Fails when a package of the root module (tests included) imports client-go's own
# informer machinery or leader election: the library rebuilds them, so it must not lean
# on them. Only bench/, parity/ and hack/ (their own modules) may import them.
set -euo pipefail
cd "$(dirname "$0")/.."
forbidden='^k8s.io/client-go/(tools/cache|tools/pager|tools/leaderelection|util/workqueue|informers|listers|kubernetes|dynamic)(/|$)'
bad=$(go list -f '{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}}{{"\n"}}{{end}}{{range .TestImports}}{{$p}} {{.}}{{"\n"}}{{end}}{{range .XTestImports}}{{$p}} {{.}}{{"\n"}}{{end}}' ./... \
	| awk -v re="$forbidden" '$2 ~ re' | sort -u)
if [ -n "$bad" ]; then
	echo "forbidden imports of client-go's informer machinery (only bench/, parity/ and hack/ may):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "imports ok: no root-module package imports client-go's tools/cache, tools/pager, tools/leaderelection, util/workqueue, informers, listers, kubernetes or dynamic"
