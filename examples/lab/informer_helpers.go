package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// lockedBuffer collects a logger's output. Why the lock: slog handlers write from
// the goroutines that log (listeners, the reflector) while the scenario reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

// Write appends p.
func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// linesWith returns the lines written so far that contain every one of substrs.
func (l *lockedBuffer) linesWith(substrs ...string) []string {
	l.mu.Lock()
	text := l.b.String()
	l.mu.Unlock()
	var out []string
	for line := range strings.Lines(text) {
		if containsAll(line, substrs...) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out
}

// withoutTime drops slog's leading time=… field from a text log line, so that a
// captured line reads the same in every run.
func withoutTime(line string) string {
	if strings.HasPrefix(line, "time=") {
		if i := strings.IndexByte(line, ' '); i >= 0 {
			return line[i+1:]
		}
	}
	return line
}

// modulePrefix is how this module's functions begin in a stack trace.
const modulePrefix = "github.com/kubeinternals/informers/"

// goroutineRoles names the library's long-lived goroutines by a function their stack
// contains, most specific first (the Factory's goroutine runs processLoop, so it is
// matched by that, not by its entry function).
var goroutineRoles = []struct{ contains, role string }{
	{"informer.(*listener[...]).run", "listener.run: one handler's goroutine"},
	{"informer.(*sharedProcessor[...]).run", "sharedProcessor.run: the processor"},
	{"listwatch.(*streamWatch[...]).decode", "streamWatch.decode: one of a watch-list's decoders"},
	{"listwatch.(*streamWatch[...]).emit", "streamWatch.emit: hands a watch-list's events over in order"},
	{"listwatch.(*streamWatch[...]).receiveConcurrently", "streamWatch.receiveConcurrently: a watch-list's reader"},
	{"listwatch.(*streamWatch[...]).receive", "streamWatch.receive: the open watch's decoder"},
	{"reflector.(*Reflector[...]).resyncLoop", "Reflector.resyncLoop: the resync timer"},
	{"reflector.(*Reflector[...]).Run", "Reflector.Run: watch-list (or LIST), then WATCH"},
	{"informer.(*SharedIndexInformer[...]).processLoop", "SharedIndexInformer.Run → processLoop: pops the queue, writes the cache"},
	{"informer.(*SharedIndexInformer[...]).Run", "Run's sync watcher: waits for the first list"},
}

// goroutineGroup is a set of the library's goroutines doing the same thing.
type goroutineGroup struct {
	role   string // what it is, from goroutineRoles (or its entry function)
	entry  string // the outermost library function: what started it
	parked string // the innermost library function: where it is now
	count  int
}

// libraryGoroutines reads the goroutine profile (runtime/pprof, debug=1: stacks
// grouped with a count) and returns the goroutines whose stack runs code of the
// library's packages, grouped by role. The lab's own code (examples/) and the test
// environment's TCP proxy (internal/testrig/testenv) are left out: they are not the
// informer's.
func libraryGoroutines() map[string]goroutineGroup {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	groups := map[string]goroutineGroup{}
	for block := range strings.SplitSeq(b.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		var n int
		if len(lines) < 2 || !strings.Contains(lines[0], " @ ") {
			continue
		}
		if _, err := fmt.Sscanf(lines[0], "%d @", &n); err != nil {
			continue
		}
		var frames []string // innermost first, library functions only
		for _, l := range lines[1:] {
			fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "#"))
			if len(fields) < 2 {
				continue
			}
			fn := fields[1]
			if i := strings.LastIndex(fn, "+0x"); i >= 0 {
				fn = fn[:i]
			}
			if !strings.HasPrefix(fn, modulePrefix) || strings.HasPrefix(fn, modulePrefix+"examples/") ||
				strings.HasPrefix(fn, modulePrefix+"internal/testrig/testenv") {
				continue
			}
			frames = append(frames, strings.TrimPrefix(fn, modulePrefix))
		}
		if len(frames) == 0 {
			continue
		}
		g := goroutineGroup{entry: frames[len(frames)-1], parked: frames[0], count: n}
		g.role = g.entry
		for _, r := range goroutineRoles {
			if slices.ContainsFunc(frames, func(f string) bool { return strings.HasPrefix(f, r.contains) }) {
				g.role = r.role
				break
			}
		}
		if old, ok := groups[g.role]; ok {
			g.count += old.count
		}
		groups[g.role] = g
	}
	return groups
}

// goroutinesAdded is after minus before, per role, keeping the roles whose count
// changed (a negative count: goroutines that exited).
func goroutinesAdded(before, after map[string]goroutineGroup) map[string]goroutineGroup {
	out := map[string]goroutineGroup{}
	for role, g := range after {
		g.count -= before[role].count
		if g.count != 0 {
			out[role] = g
		}
	}
	for role, g := range before {
		if _, ok := after[role]; !ok {
			g.count = -g.count
			out[role] = g
		}
	}
	return out
}

// total adds up the groups' counts.
func total(groups map[string]goroutineGroup) int {
	n := 0
	for _, g := range groups {
		n += g.count
	}
	return n
}

// describeGoroutines is one line per group, sorted by role: "+1 role (entry …, parked in …)".
func describeGoroutines(groups map[string]goroutineGroup) []string {
	var out []string
	for _, role := range slices.Sorted(maps.Keys(groups)) {
		g := groups[role]
		out = append(out, fmt.Sprintf("%+d  %s  (started in %s, now in %s)", g.count, role, g.entry, g.parked))
	}
	return out
}

// liveHeap collects garbage and returns the bytes of live heap objects. Why a GC
// first: without it the figure includes garbage and depends on when the last cycle ran.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// mib prints bytes in MiB with one decimal.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// ofKind keeps the events of kind reported by source ("" for any source).
func ofKind(events []trace.Event, kind trace.Kind, source string) []trace.Event {
	return trace.Filter(events, func(e trace.Event) bool {
		return e.Kind == kind && (source == "" || e.Source == source)
	})
}

// maxBacklog is the largest Backlog among Buffered events of handler.
func maxBacklog(events []trace.Event, handler string) int {
	m := 0
	for _, e := range ofKind(events, trace.Buffered, handler) {
		m = max(m, e.Backlog)
	}
	return m
}

// resyncEvery is the shortest resync period a handler can have.
const resyncEvery = time.Second

// handlerCall is one notification a recording handler received.
type handlerCall struct {
	at             time.Time // when the handler was called
	kind           string    // add, update, delete
	name           string
	oldRV, newRV   string // add: newRV; delete: oldRV
	initial, stone bool   // add: isInInitialList; delete: tombstone set
	same           bool   // update: old and new are the very same object (a resync)
	managed        int    // managedFields entries in what the handler was given (update: old's and new's)
}

// String is the call as the handler saw it.
func (c handlerCall) String() string {
	switch c.kind {
	case "add":
		return fmt.Sprintf("OnAdd(rv=%s, isInInitialList=%v)", c.newRV, c.initial)
	case "update":
		same := "changed"
		if c.oldRV == c.newRV {
			same = "same rv"
		}
		return fmt.Sprintf("OnUpdate(rv %s → %s, %s)", c.oldRV, c.newRV, same)
	default:
		return fmt.Sprintf("OnDelete(rv=%s, tombstone=%v)", c.oldRV, c.stone)
	}
}

// callRecorder is a handler that records every call, per object name.
type callRecorder[T indexer.Object] struct {
	mu    sync.Mutex
	calls []handlerCall // guarded by mu
}

// handler returns the recording handler funcs.
func (c *callRecorder[T]) handler() informer.HandlerFuncs[T] {
	rec := func(h handlerCall) {
		h.at = time.Now()
		c.mu.Lock()
		c.calls = append(c.calls, h)
		c.mu.Unlock()
	}
	return informer.HandlerFuncs[T]{
		AddFunc: func(obj T, initial bool) {
			rec(handlerCall{kind: "add", name: obj.GetName(), newRV: obj.GetResourceVersion(), initial: initial, managed: len(obj.GetManagedFields())})
		},
		UpdateFunc: func(oldObj, newObj T) {
			rec(handlerCall{kind: "update", name: newObj.GetName(), oldRV: oldObj.GetResourceVersion(), newRV: newObj.GetResourceVersion(),
				same: any(oldObj) == any(newObj), managed: len(oldObj.GetManagedFields()) + len(newObj.GetManagedFields())})
		},
		DeleteFunc: func(d informer.DeletedObject[T]) {
			rec(handlerCall{kind: "delete", name: d.GetName(), oldRV: d.OptionalObj.GetResourceVersion(), stone: d.FinalStateUnknown != nil,
				managed: len(d.OptionalObj.GetManagedFields())})
		},
	}
}

// all returns every call, in order.
func (c *callRecorder[T]) all() []handlerCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// between returns the calls of kind made in [from, to).
func (c *callRecorder[T]) between(kind string, from, to time.Time) []handlerCall {
	var out []handlerCall
	for _, h := range c.all() {
		if h.kind == kind && !h.at.Before(from) && h.at.Before(to) {
			out = append(out, h)
		}
	}
	return out
}

// of returns the calls about name, in order.
func (c *callRecorder[T]) of(name string) []handlerCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []handlerCall
	for _, h := range c.calls {
		if h.name == name {
			out = append(out, h)
		}
	}
	return out
}

// has returns a condition: a call about name matching ok has been recorded.
func (c *callRecorder[T]) has(name string, ok func(handlerCall) bool) func() bool {
	return func() bool { return slices.ContainsFunc(c.of(name), ok) }
}

// The burst: updates per ConfigMap, over burstConfigMaps ConfigMaps.
const (
	burstConfigMaps = 4
	burstPerMap     = 75
)

// updateBurst PUTs perMap unconditional updates into each of the ConfigMaps
// prefix-0 … prefix-(burstConfigMaps-1), one writer per ConfigMap, setting "n" to
// 0, 1, …; data holds any other keys to keep. It returns the ConfigMaps' last state.
func updateBurst(ctx context.Context, lab *Lab, ns, prefix string, perMap int, data ...string) ([]*corev1.ConfigMap, error) {
	core, err := lab.Core()
	if err != nil {
		return nil, err
	}
	last := make([]*corev1.ConfigMap, burstConfigMaps)
	errs := make([]error, burstConfigMaps)
	err = workqueue.ParallelizeUntil(ctx, burstConfigMaps, burstConfigMaps, func(i int) {
		for n := range perMap {
			cm := configMap(ns, fmt.Sprintf("%s-%d", prefix, i), append(slices.Clone(data), "n", strconv.Itoa(n))...)
			if errs[i] = updateConfigMap(ctx, core, cm); errs[i] != nil {
				return
			}
			last[i] = cm
		}
	}, workqueue.ParallelizeOptions{})
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return last, err
}
