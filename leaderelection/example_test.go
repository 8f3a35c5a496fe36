package leaderelection_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/leaderelection"
)

// oneLease is the smallest Lock: one record in memory, for one candidate. A real
// program uses NewLeaseLock.
type oneLease struct {
	mu     sync.Mutex
	rec    *leaderelection.Record
	writes int
}

func (l *oneLease) Get(context.Context) (leaderelection.Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rec == nil {
		return leaderelection.Record{}, apierrors.NewNotFound(schema.GroupResource{Resource: "leases"}, "demo")
	}
	return *l.rec, nil
}
func (l *oneLease) Create(_ context.Context, r leaderelection.Record) error {
	return l.Update(context.TODO(), r)
}
func (l *oneLease) Update(_ context.Context, r leaderelection.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec = &r
	l.writes++
	return nil
}
func (l *oneLease) Identity() string { return "replica-a" }
func (l *oneLease) Describe() string { return "default/demo" }

// A candidate alone creates the Lease and leads at once; when its context ends, the
// work's context ends first, then the lease is released, then OnStoppedLeading runs.
func ExampleElector_Run() {
	lock := &oneLease{}
	ctx, cancel := context.WithCancel(context.Background())
	e, err := leaderelection.New(leaderelection.Config{
		Lock:            lock,
		ReleaseOnCancel: true,
		Logger:          slog.New(slog.DiscardHandler),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				fmt.Println("leading: start the workers")
				cancel() // pretend the process is asked to stop
				<-ctx.Done()
				fmt.Println("work context ended: stop the workers")
			},
			OnStoppedLeading: func() { fmt.Println("stopped leading") },
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Run returned:", e.Run(ctx))
	rec, _ := lock.Get(ctx)
	fmt.Printf("holder after release: %q, lease duration %ds\n", rec.Holder, rec.LeaseDurationSeconds)
	// Output:
	// leading: start the workers
	// work context ended: stop the workers
	// stopped leading
	// Run returned: <nil>
	// holder after release: "", lease duration 1s
}

// New refuses timings that could let two replicas work at once.
func ExampleNew() {
	_, err := leaderelection.New(leaderelection.Config{
		Lock:          &oneLease{},
		LeaseDuration: 10 * time.Second, // not longer than the 10s default RenewDeadline
		Callbacks:     leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}},
	})
	fmt.Println(err)
	// Output:
	// leaderelection: invalid config: LeaseDuration (10s) must be longer than RenewDeadline (10s), or a leader cut off from the apiserver could still be working when another takes over
}
