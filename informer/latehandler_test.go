package informer_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// lateHandler counts the replayed (isInInitialList) adds it has handled.
type lateHandler struct {
	reg     *informer.Registration[*corev1.ConfigMap]
	handled atomic.Int64
	// sawSynced, handledThen: what the test saw right after AddEventHandler returned.
	sawSynced   bool
	handledThen int64
	// handledAtSynced is the count read as soon as Synced() closed; seen is closed
	// after it is stored.
	handledAtSynced atomic.Int64
	seen            chan struct{}
}

// A handler registered while the informer finishes its first sync must not count as
// synced before it has handled its whole replay. The race this guards against: the
// informer's "synced" signal reaching the new listener while AddEventHandler is still
// queueing the replay, and the listener's goroutine having drained what was queued so
// far, so that "upstream synced and nothing pending" was briefly true.
//
// It is a race, so the test provokes it many times with real goroutines (not a
// synctest bubble, where the scheduling that exposes it cannot happen) and checks the
// invariant every time: a registration that says HasSynced has handled every add of
// its replay. Two moments are checked per registration: right after
// AddEventHandler returns, and the moment its Synced() channel closes.
func TestALateHandlerIsNotSyncedBeforeItHasHandledItsReplay(t *testing.T) {
	const objects, iterations = 3000, 12
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			for i := range objects {
				src.Create(cm(fmt.Sprintf("cm-%05d", i)))
			}
			synced, checked := 0, 0
			for range iterations {
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				ctx, stop := running(t, inf)
				var handlers []*lateHandler
				// Wait until the cache is nearly full, then register late handlers
				// until a few after the informer synced: some registrations straddle
				// the moment it does. (Each replay holds the processing loop, so
				// registering from the start would only slow the sync down.)
				for len(inf.Indexer().ListKeys()) < objects-objects/20 && !inf.HasSynced() {
					runtime.Gosched()
				}
				for after := 0; after < 3 && len(handlers) < 100; {
					if inf.HasSynced() {
						after++
					}
					h := &lateHandler{seen: make(chan struct{})}
					reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
						AddFunc: func(_ *corev1.ConfigMap, initial bool) {
							if initial {
								h.handled.Add(1)
							}
						},
					})
					require.NoError(t, err)
					// Order matters: HasSynced first, then the count. The count only
					// grows, so reading it later can only hide the bug, never invent it.
					h.reg, h.sawSynced, h.handledThen = reg, reg.HasSynced(), h.handled.Load()
					handlers = append(handlers, h)
					// Owner: this iteration; exits when the registration syncs (the
					// test waits for that below) or the informer's ctx ends.
					go func() {
						defer close(h.seen)
						select {
						case <-reg.Synced():
							h.handledAtSynced.Store(h.handled.Load())
						case <-ctx.Done():
							h.handledAtSynced.Store(-1)
						}
					}()
				}
				waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
				for _, h := range handlers {
					require.NoError(t, informer.WaitForCacheSync(waitCtx, h.reg))
				}
				cancel()
				for i, h := range handlers {
					<-h.seen
					final := h.handled.Load()
					checked++
					assert.Equal(t, final, h.handledAtSynced.Load(),
						"registration %d: Synced() closed after %d of its %d replayed adds", i, h.handledAtSynced.Load(), final)
					if h.sawSynced {
						synced++
						assert.Equal(t, final, h.handledThen,
							"registration %d said HasSynced after handling %d of its %d replayed adds", i, h.handledThen, final)
					}
				}
				stop()
			}
			t.Logf("%d registrations checked, %d of them synced when AddEventHandler returned", checked, synced)
		})
	}
}
