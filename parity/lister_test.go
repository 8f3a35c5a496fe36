package parity

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// configMaps is the resource client-go's generated ConfigMap lister is built with.
var configMaps = schema.GroupResource{Group: "", Resource: "configmaps"}

// lsSelectors are the selectors every List is asked with; labels.Nothing() is added to
// them. (A nil selector is left out: client-go panics on it, ours lists everything, as
// indexer/doc.go says.)
var lsSelectors = []string{"", "teams=a", "teams!=b", "app", "!app", "app in (x,y)", "app=,teams="}

// lsNamespaces are the namespaces listed and read: each a generated object can have,
// and one none has.
var lsNamespaces = []string{"", "ns1", "ns2", "ns3"}

// lsSide is one library's lister, behind the same methods.
type lsSide struct {
	list   func(namespace string, sel labels.Selector) ([]*corev1.ConfigMap, error)
	get    func(namespace, name string) (*corev1.ConfigMap, error)
	ourErr bool // whose NotFound error describeGetError reads
}

func oursLister(ix indexer.Indexer[*corev1.ConfigMap]) lsSide {
	l := indexer.NewLister(ix)
	return lsSide{
		list: func(ns string, sel labels.Selector) ([]*corev1.ConfigMap, error) {
			if ns == "" {
				return l.List(sel)
			}
			return l.Namespace(ns).List(sel)
		},
		get: func(ns, name string) (*corev1.ConfigMap, error) {
			if ns == "" {
				return l.Get(name)
			}
			return l.Namespace(ns).Get(name)
		},
		ourErr: true,
	}
}

// clientGoLister is the base of client-go's generated listers: New for the cluster,
// NewNamespaced for one namespace. Its List is ListAll or ListAllByNamespace.
//
// client-go: tools/cache/listers.go ListAllByNamespace
// client-go: listers/generic_helpers.go ResourceIndexer.Get
func clientGoLister(ix cache.Indexer) lsSide {
	l := listers.New[*corev1.ConfigMap](ix, configMaps)
	return lsSide{
		list: func(ns string, sel labels.Selector) ([]*corev1.ConfigMap, error) {
			if ns == "" {
				return l.List(sel)
			}
			return listers.NewNamespaced(l, ns).List(sel)
		},
		get: func(ns, name string) (*corev1.ConfigMap, error) {
			if ns == "" {
				return l.Get(name)
			}
			return listers.NewNamespaced(l, ns).Get(name)
		},
	}
}

// describeGetError writes a Get's error as the API status it carries. The NotFound
// error's kind and message differ on purpose (the exception below); each side's is
// checked against its own documented form and written the same way when it matches.
func (s lsSide) describeGetError(ns, name string, err error) string {
	if err == nil {
		return "ok"
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "error without an API status: " + err.Error()
	}
	status := st.Status()
	details := "no details"
	if d := status.Details; d != nil {
		kind, message := d.Kind, status.Message
		wantKind, wantMessage := configMaps.Resource, apierrors.NewNotFound(configMaps, name).Error()
		if s.ourErr {
			wantKind, wantMessage = "", (&indexer.NotFoundError{Namespace: ns, Name: name}).Error()
		}
		if kind == wantKind {
			kind = "<its own>"
		}
		if message == wantMessage {
			message = "<its own>"
		}
		details = fmt.Sprintf("name=%q group=%q kind=%s message=%s", d.Name, d.Group, kind, message)
	}
	return fmt.Sprintf("IsNotFound=%v code=%d reason=%s %s", apierrors.IsNotFound(err), status.Code, status.Reason, details)
}

func mustParse(q string) labels.Selector {
	sel, err := labels.Parse(q)
	if err != nil {
		panic(err) // lsSelectors is fixed: a typo there is the test's bug
	}
	return sel
}

// observeLister writes every List and Get: results sorted (client-go lists a map) but
// compared in full, and for a missing object the error's status.
func observeLister(s lsSide, tr *check.Transcript) {
	sels := []labels.Selector{labels.Nothing()}
	for _, q := range lsSelectors {
		sels = append(sels, mustParse(q))
	}
	for _, ns := range lsNamespaces {
		for _, sel := range sels {
			l, err := s.list(ns, sel)
			tr.Printf("  Namespace(%q).List(%q) %s %s", ns, sel, describeSorted(l), errWord(err))
		}
		for _, name := range append(cmNames, "zz") {
			obj, err := s.get(ns, name)
			tr.Printf("  Namespace(%q).Get(%q) %s %s", ns, name, describe(obj), s.describeGetError(ns, name, err))
		}
	}
}

// TestLister compares the listers over both indexers after the writes TestIndexer
// generates, with and without a namespace index to start with (without one, a
// namespace's List scans everything, until AddIndexers adds it).
//
// client-go: tools/cache/listers.go ListAll
func TestLister(t *testing.T) {
	// client-go logs a warning on every List that falls back to a scan.
	klog.SetLogger(logr.Discard())
	t.Cleanup(klog.ClearLogger)
	check.Run(t, check.Config[ixOp]{Runs: 100, Simplify: simplifyIndexerOp}, genIndexerOps,
		func(ops []ixOp) error {
			for _, start := range [][]string{{indexer.NamespaceIndex}, nil} {
				var oursTr, cgTr check.Transcript
				ours, cg := newOursIx(start...), newClientGoIx(start...)
				oursL, cgL := oursLister(ours.ix), clientGoLister(cg.ix)
				for _, op := range ops {
					op.apply(ours, &oursTr)
					observeLister(oursL, &oursTr)
					op.apply(cg, &cgTr)
					observeLister(cgL, &cgTr)
				}
				if err := check.Transcripts(&oursTr, &cgTr); err != nil {
					return fmt.Errorf("starting with indexes %v: %w", start, err)
				}
			}
			return nil
		})
}

// A Lister's NotFound error: both are apierrors.IsNotFound with code 404, reason
// NotFound, the name and the group in Details; client-go's also names the resource
// (Details.Kind "configmaps", message `configmaps "a" not found`), which ours, built
// from the cache alone, does not know: its Kind is empty and its message names the key.
//
// client-go: listers/generic_helpers.go ResourceIndexer.Get
var _ = exception("docs/parity.md", "Differences found by the suite", "Lister NotFound error's kind and message", func(t *testing.T) {
	cgErr := func() error {
		_, err := listers.NewNamespaced(listers.New[*corev1.ConfigMap](cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}), configMaps), "ns1").Get("a")
		return err
	}()
	_, oursErr := indexer.NewLister(indexer.New(indexer.Options[*corev1.ConfigMap]{})).Namespace("ns1").Get("a")
	for _, c := range []struct {
		side          string
		err           error
		kind, message string
	}{
		{"client-go", cgErr, "configmaps", `configmaps "a" not found`},
		{"ours", oursErr, "", `object not found in cache: "ns1/a"`},
	} {
		var st apierrors.APIStatus
		if !apierrors.IsNotFound(c.err) || !errors.As(c.err, &st) || st.Status().Details == nil {
			t.Errorf("%s: %v is not an API NotFound with details", c.side, c.err)
			continue
		}
		d := st.Status().Details
		if d.Name != "a" || d.Group != "" || d.Kind != c.kind || st.Status().Message != c.message {
			t.Errorf("%s: details %+v, message %q; want name a, kind %q, message %q", c.side, d, st.Status().Message, c.kind, c.message)
		}
	}
	if !errors.Is(oursErr, indexer.ErrNotFound) {
		t.Errorf("ours: %v does not wrap ErrNotFound", oursErr)
	}
})
