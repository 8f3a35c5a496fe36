package parity

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// randSource is the generators' source of randomness (internal/check seeds it).
type randSource = rand.Rand

// quiet and quietKlog discard the libraries' logs: the tests compare behaviour, and a
// relist's warnings on thousands of generated inputs would bury a failure's report.
var (
	quiet     = slog.New(slog.DiscardHandler)
	quietKlog = logr.Discard()
)

// wrapVariant names the variant of a run (a transform, a mode) in a divergence.
func wrapVariant(variant string, err error) error {
	return fmt.Errorf("%s: %w", variant, err)
}

// queuedLen returns how many entries client-go's queue holds: the keys of a DeltaFIFO
// (its queue field) or the deltas of a RealFIFO (its items field).
//
// Why reflection: client-go 1.37 removed both queues' Len (with List, ListKeys and Get,
// which only tests used), and a Pop on an empty queue blocks. The tests call the queues
// from one goroutine, so reading the field without the queue's lock races with nothing.
// If client-go renames the field, this panics and the suite reports it, rather than
// comparing against a guess.
func queuedLen(queue any, field string) int {
	return reflect.ValueOf(queue).Elem().FieldByName(field).Len()
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// lines is a log destination that the libraries' goroutines write while the test
// reads it; logr gives it to klog and to client-go's contexts.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lines) logr() logr.Logger {
	return funcr.New(func(prefix, args string) { _, _ = l.Write([]byte(prefix + " " + args + "\n")) }, funcr.Options{})
}

// withoutErrorBackoff empties utilruntime.ErrorHandlers until t ends. client-go's
// reflector reports some errors (a failed LIST, a refused WATCH) through
// utilruntime.HandleErrorWithContext, whose handlers include a global rate limit that
// sleeps until 1ms after the previous error. It measures that on the clock, and the
// first error's "previous" is the real time the package was loaded: inside a bubble,
// whose fake clock starts in 2000, it would sleep for decades. The other handler only
// logs, through the context's logger (discarded here).
//
// (apimachinery's comment says the rate limit does nothing when time moves backwards;
// it sleeps.)
//
// client-go: k8s.io/apimachinery/pkg/util/runtime/runtime.go ErrorHandlers
func withoutErrorBackoff(t *testing.T) {
	handlers := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = nil
	t.Cleanup(func() { utilruntime.ErrorHandlers = handlers })
}

// bubbleGoroutines counts the goroutines of the caller's synctest bubble, itself
// included. Why not runtime.NumGoroutine: it counts the whole process, where goroutines
// of earlier tests and of the runtime come and go while a test counts, which made
// counts inside a bubble flaky. It reads the bubble from the goroutine headers of
// runtime.Stack ("goroutine 9 [running, synctest bubble 1]:"), and fails the test if
// the caller's own header names none, so a change of that format cannot pass unseen.
func bubbleGoroutines(t *testing.T) int {
	t.Helper()
	own := make([]byte, 512)
	own = own[:runtime.Stack(own, false)]
	m := regexp.MustCompile(`synctest bubble [0-9]+\]`).Find(own)
	require.NotNil(t, m, "no synctest bubble in this goroutine's header: %q", own[:min(len(own), 80)])
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, line := range strings.Split(string(buf), "\n") {
		if strings.HasPrefix(line, "goroutine ") && strings.Contains(line, ", "+string(m)) {
			count++
		}
	}
	return count
}
