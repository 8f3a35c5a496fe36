package parity

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// errBadLabel is what the failing index function returns for an object labelled bad.
var errBadLabel = errors.New("bad label")

func failingIndex(cm *corev1.ConfigMap) ([]string, error) {
	if _, bad := cm.Labels["bad"]; bad {
		return nil, errBadLabel
	}
	return teamsOf(cm), nil
}

func badCM(ns, name string, rv int) *corev1.ConfigMap {
	cm := cmSpec{NS: ns, Name: name, RV: rv}.build()
	cm.Labels = map[string]string{"bad": "", "teams": "z"}
	return cm
}

// An IndexFunc error: client-go panics inside the write (the informer's goroutine, in
// an informer); ours returns an error wrapping indexer.ErrIndexFunc and leaves every
// query's answer as it was — for Add, Update of a stored object, Replace and AddIndexers.
//
// client-go: tools/cache/thread_safe_store.go storeIndex.updateSingleIndex
var _ = exception("docs/defaults.md", "Informer and queue", "an `IndexFunc` fails", func(t *testing.T) {
	a, b := "a", "b"
	stored := []*corev1.ConfigMap{
		cmSpec{NS: "ns1", Name: "a", RV: 1, Teams: &a}.build(),
		cmSpec{NS: "ns2", Name: "b", RV: 2, Teams: &b}.build(),
	}

	// client-go's side: every write that runs the failing function panics.
	cgWrites := map[string]func(cache.Indexer) error{
		"Add":    func(ix cache.Indexer) error { return ix.Add(badCM("ns1", "new", 3)) },
		"Update": func(ix cache.Indexer) error { return ix.Update(badCM("ns1", "a", 3)) },
		"Replace": func(ix cache.Indexer) error {
			return ix.Replace([]any{stored[0], badCM("ns1", "new", 3)}, "9")
		},
	}
	for _, name := range []string{"Add", "Update", "Replace"} {
		ix := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
			"teams": func(obj any) ([]string, error) { return failingIndex(obj.(*corev1.ConfigMap)) },
		})
		for _, cm := range stored {
			if err := ix.Add(cm); err != nil {
				t.Fatal(err)
			}
		}
		if p := panicOf(func() { _ = cgWrites[name](ix) }); p == nil {
			t.Errorf("client-go %s with a failing IndexFunc did not panic", name)
		}
	}
	cg := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	bad := cmSpec{NS: "ns1", Name: "bad", RV: 3}.build()
	bad.Labels = map[string]string{"bad": ""}
	if err := cg.Add(bad); err != nil {
		t.Fatal(err)
	}
	if p := panicOf(func() {
		_ = cg.AddIndexers(cache.Indexers{"teams": func(obj any) ([]string, error) {
			return failingIndex(obj.(*corev1.ConfigMap))
		}})
	}); p == nil {
		t.Error("client-go AddIndexers back-filling with a failing IndexFunc did not panic")
	}

	// ours: every such write returns ErrIndexFunc and changes no query's answer.
	ours := indexer.New(indexer.Options[*corev1.ConfigMap]{Indexers: indexer.Indexers[*corev1.ConfigMap]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap],
		"teams":                failingIndex,
	}})
	for _, cm := range stored {
		if err := ours.Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	side := &oursIx{ours}
	var before check.Transcript
	observeIndexer(side, &before)
	writes := []struct {
		name string
		do   func() error
	}{
		{"Add", func() error { return ours.Add(badCM("ns1", "new", 3)) }},
		{"Update", func() error { return ours.Update(badCM("ns1", "a", 3)) }},
		{"Replace", func() error { return ours.Replace([]*corev1.ConfigMap{stored[0], badCM("ns1", "new", 3)}, "9") }},
		{"AddIndexers", func() error {
			if err := ours.Add(bad); !errors.Is(err, indexer.ErrIndexFunc) {
				return fmt.Errorf("Add of the bad object: %v", err)
			}
			return ours.AddIndexers(indexer.Indexers[*corev1.ConfigMap]{"app": func(cm *corev1.ConfigMap) ([]string, error) {
				if cm.Name == "b" {
					return nil, errBadLabel
				}
				return appOf(cm), nil
			}})
		}},
	}
	for _, w := range writes {
		if err := w.do(); !errors.Is(err, indexer.ErrIndexFunc) {
			t.Errorf("ours %s with a failing IndexFunc: %v, want an error wrapping ErrIndexFunc", w.name, err)
		}
		var after check.Transcript
		observeIndexer(side, &after)
		if err := check.Transcripts(&after, &before); err != nil {
			t.Errorf("ours %s changed the store: %v", w.name, err)
		}
	}
	if names := side.indexerNames(); slices.Contains(names, "app") {
		t.Errorf("a failed AddIndexers registered its index: %v", names)
	}
})

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}
