package leaderelection

// GaugeMetric is a value that is set. The interfaces have the reflector's and the
// workqueue's method sets, so one provider type can implement all of them.
type GaugeMetric interface{ Set(float64) }

// CounterMetric is a value that only goes up.
type CounterMetric interface{ Inc() }

// SummaryMetric records observations, in seconds.
type SummaryMetric interface{ Observe(float64) }

// The names a Prometheus provider should give the metrics, each with the label
// "name" (Config.Name). The first two are client-go's
// (component-base/metrics/prometheus/clientgo/leaderelection).
const (
	LeaderMetricName           = "leader_election_master_status"
	SlowpathMetricName         = "leader_election_slowpath_total"
	LeaseTransitionsMetricName = "leader_election_lease_transitions"
	RenewDurationMetricName    = "leader_election_renew_duration_seconds"
	GateRejectionsMetricName   = "leader_election_write_gate_rejections_total"
)

// MetricsProvider creates the metrics of one election; name is Config.Name. New calls
// each method once. A method that returns nil gets a metric that drops its values; a
// nil provider costs nothing.
//
// client-go: tools/leaderelection/metrics.go MetricsProvider, LeaderMetric (On, Off,
// SlowpathExercised). Differences: a provider per Elector in Config, not one per
// process set once (SetProvider); see workqueue.MetricsProvider for why. The last
// three are ours.
type MetricsProvider interface {
	// NewLeaderMetric is 1 while this candidate leads — from the acquisition until
	// the lease is lost or the work has returned — and 0 otherwise.
	NewLeaderMetric(name string) GaugeMetric
	// NewSlowpathMetric counts renewals that had to read the Lease first (transition
	// R2): the fast path (R1) failed, or the leader's observation had expired. Many of
	// them mean renewals are late or another writer touches the Lease.
	NewSlowpathMetric(name string) CounterMetric
	// NewLeaseTransitionsMetric is the Lease's leaseTransitions as this candidate
	// last saw it: how many times the lease has changed hands. The same on every
	// replica; its rate is the election's churn.
	NewLeaseTransitionsMetric(name string) GaugeMetric
	// NewRenewDurationMetric observes each successful renewal's seconds, from sending
	// the first request of the attempt to the answer of the last (R1: one PUT; R2: a
	// GET and a PUT). Its tail is how close renewals come to RenewDeadline.
	NewRenewDurationMetric(name string) SummaryMetric
	// NewGateRejectionsMetric counts writes the write gate refused or cancelled.
	NewGateRejectionsMetric(name string) CounterMetric
}

// electionMetrics holds one Elector's metrics; without a provider, every field drops
// its values.
type electionMetrics struct {
	leader         GaugeMetric
	slowpath       CounterMetric
	transitions    GaugeMetric
	renewDuration  SummaryMetric
	gateRejections CounterMetric
}

// noMetric drops whatever it is given.
type noMetric struct{}

func (noMetric) Set(float64)     {}
func (noMetric) Inc()            {}
func (noMetric) Observe(float64) {}

// newElectionMetrics asks p for name's metrics; nil p (or a nil metric) drops values.
func newElectionMetrics(p MetricsProvider, name string) electionMetrics {
	m := electionMetrics{leader: noMetric{}, slowpath: noMetric{}, transitions: noMetric{}, renewDuration: noMetric{}, gateRejections: noMetric{}}
	if p == nil {
		return m
	}
	if g := p.NewLeaderMetric(name); g != nil {
		m.leader = g
	}
	if c := p.NewSlowpathMetric(name); c != nil {
		m.slowpath = c
	}
	if g := p.NewLeaseTransitionsMetric(name); g != nil {
		m.transitions = g
	}
	if s := p.NewRenewDurationMetric(name); s != nil {
		m.renewDuration = s
	}
	if c := p.NewGateRejectionsMetric(name); c != nil {
		m.gateRejections = c
	}
	return m
}
