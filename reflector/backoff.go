package reflector

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Default backoff between failed list/watch attempts: 800ms, doubling, capped at 30s,
// each delay stretched by up to 100% jitter, forgotten after 2 minutes without a
// failure. Against an unhealthy API server this settles at one request every 30–60s.
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
	ResetAfter time.Duration // a gap this long since the last delay ended starts over
}

// backoff computes successive delays. It is not safe for concurrent use: the
// goroutine running Reflector.Run owns it.
//
// client-go: apimachinery/pkg/util/wait/backoff.go backoffManager.Step
type backoff struct {
	opts BackoffOptions
	next time.Duration // base of the next delay, before jitter
	// quietSince is when the last delay ended; zero before the first failure.
	quietSince time.Time
	rand       func() float64 // [0,1); replaced in tests
}

// newBackoff validates opts, fills in defaults and returns a fresh backoff.
func newBackoff(opts BackoffOptions) (*backoff, error) {
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
	return &backoff{opts: opts, next: min(opts.Initial, opts.Max), rand: rand.Float64}, nil
}

// Next returns the delay to wait now, at time now, and advances the sequence.
//
// Differences from client-go: client-go starts over when 2 minutes have passed
// since the sequence *started*, so during a long outage its delay drops back to
// 800ms every 2 minutes. We start over only after 2 minutes *without a failure*
// (measured from the end of the previous delay), which is what the comment in
// client-go intends: "If we don't backoff for 2min, assume API server is healthy".
func (b *backoff) Next(now time.Time) time.Duration {
	if !b.quietSince.IsZero() && now.Sub(b.quietSince) >= b.opts.ResetAfter {
		b.next = min(b.opts.Initial, b.opts.Max)
	}
	base := b.next
	b.next = min(time.Duration(float64(b.next)*b.opts.Factor), b.opts.Max)
	d := base + time.Duration(b.rand()*b.opts.Jitter*float64(base))
	b.quietSince = now.Add(d)
	return d
}
