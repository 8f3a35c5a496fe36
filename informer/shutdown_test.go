package informer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// gate is a handler whose adds each wait, once begun, until the test opens the gate.
type gate struct {
	entered chan string   // each add's object name, as its call begins
	open    chan struct{} // closed by the test: every call may return
	mu      sync.Mutex
	done    []string // guarded by mu: the names whose call has returned
}

func newGate() *gate { return &gate{entered: make(chan string, 16), open: make(chan struct{})} }

func (g *gate) handler() informer.HandlerFuncs[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(obj *corev1.ConfigMap, _ bool) {
		g.entered <- obj.Name
		<-g.open
		g.mu.Lock()
		g.done = append(g.done, obj.Name)
		g.mu.Unlock()
	}}
}

func (g *gate) returned() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.done...)
}

// busyHandler starts an informer with g's handler and leaves that handler inside its
// call for "busy". Call it inside a synctest bubble.
func busyHandler(t *testing.T, g *gate) (*fakeapi.Server[*corev1.ConfigMap], *informer.SharedIndexInformer[*corev1.ConfigMap], *informer.Registration[*corev1.ConfigMap]) {
	t.Helper()
	src := fakeapi.New[*corev1.ConfigMap]()
	inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{})
	reg, err := inf.AddEventHandler(g.handler())
	require.NoError(t, err)
	running(t, inf)
	synctest.Wait()
	src.Create(cm("busy"))
	synctest.Wait()
	require.Equal(t, "busy", <-g.entered)
	return src, inf, reg
}

// RemoveEventHandler is asynchronous, as client-go 1.37 now documents its own: it
// returns while the handler is still inside a call, and that call runs to its end
// afterwards. Whatever the handler uses must outlive the removal.
func TestRemoveEventHandlerReturnsWithoutWaitingForTheCallInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		_, inf, reg := busyHandler(t, g)

		inf.RemoveEventHandler(reg)
		assert.Empty(t, g.returned(), "RemoveEventHandler returned with the call still in progress")

		close(g.open)
		synctest.Wait()
		assert.Equal(t, []string{"busy"}, g.returned(), "the call finished after the removal")
	})
}

// A handler may remove itself: RemoveEventHandler does not wait, so the call it is
// made from simply returns, and nothing reaches the handler after it.
func TestAHandlerMayRemoveItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{})
		rec := &recorder{}
		var reg *informer.Registration[*corev1.ConfigMap]
		reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(obj *corev1.ConfigMap, initial bool) {
			rec.OnAdd(obj, initial)
			if obj.Name == "remove-yourself" {
				inf.RemoveEventHandler(reg)
			}
		}})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()

		src.Create(cm("remove-yourself"))
		src.Create(cm("later"))
		synctest.Wait()
		assert.Equal(t, []string{"add remove-yourself"}, rec.summary())
	})
}

// ShutDownEventHandler returns only once the handler's call in progress has returned;
// the notifications queued behind that call are dropped, and nothing later arrives.
// After it returns, the test could close whatever the handler used.
func TestShutDownEventHandlerWaitsForTheCallInProgressAndDropsTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		src, inf, reg := busyHandler(t, g)
		src.Create(cm("queued-1"))
		src.Create(cm("queued-2"))
		synctest.Wait()
		require.Equal(t, 2, reg.Backlog())

		var returnedBefore []string
		result := make(chan error, 1)
		go func() {
			err := inf.ShutDownEventHandler(context.Background(), reg)
			returnedBefore = g.returned()
			result <- err
		}()
		synctest.Wait()
		select {
		case err := <-result:
			close(g.open)
			t.Fatalf("ShutDownEventHandler returned (%v) while the handler was inside a call", err)
		default:
		}

		close(g.open)
		synctest.Wait()
		require.NoError(t, <-result)
		assert.Equal(t, []string{"busy"}, returnedBefore, "the call in progress returned before ShutDownEventHandler did")
		src.Create(cm("later"))
		synctest.Wait()
		assert.Equal(t, []string{"busy"}, g.returned(), "the queued adds were dropped, and no later one arrived")
	})
}

// Whenever the handler has no goroutine running — never started, already stopped —
// ShutDownEventHandler returns nil at once (no fake time passes), and the handler is
// gone for good.
func TestShutDownEventHandlerReturnsAtOnceWhenTheHandlerIsNotRunning(t *testing.T) {
	// shutDownAtOnce calls ShutDownEventHandler and checks it returned nil without
	// waiting: a bounded ctx turns a wait into a failure instead of a hang.
	shutDownAtOnce := func(t *testing.T, inf *informer.SharedIndexInformer[*corev1.ConfigMap], reg *informer.Registration[*corev1.ConfigMap]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		require.NoError(t, inf.ShutDownEventHandler(ctx, reg))
		assert.Equal(t, start, time.Now(), "no time passed")
	}
	setup := func(t *testing.T, opts informer.Options[*corev1.ConfigMap]) (*fakeapi.Server[*corev1.ConfigMap], *informer.SharedIndexInformer[*corev1.ConfigMap], *recorder, *informer.Registration[*corev1.ConfigMap]) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("listed"))
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, opts)
		rec := &recorder{}
		reg, err := inf.AddEventHandler(rec)
		require.NoError(t, err)
		return src, inf, rec, reg
	}

	t.Run("the informer never ran: the handler never hears of anything", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, inf, rec, reg := setup(t, informer.Options[*corev1.ConfigMap]{})
			shutDownAtOnce(t, inf, reg)
			running(t, inf)
			synctest.Wait()
			assert.Empty(t, rec.summary(), "removed before Run, so not started by it")
		})
	})
	t.Run("Run failed on bad options, so no handler goroutine ever started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			logs := &logBuffer{}
			_, inf, _, reg := setup(t, informer.Options[*corev1.ConfigMap]{Queue: informer.DeltaFIFOQueue + 1, Logger: logs.logger()})
			running(t, inf)
			synctest.Wait()
			require.Contains(t, logs.String(), "informer not run")
			shutDownAtOnce(t, inf, reg)
		})
	})
	t.Run("added before Run, shut down once synced", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src, inf, rec, reg := setup(t, informer.Options[*corev1.ConfigMap]{})
			running(t, inf)
			synctest.Wait()
			require.True(t, reg.HasSynced())
			shutDownAtOnce(t, inf, reg)
			src.Create(cm("later"))
			synctest.Wait()
			assert.Equal(t, []string{"add listed"}, rec.summary())
		})
	})
	t.Run("added to a synced informer, then shut down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src, inf, _, _ := setup(t, informer.Options[*corev1.ConfigMap]{})
			running(t, inf)
			synctest.Wait()
			late := &recorder{}
			reg, err := inf.AddEventHandler(late)
			require.NoError(t, err)
			synctest.Wait()
			shutDownAtOnce(t, inf, reg)
			src.Create(cm("later"))
			synctest.Wait()
			assert.Equal(t, []string{"add listed"}, late.summary(), "its replay, and nothing after")
		})
	})
	t.Run("the informer has stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, inf, _, reg := setup(t, informer.Options[*corev1.ConfigMap]{})
			_, stop := running(t, inf)
			synctest.Wait()
			stop()
			shutDownAtOnce(t, inf, reg)
		})
	})
	t.Run("a second call, or one after RemoveEventHandler, is a no-op", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, inf, _, twice := setup(t, informer.Options[*corev1.ConfigMap]{})
			removed, err := inf.AddEventHandler(&recorder{})
			require.NoError(t, err)
			running(t, inf)
			synctest.Wait()
			shutDownAtOnce(t, inf, twice)
			shutDownAtOnce(t, inf, twice)
			inf.RemoveEventHandler(removed)
			synctest.Wait()
			shutDownAtOnce(t, inf, removed)
		})
	})
}

// Called from inside the handler it would shut down, ShutDownEventHandler could only
// wait for itself. It returns ErrShutDownFromOwnHandler instead, and removes nothing.
func TestShutDownEventHandlerFromItsOwnHandlerIsAnErrorNotADeadlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{})
		rec := &recorder{}
		errs := make(chan error, 1)
		var reg *informer.Registration[*corev1.ConfigMap]
		reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(obj *corev1.ConfigMap, initial bool) {
			rec.OnAdd(obj, initial)
			if obj.Name == "shut-yourself-down" {
				// Bounded, so that without the check this test fails instead of hanging.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				errs <- inf.ShutDownEventHandler(ctx, reg)
			}
		}})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()

		src.Create(cm("shut-yourself-down"))
		synctest.Wait()
		assert.ErrorIs(t, <-errs, informer.ErrShutDownFromOwnHandler)

		src.Create(cm("later"))
		synctest.Wait()
		assert.Equal(t, []string{"add shut-yourself-down", "add later"}, rec.summary(), "still registered")
		require.NoError(t, inf.ShutDownEventHandler(context.Background(), reg), "from outside, it works")
	})
}

// Only the handler's own goroutine is refused: another handler of the same informer
// may shut it down (and waits for it like any other caller).
func TestAHandlerMayShutDownAnotherHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{})
		victim := &recorder{}
		victimReg, err := inf.AddEventHandler(victim)
		require.NoError(t, err)
		errs := make(chan error, 1)
		_, err = inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			if obj.Name == "stop-the-other" {
				errs <- inf.ShutDownEventHandler(context.Background(), victimReg)
			}
		}})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()

		src.Create(cm("stop-the-other"))
		synctest.Wait()
		require.NoError(t, <-errs)
		src.Create(cm("later"))
		synctest.Wait()
		assert.NotContains(t, victim.summary(), "add later")
	})
}

// A registration this informer did not make — another informer's, or nil — is refused
// with ErrForeignRegistration, and the other informer's handler is left alone.
// (client-go would remove nothing and then wait for that handler to stop.)
func TestShutDownEventHandlerRefusesARegistrationOfAnotherInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srcA, srcB := fakeapi.New[*corev1.ConfigMap](), fakeapi.New[*corev1.ConfigMap]()
		infA := newInformer(defaults, srcA, informer.Options[*corev1.ConfigMap]{})
		infB := newInformer(defaults, srcB, informer.Options[*corev1.ConfigMap]{})
		recB := &recorder{}
		regB, err := infB.AddEventHandler(recB)
		require.NoError(t, err)
		running(t, infA)
		running(t, infB)
		synctest.Wait()

		assert.ErrorIs(t, infA.ShutDownEventHandler(context.Background(), regB), informer.ErrForeignRegistration)
		assert.ErrorIs(t, infA.ShutDownEventHandler(context.Background(), nil), informer.ErrForeignRegistration)
		srcB.Create(cm("still-heard"))
		synctest.Wait()
		assert.Equal(t, []string{"add still-heard"}, recB.summary())
	})
}

// When ctx ends before the handler's call returns, ShutDownEventHandler returns
// ctx.Err() at that moment; the handler is removed all the same, and a later call
// returns nil once the call in progress has finished.
func TestShutDownEventHandlerStopsWaitingWhenCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		src, inf, reg := busyHandler(t, g)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		start := time.Now()
		err := inf.ShutDownEventHandler(ctx, reg)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		assert.Equal(t, 5*time.Second, time.Since(start), "it waited exactly until ctx ended")

		close(g.open)
		synctest.Wait()
		require.NoError(t, inf.ShutDownEventHandler(context.Background(), reg))
		src.Create(cm("later"))
		synctest.Wait()
		assert.Equal(t, []string{"busy"}, g.returned(), "removed: nothing after the call in progress")
	})
}
