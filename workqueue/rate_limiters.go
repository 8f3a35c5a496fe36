package workqueue

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// RateLimiter decides how long an item waits before it is retried.
//
// client-go: util/workqueue/default_rate_limiters.go TypedRateLimiter
type RateLimiter[T comparable] interface {
	// When records one more failure of item and returns how long it should wait.
	When(item T) time.Duration
	// Forget stops tracking item, after a success or after giving up on it.
	Forget(item T)
	// NumRequeues returns how many failures are recorded for item.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter returns the limiter most controllers use: the larger of
// a per-item exponential backoff (5ms doubling up to 1000s) and a token bucket shared
// by all items (10 retries per second, bursts of 100). The bucket stops a mass failure
// from retrying thousands of items at once; the backoff slows down each failing item.
//
// client-go: util/workqueue/default_rate_limiters.go DefaultTypedControllerRateLimiter
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: []RateLimiter[T]{
		newItemExponentialFailure[T](defaultBaseDelay, defaultMaxDelay),
		newBucket[T](defaultQPS, defaultBurst),
	}}
}

// DefaultItemBasedRateLimiter returns an exponential backoff from 1ms to 1000s with no
// overall bucket.
//
// client-go: util/workqueue/default_rate_limiters.go DefaultTypedItemBasedRateLimiter
func DefaultItemBasedRateLimiter[T comparable]() RateLimiter[T] {
	return newItemExponentialFailure[T](time.Millisecond, defaultMaxDelay)
}

// ExponentialFailureOptions configures NewItemExponentialFailureRateLimiter. The zero
// value gives the backoff of DefaultControllerRateLimiter: 5ms doubling up to 1000s.
type ExponentialFailureOptions struct {
	// BaseDelay is the delay after the first failure; 0 means 5ms.
	BaseDelay time.Duration
	// MaxDelay caps the delay; 0 means 1000s. It must not be less than BaseDelay.
	MaxDelay time.Duration
}

const (
	defaultBaseDelay = 5 * time.Millisecond
	defaultMaxDelay  = 1000 * time.Second
)

// ItemExponentialFailureRateLimiter delays the n-th failure of an item (counting from
// zero) by BaseDelay·2ⁿ, capped at MaxDelay. Giving up after some number of failures is
// the caller's job (see NumRequeues).
//
// Pitfall: it remembers every item that ever failed until Forget; a controller that
// never calls Forget keeps a map entry per key forever and keeps backing off an item
// that has since succeeded.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter
type ItemExponentialFailureRateLimiter[T comparable] struct {
	mu sync.Mutex
	// failures is guarded by mu: failures recorded per item since its last Forget.
	failures map[T]int
	// baseDelay and maxDelay are immutable.
	baseDelay, maxDelay time.Duration
}

// NewItemExponentialFailureRateLimiter returns an exponential per-item backoff. It
// returns an error wrapping ErrInvalidArgument for a negative delay or a MaxDelay below
// BaseDelay.
//
// client-go: util/workqueue/default_rate_limiters.go NewTypedItemExponentialFailureRateLimiter
func NewItemExponentialFailureRateLimiter[T comparable](opts ExponentialFailureOptions) (*ItemExponentialFailureRateLimiter[T], error) {
	base, maxDelay := opts.BaseDelay, opts.MaxDelay
	if base < 0 || maxDelay < 0 {
		return nil, fmt.Errorf("%w: exponential backoff delays must not be negative (BaseDelay %v, MaxDelay %v)",
			ErrInvalidArgument, base, maxDelay)
	}
	if base == 0 {
		base = defaultBaseDelay
	}
	if maxDelay == 0 {
		maxDelay = defaultMaxDelay
	}
	if maxDelay < base {
		return nil, fmt.Errorf("%w: exponential backoff MaxDelay %v is less than BaseDelay %v",
			ErrInvalidArgument, maxDelay, base)
	}
	return newItemExponentialFailure[T](base, maxDelay), nil
}

func newItemExponentialFailure[T comparable](base, maxDelay time.Duration) *ItemExponentialFailureRateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{failures: make(map[T]int), baseDelay: base, maxDelay: maxDelay}
}

// When records a failure and returns BaseDelay·2^(earlier failures), capped at MaxDelay.
// The first failure waits BaseDelay.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter.When
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	exp := r.failures[item]
	r.failures[item] = exp + 1
	r.mu.Unlock()
	return exponentialDelay(r.baseDelay, r.maxDelay, exp)
}

// exponentialDelay returns min(base·2^exp, maxDelay) for base > 0, exactly.
//
// Differences from client-go: client-go computes the product in float64 and returns
// maxDelay when it is greater than float64(MaxInt64). That float is 2^63, so a product
// of exactly 2^63 ns (base 1ns at the 64th failure, 1024ns at the 54th, …) passes the
// check and converts to a negative Duration: an immediate retry where the longest wait
// was due. Bases above 2^53 ns (104 days) are also rounded. Shifting integers, with an
// exact overflow check, avoids both.
func exponentialDelay(base, maxDelay time.Duration, exp int) time.Duration {
	if exp >= 63 || base > math.MaxInt64>>exp {
		return maxDelay // base·2^exp does not fit in a Duration.
	}
	return min(base<<exp, maxDelay)
}

// NumRequeues returns the failures recorded for item since its last Forget.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter.NumRequeues
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets item's backoff.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter.Forget
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// FastSlowOptions configures NewItemFastSlowRateLimiter. The zero value retries
// immediately, every time.
type FastSlowOptions struct {
	// FastDelay is the delay of the first MaxFastAttempts failures of an item.
	FastDelay time.Duration
	// SlowDelay is the delay of every later failure.
	SlowDelay time.Duration
	// MaxFastAttempts is how many failures get FastDelay.
	MaxFastAttempts int
}

// ItemFastSlowRateLimiter retries an item quickly a few times, then slowly.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemFastSlowRateLimiter
type ItemFastSlowRateLimiter[T comparable] struct {
	mu sync.Mutex
	// failures is guarded by mu: failures recorded per item since its last Forget.
	failures map[T]int
	// opts is immutable.
	opts FastSlowOptions
}

// NewItemFastSlowRateLimiter returns a fast-then-slow per-item limiter. It returns an
// error wrapping ErrInvalidArgument for a negative delay or attempt count.
//
// client-go: util/workqueue/default_rate_limiters.go NewTypedItemFastSlowRateLimiter
func NewItemFastSlowRateLimiter[T comparable](opts FastSlowOptions) (*ItemFastSlowRateLimiter[T], error) {
	if opts.FastDelay < 0 || opts.SlowDelay < 0 || opts.MaxFastAttempts < 0 {
		return nil, fmt.Errorf("%w: fast-slow limiter options must not be negative (FastDelay %v, SlowDelay %v, MaxFastAttempts %d)",
			ErrInvalidArgument, opts.FastDelay, opts.SlowDelay, opts.MaxFastAttempts)
	}
	return &ItemFastSlowRateLimiter[T]{failures: make(map[T]int), opts: opts}, nil
}

// When records a failure and returns FastDelay for the first MaxFastAttempts failures,
// SlowDelay after that.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemFastSlowRateLimiter.When
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item] + 1
	r.failures[item] = n
	r.mu.Unlock()
	if n <= r.opts.MaxFastAttempts {
		return r.opts.FastDelay
	}
	return r.opts.SlowDelay
}

// NumRequeues returns the failures recorded for item since its last Forget.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemFastSlowRateLimiter.NumRequeues
func (r *ItemFastSlowRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets item's failure count.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemFastSlowRateLimiter.Forget
func (r *ItemFastSlowRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// MaxOfRateLimiter combines limiters: an item waits as long as the strictest of them says.
//
// Pitfall: with a token bucket inside, the bucket's burst can look exceeded, because an
// item that another limiter delayed longer still consumed a token at When time.
//
// client-go: util/workqueue/default_rate_limiters.go TypedMaxOfRateLimiter
type MaxOfRateLimiter[T comparable] struct {
	// limiters is immutable.
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter combines limiters. It returns an error wrapping
// ErrInvalidArgument when given no limiter or a nil one.
//
// client-go: util/workqueue/default_rate_limiters.go NewTypedMaxOfRateLimiter
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) (*MaxOfRateLimiter[T], error) {
	if len(limiters) == 0 {
		return nil, fmt.Errorf("%w: MaxOf needs at least one limiter", ErrInvalidArgument)
	}
	for i, l := range limiters {
		if l == nil {
			return nil, fmt.Errorf("%w: MaxOf limiter %d is nil", ErrInvalidArgument, i)
		}
	}
	return &MaxOfRateLimiter[T]{limiters: append([]RateLimiter[T](nil), limiters...)}, nil
}

// When asks every limiter and returns the longest delay.
//
// Why every limiter is asked even after one has answered: When is also how each of
// them records the failure (a token taken, a failure counted).
//
// client-go: util/workqueue/default_rate_limiters.go TypedMaxOfRateLimiter.When
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var longest time.Duration
	for _, l := range r.limiters {
		longest = max(longest, l.When(item))
	}
	return longest
}

// NumRequeues returns the largest count any limiter reports.
//
// client-go: util/workqueue/default_rate_limiters.go TypedMaxOfRateLimiter.NumRequeues
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	var most int
	for _, l := range r.limiters {
		most = max(most, l.NumRequeues(item))
	}
	return most
}

// Forget forgets item in every limiter.
//
// client-go: util/workqueue/default_rate_limiters.go TypedMaxOfRateLimiter.Forget
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// WithMaxWaitRateLimiter caps the delay of another limiter.
//
// client-go: util/workqueue/default_rate_limiters.go TypedWithMaxWaitRateLimiter
type WithMaxWaitRateLimiter[T comparable] struct {
	// limiter and maxWait are immutable.
	limiter RateLimiter[T]
	maxWait time.Duration
}

// NewWithMaxWaitRateLimiter caps limiter's delays at maxWait. It returns an error
// wrapping ErrInvalidArgument for a nil limiter or a negative maxWait.
//
// client-go: util/workqueue/default_rate_limiters.go NewTypedWithMaxWaitRateLimiter
func NewWithMaxWaitRateLimiter[T comparable](limiter RateLimiter[T], maxWait time.Duration) (*WithMaxWaitRateLimiter[T], error) {
	if limiter == nil {
		return nil, fmt.Errorf("%w: WithMaxWait needs a limiter", ErrInvalidArgument)
	}
	if maxWait < 0 {
		return nil, fmt.Errorf("%w: WithMaxWait maxWait %v is negative", ErrInvalidArgument, maxWait)
	}
	return &WithMaxWaitRateLimiter[T]{limiter: limiter, maxWait: maxWait}, nil
}

// When returns the inner limiter's delay, capped at maxWait.
//
// client-go: util/workqueue/default_rate_limiters.go TypedWithMaxWaitRateLimiter.When
func (r *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(r.limiter.When(item), r.maxWait)
}

// NumRequeues returns the inner limiter's count.
func (r *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int { return r.limiter.NumRequeues(item) }

// Forget forgets item in the inner limiter.
func (r *WithMaxWaitRateLimiter[T]) Forget(item T) { r.limiter.Forget(item) }
