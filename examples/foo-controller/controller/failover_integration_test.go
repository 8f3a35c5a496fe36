package controller_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/incluster"
	"github.com/kubeinternals/informers/leaderelection"
)

// The timings of deployment.yaml's -leader-elect are the flags' defaults: a zero
// leaderelection.Config's.
var (
	leaseDuration = leaderelection.DefaultLeaseDuration
	retryPeriod   = leaderelection.DefaultRetryPeriod
	// The window the elector's waits allow (see Config.TakeoverWindow).
	crashEarliest, crashLatest, afterRelease = leaderelection.Config{}.TakeoverWindow()
)

// logSlack is added to each upper bound: the times are read from log lines, which a
// process writes a moment after the event, and the kill's time from the test's clock.
const logSlack = time.Second

// loggedAt is the time field of a JSON log line.
func loggedAt(t *testing.T, line string) time.Time {
	t.Helper()
	var rec struct {
		Time time.Time `json:"time"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &rec), "a JSON log line: %s", line)
	return rec.Time
}

// standBy starts a replica and waits until its caches synced and it has seen who
// leads: it is warm and waiting for the Lease.
func standBy(t *testing.T, binary string, args, env []string) *incluster.Process {
	t.Helper()
	p := incluster.Start(t, binary, args, env)
	_, err := p.AwaitOutput(time.Minute, `"msg":"caches synced; competing for the lease before starting workers"`)
	require.NoError(t, err)
	_, err = p.AwaitOutput(time.Minute, `"msg":"leader"`, `"this replica":false`)
	require.NoError(t, err, "it observed the other replica's lease")
	return p
}

const processed = `workqueue_work_duration_seconds_count{name="foos"}`

func testFailover(t *testing.T, ctx context.Context, c *cluster, binary string, args, env []string, ns string) {
	p1 := incluster.Start(t, binary, args, env)
	_, err := p1.AwaitOutput(time.Minute, `"msg":"starting workers"`)
	require.NoError(t, err, "alone, the first replica acquires the Lease and works")
	p2 := standBy(t, binary, args, env)

	c.createFoo(t, ctx, ns, "ha", "ha", 1)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, err := c.deployment(ctx, ns, "ha")
		assert.NoError(ct, err)
	}, waitFor, tick)
	m1, m2 := scrape(t, ctx, endpoint(t, p1, "metrics")), scrape(t, ctx, endpoint(t, p2, "metrics"))
	assert.Positive(t, m1[processed], "the leader's workers synced the Foo")
	assert.Zero(t, m2[processed], "the standby's workers never ran")
	assert.Positive(t, m2[`workqueue_adds_total{name="foos"}`], "the standby's handlers queued the Foo: its cache is warm")
	assert.Equal(t, http.StatusOK, get(t, ctx, "http://"+endpoint(t, p2, "health probes")+"/readyz").code, "a standby is ready")
	assert.Equal(t, []float64{1}, seriesOf(m1, "leader_election_master_status"), "the leader's election metric")
	assert.Equal(t, []float64{0}, seriesOf(m2, "leader_election_master_status"), "the standby's")
	if renewals := seriesOf(m1, "leader_election_renew_duration_seconds_count"); assert.Len(t, renewals, 1) {
		assert.Positive(t, renewals[0], "the leader's renewals are timed")
	}

	// A crash: no release, so p2 waits for the lease to expire on its own clock.
	killedAt := p1.Kill()
	line, err := p2.AwaitOutput(time.Minute, `"msg":"starting workers"`)
	require.NoError(t, err)
	takeover := loggedAt(t, line).Sub(killedAt)
	t.Logf("takeover after SIGKILL of the leader: %v (lease %v, retry %v; window %v–%v)",
		takeover.Round(time.Millisecond), leaseDuration, retryPeriod, crashEarliest, crashLatest)
	assert.GreaterOrEqual(t, takeover, crashEarliest, "never before the lease could have expired")
	assert.LessOrEqual(t, takeover, crashLatest+logSlack)
	c.createFoo(t, ctx, ns, "ha-after-crash", "ha-after-crash", 1)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, err := c.deployment(ctx, ns, "ha-after-crash")
		assert.NoError(ct, err, "the new leader works")
	}, waitFor, tick)

	// A graceful stop: p2 drains, releases the Lease; p3 takes it at its next try.
	p3 := standBy(t, binary, args, env)
	require.NoError(t, p2.Stop(30*time.Second))
	released, err := p2.AwaitOutput(0, `"msg":"released the lease"`)
	require.NoError(t, err, "SIGTERM releases the Lease after the workers stopped")
	line, err = p3.AwaitOutput(time.Minute, `"msg":"starting workers"`)
	require.NoError(t, err)
	handover := loggedAt(t, line).Sub(loggedAt(t, released))
	t.Logf("handover after SIGTERM of the leader: %v from the release (retry %v, up to %v with jitter)",
		handover.Round(time.Millisecond), retryPeriod, afterRelease)
	assert.LessOrEqual(t, handover, afterRelease+logSlack, "one try of p3 after the release, not a lease duration")
	require.NoError(t, p3.Stop(30*time.Second))

	var lease struct {
		Spec struct {
			Holder      string `json:"holderIdentity"`
			Transitions int    `json:"leaseTransitions"`
		} `json:"spec"`
	}
	raw, err := c.core.Get().AbsPath("/apis/coordination.k8s.io/v1/namespaces/foo-controller/leases/foo-controller").DoRaw(ctx)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &lease))
	assert.Empty(t, lease.Spec.Holder, "p3 released it too")
	assert.GreaterOrEqual(t, lease.Spec.Transitions, 2, "p1 → p2 → p3")
}

// seriesOf lists the values of metric's series (any labels) in scraped.
func seriesOf(scraped map[string]float64, metric string) []float64 {
	var out []float64
	for k, v := range scraped {
		if strings.HasPrefix(k, metric+"{") {
			out = append(out, v)
		}
	}
	return out
}
