package deltafifo

import (
	"bytes"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/indexer"
)

// cm returns a ConfigMap "ns/name" at resource version rv.
func cm(ns, name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

// known is a tiny map-backed KnownObjects: what the consumer "has".
type known struct {
	objs map[string]*corev1.ConfigMap
	// ghosts are keys ListKeys reports but GetByKey does not find: a store that
	// changed between the two calls.
	ghosts []string
	// getErr, if set, is returned by every GetByKey.
	getErr error
}

func newKnown(objs ...*corev1.ConfigMap) *known {
	k := &known{objs: map[string]*corev1.ConfigMap{}}
	for _, o := range objs {
		k.objs[key(o)] = o
	}
	return k
}

func (k *known) ListKeys() []string {
	keys := append(slices.Sorted(maps.Keys(k.objs)), k.ghosts...)
	return keys
}

func (k *known) GetByKey(key string) (*corev1.ConfigMap, bool, error) {
	if k.getErr != nil {
		return nil, false, k.getErr
	}
	o, ok := k.objs[key]
	return o, ok, nil
}

var errBoom = errors.New("boom")

// key is the namespace/name key of o.
func key(o *corev1.ConfigMap) string { return indexer.ObjectKey(o.Namespace, o.Name) }

// popped is what one Pop handed to process.
type popped struct {
	deltas          Deltas[*corev1.ConfigMap]
	isInInitialList bool
}

// popAll pops until the queue is empty and returns what process saw.
func popAll(t *testing.T, q Queue[*corev1.ConfigMap]) []popped {
	t.Helper()
	var out []popped
	for {
		n := queueLen(q)
		if n == 0 {
			return out
		}
		err := q.Pop(t.Context(), func(d Deltas[*corev1.ConfigMap], initial bool) error {
			out = append(out, popped{d, initial})
			return nil
		})
		require.NoError(t, err)
	}
}

// popOne pops exactly one key/delta and returns it.
func popOne(t *testing.T, q Queue[*corev1.ConfigMap]) popped {
	t.Helper()
	var got popped
	require.NoError(t, q.Pop(t.Context(), func(d Deltas[*corev1.ConfigMap], initial bool) error {
		got = popped{d, initial}
		return nil
	}))
	return got
}

// queueLen peeks at how many pops are pending.
func queueLen(q Queue[*corev1.ConfigMap]) int {
	switch q := q.(type) {
	case *DeltaFIFO[*corev1.ConfigMap]:
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queue)
	case *RealFIFO[*corev1.ConfigMap]:
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.items)
	}
	panic("unknown queue type")
}

// summary renders deltas as "Type:key@rv" strings, with "Deleted!" for a tombstone,
// so that expectations read like the sequence they describe.
func summary(ds Deltas[*corev1.ConfigMap]) []string {
	var out []string
	for _, d := range ds {
		switch {
		case d.Tombstone != nil:
			out = append(out, "Deleted!:"+d.Tombstone.Key+"@"+d.Object.ResourceVersion)
		case d.Info != nil && d.Type == ReplacedAll:
			s := "ReplacedAll@" + d.Info.ResourceVersion + "["
			for i, o := range d.Info.Objects {
				if i > 0 {
					s += ","
				}
				s += key(o)
			}
			out = append(out, s+"]")
		case d.Info != nil:
			out = append(out, d.Type.String()+"@"+d.Info.ResourceVersion)
		case d.Type == SyncAll:
			out = append(out, "SyncAll")
		default:
			out = append(out, d.Type.String()+":"+key(d.Object)+"@"+d.Object.ResourceVersion)
		}
	}
	return out
}

// summaries renders every popped key's deltas.
func summaries(ps []popped) [][]string {
	if len(ps) == 0 {
		return nil
	}
	out := make([][]string, len(ps))
	for i, p := range ps {
		out[i] = summary(p.deltas)
	}
	return out
}

// logBuffer is a concurrency-safe buffer for a test logger.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger(b *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }
