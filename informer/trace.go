package informer

import (
	"fmt"
	"maps"
	"slices"
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
// index functions again, so it is called only when tracing.
func (s *SharedIndexInformer[T]) indexChanges(action string, old T, hadOld bool, obj T) string {
	indexers := s.indexer.GetIndexers()
	if len(indexers) == 0 {
		return ""
	}
	values := func(fn indexer.IndexFunc[T], o T, present bool) []string {
		if !present {
			return nil
		}
		v, err := fn(o)
		if err != nil {
			return []string{"<error: " + err.Error() + ">"}
		}
		return slices.Sorted(slices.Values(v))
	}
	var changes []string
	for _, name := range slices.Sorted(maps.Keys(indexers)) {
		fn := indexers[name]
		before := values(fn, old, hadOld)
		after := values(fn, obj, action != "delete")
		if action == "delete" {
			before = values(fn, obj, true)
		}
		if !slices.Equal(before, after) {
			changes = append(changes, fmt.Sprintf("index %q: %v → %v", name, before, after))
		}
	}
	if len(changes) == 0 {
		return "no index value changed"
	}
	return strings.Join(changes, "; ")
}
