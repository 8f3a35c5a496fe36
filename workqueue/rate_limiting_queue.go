package workqueue

import "github.com/kubeinternals/informers/trace"

// RateLimitingInterface is a delaying work queue whose retries are paced by a
// RateLimiter. The usual worker loop:
//
//	key, shutdown := q.Get()
//	if shutdown { return }
//	err := reconcile(key)
//	switch {
//	case err == nil:            q.Forget(key)          // success: reset its backoff
//	case q.NumRequeues(key) < 5: q.AddRateLimited(key) // retry later
//	default:                    q.Forget(key)          // give up
//	}
//	q.Done(key) // always, after Forget or AddRateLimited
//
// client-go: util/workqueue/rate_limiting_queue.go TypedRateLimitingInterface
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]
	// AddRateLimited adds item after the delay the rate limiter gives it.
	AddRateLimited(item T)
	// Forget tells the rate limiter to stop tracking item. It does not replace Done.
	Forget(item T)
	// NumRequeues returns how many times item was rate-limited since its last Forget.
	NumRequeues(item T) int
}

// RateLimitingOptions configures NewRateLimitingQueue. The zero value is an unnamed
// queue with DefaultControllerRateLimiter and no metrics.
type RateLimitingOptions[T comparable] struct {
	Options
	// RateLimiter paces AddRateLimited; nil means DefaultControllerRateLimiter[T]().
	RateLimiter RateLimiter[T]
}

// RateLimitingQueue is a DelayingQueue whose AddRateLimited asks a RateLimiter for the
// delay. Build it with NewRateLimitingQueue.
//
// Simplified: client-go lets you inject the DelayingInterface it wraps (and the
// delaying queue lets you inject its Queue). We always build our own; a caller who
// needs different behaviour can wrap the interfaces. Embedding the concrete types lets
// every call go straight to the method instead of through an interface.
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType
type RateLimitingQueue[T comparable] struct {
	DelayingQueue[T]
	// limiter is immutable.
	limiter RateLimiter[T]
}

var _ RateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)

// NewRateLimitingQueue returns an empty rate-limiting queue. It starts no goroutine.
//
// Pitfall: remember Forget. A limiter that tracks items (like the exponential backoff)
// keeps counting failures of an item until it is forgotten.
//
// client-go: util/workqueue/rate_limiting_queue.go NewTypedRateLimitingQueueWithConfig
func NewRateLimitingQueue[T comparable](opts RateLimitingOptions[T]) *RateLimitingQueue[T] {
	q := &RateLimitingQueue[T]{limiter: opts.RateLimiter}
	if q.limiter == nil {
		q.limiter = DefaultControllerRateLimiter[T]()
	}
	q.DelayingQueue.init(opts.Options)
	return q
}

// AddRateLimited is AddAfter(item, When(item)): it records a failure in the limiter and
// adds item once the limiter's delay has passed.
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.AddRateLimited
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	delay := q.limiter.When(item)
	requeues := 0
	if q.tracer != nil {
		requeues = q.limiter.NumRequeues(item)
	}
	q.addAfter(item, delay, trace.RateLimited, requeues)
}

// Forget clears item's history in the rate limiter. The caller must still call Done.
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.Forget
func (q *RateLimitingQueue[T]) Forget(item T) {
	q.limiter.Forget(item)
	if q.tracer != nil {
		q.tracer.Emit(trace.Event{Stage: trace.Workqueue, Kind: trace.Forgot, Source: q.name, Key: trace.KeyOf(item)})
	}
}

// NumRequeues returns the rate limiter's failure count for item.
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.NumRequeues
func (q *RateLimitingQueue[T]) NumRequeues(item T) int {
	return q.limiter.NumRequeues(item)
}
