package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kubeinternals/informers/parity/internal/check"
	"github.com/kubeinternals/informers/workqueue"
	"golang.org/x/time/rate"
	cgwq "k8s.io/client-go/util/workqueue"
)

// limSpec describes one rate limiter, built alike in both libraries.
type limSpec struct {
	kind string        // exponential, fastslow, bucket, maxof, maxwait, default, itembased
	a, b time.Duration // exponential: base, max; fastslow: fast, slow; maxwait: a is the cap
	n    int           // fastslow: fast attempts; bucket: burst
	qps  float64       // bucket
	subs []limSpec     // maxof: the limiters; maxwait: the one capped
}

func (s limSpec) String() string {
	switch s.kind {
	case "exponential":
		return fmt.Sprintf("Exponential(base %dns, max %dns)", s.a, s.b)
	case "fastslow":
		return fmt.Sprintf("FastSlow(fast %v, slow %v, attempts %d)", s.a, s.b, s.n)
	case "bucket":
		return fmt.Sprintf("Bucket(qps %v, burst %d)", s.qps, s.n)
	case "maxof", "maxwait":
		subs := make([]string, len(s.subs))
		for i, sub := range s.subs {
			subs[i] = sub.String()
		}
		if s.kind == "maxwait" {
			return fmt.Sprintf("WithMaxWait(%s, %v)", subs[0], s.a)
		}
		return "MaxOf(" + strings.Join(subs, ", ") + ")"
	case "default":
		return "DefaultControllerRateLimiter"
	}
	return "DefaultItemBasedRateLimiter"
}

// genLimSpec makes a random limiter, nested at most depth deep.
//
// The domain is where both libraries take the same parameters: no negative delays or
// MaxDelay below BaseDelay, QPS > 0 and Burst >= 1 (ours rejects them, or reads 0 as
// the default). Exponential bases stay below 2^53 ns and are no powers of two above
// 2^22 ns: exception "exponential backoff beyond float64" (client-go's float64
// product returns a negative delay there, and rounds bases above 2^53), and with at
// most 40 When calls a power-of-two base up to 2^22 never reaches 2^63.
func genLimSpec(r *rand.Rand, depth int) limSpec {
	kinds := []string{"exponential", "fastslow", "bucket", "default", "itembased"}
	if depth > 0 {
		kinds = append(kinds, "maxof", "maxwait")
	}
	switch kind := kinds[r.IntN(len(kinds))]; kind {
	case "exponential":
		base := time.Duration(1 + r.Int64N(int64(1)<<(1+r.IntN(52))))
		if base > 1<<22 && base&(base-1) == 0 {
			base++
		}
		maxes := []time.Duration{base, max(base, 1000*time.Second), math.MaxInt64, base + time.Duration(r.Int64N(int64(math.MaxInt64-base)))}
		return limSpec{kind: kind, a: base, b: maxes[r.IntN(len(maxes))]}
	case "fastslow":
		return limSpec{kind: kind, a: pickLimDelay(r), b: pickLimDelay(r), n: r.IntN(5)}
	case "bucket":
		qps := []float64{0.5, 1, 3, 10, 100, math.Inf(1), 0.01 + 1000*r.Float64()}[r.IntN(7)]
		return limSpec{kind: kind, qps: qps, n: 1 + r.IntN(10)}
	case "maxof":
		subs := make([]limSpec, 1+r.IntN(3))
		for i := range subs {
			subs[i] = genLimSpec(r, depth-1)
		}
		return limSpec{kind: kind, subs: subs}
	case "maxwait":
		return limSpec{kind: kind, a: pickLimDelay(r), subs: []limSpec{genLimSpec(r, depth-1)}}
	default:
		return limSpec{kind: kind}
	}
}

func pickLimDelay(r *rand.Rand) time.Duration {
	return []time.Duration{0, time.Nanosecond, 5 * time.Millisecond, time.Second, time.Duration(r.Int64N(int64(10 * time.Second)))}[r.IntN(5)]
}

func must[L any](l L, err error) L {
	if err != nil {
		panic(err)
	}
	return l
}

// buildOurs builds spec with our constructors.
func buildOurs(s limSpec) workqueue.RateLimiter[int] {
	switch s.kind {
	case "exponential":
		return must(workqueue.NewItemExponentialFailureRateLimiter[int](workqueue.ExponentialFailureOptions{BaseDelay: s.a, MaxDelay: s.b}))
	case "fastslow":
		return must(workqueue.NewItemFastSlowRateLimiter[int](workqueue.FastSlowOptions{FastDelay: s.a, SlowDelay: s.b, MaxFastAttempts: s.n}))
	case "bucket":
		return must(workqueue.NewBucketRateLimiter[int](workqueue.BucketOptions{QPS: s.qps, Burst: s.n}))
	case "maxof":
		subs := make([]workqueue.RateLimiter[int], len(s.subs))
		for i, sub := range s.subs {
			subs[i] = buildOurs(sub)
		}
		return must(workqueue.NewMaxOfRateLimiter(subs...))
	case "maxwait":
		return must(workqueue.NewWithMaxWaitRateLimiter(buildOurs(s.subs[0]), s.a))
	case "default":
		return workqueue.DefaultControllerRateLimiter[int]()
	}
	return workqueue.DefaultItemBasedRateLimiter[int]()
}

// buildClientGo builds spec with client-go's constructors.
func buildClientGo(s limSpec) cgwq.TypedRateLimiter[int] {
	switch s.kind {
	case "exponential":
		return cgwq.NewTypedItemExponentialFailureRateLimiter[int](s.a, s.b)
	case "fastslow":
		return cgwq.NewTypedItemFastSlowRateLimiter[int](s.a, s.b, s.n)
	case "bucket":
		qps := rate.Limit(s.qps)
		if math.IsInf(s.qps, 1) {
			qps = rate.Inf
		}
		return &cgwq.TypedBucketRateLimiter[int]{Limiter: rate.NewLimiter(qps, s.n)}
	case "maxof":
		subs := make([]cgwq.TypedRateLimiter[int], len(s.subs))
		for i, sub := range s.subs {
			subs[i] = buildClientGo(sub)
		}
		return cgwq.NewTypedMaxOfRateLimiter(subs...)
	case "maxwait":
		return cgwq.NewTypedWithMaxWaitRateLimiter(buildClientGo(s.subs[0]), s.a)
	case "default":
		return cgwq.DefaultTypedControllerRateLimiter[int]()
	}
	return cgwq.DefaultTypedItemBasedRateLimiter[int]()
}

// limOp is one step of TestRateLimiters. The generated input starts with a "use" step
// naming the limiter; an input whose first step is not one (shrinking dropped it) uses
// DefaultControllerRateLimiter.
type limOp struct {
	kind string // use, when, forget, requeues, sleep
	item int
	d    time.Duration
	spec limSpec
}

func (o limOp) String() string {
	switch o.kind {
	case "use":
		return "use " + o.spec.String()
	case "when":
		return fmt.Sprintf("When(%d)", o.item)
	case "forget":
		return fmt.Sprintf("Forget(%d)", o.item)
	case "requeues":
		return fmt.Sprintf("NumRequeues(%d)", o.item)
	}
	return fmt.Sprintf("Sleep(%v)", o.d)
}

// genLimOps makes a limiter and at most 40 steps on three items, mostly When, with
// sleeps from a nanosecond to seconds so the buckets refill partly and fully.
func genLimOps(r *rand.Rand) []limOp {
	ops := []limOp{{kind: "use", spec: genLimSpec(r, 2)}}
	for range 5 + r.IntN(35) {
		item := r.IntN(3)
		switch p := r.IntN(100); {
		case p < 60:
			ops = append(ops, limOp{kind: "when", item: item})
		case p < 70:
			ops = append(ops, limOp{kind: "forget", item: item})
		case p < 80:
			ops = append(ops, limOp{kind: "requeues", item: item})
		default:
			d := []time.Duration{time.Nanosecond, 7 * time.Millisecond, 100 * time.Millisecond, time.Second, time.Duration(r.Int64N(int64(20 * time.Second)))}[r.IntN(5)]
			ops = append(ops, limOp{kind: "sleep", d: d})
		}
	}
	return ops
}

// runLimOps plays ops on one limiter in a synctest bubble (the bucket reads the clock)
// and writes every delay and count.
func runLimOps(t *testing.T, build func(limSpec) limiter, ops []limOp) (tr check.Transcript, err error) {
	bubble(t, &err, func() {
		spec := limSpec{kind: "default"}
		if len(ops) > 0 && ops[0].kind == "use" {
			spec = ops[0].spec
		}
		l := build(spec)
		for _, op := range ops {
			switch op.kind {
			case "when":
				d := l.When(op.item)
				tr.Printf("When(%d) = %v (%dns)", op.item, d, int64(d))
			case "forget":
				l.Forget(op.item)
				tr.Printf("Forget(%d)", op.item)
			case "requeues":
				tr.Printf("NumRequeues(%d) = %d", op.item, l.NumRequeues(op.item))
			case "sleep":
				time.Sleep(op.d)
				tr.Printf("Sleep(%v)", op.d)
			}
		}
	})
	return tr, err
}

// TestRateLimiters compares every rate limiter both libraries have, nested in MaxOf
// and WithMaxWait, with random parameters: each delay When returns, to the
// nanosecond, and each NumRequeues, through Forget and sleeps on fake time.
//
// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter.When
// client-go: util/workqueue/default_rate_limiters.go TypedItemFastSlowRateLimiter.When
// client-go: util/workqueue/default_rate_limiters.go TypedBucketRateLimiter.When
// client-go: util/workqueue/default_rate_limiters.go TypedMaxOfRateLimiter.NumRequeues
// client-go: util/workqueue/default_rate_limiters.go TypedWithMaxWaitRateLimiter.When
// client-go: util/workqueue/default_rate_limiters.go DefaultTypedControllerRateLimiter
func TestRateLimiters(t *testing.T) {
	check.Run(t, check.Config[limOp]{Runs: 3000, Simplify: simplifyLim}, genLimOps, func(ops []limOp) error {
		ours, err := runLimOps(t, func(s limSpec) limiter { return buildOurs(s) }, ops)
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		theirs, err := runLimOps(t, func(s limSpec) limiter { return buildClientGo(s) }, ops)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		return check.Transcripts(&ours, &theirs)
	})
}

// simplifyLim offers, for a MaxOf or WithMaxWait limiter, each limiter inside it.
func simplifyLim(o limOp) []limOp {
	var simpler []limOp
	if o.kind == "use" {
		for _, sub := range o.spec.subs {
			simpler = append(simpler, limOp{kind: "use", spec: sub})
		}
	}
	return simpler
}
