package workqueue

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// BucketOptions configures NewBucketRateLimiter. The zero value is the bucket of
// DefaultControllerRateLimiter: 10 tokens per second, 100 tokens deep.
type BucketOptions struct {
	// QPS is how many tokens per second flow into the bucket; 0 means 10.
	// math.Inf(1) means no limit: When always returns 0.
	QPS float64
	// Burst is the bucket's capacity, and so the number of retries that can go
	// immediately after a quiet period; 0 means 100.
	Burst int
}

const (
	defaultQPS   = 10
	defaultBurst = 100
)

// BucketRateLimiter is a token bucket shared by all items: it limits the overall retry
// rate, not any one item. Every When takes a token; when the bucket is empty, When
// returns how long until the token it took will have flowed in. It counts no failures
// (NumRequeues is always 0, Forget does nothing).
//
// The bucket starts full. Between calls it refills at QPS tokens per second, up to
// Burst. The level may go negative: each When reserves a token from the future, so
// retries are spaced 1/QPS apart however many are asked for at once.
//
// Differences from client-go: client-go wraps golang.org/x/time/rate (Reserve().Delay()),
// which allocates a Reservation per call; this is the same arithmetic with no
// allocation and no dependency. A test replays one schedule through both and compares
// the delays.
//
// client-go: util/workqueue/default_rate_limiters.go TypedBucketRateLimiter
type BucketRateLimiter[T comparable] struct {
	mu sync.Mutex
	// qps and burst are immutable.
	qps, burst float64
	// tokens is guarded by mu: the level at time last; negative when tokens are owed.
	tokens float64
	// last is guarded by mu: the time of the previous When; zero before the first one,
	// which is how the bucket starts full.
	last time.Time
}

// NewBucketRateLimiter returns a token bucket. It returns an error wrapping
// ErrInvalidArgument for a negative or NaN QPS or a negative Burst.
//
// client-go: util/workqueue/default_rate_limiters.go TypedBucketRateLimiter
func NewBucketRateLimiter[T comparable](opts BucketOptions) (*BucketRateLimiter[T], error) {
	if opts.QPS < 0 || math.IsNaN(opts.QPS) || opts.Burst < 0 {
		return nil, fmt.Errorf("%w: bucket QPS %v and Burst %d must not be negative",
			ErrInvalidArgument, opts.QPS, opts.Burst)
	}
	qps, burst := opts.QPS, opts.Burst
	if qps == 0 {
		qps = defaultQPS
	}
	if burst == 0 {
		burst = defaultBurst
	}
	return newBucket[T](qps, burst), nil
}

func newBucket[T comparable](qps float64, burst int) *BucketRateLimiter[T] {
	return &BucketRateLimiter[T]{qps: qps, burst: float64(burst)}
}

// When takes a token and returns how long the caller must wait for it: 0 while the
// bucket holds one, else the time for the shortfall to flow in.
//
// client-go: util/workqueue/default_rate_limiters.go TypedBucketRateLimiter.When
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	if math.IsInf(r.qps, 1) {
		return 0
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refillLocked(now)
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	wait := -r.tokens / r.qps * float64(time.Second)
	if wait > math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(wait)
}

// refillLocked adds the tokens that flowed in since last, up to burst, and moves last
// to now.
func (r *BucketRateLimiter[T]) refillLocked(now time.Time) {
	if r.last.IsZero() {
		r.tokens = r.burst
	} else if elapsed := now.Sub(r.last); elapsed > 0 {
		r.tokens = min(r.burst, r.tokens+elapsed.Seconds()*r.qps)
	}
	if now.After(r.last) {
		r.last = now
	}
}

// NumRequeues is always 0: the bucket does not track items.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// Forget does nothing: the bucket does not track items.
func (r *BucketRateLimiter[T]) Forget(T) {}
