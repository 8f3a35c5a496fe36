package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/trace"
)

// request is one HTTP request a client sent, as its transport saw it.
type request struct {
	At     time.Time
	Method string
	Path   string // the URL path, without the query
	Code   int    // the response's status code; 0 if the request failed without one
}

// requestLog records every request of the clients built from one config: what a
// process's own access log would show. It is safe for concurrent use.
type requestLog struct {
	mu   sync.Mutex
	reqs []request // guarded by mu
}

// withRequestLog returns a copy of cfg whose requests are recorded in the returned
// log. Why at the transport: it sees every request of every client built from the
// config (informers, typed clients, REST clients) with the status the server gave.
func withRequestLog(cfg *rest.Config) (*rest.Config, *requestLog) {
	log := &requestLog{}
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			r := request{At: time.Now(), Method: req.Method, Path: req.URL.Path}
			if err == nil {
				r.Code = resp.StatusCode
			}
			log.mu.Lock()
			log.reqs = append(log.reqs, r)
			log.mu.Unlock()
			return resp, err
		})
	})
	return c, log
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// matching returns the requests with this method (any if "") whose path ends with
// suffix.
func (l *requestLog) matching(method, suffix string) []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []request
	for _, r := range l.reqs {
		if (method == "" || r.Method == method) && strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

// codes counts requests by status code, in the order each code first appeared:
// "201 Created ×1, 409 Conflict ×1".
func codes(reqs []request) string {
	return tally(reqs, func(r request) string { return fmt.Sprintf("%d %s", r.Code, http.StatusText(r.Code)) })
}

// methods counts requests by method, in the order each first appeared: "PUT ×2, GET ×1".
func methods(reqs []request) string {
	return tally(reqs, func(r request) string { return r.Method })
}

// tally counts items by label, in the order each label first appeared:
// "a ×2, b ×1"; "none" for no items.
func tally[T any](items []T, label func(T) string) string {
	n := map[string]int{}
	var order []string
	for _, it := range items {
		l := label(it)
		if n[l] == 0 {
			order = append(order, l)
		}
		n[l]++
	}
	if len(order) == 0 {
		return "none"
	}
	parts := make([]string, len(order))
	for i, l := range order {
		parts[i] = fmt.Sprintf("%s ×%d", l, n[l])
	}
	return strings.Join(parts, ", ")
}

// runFooController runs foo-controller on cfg, traced by tracer, with resync off (so
// that every handler call is a change) and logs discarded. stop cancels it, waits for
// Run to return and returns its error; it may be called more than once.
func runFooController(ctx context.Context, cfg *rest.Config, tracer *trace.Tracer) (stop func() error, err error) {
	c, err := controller.New(cfg, controller.Options{Tracer: tracer, ResyncPeriod: -1})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Goroutine owned by the scenario: the controller; stop cancels it and waits.
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	var runErr error
	return func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}, nil
}

// listedBoth reports whether foo-controller's Foo and Deployment informers, traced
// into rec, have listed.
func listedBoth(rec *trace.Recorder) func() bool {
	return func() bool {
		evs := kinds(rec.Events(), trace.Listed)
		return count(evs, func(e trace.Event) bool { return e.Source == "foos" }) > 0 &&
			count(evs, func(e trace.Event) bool { return e.Source == "deployments" }) > 0
	}
}

// beginFoos is how the foo-controller scenarios start: an apps/v1 client and a Foo
// client on Direct, and a fresh namespace named for prefix.
func beginFoos(ctx context.Context, lab *Lab, prefix string) (apps *rest.RESTClient, foos *fooclient.Client, ns string, err error) {
	if apps, err = lab.Apps(); err != nil {
		return nil, nil, "", err
	}
	if foos, err = fooclient.NewClient(lab.Direct, fooclient.Options{}); err != nil {
		return nil, nil, "", err
	}
	ns, err = lab.Namespace(ctx, prefix)
	return apps, foos, ns, err
}
