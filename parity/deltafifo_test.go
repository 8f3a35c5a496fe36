package parity

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// TestDeltaFIFO gives our DeltaFIFO and client-go's (with Replaced deltas on, as
// client-go's newQueueFIFO configures it) the same generated calls — watch events,
// relists with and without deletions, resyncs, pops — each with a consumer that applies
// what it pops to its known objects, as an informer does. After every call it compares
// the error, Len and HasSynced; for every pop, the key's deltas in order (type, object,
// tombstone) and isInInitialList. Every input runs twice, without and with a transform.
//
// client-go: tools/cache/controller.go newQueueFIFO
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Pop
func TestDeltaFIFO(t *testing.T) {
	kinds := []fifoKind{fifoAdd, fifoAdd, fifoUpdate, fifoUpdate, fifoDelete, fifoDelete, fifoReplace, fifoResync, fifoPop, fifoPop, fifoPop}
	check.Run(t, check.Config[fifoOp]{Runs: 1200, Simplify: simplifyFifoOp},
		func(r *randSource) []fifoOp { return genFifoOps(r, kinds) },
		withAndWithoutTransform(compareDeltaFIFOs))
}

func compareDeltaFIFOs(ops []fifoOp, transform bool) error {
	var ours, theirs check.Transcript
	ourKnown, theirKnown := newKnownObjects(), newKnownObjects()
	ourOpts := deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: oursKnown{ourKnown}, Logger: quiet}
	theirOpts := cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: clientGoKnown{theirKnown}, EmitDeltaTypeReplaced: true, Logger: &quietKlog}
	if transform {
		ourOpts.Transform = func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) { return transformOnce(cm), nil }
		theirOpts.Transformer = func(obj any) (any, error) { return transformOnce(obj.(*corev1.ConfigMap)), nil }
	}
	our := deltafifo.NewDeltaFIFO(ourOpts)
	their := cache.NewDeltaFIFOWithOptions(theirOpts)
	ctx := context.Background()

	for _, op := range ops {
		ourErr, theirErr, _ := writeBoth(op, our, their) // the others are made below
		switch op.kind {
		case fifoPop:
			if our.Len() != queuedLen(their, "queue") {
				return check.Transcripts(&ours, &theirs) // already parted on Len
			}
			if our.Len() == 0 {
				ours.Printf("%s → nothing queued", op)
				theirs.Printf("%s → nothing queued", op)
				continue
			}
			ourErr = our.Pop(ctx, func(d deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
				ours.Printf("%s → initial=%v %s", op, initial, applyOurs(ourKnown, d))
				return nil
			})
			_, theirErr = their.Pop(func(obj any, initial bool) error {
				theirs.Printf("%s → initial=%v %s", op, initial, applyClientGo(theirKnown, obj.(cache.Deltas)))
				return nil
			})
		}
		ours.Printf("%s → %s len=%d synced=%v known=%s", op, errWord(ourErr), our.Len(), our.HasSynced(), ourKnown)
		theirs.Printf("%s → %s len=%d synced=%v known=%s", op, errWord(theirErr), queuedLen(their, "queue"), their.HasSynced(), theirKnown)
	}
	return check.Transcripts(&ours, &theirs)
}

// applyOurs is an informer's consumer on our side: every delta but a delete stores the
// object, a delete removes it (by the tombstone's key for an inferred one).
//
// client-go: tools/cache/controller.go processDeltas
func applyOurs(known *knownObjects, deltas deltafifo.Deltas[*corev1.ConfigMap]) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		parts[i] = oursDelta(d)
		key, _ := indexer.MetaNamespaceKeyFunc(d.Object)
		if d.Tombstone != nil {
			key = d.Tombstone.Key
		}
		if d.Type == deltafifo.Deleted {
			delete(known.objs, key)
		} else {
			known.objs[key] = d.Object
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// applyClientGo is the same consumer on client-go's deltas.
func applyClientGo(known *knownObjects, deltas cache.Deltas) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		parts[i] = clientGoDelta(d)
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
		if d.Type == cache.Deleted {
			delete(known.objs, key)
		} else {
			known.objs[key] = d.Object.(*corev1.ConfigMap)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
