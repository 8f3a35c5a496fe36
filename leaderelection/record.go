package leaderelection

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Record is what a Lease says about leadership: who holds it, for how long a holder's
// silence is tolerated, and how often it changed hands. It is the Lease's spec, without
// the pointers.
//
// client-go: tools/leaderelection/resourcelock/interface.go LeaderElectionRecord
type Record struct {
	// Holder is the identity of the candidate that holds the lease; "" when nobody
	// does (after a release).
	Holder string
	// LeaseDurationSeconds is how long the other candidates wait, on their own clocks,
	// after they last saw the Lease change, before they consider it expired. The
	// holder writes its own LeaseDuration here; a release writes 1.
	LeaseDurationSeconds int
	// AcquireTime is when the holder acquired the lease, RenewTime when it last
	// renewed it. Both are the holder's clock: informative only, never compared with
	// another candidate's clock (see Elector).
	AcquireTime, RenewTime time.Time
	// Transitions counts how often the lease changed hands (Lease.spec.leaseTransitions).
	Transitions int
	// Strategy and PreferredHolder belong to coordinated leader election (a
	// LeaseCandidate protocol we do not implement). They are read, and — as by
	// client-go's uncoordinated elector — not written back by a renewal.
	Strategy, PreferredHolder string
}

// equal reports whether two records say the same thing, to the Lease's precision
// (microseconds).
//
// Why not compare bytes as client-go does: client-go compares the record's JSON, in
// which the times are metav1.Time with a resolution of one second, so two renewals
// within one second look like no change at all. A Lease's times are MicroTime.
func (r Record) equal(o Record) bool {
	return r.Holder == o.Holder && r.LeaseDurationSeconds == o.LeaseDurationSeconds &&
		r.AcquireTime.Equal(o.AcquireTime) && r.RenewTime.Equal(o.RenewTime) &&
		r.Transitions == o.Transitions && r.Strategy == o.Strategy && r.PreferredHolder == o.PreferredHolder
}

// RecordFromLeaseSpec reads a Lease's spec; a missing field reads as its zero value.
// LeaseLock reads every Lease through it; a Lock over another store of Leases (the
// parity suite's in-memory one) can too.
//
// client-go: tools/leaderelection/resourcelock/leaselock.go LeaseSpecToLeaderElectionRecord
func RecordFromLeaseSpec(spec *coordinationv1.LeaseSpec) Record {
	var r Record
	if spec.HolderIdentity != nil {
		r.Holder = *spec.HolderIdentity
	}
	if spec.LeaseDurationSeconds != nil {
		r.LeaseDurationSeconds = int(*spec.LeaseDurationSeconds)
	}
	if spec.AcquireTime != nil {
		r.AcquireTime = spec.AcquireTime.Time
	}
	if spec.RenewTime != nil {
		r.RenewTime = spec.RenewTime.Time
	}
	if spec.LeaseTransitions != nil {
		r.Transitions = int(*spec.LeaseTransitions)
	}
	if spec.Strategy != nil {
		r.Strategy = string(*spec.Strategy)
	}
	if spec.PreferredHolder != nil {
		r.PreferredHolder = *spec.PreferredHolder
	}
	return r
}

// LeaseSpec is the Lease spec that says r. Every field is written, HolderIdentity
// included when it is "" (a released lease), as client-go writes it.
//
// client-go: tools/leaderelection/resourcelock/leaselock.go LeaderElectionRecordToLeaseSpec
func (r Record) LeaseSpec() coordinationv1.LeaseSpec {
	holder := r.Holder
	seconds := int32(r.LeaseDurationSeconds)
	transitions := int32(r.Transitions)
	s := coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		LeaseDurationSeconds: &seconds,
		AcquireTime:          &metav1.MicroTime{Time: r.AcquireTime},
		RenewTime:            &metav1.MicroTime{Time: r.RenewTime},
		LeaseTransitions:     &transitions,
	}
	if r.Strategy != "" {
		strategy := coordinationv1.CoordinatedLeaseStrategy(r.Strategy)
		s.Strategy = &strategy
	}
	if r.PreferredHolder != "" {
		preferred := r.PreferredHolder
		s.PreferredHolder = &preferred
	}
	return s
}
