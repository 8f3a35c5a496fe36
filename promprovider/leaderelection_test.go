package promprovider

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/leaderelection"
)

// memLock is a Lease in memory that nobody else writes.
type memLock struct {
	mu  sync.Mutex
	rec *leaderelection.Record
}

func (l *memLock) Get(context.Context) (leaderelection.Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rec == nil {
		return leaderelection.Record{}, apierrors.NewNotFound(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lease")
	}
	return *l.rec, nil
}

func (l *memLock) Create(_ context.Context, r leaderelection.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rec != nil {
		return errors.New("exists")
	}
	l.rec = &r
	return nil
}

func (l *memLock) Update(_ context.Context, r leaderelection.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec = &r
	return nil
}

func (l *memLock) Identity() string { return "a" }
func (l *memLock) Describe() string { return "ns/lease" }

// An elector that leads for 250ms, renewing every 100ms, then stops: the scrape shows
// it leading while it works, not leading after, and its three renewals timed.
func TestTheElectionMetricsFollowLeadership(t *testing.T) {
	synctest.Test(t, testTheElectionMetricsFollowLeadership)
}

func testTheElectionMetricsFollowLeadership(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	leading := make(chan string)
	e, err := leaderelection.New(leaderelection.Config{
		Lock: &memLock{}, RetryPeriod: 100 * time.Millisecond, RenewDeadline: 500 * time.Millisecond, LeaseDuration: time.Second,
		MetricsProvider: p,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) {
			leading <- scrape(t, reg)
			<-ctx.Done()
		}},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	// Goroutine owned by this test: the election, stopped by cancel below.
	go func() { done <- e.Run(ctx) }()
	while := <-leading
	time.Sleep(250 * time.Millisecond) // renewals at 0, 100ms and 200ms (fake clock)
	cancel()
	require.NoError(t, <-done)
	after := scrape(t, reg)

	assert.Contains(t, while, `leader_election_master_status{name="ns/lease"} 1`+"\n")
	assert.Contains(t, while, `leader_election_lease_transitions{name="ns/lease"} 0`+"\n")
	assert.Contains(t, after, `leader_election_master_status{name="ns/lease"} 0`+"\n")
	assert.Contains(t, after, `leader_election_renew_duration_seconds_count{name="ns/lease"} 3`+"\n")
}
