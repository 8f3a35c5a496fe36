package parity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeinternals/informers/parity/internal/check"
	"github.com/kubeinternals/informers/workqueue"
	"golang.org/x/time/rate"
	cgwq "k8s.io/client-go/util/workqueue"
)

// delaySide is what the delaying and rate-limiting tests drive. The rate-limiting
// methods are only called by TestRateLimitingQueue, whose queues have them.
type delaySide interface {
	queueSide
	AddAfter(item int, d time.Duration)
	AddRateLimited(item int)
	Forget(item int)
	NumRequeues(item int) int
}

// oursDelay adapts our DelayingQueue or RateLimitingQueue to delaySide.
type oursDelay struct {
	workqueue.DelayingInterface[int]
}

func (q oursDelay) ShutDownWithDrain() {
	_ = q.DelayingInterface.ShutDownWithDrain(context.Background())
}
func (q oursDelay) rl() workqueue.RateLimitingInterface[int] {
	return q.DelayingInterface.(workqueue.RateLimitingInterface[int])
}
func (q oursDelay) AddRateLimited(item int)  { q.rl().AddRateLimited(item) }
func (q oursDelay) Forget(item int)          { q.rl().Forget(item) }
func (q oursDelay) NumRequeues(item int) int { return q.rl().NumRequeues(item) }

// cgDelay adapts client-go's delaying or rate-limiting queue to delaySide.
type cgDelay struct {
	cgwq.TypedDelayingInterface[int]
}

func (q cgDelay) rl() cgwq.TypedRateLimitingInterface[int] {
	return q.TypedDelayingInterface.(cgwq.TypedRateLimitingInterface[int])
}
func (q cgDelay) AddRateLimited(item int)  { q.rl().AddRateLimited(item) }
func (q cgDelay) Forget(item int)          { q.rl().Forget(item) }
func (q cgDelay) NumRequeues(item int) int { return q.rl().NumRequeues(item) }

// delayOp is one step of the delaying and rate-limiting tests.
type delayOp struct {
	kind string        // add, after, ratelimited, forget, requeues, sleep, get, done, shutdown, drain
	item int           // the item; done: which held item, by position
	d    time.Duration // after: the delay; sleep: how long; get: how long to wait at most
}

func (o delayOp) String() string {
	switch o.kind {
	case "add":
		return fmt.Sprintf("Add(%d)", o.item)
	case "after":
		return fmt.Sprintf("AddAfter(%d, %v)", o.item, o.d)
	case "ratelimited":
		return fmt.Sprintf("AddRateLimited(%d)", o.item)
	case "forget":
		return fmt.Sprintf("Forget(%d)", o.item)
	case "requeues":
		return fmt.Sprintf("NumRequeues(%d)", o.item)
	case "sleep":
		return fmt.Sprintf("Sleep(%v)", o.d)
	case "get":
		return fmt.Sprintf("Get (waiting at most %v)", o.d)
	case "done":
		return fmt.Sprintf("Done(held #%d)", o.item)
	case "shutdown":
		return "ShutDown"
	}
	return "ShutDownWithDrain (in a goroutine)"
}

// delays are the AddAfter delays: zero and negative (a plain Add), milliseconds, and
// seconds past client-go's 10 s heartbeat.
var delays = []time.Duration{0, -time.Millisecond, -time.Second, time.Nanosecond, time.Millisecond,
	3 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, 250 * time.Millisecond,
	time.Second, 3 * time.Second, 12 * time.Second}

func pickDelay(r *rand.Rand) time.Duration {
	if r.IntN(4) == 0 {
		return time.Duration(1+r.IntN(2000)) * time.Millisecond
	}
	return delays[r.IntN(len(delays))]
}

// genDelayOps makes a sequence over five items; rateLimited adds AddRateLimited,
// Forget and NumRequeues to the mix.
func genDelayOps(rateLimited bool) check.Generator[delayOp] {
	return func(r *rand.Rand) []delayOp {
		ops := make([]delayOp, 10+r.IntN(40))
		for i := range ops {
			item := r.IntN(5)
			switch p := r.IntN(100); {
			case p < 10:
				ops[i] = delayOp{kind: "add", item: item}
			case p < 35:
				ops[i] = delayOp{kind: "after", item: item, d: pickDelay(r)}
			case p < 50:
				ops[i] = delayOp{kind: "sleep", d: pickDelay(r)}
			case p < 70:
				ops[i] = delayOp{kind: "get", d: []time.Duration{time.Millisecond, 100 * time.Millisecond, 5 * time.Second}[r.IntN(3)]}
			case p < 88:
				ops[i] = delayOp{kind: "done", item: r.IntN(3)}
			case p < 89:
				ops[i] = delayOp{kind: "drain"}
			case p < 90:
				ops[i] = delayOp{kind: "shutdown"}
			case !rateLimited:
				ops[i] = delayOp{kind: "after", item: item, d: pickDelay(r)}
			case p < 96:
				ops[i] = delayOp{kind: "ratelimited", item: item}
			case p < 98:
				ops[i] = delayOp{kind: "forget", item: item}
			default:
				ops[i] = delayOp{kind: "requeues", item: item}
			}
		}
		return ops
	}
}

// simplifyDelay offers the same step with half the delay.
func simplifyDelay(o delayOp) []delayOp {
	if o.d > time.Millisecond || o.d < -time.Millisecond {
		return []delayOp{{kind: o.kind, item: o.item, d: o.d / 2}}
	}
	return nil
}

// sentinel is the item a Get waits for when nothing else is due: see runDelayOps.
const sentinel = -1

// runDelayOps plays ops against one queue inside a synctest bubble and writes what it
// saw, stamping each observation with the fake time since the bubble began (every
// bubble starts at the same instant, so the stamps of the two sides compare).
//
// A Get must not block forever, yet it must show the instant an item falls due. So
// when the side's queue is empty and not shutting down, the Get first adds the
// sentinel item after its wait limit: Get then returns whatever falls due first — a
// real item, or the sentinel at the limit — at the fake instant it fell due. The
// sentinel is Done at once; a sentinel still waiting when a real item came first stays
// in the queue on both sides alike.
//
// The queue is built inside the bubble (newQ): client-go's delaying queue starts its
// goroutine in the constructor, and both read the clock there.
func runDelayOps(t *testing.T, newQ func(*recorder) delaySide, ops []delayOp) (tr check.Transcript, err error) {
	bubble(t, &err, func() {
		start := time.Now()
		deadlines := map[time.Duration]bool{} // every deadline issued, since start
		lim := &recorder{deadlines: deadlines, start: start}
		q := newQ(lim)
		var held []int
		var drains []chan struct{}
		returned := map[int]bool{}
		shutDown := false // whether the queue's ShutDown was called
		observe := func() {
			synctest.Wait()
			for i, d := range drains {
				select {
				case <-d:
					if !returned[i] {
						returned[i] = true
						tr.Printf("  drain #%d returned", i)
					}
				default:
				}
			}
			tr.Printf("  +%v len=%d shuttingDown=%v", time.Since(start), q.Len(), q.ShuttingDown())
		}
		for _, op := range ops {
			tr.Printf("%s", op)
			switch op.kind {
			case "add":
				q.Add(op.item)
			case "after":
				d := op.d
				if d > 0 {
					// Two items due at the same instant leave the queue in a different
					// order (exception "items due at the same instant",
					// workqueue_exceptions_test.go), so no deadline is issued twice.
					for deadlines[time.Since(start)+d] {
						d++
					}
					deadlines[time.Since(start)+d] = true
					if d != op.d {
						tr.Printf("  (delay moved to %v: that deadline was taken)", d)
					}
				}
				q.AddAfter(op.item, d)
			case "ratelimited":
				q.AddRateLimited(op.item)
				tr.Printf("  delay %v", lim.last)
				if lim.used != lim.last {
					tr.Printf("  (delay moved to %v: that deadline was taken)", lim.used)
				}
			case "forget":
				q.Forget(op.item)
			case "requeues":
				tr.Printf("  %d", q.NumRequeues(op.item))
			case "sleep":
				time.Sleep(op.d)
			case "get":
				if q.Len() == 0 && !q.ShuttingDown() {
					d := op.d
					for deadlines[time.Since(start)+d] {
						d++
					}
					deadlines[time.Since(start)+d] = true
					q.AddAfter(sentinel, d)
				}
				item, shutdown := q.Get()
				tr.Printf("  got %d shutdown=%v at +%v", item, shutdown, time.Since(start))
				switch {
				case shutdown:
				case item == sentinel:
					q.Done(sentinel)
				default:
					held = append(held, item)
				}
			case "done":
				held = doneOne(&tr, held, op.item, q.Done)
			case "shutdown":
				// client-go's delaying queue passes only its first ShutDown on to the
				// queue, so a later one does not end a drain that started after it;
				// ours does (exception "ShutDown of a delaying queue during a drain",
				// workqueue_exceptions_test.go). Not compared here.
				if shutDown && len(drains) > len(returned) {
					tr.Printf("  (ShutDown again while a drain waits; not called)")
					break
				}
				shutDown = true
				q.ShutDown()
			case "drain":
				// One drain at a time, as in TestWorkqueue.
				if len(drains) > len(returned) {
					tr.Printf("  (a drain is already waiting; not called)")
					break
				}
				d := make(chan struct{})
				drains = append(drains, d)
				go func() { q.ShutDownWithDrain(); close(d) }()
			}
			observe()
		}
		// Done for every held item ends a waiting drain in both libraries (see the
		// "shutdown" step for why ShutDown may not), so the bubble's goroutines can exit.
		for _, item := range held {
			tr.Printf("Done(%d) (end)", item)
			q.Done(item)
			observe()
		}
		tr.Printf("ShutDown (end)")
		q.ShutDown()
		observe()
	})
	return tr, err
}

// TestDelayingQueue compares the delaying queue on fake time: the instant each item
// falls due and is handed out, the order, a repeated AddAfter (the earlier time wins),
// a delay <= 0 (a plain Add), Len while items wait, and that shutdown drops waiting
// items and ignores later AddAfter calls.
//
// client-go: util/workqueue/delaying_queue.go delayingType.AddAfter
// client-go: util/workqueue/delaying_queue.go insert
// client-go: util/workqueue/delaying_queue.go delayingType.ShutDown
func TestDelayingQueue(t *testing.T) {
	check.Run(t, check.Config[delayOp]{Runs: 1000, Simplify: simplifyDelay}, genDelayOps(false), func(ops []delayOp) error {
		var ours, theirs check.Transcript
		var err error
		ours, err = runDelayOps(t, func(*recorder) delaySide { return oursDelay{workqueue.NewDelayingQueue[int](workqueue.Options{})} }, ops)
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		theirs, err = runDelayOps(t, func(*recorder) delaySide { return cgDelay{cgwq.NewTypedDelayingQueue[int]()} }, ops)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		return check.Transcripts(&ours, &theirs)
	})
}

// TestRateLimitingQueue compares the rate-limiting queue on fake time with the same
// limiter on both sides — the larger of a per-item backoff (2ms doubling up to 1s) and
// a small token bucket (20 per second, bursts of 3), so both decide delays within a
// run: when AddRateLimited items fall due, NumRequeues, and Forget resetting the
// backoff.
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.AddRateLimited
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.Forget
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.NumRequeues
func TestRateLimitingQueue(t *testing.T) {
	check.Run(t, check.Config[delayOp]{Runs: 1000, Simplify: simplifyDelay}, genDelayOps(true), func(ops []delayOp) error {
		var ours, theirs check.Transcript
		var err error
		ours, err = runDelayOps(t, func(rec *recorder) delaySide {
			rec.inner = oursQueueLimiter()
			return oursDelay{workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[int]{RateLimiter: rec})}
		}, ops)
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		theirs, err = runDelayOps(t, func(rec *recorder) delaySide {
			rec.inner = cgQueueLimiter()
			return cgDelay{cgwq.NewTypedRateLimitingQueue[int](rec)}
		}, ops)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		return check.Transcripts(&ours, &theirs)
	})
}

// oursQueueLimiter and cgQueueLimiter build TestRateLimitingQueue's limiter.
func oursQueueLimiter() workqueue.RateLimiter[int] {
	exp, err1 := workqueue.NewItemExponentialFailureRateLimiter[int](workqueue.ExponentialFailureOptions{BaseDelay: 2 * time.Millisecond, MaxDelay: time.Second})
	bucket, err2 := workqueue.NewBucketRateLimiter[int](workqueue.BucketOptions{QPS: 20, Burst: 3})
	both, err3 := workqueue.NewMaxOfRateLimiter[int](exp, bucket)
	if err := errors.Join(err1, err2, err3); err != nil {
		panic(err)
	}
	return both
}

func cgQueueLimiter() cgwq.TypedRateLimiter[int] {
	return cgwq.NewTypedMaxOfRateLimiter(
		cgwq.NewTypedItemExponentialFailureRateLimiter[int](2*time.Millisecond, time.Second),
		&cgwq.TypedBucketRateLimiter[int]{Limiter: rate.NewLimiter(20, 3)})
}

// limiter is the method set our RateLimiter and client-go's TypedRateLimiter share.
type limiter interface {
	When(item int) time.Duration
	Forget(item int)
	NumRequeues(item int) int
}

// recorder passes calls to a limiter of either library and keeps the last delay, so
// the transcript can show it. Like runDelayOps's AddAfter, it moves a delay by
// nanoseconds when its deadline was already issued: items due at the same instant are
// an exception (the limiters' own delays are compared exactly by TestRateLimiters).
type recorder struct {
	inner      limiter
	last, used time.Duration
	deadlines  map[time.Duration]bool
	start      time.Time
}

func (r *recorder) When(item int) time.Duration {
	r.last = r.inner.When(item)
	r.used = r.last
	if r.used > 0 {
		for r.deadlines[time.Since(r.start)+r.used] {
			r.used++
		}
		r.deadlines[time.Since(r.start)+r.used] = true
	}
	return r.used
}
func (r *recorder) Forget(item int)          { r.inner.Forget(item) }
func (r *recorder) NumRequeues(item int) int { return r.inner.NumRequeues(item) }
