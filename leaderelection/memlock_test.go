package leaderelection

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/internal/pause"
)

var leases = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// leaseStore is an in-memory Lease with the apiserver's rules that matter here: a
// resourceVersion that every write bumps, Create failing on an existing object, and
// Update failing with 409 Conflict unless it names the current version.
type leaseStore struct {
	mu     sync.Mutex
	exists bool      // guarded by mu
	rec    Record    // guarded by mu
	rv     int       // guarded by mu
	writes []written // guarded by mu
	// cut makes every request of a candidate hang until its context ends: a network
	// partition between it and the apiserver. Guarded by mu.
	cut map[string]bool
	// fail makes every request of a candidate fail at once with the error. Guarded by mu.
	fail map[string]error
	// slow delays the response to a candidate's writes after they are committed: the
	// apiserver wrote the Lease, the candidate hears of it later. Guarded by mu.
	slow map[string]time.Duration
	// beforeUpdate, if set, runs (without mu) at the start of every Update: a
	// concurrent writer that wins the race. Set before the candidates start.
	beforeUpdate func()
}

// written is one successful write, as the store saw it.
type written struct {
	at  time.Time
	by  string
	rec Record
}

func newLeaseStore() *leaseStore {
	return &leaseStore{cut: map[string]bool{}, fail: map[string]error{}, slow: map[string]time.Duration{}}
}

// set writes r as an outsider would (kubectl, another controller).
func (s *leaseStore) set(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exists, s.rec = true, r
	s.rv++
	s.writes = append(s.writes, written{at: time.Now(), by: "outsider", rec: r})
}

// remove deletes the Lease as an outsider would (kubectl delete lease).
func (s *leaseStore) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exists, s.rec = false, Record{}
	s.rv++
	s.writes = append(s.writes, written{at: time.Now(), by: "outsider (delete)"})
}

func (s *leaseStore) record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec
}

func (s *leaseStore) history() []written {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]written(nil), s.writes...)
}

func (s *leaseStore) partition(id string, cut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut[id] = cut
}

func (s *leaseStore) slowResponses(id string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow[id] = d
}

func (s *leaseStore) failWith(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[id] = err
}

// memLock is one candidate's view of the store: it remembers the version it last read
// or wrote, as LeaseLock does.
type memLock struct {
	s    *leaseStore
	id   string
	seen int
}

func (s *leaseStore) lock(id string) *memLock { return &memLock{s: s, id: id} }

// reach blocks while the candidate is cut off, or fails if it is set to fail.
func (l *memLock) reach(ctx context.Context) error {
	l.s.mu.Lock()
	cut, err := l.s.cut[l.id], l.s.fail[l.id]
	l.s.mu.Unlock()
	if cut {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

func (l *memLock) Get(ctx context.Context) (Record, error) {
	if err := l.reach(ctx); err != nil {
		return Record{}, err
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if !l.s.exists {
		return Record{}, apierrors.NewNotFound(leases, "lease")
	}
	l.seen = l.s.rv
	return l.s.rec, nil
}

func (l *memLock) Create(ctx context.Context, r Record) error {
	if err := l.reach(ctx); err != nil {
		return err
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.exists {
		return apierrors.NewAlreadyExists(leases, "lease")
	}
	l.s.exists, l.s.rec = true, r
	l.s.rv++
	l.seen = l.s.rv
	l.s.writes = append(l.s.writes, written{at: time.Now(), by: l.id, rec: r})
	return nil
}

func (l *memLock) Update(ctx context.Context, r Record) error {
	if err := l.reach(ctx); err != nil {
		return err
	}
	if l.s.beforeUpdate != nil {
		l.s.beforeUpdate()
	}
	l.s.mu.Lock()
	if l.seen == 0 {
		l.s.mu.Unlock()
		return errNotRead
	}
	if !l.s.exists {
		l.s.mu.Unlock()
		return apierrors.NewNotFound(leases, "lease")
	}
	if l.seen != l.s.rv {
		l.s.mu.Unlock()
		return apierrors.NewConflict(leases, "lease", errors.New("the object has been modified"))
	}
	l.s.rec = r
	l.s.rv++
	l.seen = l.s.rv
	l.s.writes = append(l.s.writes, written{at: time.Now(), by: l.id, rec: r})
	delay := l.s.slow[l.id]
	l.s.mu.Unlock()
	if delay > 0 {
		// The write is committed; only its response is late (or lost, if ctx ends).
		if !pause.For(ctx, delay) {
			return ctx.Err()
		}
	}
	return nil
}

func (l *memLock) Identity() string { return l.id }
func (l *memLock) Describe() string { return "default/lease" }
