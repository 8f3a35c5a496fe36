package informer

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// traceSource is the name the informer's own events carry: its Name, or "informer".
func traceSource(name string) string {
	if name == "" {
		return "informer"
	}
	return name
}

// object is the object a notification is about: the new state, or for a delete the
// last known one.
func (n *notification[T]) object() T {
	if n.kind == deleteNotification {
		return n.oldObj
	}
	return n.newObj
}

// key is the notification's object key, for the trace (the tombstone's key for an
// inferred delete).
func (n *notification[T]) key() string {
	if n.tombstone != nil {
		return n.tombstone.Key
	}
	key, err := indexer.MetaNamespaceKeyFunc(n.object())
	if err != nil {
		return "<no key>"
	}
	return key
}

// traceApplied reports a write to the indexer (trace.Applied). old is the cached
// state before it (hadOld false for an add); obj the state after (for a delete, the
// state deleted). detail names the index values that changed.
func (s *SharedIndexInformer[T]) traceApplied(action string, old T, hadOld bool, obj T, detail string) {
	key, err := indexer.MetaNamespaceKeyFunc(obj)
	if err != nil {
		key = "<no key>"
	}
	if detail == "" {
		detail = s.indexChanges(action, old, hadOld, obj)
	}
	s.opts.Tracer.Emit(trace.Event{Stage: trace.Informer, Kind: trace.Applied, Source: traceSource(s.opts.Name),
		Key: key, ResourceVersion: obj.GetResourceVersion(), Type: action, Detail: detail})
}

// indexChanges describes which index values a write changed, e.g.
// `index "byOwner": [] → [default/example-foo]`, or says that none did. It runs the
// index functions again, so it is called only when tracing. blockDeltas is held.
//
// It runs once per traced write, so it is written to allocate little: the index
// list is cached (tracedIndexList), a value list that is already sorted is not
// copied, and the text is built by hand, not by fmt (which boxes each argument).
// BenchmarkFactoryOptionCost10kConfigMaps/option=tracing measures what tracing
// costs a sync.
func (s *SharedIndexInformer[T]) indexChanges(action string, old T, hadOld bool, obj T) string {
	indexes := s.tracedIndexList()
	if len(indexes) == 0 {
		return ""
	}
	var b strings.Builder
	for _, ix := range indexes {
		// A delete removes obj's values and leaves none; any other write replaces
		// old's (none for an add) with obj's.
		var before, after []string
		if action == "delete" {
			before = indexValues(ix.fn, obj, true)
		} else {
			before, after = indexValues(ix.fn, old, hadOld), indexValues(ix.fn, obj, true)
		}
		if slices.Equal(before, after) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		// The same text as fmt's "index %q: %v → %v".
		b.WriteString("index ")
		b.WriteString(strconv.Quote(ix.name))
		b.WriteString(": ")
		writeValues(&b, before)
		b.WriteString(" → ")
		writeValues(&b, after)
	}
	if b.Len() == 0 {
		return "no index value changed"
	}
	return b.String()
}

// namedIndex is one index of tracedIndexList.
type namedIndex[T indexer.Object] struct {
	name string
	fn   indexer.IndexFunc[T]
}

// tracedIndexList returns the cache's indexes sorted by name. blockDeltas is held.
//
// Why cached: GetIndexers copies the index map under the store's lock, and the trace
// asks on every write. A store's indexes only grow, so the list is rebuilt only when
// the store's IndexCount changes (an Indexer without IndexCount is asked every time).
func (s *SharedIndexInformer[T]) tracedIndexList() []namedIndex[T] {
	if c, ok := s.indexer.(interface{ IndexCount() int }); ok && c.IndexCount() == len(s.tracedIndexes) {
		return s.tracedIndexes
	}
	indexers := s.indexer.GetIndexers()
	list := make([]namedIndex[T], 0, len(indexers))
	for _, name := range slices.Sorted(maps.Keys(indexers)) {
		list = append(list, namedIndex[T]{name: name, fn: indexers[name]})
	}
	s.tracedIndexes = list
	return list
}

// indexValues is what fn files o under, sorted; nil when o is not present. It sorts
// a copy, and copies only when the values are out of order: the slice fn returned
// may be one the caller keeps.
func indexValues[T indexer.Object](fn indexer.IndexFunc[T], o T, present bool) []string {
	if !present {
		return nil
	}
	v, err := fn(o)
	if err != nil {
		return []string{"<error: " + err.Error() + ">"}
	}
	if slices.IsSorted(v) {
		return v
	}
	return slices.Sorted(slices.Values(v))
}

// writeValues writes v as fmt's %v does: [a b c].
func writeValues(b *strings.Builder, v []string) {
	b.WriteByte('[')
	for i, s := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	b.WriteByte(']')
}
