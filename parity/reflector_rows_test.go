package parity

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/reflector"
)

// Exceptions of docs/defaults.md's "## Reflector" table that the scripted server of
// TestReflector can show: each runs both reflectors (or, where client-go's reflector
// alone cannot be given a handler, its informer) against it in a bubble.

// settle lets both sides run until they are idle, past any backoff.
func settle() {
	time.Sleep(reflSettle)
	synctest.Wait()
}

// startSides starts each side and returns a func that stops them and waits.
func startSides(sides ...*reflectorSide) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	for _, s := range sides {
		s.done = make(chan struct{})
		s.start(ctx)
	}
	return func() {
		cancel()
		for _, s := range sides {
			<-s.done
		}
	}
}

const (
	watchListLine = `WATCH rv="" match=NotOlderThan sendInitialEvents=true bookmarks timeout∈[5m,10m)`
	cutAnswer     = " → cut after 1 initial event"
)

// client-go: tools/cache/reflector.go Reflector.watchList (handleListWatch, continue)
var _ = exception("docs/defaults.md", "Reflector", "a watch-list stream cut before its end bookmark", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newCMServer()
		srv.timed, srv.watchList = true, true
		srv.write("a")
		srv.write("b")
		for range 5 {
			srv.arm(watchListCut)
		}
		srv.startClock()
		stop := startSides(newOursReflectorSide(srv, modeWatchList), newClientGoReflectorSide(srv, modeWatchList))
		defer stop()
		settle()

		var theirs []string
		for range 5 {
			theirs = append(theirs, watchListLine+" (at once)"+cutAnswer)
		}
		theirs = append(theirs, watchListLine+" (at once) → 2 initial events, end bookmark at rv=2", `  store.Replace([a@1 b@2], "2")`)
		require.Equal(t, theirs, srv.takeRequests(&srv.theirs), "client-go: each cut stream is started over at once, five times, until one ends")

		require.Equal(t, []string{
			watchListLine + " (at once)" + cutAnswer,
			watchListLine + " (after backoff step 0: 800ms ≤ wait < 1.6s)" + cutAnswer,
			watchListLine + " (after backoff step 1: 1.6s ≤ wait < 3.2s)" + cutAnswer,
			`LIST rv="" limit=500 (at once) → rv=2 [a@1 b@2]`,
			`  store.Replace([a@1 b@2], "2")`,
			`WATCH rv="2" bookmarks timeout∈[5m,10m) (at once)`,
		}, srv.takeRequests(&srv.ours), "ours: a backoff after each cut (S4); the third lists at RV \"\" in pages (S7)")
		srv.disarm()
		srv.takeRequests(&srv.ours)

		srv.endWatches(true)
		settle()
		next := []string{
			`WATCH rv="2" match=NotOlderThan sendInitialEvents=true bookmarks timeout∈[5m,10m) (after backoff step 0: 800ms ≤ wait < 1.6s) → 2 initial events, end bookmark at rv=2`,
			`  store.Replace([a@1 b@2], "2")`,
		}
		require.Equal(t, next, srv.takeRequests(&srv.ours), "ours: the next cycle tries a watch-list again")
		require.Equal(t, next, srv.takeRequests(&srv.theirs))
	})
})

// heard is what a WatchErrorHandler was told, one reason per call.
type heard struct {
	mu      sync.Mutex
	reasons []string
}

func (h *heard) add(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	reason := string(apierrors.ReasonForError(err))
	if reason == "" {
		reason = err.Error()
	}
	h.reasons = append(h.reasons, reason)
}

func (h *heard) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.reasons
	h.reasons = nil
	return r
}

// client-go: tools/cache/reflector.go Reflector.RunWithContext (r.watchErrorHandler)
// client-go: tools/cache/reflector.go Reflector.watch (return nil after an error event)
// client-go: tools/cache/shared_informer.go sharedIndexInformer.SetWatchErrorHandlerWithContext
var _ = exception("docs/defaults.md", "Reflector", "who hears why a cycle ended", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newCMServer()
		srv.write("a")
		var ours, theirs heard
		ourSide := newOursReflectorSide(srv, modeList, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.WatchErrorHandler = func(_ context.Context, _ *reflector.Reflector[*corev1.ConfigMap], err error) { ours.add(err) }
		})
		// client-go's reflector takes a handler only from its informer (or controller).
		inf := newClientGoSide(clientGoLW{srv, &srv.theirs}, 0)
		require.NoError(t, inf.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { theirs.add(err) }))
		// Armed before the sides start: their first LIST may come at once.
		srv.arm(listInternal) // met by each side's first LIST
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.run(ctx) }()
		stop := startSides(ourSide)
		defer func() { stop(); cancel(); <-done }()
		settle()
		require.Equal(t, []string{"InternalError"}, theirs.take(), "client-go: a failed LIST")
		require.Equal(t, []string{"InternalError"}, ours.take(), "ours: a failed LIST")

		srv.endWatches(true)
		settle()
		require.Empty(t, theirs.take(), "client-go: the watch's ERROR event 410 is only logged")
		require.Equal(t, []string{"Expired"}, ours.take(), "ours: the watch's ERROR event 410")

		srv.arm(watchTooLarge)
		srv.endWatches(false) // the re-watch is refused
		settle()
		require.Equal(t, []string{"Timeout"}, theirs.take(), "client-go: a refused WATCH")
		require.Equal(t, []string{"Timeout"}, ours.take(), "ours: a refused WATCH")
		// Both relisted after each: the handler is all that differs. (The informer's
		// store records nothing.)
		requests := func(e *endpoint) []string {
			return slices.DeleteFunc(srv.takeRequests(e), func(l string) bool { return strings.HasPrefix(l, "  store.") })
		}
		require.Equal(t, requests(&srv.ours), requests(&srv.theirs))
	})
})

// klogRecorder is a logr sink that keeps every line it is given, with its verbosity.
type klogRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *klogRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lines
	r.lines = nil
	return l
}

type recordingSink struct {
	r  *klogRecorder
	kv []any
}

func (s recordingSink) Init(logr.RuntimeInfo) {}
func (s recordingSink) Enabled(int) bool      { return true }
func (s recordingSink) Info(level int, msg string, kv ...any) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.lines = append(s.r.lines, fmt.Sprintf("V(%d) %s %v", level, msg, append(slices.Clone(s.kv), kv...)))
}
func (s recordingSink) Error(err error, msg string, kv ...any) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.lines = append(s.r.lines, fmt.Sprintf("ERROR %s %v %v", msg, err, append(slices.Clone(s.kv), kv...)))
}
func (s recordingSink) WithValues(kv ...any) logr.LogSink {
	s.kv = append(slices.Clone(s.kv), kv...)
	return s
}
func (s recordingSink) WithName(string) logr.LogSink { return s }

// clientGoWatchExpires runs client-go's reflector with klog's global logger as set by
// setLogger (the context carries none), ends its watch with an ERROR event 410 and
// makes its relist's first LIST fail with 410 too, and returns what the logger got.
func clientGoWatchExpires(t *testing.T, setLogger func(logr.Logger)) []string {
	rec := &klogRecorder{}
	setLogger(logr.New(recordingSink{r: rec}))
	t.Cleanup(klog.ClearLogger)
	var lines []string
	synctest.Test(t, func(t *testing.T) {
		srv := newCMServer()
		srv.write("a")
		r := cache.NewReflectorWithOptions(clientGoLW{srv, &srv.theirs}, &corev1.ConfigMap{}, clientGoStore{newRecordingStore(srv, &srv.theirs)}, cache.ReflectorOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		settle()
		rec.take()
		srv.arm(listExpired)
		srv.endWatches(true)
		settle()
		require.Contains(t, strings.Join(srv.takeRequests(&srv.theirs), "\n"), `LIST rv="" → rv=1`, "the relist's LIST got 410 and was retried at RV \"\"")
		lines = rec.take()
		cancel()
		<-done
	})
	klog.ClearLogger()
	return lines
}

// client-go: tools/cache/reflector.go Reflector.watch (logger.V(4).Info("Watch closed"))
// client-go: tools/cache/reflector.go DefaultWatchErrorHandler
var _ = exception("docs/defaults.md", "Reflector", "a relist after 410 Gone", func(t *testing.T) {
	t.Run("client-go: at verbosity 4, hidden by a default klog setup", func(t *testing.T) {
		lines := clientGoWatchExpires(t, klog.SetLogger)
		for _, l := range lines {
			require.NotContains(t, l, "Watch closed", "a default klog setup (-v=0) showed the 410")
			require.NotContains(t, l, "too old resource version")
		}
		// The same run with every verbosity let through to the logger: the 410 is there,
		// at V(4); the LIST's 410 and its retry are not logged at all.
		lines = clientGoWatchExpires(t, func(l logr.Logger) { klog.SetLoggerWithOptions(l, klog.ContextualLogger(true)) })
		var closed []string
		for _, l := range lines {
			if strings.Contains(l, "too old resource version") {
				closed = append(closed, l)
			}
		}
		require.Len(t, closed, 1, "every line: %q", lines)
		require.True(t, strings.HasPrefix(closed[0], "V(4) Watch closed "), closed[0])
	})

	t.Run("ours: at Info, the watch's 410 and the LIST's", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := newCMServer()
			srv.write("a")
			var logs lines
			side := newOursReflectorSide(srv, modeList, func(o *reflector.Options[*corev1.ConfigMap]) {
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) // slog's default level: Info
				o.WatchErrorHandler = nil                            // DefaultWatchErrorHandler
			})
			stop := startSides(side)
			defer stop()
			settle()
			srv.arm(listExpired)
			srv.endWatches(true)
			settle()
			log := logs.String()
			require.Regexp(t, `level=INFO msg="watch ended with 410 Gone \(resource version expired\); relisting".*too old resource version`, log)
			require.Regexp(t, `level=INFO msg="list got 410 Gone or a too-large resource version; listing again at the most recent".*too old resource version`, log)
		})
	})
})
