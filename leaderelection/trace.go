package leaderelection

import (
	"fmt"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// emit reports e as this candidate's (Stage, Source and Key filled in). Callers check
// e.cfg.Tracer != nil first, so that no Event is built when tracing is off.
func (e *Elector) emit(ev trace.Event) {
	ev.Stage, ev.Source, ev.Key = trace.LeaderElection, e.Identity(), e.cfg.Lock.Describe()
	e.cfg.Tracer.Emit(ev)
}

// noticeLeader reports the holder as last observed to OnNewLeader and the trace when
// it changed (transition O1).
func (e *Elector) noticeLeader(leaders *leaderNotifier) {
	holder := e.Leader()
	// Transition O1.
	if !leaders.report(holder) {
		return
	}
	e.log.Info("new leader observed", "holder", holder)
	if e.cfg.Tracer != nil {
		e.emit(trace.Event{Kind: trace.NewLeaderObserved, Type: "O1", Detail: holder})
	}
}

func (e *Elector) traceTried(a attempt) {
	if e.cfg.Tracer != nil {
		e.emit(trace.Event{Kind: trace.LeaseTried, Type: a.transition, Reason: a.reason, Detail: e.Leader()})
	}
}

func (e *Elector) traceAcquired(a attempt) {
	if e.cfg.Tracer == nil {
		return
	}
	how := "created the lease"
	switch {
	case a.transition == "A1":
	case a.transition == "R2" || a.transition == "R1":
		how = "the lease already named this candidate (a restart with the same identity)"
	case a.previous == "":
		how = fmt.Sprintf("took over the released lease (transition %d)", e.observedRecord().Transitions)
	default:
		how = fmt.Sprintf("took over from %s, expired (transition %d)", a.previous, e.observedRecord().Transitions)
	}
	e.emit(trace.Event{Kind: trace.LeaseAcquired, Type: a.transition, Reason: how, Detail: e.Identity()})
}

func (e *Elector) traceRenewed(a attempt, since time.Duration) {
	if e.cfg.Tracer != nil {
		e.emit(trace.Event{Kind: trace.LeaseRenewed, Type: a.transition, Duration: since, Detail: e.Identity()})
	}
}

// traceLost reports the loss of the lease by transition (R4, R5, R6 or S4), since
// the last successful renewal was sent.
func (e *Elector) traceLost(transition string, since time.Duration, why string) {
	if e.cfg.Tracer != nil {
		e.emit(trace.Event{Kind: trace.LeaseLost, Type: transition, Duration: since, Reason: why})
	}
}

func (e *Elector) traceReleased() {
	if e.cfg.Tracer != nil {
		e.emit(trace.Event{Kind: trace.LeaseReleased, Type: "S2"})
	}
}
