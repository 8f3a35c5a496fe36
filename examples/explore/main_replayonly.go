//go:build replayonly

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// The replay-only build of the explorer (`go run -tags replayonly ./examples/explore`,
// what `make replay` runs): the -replay half of main.go, without the live explorer's
// files, so that it compiles no Kubernetes client. It takes -addr and -replay.
func main() {
	addr := flag.String("addr", "127.0.0.1:8077", "where to serve the page: a loopback host:port (port 0 picks a free one)")
	replay := flag.String("replay", "", "the recording to serve (a .jsonl or .jsonl.gz file); required in this build")
	flag.Parse()
	if *replay == "" {
		fmt.Fprintln(os.Stderr, "explore (replay-only build): -replay FILE is required; `make explore` runs the live explorer")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(log)
	if err := runReplay(ctx, log, *addr, *replay); err != nil {
		log.Error("explore failed", "err", err)
		stop()
		os.Exit(1)
	}
}
