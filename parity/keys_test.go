package parity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// keyOp is one case: a key to split, and an object (namespace, name) to key and to
// delete, with or without a tombstone carrying the key, with or without the object.
type keyOp struct {
	key      string
	ns, name string
	tomb     bool // the delete was inferred by a relist: a tombstone with key
	noObj    bool // the delete carries no object (a zero OptionalObj)
}

func (o keyOp) String() string {
	return fmt.Sprintf("key %q, object %q/%q, tombstone %v, no object %v", o.key, o.ns, o.name, o.tomb, o.noObj)
}

// keyPieces make keys and names with no slash, one, several, and empty parts.
var keyPieces = []string{"a", "bc", "/", "/", ""}

func genKeyString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(5) {
		b.WriteString(pick(r, keyPieces))
	}
	return b.String()
}

// keyFixed are the malformed keys every run includes.
var keyFixed = []string{"a/b/c", "/x", "x/", "", "/", "//", "ns/name", "name"}

func genKeyOps(r *rand.Rand) []keyOp {
	ops := make([]keyOp, 0, 12)
	for range 1 + r.IntN(12) {
		key := genKeyString(r)
		if r.IntN(3) == 0 {
			key = pick(r, keyFixed)
		}
		ops = append(ops, keyOp{key: key, ns: pick(r, []string{"", "ns", "a/b"}), name: genKeyString(r),
			tomb: r.IntN(2) == 0, noObj: r.IntN(4) == 0})
	}
	return ops
}

// emptyPart reports whether key is one SplitMetaNamespaceKey rejects on purpose and
// client-go accepts: "", or one slash with nothing before or after it.
func emptyPart(key string) bool {
	ns, name, found := strings.Cut(key, "/")
	return key == "" || found && !strings.Contains(name, "/") && (ns == "" || name == "")
}

// keySide is one library's key functions and delete notification.
type keySide struct {
	split     func(key string) (string, string, error)
	keyOf     func(*corev1.ConfigMap) (string, error)
	objName   func(ns, name string) string
	deleted   func(op keyOp, obj *corev1.ConfigMap) (key, objectName, name, namespace string)
	acceptsEP bool // accepts a key with an empty part (see the exception)
}

var oursKeys = keySide{
	split:   indexer.SplitMetaNamespaceKey,
	keyOf:   indexer.MetaNamespaceKeyFunc[*corev1.ConfigMap],
	objName: func(ns, name string) string { return indexer.ObjectName{Namespace: ns, Name: name}.String() },
	deleted: func(op keyOp, obj *corev1.ConfigMap) (string, string, string, string) {
		d := informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: obj}
		if op.tomb {
			d.FinalStateUnknown = &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: op.key, Obj: obj}
		}
		return d.GetKey(), d.GetObjectName().String(), d.GetName(), d.GetNamespace()
	},
}

// clientGoKeys are client-go's; its typed DeletedObject is what a delete handler gets.
//
// client-go: tools/cache/store.go SplitMetaNamespaceKey
// client-go: tools/cache/controller.go DeletedObject.GetKey
// client-go: tools/cache/controller.go DeletedObject.GetObjectName
var clientGoKeys = keySide{
	split:   cache.SplitMetaNamespaceKey,
	keyOf:   func(cm *corev1.ConfigMap) (string, error) { return cache.MetaNamespaceKeyFunc(cm) },
	objName: func(ns, name string) string { return cache.ObjectName{Namespace: ns, Name: name}.String() },
	deleted: func(op keyOp, obj *corev1.ConfigMap) (string, string, string, string) {
		d := cache.DeletedObject[*corev1.ConfigMap]{OptionalObj: obj}
		if op.tomb {
			d.FinalStateUnknown = &cache.DeletedFinalStateUnknown{Key: op.key, Obj: obj}
		}
		return d.GetKey(), d.GetObjectName().String(), d.GetName(), d.GetNamespace()
	},
	acceptsEP: true,
}

// splitWords writes a split's result. A key with an empty part is the exception below,
// modelled: each side's documented answer is written the same way; any other answer
// is written as it is.
func (s keySide) splitWords(key string) string {
	ns, name, err := s.split(key)
	if emptyPart(key) {
		parts := key == "" && ns == "" && name == "" || key != "" && ns+"/"+name == key
		if s.acceptsEP && err == nil && parts || !s.acceptsEP && errors.Is(err, indexer.ErrMalformedKey) {
			return "an empty part (the exception)"
		}
	}
	return fmt.Sprintf("%q %q %s", ns, name, errWord(err))
}

func (s keySide) run(ops []keyOp, tr *check.Transcript) {
	for _, op := range ops {
		tr.Printf("%s", op)
		tr.Printf("  Split(%q) %s", op.key, s.splitWords(op.key))
		var obj *corev1.ConfigMap
		if !op.noObj {
			obj = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: op.ns, Name: op.name}}
			key, err := s.keyOf(obj)
			tr.Printf("  MetaNamespaceKeyFunc %q %s; split again: %s", key, errWord(err), s.splitWords(key))
		}
		tr.Printf("  ObjectName.String %q", s.objName(op.ns, op.name))
		key, objectName, name, namespace := s.deleted(op, obj)
		tr.Printf("  DeletedObject key %q object name %q name %q namespace %q", key, objectName, name, namespace)
	}
}

// TestKeys compares the key functions on generated keys and objects, malformed keys
// among them, and what a delete handler reads from a delete with and without a
// tombstone.
//
// client-go: tools/cache/store.go MetaNamespaceKeyFunc
func TestKeys(t *testing.T) {
	check.Run(t, check.Config[keyOp]{Runs: 8000}, genKeyOps, func(ops []keyOp) error {
		var oursTr, cgTr check.Transcript
		oursKeys.run(ops, &oursTr)
		clientGoKeys.run(ops, &cgTr)
		return check.Transcripts(&oursTr, &cgTr)
	})
}

// SplitMetaNamespaceKey of "", "ns/" or "/name": client-go returns the parts, empty
// ones included, and no error; ours returns an error wrapping ErrMalformedKey.
//
// client-go: tools/cache/store.go SplitMetaNamespaceKey
var _ = exception("docs/parity.md", "Differences found by the suite", "SplitMetaNamespaceKey of a key with an empty part", func(t *testing.T) {
	for _, key := range []string{"", "ns/", "/name", "/"} {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil || (key != "" && ns+"/"+name != key) || (key == "" && ns+name != "") {
			t.Errorf("client-go SplitMetaNamespaceKey(%q) = %q, %q, %v; want the parts and no error", key, ns, name, err)
		}
		if _, _, err := indexer.SplitMetaNamespaceKey(key); !errors.Is(err, indexer.ErrMalformedKey) {
			t.Errorf("ours SplitMetaNamespaceKey(%q): %v, want ErrMalformedKey", key, err)
		}
	}
})
