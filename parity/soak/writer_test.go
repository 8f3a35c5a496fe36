package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// writer makes the objects' histories: one write at a time on a fixed set of names,
// straight to the first kube-apiserver (no proxy), and it records every
// resourceVersion each object had, from the answers.
//
// Why a failed write makes its key uncertain: a write cut off by a crash may have
// been applied or not, and a later write may overwrite it before anyone reads it, so
// an informer may have seen a version the writer never learned. Such a key's
// resourceVersions are not checked against the history (they are counted).
type writer struct {
	cs        kubernetes.Interface
	ns        string
	names     []string
	r         *rand.Rand
	present   map[string]bool
	history   map[string]map[string]bool // key → every resourceVersion the object had
	uncertain map[string]bool
	counts    map[string]int // "create", "update", "delete", "failed"
}

func newWriter(cs kubernetes.Interface, ns string, objects int, seed uint64) *writer {
	w := &writer{cs: cs, ns: ns, r: rand.New(rand.NewPCG(seed, 1)), present: map[string]bool{},
		history: map[string]map[string]bool{}, uncertain: map[string]bool{}, counts: map[string]int{}}
	for i := range objects {
		w.names = append(w.names, "cm-"+strconv.Itoa(i))
	}
	return w
}

// step makes one write: a create of an absent name, else an update (three times in
// four) or a delete.
func (w *writer) step(ctx context.Context) error {
	name := w.names[w.r.IntN(len(w.names))]
	key := w.ns + "/" + name
	cms := w.cs.CoreV1().ConfigMaps(w.ns)
	var (
		got *corev1.ConfigMap
		err error
		op  string
	)
	switch {
	case !w.present[name]:
		op = "create"
		got, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{})
	case w.r.IntN(4) < 3:
		op = "update"
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": strconv.Itoa(w.r.IntN(1 << 30))}}
		got, err = cms.Update(ctx, cm, metav1.UpdateOptions{}) // no resourceVersion: the last write wins
	default:
		op = "delete"
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err == nil {
		w.counts[op]++
		if op == "delete" {
			w.present[name] = false
		} else {
			w.present[name] = true
			w.record(key, got.ResourceVersion)
		}
		return nil
	}
	w.counts["failed"]++
	w.uncertain[key] = true
	return w.reread(ctx, name)
}

// reread learns the object's state after a failed write, retrying until the apiserver
// answers (the fault that failed the write may still last).
func (w *writer) reread(ctx context.Context, name string) error {
	for {
		got, err := w.cs.CoreV1().ConfigMaps(w.ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			w.present[name] = true
			w.record(w.ns+"/"+name, got.ResourceVersion)
			return nil
		case apierrors.IsNotFound(err):
			w.present[name] = false
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reading %s back after a failed write: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *writer) record(key, rv string) {
	if w.history[key] == nil {
		w.history[key] = map[string]bool{}
	}
	w.history[key][rv] = true
}
