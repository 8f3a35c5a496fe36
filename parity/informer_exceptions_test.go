package parity

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/fifo"
	"github.com/kubeinternals/informers/reflector"
)

// childEnv, when set in the environment, makes this test binary play one scenario
// that must crash the process, instead of running the tests (TestMain). An exception
// whose client-go column says "the process exits" runs it as a child and looks at how
// the child ended: a crash cannot be recovered in the process that crashes.
const childEnv = "PARITY_CHILD"

const handlerPanic = "handler panicked on purpose"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "handler-panic" {
		clientGoHandlerPanics()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// clientGoHandlerPanics runs client-go's informer with a handler whose OnAdd panics,
// over one object. It should never return: HandleCrash re-panics in the listener's
// goroutine. If it does return (after a minute), the child says so and exits 0.
func clientGoHandlerPanics() {
	srv := newCMServer()
	srv.write("a")
	side := newClientGoSide(clientGoLW{srv, &srv.theirs}, 0)
	_, _ = side.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { panic(handlerPanic) }})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	side.run(ctx)
	fmt.Println("client-go's informer ran for a minute without crashing")
}

// client-go: tools/cache/shared_informer.go processorListener.run (defer utilruntime.HandleCrashWithLogger)
var _ = exception("docs/defaults.md", "Informer and queue", "a handler panics", func(t *testing.T) {
	t.Run("client-go: the process exits", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=handler-panic")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "the child exited normally:\n%s", out)
		require.NotEqual(t, 0, exit.ExitCode())
		require.Contains(t, string(out), "panic: "+handlerPanic, "the child did not die of the handler's panic")
	})

	t.Run("ours: recovered, logged with the key and the stack, next notification delivered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := newCMServer()
			srv.write("a")
			srv.write("b")
			var logs lines
			inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](oursLW{srv, &srv.ours}, informer.Options[*corev1.ConfigMap]{
				InitialList: reflector.PagedList, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			n := &notes{}
			reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, initial bool) {
				if cm.Name == "a" {
					panic(handlerPanic)
				}
				noteAdd(n, cm, initial)
			}})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); inf.Run(ctx) }()
			synctest.Wait()
			require.Equal(t, []string{"OnAdd b@2 initial=true"}, n.take(), "the add after the panicking one")
			require.True(t, reg.HasSynced(), "the panicking initial add counts as handled")
			srv.write("c")
			synctest.Wait()
			require.Equal(t, []string{"OnAdd c@3 initial=false"}, n.take(), "a live notification after the panic")
			log := logs.String()
			for _, want := range []string{"level=ERROR", "key=ns/a", handlerPanic, "stack="} {
				require.Contains(t, log, want)
			}
			cancel()
			<-done
		})
	})
})

// listenerBurst is how many notifications the listener-buffer exception queues behind a
// blocked handler: past client-go's initial 1024 slots, so its ring grows (to 8192).
const listenerBurst = 5000

// client-go: tools/cache/shared_informer.go processorListener.add (pendingNotifications, initialBufferSize)
var _ = exception("docs/defaults.md", "Informer and queue", "listener buffer", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newCMServer()
		ours := newOursSide(oursLW{srv, &srv.ours}, 0)
		theirs := newClientGoSide(clientGoLW{srv, &srv.theirs}, 0)
		// Each handler blocks in its first call until the gate opens, so the burst
		// waits in its listener's buffer.
		gate := make(chan struct{})
		var handled [2]int
		var mu sync.Mutex
		count := func(side int) {
			<-gate
			mu.Lock()
			handled[side]++
			mu.Unlock()
		}
		ourReg, err := ours.inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { count(0) }})
		require.NoError(t, err)
		theirReg, err := theirs.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { count(1) }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for _, s := range []informerSide{ours, theirs} {
			wg.Go(func() { s.run(ctx) })
		}
		synctest.Wait()
		require.Equal(t, 1024, ringSize(theirReg), "client-go: the ring starts at initialBufferSize")
		require.Equal(t, 0, heldSlots(ourReg), "ours: an empty buffer holds no block")

		for i := range listenerBurst {
			srv.write(fmt.Sprintf("m%d", i))
		}
		synctest.Wait()
		peak := ringSize(theirReg)
		require.GreaterOrEqual(t, peak, listenerBurst-1, "client-go: the ring grew to hold the burst")
		require.Equal(t, listenerBurst-1, ourReg.Backlog(), "ours: the burst waits behind the blocked call, none dropped")

		close(gate)
		synctest.Wait()
		require.Equal(t, [2]int{listenerBurst, listenerBurst}, handled, "every notification reached both handlers")
		require.Equal(t, peak, ringSize(theirReg), "client-go: the drained ring keeps its peak size")
		require.Equal(t, listenerBurst-1, ourReg.HighWater())
		require.LessOrEqual(t, heldSlots(ourReg), 2*fifo.BlockLen, "ours: the drained buffer gave its blocks back but one and a spare")

		cancel()
		wg.Wait()
	})
})

// ringSize is the slot count of a client-go listener's notification ring: the
// registration is the *processorListener, its pendingNotifications a RingGrowing
// whose n is the size of its storage. heldSlots is the same for our listener: the
// blocks its fifo.Queue holds (the chain from head, and the spare), fifo.BlockLen slots each.
//
// Why reflection: neither library exports its buffer's size (the difference is in
// memory, not in behaviour). The listener goroutines are durably blocked when these
// are called (after synctest.Wait). A renamed field panics here, rather than
// comparing against a guess.
func ringSize(reg cache.ResourceEventHandlerRegistration) int {
	return int(reflect.ValueOf(reg).Elem().FieldByName("pendingNotifications").FieldByName("n").Int())
}

func heldSlots(reg *informer.Registration[*corev1.ConfigMap]) int {
	q := reflect.ValueOf(reg).Elem().FieldByName("l").Elem().FieldByName("pending")
	blocks := 0
	for b := q.FieldByName("head"); !b.IsNil(); b = b.Elem().FieldByName("next") {
		blocks++
	}
	if !q.FieldByName("spare").IsNil() {
		blocks++
	}
	return blocks * fifo.BlockLen
}
