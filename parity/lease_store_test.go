package parity

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	le "github.com/kubeinternals/informers/leaderelection"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// leaseWorld is one in-memory apiserver holding one Lease, with the rules the election
// depends on: every write bumps the resourceVersion, a Create of an existing Lease fails
// (409 AlreadyExists), and an Update fails with 409 Conflict unless it names the
// version the writer last read or wrote. Each library's candidates get a world of
// their own; both worlds store a coordination/v1 LeaseSpec, so both libraries'
// records go through the same object.
//
// Each candidate can be cut off from it (an outage): its requests then fail — at once,
// or after hanging until the outage ends or the request's context does.
type leaseWorld struct {
	mu     sync.Mutex
	exists bool                     // guarded by mu
	spec   coordinationv1.LeaseSpec // guarded by mu
	rv     int                      // guarded by mu
	writes []leaseWrite             // guarded by mu
	// outage maps a candidate to the end of its outage (a zero Time: none, the far
	// future: crashed); hangs says whether its requests hang meanwhile. Guarded by mu.
	outage map[string]time.Time
	hangs  map[string]bool
	// changed is closed and replaced at every write, to wake whoever waits for one.
	changed chan struct{}
}

// leaseWrite is one successful write, as the apiserver committed it.
type leaseWrite struct {
	at          time.Time
	by          string
	holder      string
	transitions int32
}

func newLeaseWorld() *leaseWorld {
	return &leaseWorld{outage: map[string]time.Time{}, hangs: map[string]bool{}, changed: make(chan struct{})}
}

// cutOff starts an outage for id until the given instant.
func (w *leaseWorld) cutOff(id string, until time.Time, hang bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outage[id], w.hangs[id] = until, hang
}

// history returns the writes so far, and a channel closed at the next one.
func (w *leaseWorld) history() ([]leaseWrite, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]leaseWrite(nil), w.writes...), w.changed
}

// final is the Lease's holder and leaseTransitions.
func (w *leaseWorld) final() (holder string, transitions int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.spec.HolderIdentity != nil {
		holder = *w.spec.HolderIdentity
	}
	if w.spec.LeaseTransitions != nil {
		transitions = *w.spec.LeaseTransitions
	}
	return holder, transitions
}

var errUnavailable = apierrors.NewServiceUnavailable("the apiserver cannot be reached from this candidate")

// reach is the network between id and the apiserver: nil when the request gets
// through, an error when the candidate is in an outage (after hanging, if it hangs).
func (w *leaseWorld) reach(ctx context.Context, id string) error {
	w.mu.Lock()
	until, hang := w.outage[id], w.hangs[id]
	w.mu.Unlock()
	now := time.Now()
	if !now.Before(until) {
		return nil
	}
	if hang {
		t := time.NewTimer(until.Sub(now))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errUnavailable
}

// get, create and update are the apiserver's side; seen is the caller's last version.
func (w *leaseWorld) get(ctx context.Context, id string, seen *int) (coordinationv1.LeaseSpec, error) {
	if err := w.reach(ctx, id); err != nil {
		return coordinationv1.LeaseSpec{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.exists {
		return coordinationv1.LeaseSpec{}, apierrors.NewNotFound(leaseResource, "lease")
	}
	*seen = w.rv
	return *w.spec.DeepCopy(), nil
}

func (w *leaseWorld) create(ctx context.Context, id string, seen *int, spec coordinationv1.LeaseSpec) error {
	if err := w.reach(ctx, id); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.exists {
		return apierrors.NewAlreadyExists(leaseResource, "lease")
	}
	w.exists = true
	w.commit(id, seen, spec)
	return nil
}

func (w *leaseWorld) update(ctx context.Context, id string, seen *int, spec coordinationv1.LeaseSpec) error {
	if err := w.reach(ctx, id); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if *seen != w.rv {
		return apierrors.NewConflict(leaseResource, "lease", errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	w.commit(id, seen, spec)
	return nil
}

// commit writes spec as id's; the caller holds mu.
func (w *leaseWorld) commit(id string, seen *int, spec coordinationv1.LeaseSpec) {
	w.spec = *spec.DeepCopy()
	w.rv++
	*seen = w.rv
	wr := leaseWrite{at: time.Now(), by: id}
	if spec.HolderIdentity != nil {
		wr.holder = *spec.HolderIdentity
	}
	if spec.LeaseTransitions != nil {
		wr.transitions = *spec.LeaseTransitions
	}
	w.writes = append(w.writes, wr)
	close(w.changed)
	w.changed = make(chan struct{})
}

// cgLeaseLock is client-go's resourcelock.Interface over a leaseWorld. It converts
// with client-go's own functions and returns the record's JSON as the raw bytes, as
// LeaseLock does: client-go decides whether the Lease changed by comparing those
// bytes, so the test must give it the same ones.
//
// client-go: tools/leaderelection/resourcelock/leaselock.go LeaseLock.Get
// client-go: tools/leaderelection/resourcelock/leaselock.go LeaseLock.Update
type cgLeaseLock struct {
	w    *leaseWorld
	id   string
	seen int // the resourceVersion last read or written; 0: never
}

func (l *cgLeaseLock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	spec, err := l.w.get(ctx, l.id, &l.seen)
	if err != nil {
		return nil, nil, err
	}
	r := rl.LeaseSpecToLeaderElectionRecord(&spec)
	raw, err := json.Marshal(*r)
	return r, raw, err
}

func (l *cgLeaseLock) Create(ctx context.Context, r rl.LeaderElectionRecord) error {
	return l.w.create(ctx, l.id, &l.seen, rl.LeaderElectionRecordToLeaseSpec(&r))
}

func (l *cgLeaseLock) Update(ctx context.Context, r rl.LeaderElectionRecord) error {
	if l.seen == 0 {
		return errors.New("lease not initialized, call get or create first")
	}
	return l.w.update(ctx, l.id, &l.seen, rl.LeaderElectionRecordToLeaseSpec(&r))
}

func (l *cgLeaseLock) RecordEvent(string) {}
func (l *cgLeaseLock) Identity() string   { return l.id }
func (l *cgLeaseLock) Describe() string   { return "default/parity" }

// ourLeaseLock is our le.Lock over a leaseWorld, converting with the functions our
// LeaseLock uses (every field written; times at the Lease's microsecond precision).
//
// leaderelection/lock.go LeaseLock
type ourLeaseLock struct {
	w    *leaseWorld
	id   string
	seen int
}

func (l *ourLeaseLock) Get(ctx context.Context) (le.Record, error) {
	spec, err := l.w.get(ctx, l.id, &l.seen)
	if err != nil {
		return le.Record{}, err
	}
	return le.RecordFromLeaseSpec(&spec), nil
}

func (l *ourLeaseLock) Create(ctx context.Context, r le.Record) error {
	return l.w.create(ctx, l.id, &l.seen, r.LeaseSpec())
}

func (l *ourLeaseLock) Update(ctx context.Context, r le.Record) error {
	if l.seen == 0 {
		return errors.New("the Lease was never read")
	}
	return l.w.update(ctx, l.id, &l.seen, r.LeaseSpec())
}

func (l *ourLeaseLock) Identity() string { return l.id }
func (l *ourLeaseLock) Describe() string { return "default/parity" }
