package parity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/parity/internal/check"
	"github.com/kubeinternals/informers/reflector"
)

// What the queue tests give both queues: what a reflector writes into a queue, and what
// an informer's consumer does with it, in a generated order.

type fifoKind int

const (
	fifoAdd fifoKind = iota
	fifoUpdate
	fifoDelete
	fifoReplace
	fifoResync
	fifoBookmark
	fifoPop
	fifoPopBatch
	fifoAddMany
)

// fifoOp is one call on a queue. Objects are ConfigMaps in one namespace, named from a
// small pool so that keys repeat, each with the resourceVersion it was generated with.
type fifoOp struct {
	kind  fifoKind
	name  string   // Add, Update, Delete
	rv    int      // the object's or the list's resourceVersion
	names []string // Replace: the listed objects, all at rv
	count int      // AddMany: how many objects, named m0, m1, …
}

func (o fifoOp) String() string {
	switch o.kind {
	case fifoAdd:
		return fmt.Sprintf("Add(%s@%d)", o.name, o.rv)
	case fifoUpdate:
		return fmt.Sprintf("Update(%s@%d)", o.name, o.rv)
	case fifoDelete:
		return fmt.Sprintf("Delete(%s@%d)", o.name, o.rv)
	case fifoReplace:
		return fmt.Sprintf("Replace([%s] rv=%d)", strings.Join(o.names, " "), o.rv)
	case fifoResync:
		return "Resync()"
	case fifoBookmark:
		return fmt.Sprintf("Bookmark(%d)", o.rv)
	case fifoPop:
		return "Pop()"
	case fifoAddMany:
		return fmt.Sprintf("AddMany(m0…m%d@%d)", o.count-1, o.rv)
	default:
		return "PopBatch()"
	}
}

// genFifoOps makes up to 60 queue calls: watch events on six names, relists that keep a
// random subset (some with a repeated name), resyncs, bookmarks and pops, weighted so
// that queues fill up and drain again. kinds limits what is generated.
func genFifoOps(r *rand.Rand, kinds []fifoKind) []fifoOp {
	names := []string{"a", "b", "c", "d", "e", "f"}
	ops := make([]fifoOp, 1+r.IntN(60))
	for i := range ops {
		rv := i + 1
		k := kinds[r.IntN(len(kinds))]
		op := fifoOp{kind: k, rv: rv}
		switch k {
		case fifoAdd, fifoUpdate, fifoDelete:
			op.name = names[r.IntN(len(names))]
		case fifoReplace:
			for _, n := range names {
				if r.IntN(2) == 0 {
					op.names = append(op.names, n)
				}
			}
			if len(op.names) > 0 && r.IntN(8) == 0 {
				op.names = append(op.names, op.names[0]) // the same key twice in one list
			}
		case fifoAddMany:
			op.count = []int{2, 999, 1000, 1001, 2000, 2500}[r.IntN(6)]
		}
		ops[i] = op
	}
	return ops
}

// simplifyFifoOp offers a Replace with one object fewer, or an AddMany with fewer, for
// the shrinker.
func simplifyFifoOp(o fifoOp) []fifoOp {
	if o.kind == fifoAddMany && o.count > 1 {
		half, less := o, o
		half.count, less.count = o.count/2, o.count-1
		return []fifoOp{half, less}
	}
	if o.kind != fifoReplace || len(o.names) == 0 {
		return nil
	}
	var out []fifoOp
	for i := range o.names {
		s := o
		s.names = slices.Delete(slices.Clone(o.names), i, i+1)
		out = append(out, s)
	}
	return out
}

func configMap(name string, rv int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: strconv.Itoa(rv)}}
}

func replaceList(o fifoOp) []*corev1.ConfigMap {
	list := make([]*corev1.ConfigMap, len(o.names))
	for i, n := range o.names {
		list[i] = configMap(n, o.rv)
	}
	return list
}

// writeBoth makes one of the reflector's writes — Add, Update, Delete, Replace,
// Resync — on both queues and returns each one's error; ok is false for any other
// operation, which the test makes itself.
func writeBoth(op fifoOp, our reflector.Store[*corev1.ConfigMap], their cache.ReflectorStore) (ourErr, theirErr error, ok bool) {
	switch op.kind {
	case fifoAdd:
		return our.Add(configMap(op.name, op.rv)), their.Add(configMap(op.name, op.rv)), true
	case fifoUpdate:
		return our.Update(configMap(op.name, op.rv)), their.Update(configMap(op.name, op.rv)), true
	case fifoDelete:
		return our.Delete(configMap(op.name, op.rv)), their.Delete(configMap(op.name, op.rv)), true
	case fifoReplace:
		list := replaceList(op)
		anys := make([]any, len(list))
		for i, cm := range list {
			anys[i] = cm
		}
		rv := fmt.Sprint(op.rv)
		return our.Replace(replaceList(op), rv), their.Replace(anys, rv), true
	case fifoResync:
		return our.Resync(), their.Resync(), true
	}
	return nil, nil, false
}

// withAndWithoutTransform runs a queue comparison on the same input twice: without a
// transform, then with transformOnce on both sides.
func withAndWithoutTransform(compare func(ops []fifoOp, transform bool) error) check.Property[fifoOp] {
	return func(ops []fifoOp) error {
		if err := compare(ops, false); err != nil {
			return err
		}
		if err := compare(ops, true); err != nil {
			return wrapVariant("with a transform", err)
		}
		return nil
	}
}

// transformOnce is the transform both queues get in the "with a transform" runs: it
// counts, in a label, how often it ran on this object, so a second run shows.
func transformOnce(cm *corev1.ConfigMap) *corev1.ConfigMap {
	out := cm.DeepCopy()
	n, _ := strconv.Atoi(out.Labels["transformed"])
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels["transformed"] = strconv.Itoa(n + 1)
	return out
}

// describeQueued prints an object the same way for both libraries: name@rv, and how often the
// transform ran on it.
func describeQueued(obj any) string {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Sprintf("%T(%v)", obj, obj)
	}
	if cm == nil {
		return "nil"
	}
	s := cm.Name + "@" + cm.ResourceVersion
	if t := cm.Labels["transformed"]; t != "" {
		s += "+t" + t
	}
	return s
}

// knownObjects is the consumer's store each queue reads in a relist or a resync: a map
// with sorted keys, the same model on both sides, so the queues' outputs can be
// compared and not two stores' iteration orders.
type knownObjects struct{ objs map[string]*corev1.ConfigMap }

func newKnownObjects() *knownObjects { return &knownObjects{objs: map[string]*corev1.ConfigMap{}} }

func (k *knownObjects) ListKeys() []string {
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func (k *knownObjects) get(key string) (*corev1.ConfigMap, bool, error) {
	obj, ok := k.objs[key]
	return obj, ok, nil
}

func (k *knownObjects) String() string {
	var parts []string
	for _, key := range k.ListKeys() {
		parts = append(parts, describeQueued(k.objs[key]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// ours and clientGo adapt knownObjects to each library's interface.
type oursKnown struct{ *knownObjects }

func (k oursKnown) GetByKey(key string) (*corev1.ConfigMap, bool, error) { return k.get(key) }

type clientGoKnown struct{ *knownObjects }

func (k clientGoKnown) GetByKey(key string) (any, bool, error) {
	obj, ok, err := k.get(key)
	if !ok {
		return nil, false, err
	}
	return obj, true, err
}

// clientGoDelta prints one of client-go's deltas in the words oursDelta uses.
func clientGoDelta(d cache.Delta) string {
	switch obj := d.Object.(type) {
	case cache.DeletedFinalStateUnknown:
		return fmt.Sprintf("%s %s tombstone(%s)", d.Type, describeQueued(obj.Obj), obj.Key)
	case cache.ReplacedAllInfo:
		names := make([]string, len(obj.Objects))
		for i, o := range obj.Objects {
			names[i] = describeQueued(o)
		}
		return fmt.Sprintf("%s rv=%s [%s]", d.Type, obj.ResourceVersion, strings.Join(names, " "))
	case cache.BookmarkInfo:
		return fmt.Sprintf("%s rv=%s", d.Type, obj.ResourceVersion)
	case cache.SyncAllInfo:
		return string(d.Type)
	default:
		return fmt.Sprintf("%s %s", d.Type, describeQueued(obj))
	}
}

// oursDelta prints one of our deltas in the words clientGoDelta uses.
func oursDelta(d deltafifo.Delta[*corev1.ConfigMap]) string {
	switch {
	case d.Tombstone != nil:
		return fmt.Sprintf("%s %s tombstone(%s)", d.Type, describeQueued(d.Tombstone.Obj), d.Tombstone.Key)
	case d.Type == deltafifo.ReplacedAll:
		names := make([]string, len(d.Info.Objects))
		for i, o := range d.Info.Objects {
			names[i] = describeQueued(o)
		}
		return fmt.Sprintf("%s rv=%s [%s]", d.Type, d.Info.ResourceVersion, strings.Join(names, " "))
	case d.Type == deltafifo.Bookmark:
		return fmt.Sprintf("%s rv=%s", d.Type, d.Info.ResourceVersion)
	case d.Type == deltafifo.SyncAll:
		return d.Type.String()
	default:
		return fmt.Sprintf("%s %s", d.Type, describeQueued(d.Object))
	}
}
