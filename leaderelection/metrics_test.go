package leaderelection

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testmetrics"
)

// recordingProvider hands out metrics that record every value under the metric's name.
type recordingProvider struct{ r *testmetrics.Recorder }

func (p recordingProvider) NewLeaderMetric(name string) GaugeMetric {
	return p.r.Metric(LeaderMetricName + "{" + name + "}")
}
func (p recordingProvider) NewSlowpathMetric(name string) CounterMetric {
	return p.r.Metric(SlowpathMetricName + "{" + name + "}")
}
func (p recordingProvider) NewLeaseTransitionsMetric(name string) GaugeMetric {
	return p.r.Metric(LeaseTransitionsMetricName + "{" + name + "}")
}
func (p recordingProvider) NewRenewDurationMetric(name string) SummaryMetric {
	return p.r.Metric(RenewDurationMetricName + "{" + name + "}")
}
func (p recordingProvider) NewGateRejectionsMetric(name string) CounterMetric {
	return p.r.Metric(GateRejectionsMetricName + "{" + name + "}")
}

func TestTheMetricsFollowLeadingSlowRenewalsTransitionsLatencyAndRefusedWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, store := time.Now(), newLeaseStore()
		rec := &testmetrics.Recorder{}
		cfg := testConfig(store.lock("a"))
		cfg.Name = "lease"
		cfg.MetricsProvider = recordingProvider{rec}
		// Every answer to a's Lease writes comes 300ms after the write: each renewal
		// takes 300ms from send to answer.
		store.slowResponses("a", 300*time.Millisecond)
		a := run(t, t0, cfg, 0, 0)
		gate := a.e.WriteGate()(&apiserver{t0: t0})
		synctest.Wait()
		assert.Equal(t, []float64{0, 1}, rec.Values(LeaderMetricName+"{lease}"), "0 from New, 1 once acquired")

		// Another writer touches the Lease (still naming a, transitions 7): a's next
		// fast renewal conflicts and falls back to reading it (R2, the slow path).
		time.Sleep(3 * time.Second)
		store.set(Record{Holder: "a", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 7})
		time.Sleep(2500 * time.Millisecond)
		store.partition("a", true)
		time.Sleep(15 * time.Second) // the round fails until RenewDeadline: R4
		send(&apiserver{t0: t0}, gate, http.MethodPost, "/refused")
		a.stop()

		_, _, _, _, err := a.snapshot()
		require.ErrorIs(t, err, ErrLeaseLost)
		assert.Equal(t, []float64{0, 1, 0, 0}, rec.Values(LeaderMetricName+"{lease}"), "0 at the loss, and again when the term ends")
		assert.Equal(t, []float64{1}, rec.Values(SlowpathMetricName+"{lease}"), "one renewal read the Lease first")
		transitions := rec.Values(LeaseTransitionsMetricName + "{lease}")
		require.NotEmpty(t, transitions)
		assert.Equal(t, 0.0, transitions[0], "the Lease a created")
		assert.Equal(t, 7.0, transitions[len(transitions)-1], "the outsider's value, read by the slow path")
		durations := rec.Values(RenewDurationMetricName + "{lease}")
		assert.Equal(t, []float64{0.3, 0.3, 0.3}, durations, "renewals at 0s, 2s and 4s (R2; each round RetryPeriod after the last send), each answered 300ms after it was sent")
		assert.Equal(t, []float64{1}, rec.Values(GateRejectionsMetricName+"{lease}"))
	})
}

func TestANilMetricsProviderCostsNoAllocation(t *testing.T) {
	e := idleElector(t)
	allocs := testing.AllocsPerRun(100, func() {
		e.metrics.leader.Set(1)
		e.metrics.slowpath.Inc()
		e.metrics.transitions.Set(3)
		e.metrics.renewDuration.Observe(0.1)
		e.metrics.gateRejections.Inc()
	})
	assert.Zero(t, allocs)
}
