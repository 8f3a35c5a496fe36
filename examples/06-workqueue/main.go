// Command 06-workqueue drives a rate-limited workqueue by hand, with no cluster: keys are
// deduplicated while queued, a failing key comes back after a growing delay (per-key
// exponential backoff), a key that keeps failing is given up after maxRetries, and
// Forget resets a key's backoff on success. It prints a timeline and exits by itself.
// See README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/workqueue"
)

const maxRetries = 5

func main() {
	stepmain.Main(func(ctx context.Context, _ *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, log, out)
	}, stepmain.Options{NoCluster: true})
}

func run(ctx context.Context, log *slog.Logger, out io.Writer) error {
	// sample-controller's limiter, with a slower start so the delays are easy to read:
	// the larger of a per-key exponential backoff and an overall token bucket.
	perKey, err := workqueue.NewItemExponentialFailureRateLimiter[string](workqueue.ExponentialFailureOptions{BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second})
	if err != nil {
		return err
	}
	overall, err := workqueue.NewBucketRateLimiter[string](workqueue.BucketOptions{QPS: 10, Burst: 100})
	if err != nil {
		return err
	}
	limiter, err := workqueue.NewMaxOfRateLimiter(perKey, overall)
	if err != nil {
		return err
	}
	q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{RateLimiter: limiter, Options: workqueue.Options{Name: "demo", Logger: log}})
	defer q.ShutDown()

	start := time.Now()
	say := func(format string, args ...any) {
		fmt.Fprintf(out, "%-7s ", "+"+time.Since(start).Round(time.Millisecond).String())
		fmt.Fprintf(out, format+"\n", args...)
	}
	for _, k := range []string{"ok", "flaky", "ok", "broken", "ok"} {
		q.Add(k)
	}
	say("added ok, flaky, ok, broken, ok → Len %d: a key already waiting is not queued twice", q.Len())

	// Goroutine owned by run: it turns ctx's end (timeout, Ctrl-C) into a queue
	// shutdown, which wakes Get; it exits when run returns (stopped is closed).
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			q.ShutDown()
		case <-stopped:
		}
	}()

	failuresLeft := map[string]int{"flaky": 3, "broken": 1000}
	for remaining := 3; remaining > 0; {
		key, shutdown := q.Get()
		if shutdown {
			return ctx.Err()
		}
		switch {
		case failuresLeft[key] == 0:
			say("%-6s ok after %d retries → Forget (its backoff starts over next time)", key, q.NumRequeues(key))
			q.Forget(key)
			remaining--
		case q.NumRequeues(key) < maxRetries:
			failuresLeft[key]--
			q.AddRateLimited(key)
			say("%-6s failed → AddRateLimited (retry %d)", key, q.NumRequeues(key))
		default:
			say("%-6s failed %d retries → give up: Forget, do not re-add", key, q.NumRequeues(key))
			q.Forget(key)
			remaining--
		}
		q.Done(key) // always, whatever happened
	}
	say("queue empty: Len %d", q.Len())
	return nil
}
