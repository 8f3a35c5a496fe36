package parity

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// TestRealFIFO gives our RealFIFO and client-go's — atomic, unlocked while processing,
// bookmarks queued, no known objects: how client-go 1.37's newQueueFIFO builds it for
// every informer — the same generated calls: watch events, relists, resyncs, bookmarks,
// bursts of up to 2,500 adds (past a batch of 1,000 and past two batches), single pops
// and batch pops. It compares, after every call, the error, Len and HasSynced; for every
// pop, the deltas handed over in order, how they were grouped into a batch,
// isInInitialList, and HasSynced as seen from inside the process call. Every input runs
// twice, without and with a transform.
//
// client-go: tools/cache/controller.go newQueueFIFO
// client-go: tools/cache/the_real_fifo.go RealFIFO.PopBatch
func TestRealFIFO(t *testing.T) {
	kinds := []fifoKind{fifoAdd, fifoAdd, fifoUpdate, fifoUpdate, fifoDelete, fifoReplace, fifoResync, fifoBookmark, fifoAddMany, fifoPop, fifoPopBatch, fifoPopBatch, fifoPopBatch}
	check.Run(t, check.Config[fifoOp]{Runs: 400, Simplify: simplifyFifoOp},
		func(r *randSource) []fifoOp { return genFifoOps(r, kinds) },
		withAndWithoutTransform(compareRealFIFOs))
}

func compareRealFIFOs(ops []fifoOp, transform bool) error {
	var ours, theirs check.Transcript
	ourOpts := deltafifo.RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true, Logger: quiet}
	theirOpts := cache.RealFIFOOptions{
		KeyFunction: cache.MetaNamespaceKeyFunc, Logger: &quietKlog,
		AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true,
	}
	if transform {
		ourOpts.Transform = func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) { return transformOnce(cm), nil }
		theirOpts.Transformer = func(obj any) (any, error) { return transformOnce(obj.(*corev1.ConfigMap)), nil }
	}
	our := deltafifo.NewRealFIFO(ourOpts)
	their := cache.NewRealFIFOWithOptions(theirOpts)
	ctx := context.Background()

	// Each side prints a batch the same way; single pops are batches of one. HasSynced is
	// read inside the process call only while fewer than two batches were queued: from
	// there on client-go keeps the queue's lock during the call, and its HasSynced takes
	// that lock (ours takes none), so the read would deadlock.
	lockFree := false
	synced := func(hasSynced func() bool) string {
		if !lockFree {
			return "(not read)"
		}
		return fmt.Sprint(hasSynced())
	}
	ourBatch := func(op fifoOp, deltas []deltafifo.Delta[*corev1.ConfigMap], initial bool) {
		parts := make([]string, len(deltas))
		for i, d := range deltas {
			parts[i] = oursDelta(d)
		}
		ours.Printf("%s → %d deltas initial=%v synced-while-processing=%s [%s]", op, len(deltas), initial, synced(our.HasSynced), strings.Join(parts, ", "))
	}
	theirBatch := func(op fifoOp, deltas []cache.Delta, initial bool) {
		parts := make([]string, len(deltas))
		for i, d := range deltas {
			parts[i] = clientGoDelta(d)
		}
		theirs.Printf("%s → %d deltas initial=%v synced-while-processing=%s [%s]", op, len(deltas), initial, synced(their.HasSynced), strings.Join(parts, ", "))
	}

	for _, op := range ops {
		ourErr, theirErr, _ := writeBoth(op, our, their) // the others are made below
		switch op.kind {
		case fifoAddMany:
			for i := range op.count {
				name := fmt.Sprintf("m%d", i)
				ourErr, theirErr = our.Add(configMap(name, op.rv)), their.Add(configMap(name, op.rv))
				if ourErr != nil || theirErr != nil {
					break // the first failure is the one to compare
				}
			}
		case fifoBookmark:
			ourErr, theirErr = our.Bookmark(fmt.Sprint(op.rv)), their.Bookmark(fmt.Sprint(op.rv))
		case fifoPop, fifoPopBatch:
			if our.Len() != queuedLen(their, "items") {
				return check.Transcripts(&ours, &theirs) // already parted on Len
			}
			if our.Len() == 0 {
				ours.Printf("%s → nothing queued", op)
				theirs.Printf("%s → nothing queued", op)
				continue
			}
			lockFree = our.Len() <= 2*1000 // fewer than two batches left once one delta is taken
			if op.kind == fifoPop {
				ourErr = our.Pop(ctx, func(d deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
					ourBatch(op, d, initial)
					return nil
				})
				_, theirErr = their.Pop(func(obj any, initial bool) error {
					theirBatch(op, obj.(cache.Deltas), initial)
					return nil
				})
				break
			}
			ourErr = our.PopBatch(ctx, func(d []deltafifo.Delta[*corev1.ConfigMap], initial bool) error {
				ourBatch(op, d, initial)
				return nil
			})
			theirErr = their.PopBatch(func(d []cache.Delta, initial bool) error {
				theirBatch(op, d, initial)
				return nil
			}, func(obj any, initial bool) error {
				theirBatch(op, obj.(cache.Deltas), initial)
				return nil
			})
		}
		ours.Printf("%s → %s len=%d synced=%v", op, errWord(ourErr), our.Len(), our.HasSynced())
		theirs.Printf("%s → %s len=%d synced=%v", op, errWord(theirErr), queuedLen(their, "items"), their.HasSynced())
	}
	return check.Transcripts(&ours, &theirs)
}
