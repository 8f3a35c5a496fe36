package bench

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	ours "github.com/kubeinternals/informers/workqueue"
)

// metric is one in-memory metric that both queues' metric interfaces accept: a
// gauge, counter, settable gauge or histogram, kept as atomics (what a Prometheus
// metric costs, without the registry).
type metric struct{ v atomic.Uint64 }

func (m *metric) Inc()              { m.v.Add(1) }
func (m *metric) Dec()              { m.v.Add(math.MaxUint64) }
func (m *metric) Set(v float64)     { m.v.Store(math.Float64bits(v)) }
func (m *metric) Observe(v float64) { m.v.Add(uint64(v * 1e9)) }

// oursMetrics and clientGoMetrics hand out the same metrics to each library's
// provider interface.
type oursMetrics struct{}

func (oursMetrics) NewDepthMetric(string) ours.GaugeMetric            { return &metric{} }
func (oursMetrics) NewAddsMetric(string) ours.CounterMetric           { return &metric{} }
func (oursMetrics) NewLatencyMetric(string) ours.HistogramMetric      { return &metric{} }
func (oursMetrics) NewWorkDurationMetric(string) ours.HistogramMetric { return &metric{} }
func (oursMetrics) NewRetriesMetric(string) ours.CounterMetric        { return &metric{} }
func (oursMetrics) NewUnfinishedWorkSecondsMetric(string) ours.SettableGaugeMetric {
	return &metric{}
}
func (oursMetrics) NewLongestRunningProcessorSecondsMetric(string) ours.SettableGaugeMetric {
	return &metric{}
}

type clientGoMetrics struct{}

func (clientGoMetrics) NewDepthMetric(string) workqueue.GaugeMetric            { return &metric{} }
func (clientGoMetrics) NewAddsMetric(string) workqueue.CounterMetric           { return &metric{} }
func (clientGoMetrics) NewLatencyMetric(string) workqueue.HistogramMetric      { return &metric{} }
func (clientGoMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric { return &metric{} }
func (clientGoMetrics) NewRetriesMetric(string) workqueue.CounterMetric        { return &metric{} }
func (clientGoMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &metric{}
}
func (clientGoMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &metric{}
}

// controllerQueue is what a controller's worker pool uses of a rate-limiting queue.
type controllerQueue interface {
	workQueue
	AddRateLimited(item int)
	Forget(item int)
}

// workerPool runs one op of BenchmarkWorkerPool on q: 10,000 distinct keys are
// added; workers goroutines Get each, work on it for work (spinning: CPU the
// reconcile spends, see busy), and settle it — every tenth key fails its first
// attempt and is re-added with AddRateLimited, the rest are Forgotten. The op ends
// when every key has succeeded.
func workerPool(q controllerQueue, workers int, work time.Duration) {
	const keys = 10_000
	attempts := make([]atomic.Int32, keys)
	var succeeded atomic.Int64
	allDone := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				busy(work)
				if attempts[k].Add(1) == 1 && k%10 == 0 {
					q.AddRateLimited(k)
				} else {
					q.Forget(k)
					if succeeded.Add(1) == keys {
						close(allDone)
					}
				}
				q.Done(k)
			}
		})
	}
	for k := range keys {
		q.Add(k)
	}
	<-allDone
	q.ShutDown()
	wg.Wait()
}

// busy spends about d of CPU: the work a reconcile does on one key. It runs a fixed
// number of loop iterations (calibrated once, the same on both sides), not until a
// clock says d has passed: a worker descheduled in the middle of its work would
// otherwise count the time it waited as work done.
//
// Why CPU and not time.Sleep, the model of a worker waiting on the apiserver that
// this benchmark used first: a sleep shorter than a millisecond ends when the Go
// runtime next looks at its timers, and a runtime with nothing to run looks only
// when its netpoller wakes, at most every millisecond (the epoll timeout is in whole
// milliseconds). The side whose queue costs less CPU leaves the runtime idle more
// often, so its workers overslept more: measured with 64 workers, a 100 µs sleep
// took 261 µs behind our queue and 207 µs behind client-go's, and the op's wall
// time followed the sleeps (1.44×), not the queues. With CPU work the wall time is
// the work plus what the queue costs.
func busy(d time.Duration) {
	spin(int(d.Nanoseconds() * spinsPerMicrosecond.Load() / 1000))
}

// spinSink keeps the compiler from removing spin's loop.
var spinSink atomic.Uint64

func spin(n int) {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinSink.Store(x)
}

// spinsPerMicrosecond is spin's speed on this machine, measured once.
var spinsPerMicrosecond = func() *atomic.Int64 {
	const n = 10_000_000
	start := time.Now()
	spin(n)
	v := new(atomic.Int64)
	v.Store(max(1, int64(n)*int64(time.Microsecond)/int64(time.Since(start))))
	return v
}()

// BenchmarkWorkerPool: a controller's worker pool on a rate-limiting queue with
// metrics on: 16 or 64 workers, 10 µs or 100 µs of CPU work per item, 10% of items
// retried once through the rate limiter (per-item exponential backoff from 1 ms).
//
// Fair: the same keys, failures, work and worker counts on both sides; both
// queues get an equivalent limiter (1 ms base, 1 s cap) and the same in-memory
// metrics through their own MetricsProvider interface.
func BenchmarkWorkerPool(b *testing.B) {
	for _, workers := range []int{16, 64} {
		for _, work := range []time.Duration{10 * time.Microsecond, 100 * time.Microsecond} {
			b.Run(fmt.Sprintf("workers=%d/work=%s", workers, work), func(b *testing.B) {
				sidebyside.Pair(b, func(b *testing.B) {
					sidebyside.Loop(b, func() {
						limiter, err := ours.NewItemExponentialFailureRateLimiter[int](ours.ExponentialFailureOptions{BaseDelay: time.Millisecond, MaxDelay: time.Second})
						if err != nil {
							b.Fatal(err)
						}
						workerPool(ours.NewRateLimitingQueue(ours.RateLimitingOptions[int]{
							Options:     ours.Options{Name: "bench", MetricsProvider: oursMetrics{}},
							RateLimiter: limiter,
						}), workers, work)
					})
				}, func(b *testing.B) {
					sidebyside.Loop(b, func() {
						workerPool(workqueue.NewTypedRateLimitingQueueWithConfig(
							workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second),
							workqueue.TypedRateLimitingQueueConfig[int]{Name: "bench", MetricsProvider: clientGoMetrics{}},
						), workers, work)
					})
				})
			})
		}
	}
}
