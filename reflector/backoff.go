package reflector

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Default backoff between failed list/watch attempts: 800ms, doubling, capped at 30s,
// each delay stretched by up to 100% jitter, started over by the first failure more
// than 2 minutes after the sequence began. Against an unhealthy API server this
// settles at one request every 30–60s, with a burst of quick retries every 2–3 minutes.
//
// client-go: tools/cache/reflector.go defaultBackoffInit, defaultBackoffMax, defaultBackoffReset
const (
	DefaultBackoffInitial    = 800 * time.Millisecond
	DefaultBackoffMax        = 30 * time.Second
	DefaultBackoffFactor     = 2.0
	DefaultBackoffJitter     = 1.0
	DefaultBackoffResetAfter = 2 * time.Minute
)

// BackoffOptions shapes the delay between failed attempts. Every zero field takes
// its default above.
type BackoffOptions struct {
	Initial    time.Duration // first delay
	Max        time.Duration // cap on the delay before jitter
	Factor     float64       // growth per failure, >= 1
	Jitter     float64       // each delay d becomes d + rand[0,1)*Jitter*d
	ResetAfter time.Duration // a failure more than this long after the sequence began starts it over
}

// backoff computes successive delays. It is not safe for concurrent use: the
// goroutine running Reflector.Run owns it.
//
// client-go: apimachinery/pkg/util/wait/backoff.go backoffManager.Step
type backoff struct {
	opts BackoffOptions
	next time.Duration // base of the next delay, before jitter
	// began is when the current sequence began: when the backoff was made, then at
	// each start-over.
	began time.Time
	rand  func() float64 // [0,1); replaced in tests
}

// newBackoff validates opts, fills in defaults and returns a fresh backoff whose
// sequence begins at now.
func newBackoff(opts BackoffOptions, now time.Time) (*backoff, error) {
	if opts.Initial < 0 || opts.Max < 0 || opts.ResetAfter < 0 || opts.Jitter < 0 || (opts.Factor != 0 && opts.Factor < 1) {
		return nil, fmt.Errorf("%w: Backoff %+v: durations and Jitter must be >= 0 and Factor >= 1", ErrInvalidOptions, opts)
	}
	if opts.Initial == 0 {
		opts.Initial = DefaultBackoffInitial
	}
	if opts.Max == 0 {
		opts.Max = DefaultBackoffMax
	}
	if opts.Factor == 0 {
		opts.Factor = DefaultBackoffFactor
	}
	if opts.Jitter == 0 {
		opts.Jitter = DefaultBackoffJitter
	}
	if opts.ResetAfter == 0 {
		opts.ResetAfter = DefaultBackoffResetAfter
	}
	return &backoff{opts: opts, next: min(opts.Initial, opts.Max), began: now, rand: rand.Float64}, nil
}

// Next returns the delay to wait now, at time now, and advances the sequence. A call
// more than ResetAfter after the sequence began starts it over, from Initial: during
// a long outage the delay climbs to 30–60s and drops back to 800ms every 2–3 minutes.
//
// Pitfall: the other rule — start over after ResetAfter *without a failure*, which
// client-go's comment on defaultBackoffReset describes ("If we don't backoff for 2min,
// assume API server is healthy") — never starts over during an outage, an unbroken
// run of failures. The delay then stays at 30–60s to the end, and so does the wait
// for the relist after the API server's return (a restarted server's new watch cache
// answers the re-watch with 410): after a 5-minute outage such a reflector was
// current later than client-go's (bench/README.md, "After a long outage").
//
// client-go: apimachinery/pkg/util/wait/backoff.go backoffManager.Step
func (b *backoff) Next(now time.Time) time.Duration {
	if now.Sub(b.began) > b.opts.ResetAfter {
		b.next = min(b.opts.Initial, b.opts.Max)
		b.began = now
	}
	base := b.next
	b.next = min(time.Duration(float64(b.next)*b.opts.Factor), b.opts.Max)
	return base + time.Duration(b.rand()*b.opts.Jitter*float64(base))
}
