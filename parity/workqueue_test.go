package parity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/kubeinternals/informers/parity/internal/check"
	"github.com/kubeinternals/informers/workqueue"
	cgwq "k8s.io/client-go/util/workqueue"
)

// queueSide is what the plain-queue test drives: the methods both queues share, with
// ShutDownWithDrain reduced to client-go's form (it blocks; ours is given a context
// that never ends, so it blocks for the same reason).
type queueSide interface {
	Add(item int)
	Len() int
	Get() (int, bool)
	Done(item int)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// oursQueue adapts our Queue to queueSide.
type oursQueue struct{ *workqueue.Queue[int] }

func (q oursQueue) ShutDownWithDrain() { _ = q.Queue.ShutDownWithDrain(context.Background()) }

// queueOp is one step of the plain-queue test.
type queueOp struct {
	kind string // add, get, done, shutdown, drain
	item int    // add: the item; done: which held item, by position (mod how many are held)
}

func (o queueOp) String() string {
	switch o.kind {
	case "add":
		return fmt.Sprintf("Add(%d)", o.item)
	case "done":
		return fmt.Sprintf("Done(held #%d)", o.item)
	}
	return map[string]string{"get": "Get", "shutdown": "ShutDown", "drain": "ShutDownWithDrain (in a goroutine)"}[o.kind]
}

// genQueueOps makes a sequence mostly of Add, Get and Done over five items, so that
// items are often re-added while processing; shutdowns come rarely, and late.
func genQueueOps(r *rand.Rand) []queueOp {
	ops := make([]queueOp, 10+r.IntN(50))
	for i := range ops {
		switch p := r.IntN(100); {
		case p < 40:
			ops[i] = queueOp{kind: "add", item: r.IntN(5)}
		case p < 70:
			ops[i] = queueOp{kind: "get"}
		case p < 95:
			ops[i] = queueOp{kind: "done", item: r.IntN(3)}
		case p < 98:
			ops[i] = queueOp{kind: "drain"}
		default:
			ops[i] = queueOp{kind: "shutdown"}
		}
	}
	return ops
}

// runQueueOps plays ops against one queue inside a synctest bubble and writes what it
// saw. After every step it waits until the bubble is idle, so a ShutDownWithDrain
// running in its goroutine has either returned or is durably blocked, and records
// Len, ShuttingDown and which drains have returned.
//
// A Get is called only when it cannot block: the side's own Len is positive or it is
// shutting down (then Get must report shutdown). Both facts are in the transcript just
// before, so two sides that disagree on them have already diverged.
func runQueueOps(t *testing.T, newQ func() queueSide, ops []queueOp) (tr check.Transcript, err error) {
	bubble(t, &err, func() {
		q := newQ()
		var held []int // items this side's Get returned and the test has not Done yet
		var drains []chan struct{}
		returned := map[int]bool{}
		observe := func() {
			synctest.Wait()
			for i, d := range drains {
				select {
				case <-d:
					if !returned[i] {
						returned[i] = true
						tr.Printf("  drain #%d returned", i)
					}
				default:
				}
			}
			tr.Printf("  len=%d shuttingDown=%v", q.Len(), q.ShuttingDown())
		}
		for _, op := range ops {
			tr.Printf("%s", op)
			switch op.kind {
			case "add":
				q.Add(op.item)
			case "get":
				if q.Len() == 0 && !q.ShuttingDown() {
					tr.Printf("  (would block; not called)")
					break
				}
				item, shutdown := q.Get()
				tr.Printf("  got %d shutdown=%v", item, shutdown)
				if !shutdown {
					held = append(held, item)
				}
			case "done":
				held = doneOne(&tr, held, op.item, q.Done)
			case "shutdown":
				q.ShutDown()
			case "drain":
				// A second drain while one waits is not compared here: client-go's last
				// Done wakes only one of them (exception "two ShutDownWithDrain calls
				// waiting", workqueue_exceptions_test.go).
				if len(drains) > len(returned) {
					tr.Printf("  (a drain is already waiting; not called)")
					break
				}
				d := make(chan struct{})
				drains = append(drains, d)
				go func() { q.ShutDownWithDrain(); close(d) }()
			}
			observe()
		}
		// ShutDown ends any drain still waiting (in both libraries), so the bubble's
		// goroutines can exit.
		tr.Printf("ShutDown (end)")
		q.ShutDown()
		observe()
	})
	return tr, err
}

// bubble runs f in a synctest bubble, and turns a panic inside it into *err: the
// property must return errors, since check.Run calls it many times while shrinking.
//
// A panic of synctest.Test itself (goroutines left blocked when f returns: a side that
// deadlocked) is turned into *err too.
func bubble(t *testing.T, err *error, f func()) {
	defer func() {
		if p := recover(); p != nil {
			*err = fmt.Errorf("synctest: %v", p)
		}
	}()
	synctest.Test(t, func(*testing.T) {
		defer func() {
			if p := recover(); p != nil {
				*err = fmt.Errorf("panic in the bubble: %v", p)
			}
		}()
		f()
	})
}

// transcriptsInBubble runs play in one synctest bubble, both libraries writing their
// transcripts, and compares them (a panic in the bubble is the error).
func transcriptsInBubble(t *testing.T, play func(ours, theirs *check.Transcript)) error {
	var ours, theirs check.Transcript
	var err error
	bubble(t, &err, func() { play(&ours, &theirs) })
	if err != nil {
		return err
	}
	return check.Transcripts(&ours, &theirs)
}

// TestWorkqueue compares the plain queue: hand-out order, de-duplication of waiting
// items, an Add of a processing item held back until Done, Len, ShuttingDown, Get
// after shutdown (drains the queue, then reports shutdown) and when
// ShutDownWithDrain returns.
//
// client-go: util/workqueue/queue.go Typed.Add
// client-go: util/workqueue/queue.go Typed.Done
// client-go: util/workqueue/queue.go Typed.ShutDownWithDrain
func TestWorkqueue(t *testing.T) {
	check.Run(t, check.Config[queueOp]{Runs: 2500}, genQueueOps, func(ops []queueOp) error {
		ours, err := runQueueOps(t, func() queueSide { return oursQueue{workqueue.NewQueue[int](workqueue.Options{})} }, ops)
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		theirs, err := runQueueOps(t, func() queueSide { return cgwq.NewTyped[int]() }, ops)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		return check.Transcripts(&ours, &theirs)
	})
}

// doneOne calls Done for the held item that pick chooses (modulo how many are held) and
// returns the items still held; with none held it only says so.
func doneOne(tr *check.Transcript, held []int, pick int, done func(int)) []int {
	if len(held) == 0 {
		tr.Printf("  (nothing held)")
		return held
	}
	i := pick % len(held)
	tr.Printf("  done %d", held[i])
	done(held[i])
	return append(held[:i], held[i+1:]...)
}
