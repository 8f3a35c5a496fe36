package listwatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// ErrServerNotSharding is wrapped by the error of a ListerWatcher from WithShard with
// RequireServerSharding set, when the apiserver did not apply the shard selector: a
// kube-apiserver without its feature gate ShardedListAndWatch ignores the field
// without a word and sends every object.
var ErrServerNotSharding = errors.New("the apiserver did not apply ShardSelector: enable its feature gate " + shard.FeatureGate)

// Filtering says who keeps the objects outside a shard out of the cache.
type Filtering int32

const (
	// FilteringUnknown: no LIST has been answered yet, and no object outside the
	// shard has arrived.
	FilteringUnknown Filtering = iota
	// FilteringServer: the apiserver applied the shard selector (a LIST echoed it in
	// metadata.shardInfo); only the shard's objects cross the wire.
	FilteringServer
	// FilteringClient: the apiserver ignored the selector (a LIST without
	// shardInfo, or an object outside the shard arrived). Every object crosses the
	// wire and is decoded; the ListerWatcher drops those outside the shard.
	FilteringClient
)

// String is the Filtering as a status line says it.
func (f Filtering) String() string {
	switch f {
	case FilteringServer:
		return "server-side filtering"
	case FilteringClient:
		return "client-side filtering: the apiserver did not apply ShardSelector — enable feature gate " + shard.FeatureGate
	}
	return "filtering not known yet"
}

// ShardOptions configures WithShard. Only Shard is required.
type ShardOptions struct {
	// Shard is the part of the hash space to keep. Required (not the zero Shard).
	Shard shard.Shard
	// RequireServerSharding makes List and Watch fail with ErrServerNotSharding when
	// the apiserver does not apply the selector, instead of filtering on the client.
	RequireServerSharding bool
	// Logger receives the line that says the apiserver ignored the selector (Warn),
	// the first object dropped, and the line that says the apiserver applies it again.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Dropped, if set, is incremented once per object dropped for being outside the
	// shard.
	Dropped reflector.CounterMetric
	// ClientFiltering, if set, is 1 while the shard is filtered on the client and 0
	// once the apiserver is seen to filter it.
	ClientFiltering reflector.GaugeMetric
	// Tracer, if set, receives a trace.ShardFiltering event when who filters changes
	// and a trace.ShardDropped event for every object dropped, reported as Source
	// (the informer's name; "" reads "sharded").
	Tracer *trace.Tracer
	Source string
}

// ShardStatus is what a sharded ListerWatcher knows about its shard.
type ShardStatus struct {
	Shard     shard.Shard
	Filtering Filtering
	// Dropped counts the objects that arrived although they are outside the shard
	// (list items and watch events), all dropped.
	Dropped uint64
}

// String is the status in one line, for a health detail or a log.
func (s ShardStatus) String() string {
	return fmt.Sprintf("shard %s: %s; %d objects outside the shard dropped", s.Shard, s.Filtering, s.Dropped)
}

// Sharded is a ListerWatcher that lists and watches one shard of a resource: it sends
// the shard's selector as ListOptions.ShardSelector on every request — every LIST page
// (continue tokens included), every WATCH and every watch-list, so across relists,
// 410s and restarts — and checks every object that comes back with Shard.Contains.
// An object outside the shard is dropped before it reaches the reflector, counted,
// and the first one is logged.
//
// Whether the apiserver applied the selector is read from each LIST: the list's
// metadata.shardInfo echoes the selector it applied, and a server without the
// feature gate leaves it out. A watch-list has no LIST to read it from, so before
// each one Sharded asks with a LIST of at most one object (limit=1, one small request
// per relist); and any object outside the shard, in a list or a watch, shows the
// apiserver did not filter. Without server filtering the shard is still right —
// Sharded filters on the client — but every object crosses the wire and is decoded;
// the first time this is seen it is logged at Warn level (and again after each time
// the apiserver was seen to filter), and Status says so.
//
// uid and namespace never change on an object, so an object never moves between
// shards: every event of an object inside the shard is kept, every event of one
// outside is dropped, and there is no "moved in" or "moved out" to handle.
//
// Differences from client-go: client-go 1.37 has no shard support beyond the raw
// ListOptions.ShardSelector field, which it sends if a tweak sets it and never
// checks.
type Sharded[T reflector.Object] struct {
	inner    reflector.ListerWatcher[T]
	opts     ShardOptions
	selector string
	logger   *slog.Logger

	filtering atomic.Int32
	dropped   atomic.Uint64
	// loggedDrop: the first dropped object was logged.
	loggedDrop atomic.Bool
	// mu serialises the transitions of filtering and their log lines.
	mu sync.Mutex
}

var (
	_ reflector.ListerWatcher[reflector.Object] = (*Sharded[reflector.Object])(nil)
	_ reflector.WatchListUnsupporter            = (*Sharded[reflector.Object])(nil)
)

// WithShard returns lw restricted to opts.Shard. lw must send ListOptions.ShardSelector
// to the server as it is given (RESTListerWatcher does, and so does any ListerWatcher
// that passes the options through) and report the list's shardInfo in
// ListResult.ShardSelector; one that does neither still gets the right objects, by
// client-side filtering.
func WithShard[T reflector.Object](lw reflector.ListerWatcher[T], opts ShardOptions) (*Sharded[T], error) {
	if lw == nil {
		return nil, fmt.Errorf("%w: nil ListerWatcher", ErrInvalidOptions)
	}
	if opts.Shard.IsZero() {
		return nil, fmt.Errorf("%w: WithShard needs a Shard (shard.Split, shard.New or shard.Parse)", ErrInvalidOptions)
	}
	return &Sharded[T]{
		inner: lw, opts: opts, selector: opts.Shard.String(),
		logger: cmp.Or(opts.Logger, slog.Default()).With("shard", opts.Shard.String()),
	}, nil
}

// Status reports the shard, who filters it, and how many objects were dropped.
func (s *Sharded[T]) Status() ShardStatus {
	return ShardStatus{Shard: s.opts.Shard, Filtering: Filtering(s.filtering.Load()), Dropped: s.dropped.Load()}
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher declares.
func (s *Sharded[T]) IsWatchListSemanticsUnSupported() bool {
	u, ok := s.inner.(reflector.WatchListUnsupporter)
	return ok && u.IsWatchListSemanticsUnSupported()
}

// List lists one page of the shard.
func (s *Sharded[T]) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[T], error) {
	opts.ShardSelector = s.selector
	res, err := s.inner.List(ctx, opts)
	if err != nil {
		return res, err
	}
	s.learn(res.ShardSelector != "")
	kept := res.Items[:0]
	for _, o := range res.Items {
		if s.keep(o) {
			kept = append(kept, o)
		}
	}
	clear(res.Items[len(kept):]) // let the dropped objects go
	res.Items = kept
	if err := s.refuse(); err != nil {
		return reflector.ListResult[T]{}, err
	}
	return res, nil
}

// Watch opens a watch of the shard. Before a watch-list it asks the apiserver whether
// it applies the selector, with a LIST of at most one object.
func (s *Sharded[T]) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[T], error) {
	opts.ShardSelector = s.selector
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		probe, err := s.inner.List(ctx, metav1.ListOptions{
			LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector,
			ShardSelector: s.selector, Limit: 1,
		})
		if err != nil {
			return nil, fmt.Errorf("asking whether the apiserver applies ShardSelector (a LIST with limit=1) before a watch-list: %w", err)
		}
		s.learn(probe.ShardSelector != "")
	}
	if err := s.refuse(); err != nil {
		return nil, err
	}
	w, err := s.inner.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	sw := &shardWatch[T]{inner: w, s: s, out: make(chan reflector.Event[T]), stop: make(chan struct{}), done: make(chan struct{})}
	go sw.run()
	return sw, nil
}

// learn records what a LIST said: applied is whether it echoed a shardInfo.
func (s *Sharded[T]) learn(applied bool) {
	if applied {
		s.setFiltering(FilteringServer)
	} else {
		s.setFiltering(FilteringClient)
	}
}

// refuse returns ErrServerNotSharding when RequireServerSharding is set and the
// apiserver is known not to filter: a LIST said so, or an object outside the shard
// arrived.
func (s *Sharded[T]) refuse() error {
	if s.opts.RequireServerSharding && Filtering(s.filtering.Load()) == FilteringClient {
		return s.notSharding()
	}
	return nil
}

func (s *Sharded[T]) notSharding() error {
	return fmt.Errorf("shard %s: %w (RequireServerSharding is set)", s.selector, ErrServerNotSharding)
}

// setFiltering moves to f, logging a change that matters: into client-side
// filtering at Warn, back to server-side at Info.
func (s *Sharded[T]) setFiltering(f Filtering) {
	if Filtering(s.filtering.Load()) == f {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := Filtering(s.filtering.Swap(int32(f)))
	if old == f {
		return
	}
	s.traceFiltering(f)
	switch f {
	case FilteringClient:
		if g := s.opts.ClientFiltering; g != nil {
			g.Set(1)
		}
		s.logger.Warn("client-side filtering: the apiserver did not apply ShardSelector — enable feature gate "+shard.FeatureGate+
			"; every object is sent and decoded, and those outside the shard are dropped", "fraction", s.opts.Shard.Fraction())
	case FilteringServer:
		if g := s.opts.ClientFiltering; g != nil {
			g.Set(0)
		}
		if old == FilteringClient {
			s.logger.Info("the apiserver applies ShardSelector again: server-side filtering")
		}
	}
}

// keep reports whether o is in the shard; one that is not is counted, logged if it
// is the first, and shows that the apiserver does not filter.
func (s *Sharded[T]) keep(o T) bool {
	if s.opts.Shard.ContainsObject(o) {
		return true
	}
	s.dropped.Add(1)
	if m := s.opts.Dropped; m != nil {
		m.Inc()
	}
	s.setFiltering(FilteringClient)
	v := s.opts.Shard.Key().ValueOf(o)
	if t := s.opts.Tracer; t != nil {
		t.Emit(trace.Event{Stage: trace.Reflector, Kind: trace.ShardDropped, Source: s.source(),
			Key: objectKey(o), ResourceVersion: o.GetResourceVersion(),
			Detail: fmt.Sprintf("%s hashes to 0x%016x, outside the shard", v, shard.Hash(v))})
	}
	if s.loggedDrop.CompareAndSwap(false, true) {
		s.logger.Info("dropped an object outside the shard; later ones are counted, not logged",
			"namespace", o.GetNamespace(), "name", o.GetName(), "key", string(s.opts.Shard.Key()), "value", v,
			"hash", fmt.Sprintf("0x%016x", shard.Hash(v)))
	}
	return false
}

// traceFiltering reports a change of who filters to the tracer.
func (s *Sharded[T]) traceFiltering(f Filtering) {
	t := s.opts.Tracer
	if t == nil {
		return
	}
	e := trace.Event{Stage: trace.Reflector, Kind: trace.ShardFiltering, Source: s.source(), Detail: s.selector}
	switch f {
	case FilteringServer:
		e.Type, e.Reason = "server", "a LIST echoed the selector in metadata.shardInfo"
	case FilteringClient:
		e.Type, e.Reason = "client", "the apiserver did not apply ShardSelector — enable feature gate "+shard.FeatureGate
	default:
		return
	}
	t.Emit(e)
}

// source is the Source of the sharded ListerWatcher's trace events.
func (s *Sharded[T]) source() string { return cmp.Or(s.opts.Source, "sharded") }

// objectKey is o's namespace/name, or its name when it has no namespace: the key
// the cache would have given it.
func objectKey(o metav1.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// shardWatch passes on the events of a watch whose objects are in the shard, and
// every bookmark and error.
type shardWatch[T reflector.Object] struct {
	inner reflector.Watch[T]
	s     *Sharded[T]
	out   chan reflector.Event[T]
	// stop is closed by Stop; done when run has returned.
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func (w *shardWatch[T]) ResultChan() <-chan reflector.Event[T] { return w.out }

// Stop stops the wrapped watch and waits for the goroutine that filters it.
func (w *shardWatch[T]) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.inner.Stop()
	<-w.done
}

func (w *shardWatch[T]) run() {
	defer close(w.done)
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		var ev reflector.Event[T]
		select {
		case e, ok := <-in:
			if !ok {
				return
			}
			ev = e
		case <-w.stop:
			return
		}
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if !w.s.keep(ev.Object) {
				if w.s.opts.RequireServerSharding {
					// The apiserver stopped filtering while this watch was open (it
					// restarted without the gate): end the watch with an error the
					// reflector reports; the next List or Watch fails with
					// ErrServerNotSharding.
					ev = reflector.Event[T]{Type: watch.Error, Status: notShardingStatus(w.s.notSharding())}
					select {
					case w.out <- ev:
					case <-w.stop:
					}
					return
				}
				continue
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

// notShardingStatus is the Status of the Error event that ends a watch whose server
// stopped applying the selector under RequireServerSharding.
func notShardingStatus(err error) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError, Message: err.Error()}
}
