package parity

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// The two informers TestInformer drives, behind one interface, and the handler both
// sides register: it writes each notification, in the same words on both sides, into
// its own log.

// informerSide is what the test does with either library's shared informer.
type informerSide interface {
	// addHandler registers a handler that writes into log; resync nil takes the
	// informer's default period.
	addHandler(resync *time.Duration, log *notes) error
	// removeHandler unregisters the i-th handler added.
	removeHandler(i int) error
	handlerSynced(i int) bool
	hasSynced() bool
	// cache describes the informer's cache, sorted.
	cache() string
	run(ctx context.Context)
}

// notes is one handler's notifications since the last observation. A handler runs on
// its own goroutine, so the test takes them under the lock.
type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, fmt.Sprintf(format, args...))
}

func (n *notes) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.lines
	n.lines = nil
	return l
}

// The words both sides use for a notification.
func noteAdd(n *notes, obj any, initial bool) {
	n.add("OnAdd %s initial=%v", describeQueued(obj), initial)
}
func noteUpdate(n *notes, old, new any) {
	n.add("OnUpdate %s → %s", describeQueued(old), describeQueued(new))
}
func noteDelete(n *notes, obj any) { n.add("OnDelete %s", describeQueued(obj)) }
func noteTombstone(n *notes, obj any, key string) {
	n.add("OnDelete tombstone(%s) %s", key, describeQueued(obj))
}

// oursSide is our SharedIndexInformer on the classic initial LIST, with the default
// queue (RealFIFO).
type oursSide struct {
	inf  *informer.SharedIndexInformer[*corev1.ConfigMap]
	regs []*informer.Registration[*corev1.ConfigMap]
}

func newOursSide(lw oursLW, resync time.Duration) *oursSide {
	return &oursSide{inf: informer.NewSharedIndexInformer[*corev1.ConfigMap](lw, informer.Options[*corev1.ConfigMap]{
		ResyncPeriod: resync, InitialList: reflector.PagedList, Logger: quiet,
	})}
}

// withTransform sets transformOnce as the informer's transform.
func (o *oursSide) withTransform() *oursSide {
	if err := o.inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) { return transformOnce(cm), nil }); err != nil {
		panic(err) // before Run it cannot fail
	}
	return o
}

func (o *oursSide) addHandler(resync *time.Duration, n *notes) error {
	reg, err := o.inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(obj *corev1.ConfigMap, initial bool) { noteAdd(n, obj, initial) },
		UpdateFunc: func(old, new *corev1.ConfigMap) { noteUpdate(n, old, new) },
		DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
			if t := d.FinalStateUnknown; t != nil {
				noteTombstone(n, t.Obj, t.Key)
				return
			}
			noteDelete(n, d.OptionalObj)
		},
	}, informer.HandlerOptions{ResyncPeriod: resync})
	o.regs = append(o.regs, reg)
	return err
}

func (o *oursSide) removeHandler(i int) error { o.inf.RemoveEventHandler(o.regs[i]); return nil }
func (o *oursSide) handlerSynced(i int) bool  { return o.regs[i].HasSynced() }
func (o *oursSide) hasSynced() bool           { return o.inf.HasSynced() }
func (o *oursSide) cache() string             { return describeObjects(o.inf.Indexer().List()) }
func (o *oursSide) run(ctx context.Context)   { o.inf.Run(ctx) }

// clientGoSide is client-go's sharedIndexInformer. Its queue is the RealFIFO (the
// only one a 1.37 informer has); its reflector lists first because the
// ListerWatcher says it cannot serve a watch-list (clientGoLW).
//
// client-go: tools/cache/shared_informer.go NewSharedIndexInformerWithOptions
type clientGoSide struct {
	inf  cache.SharedIndexInformer
	regs []cache.ResourceEventHandlerRegistration
}

func newClientGoSide(lw clientGoLW, resync time.Duration) *clientGoSide {
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{ResyncPeriod: resync})
	// The default handler only logs, through klog's global logger.
	_ = inf.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {})
	return &clientGoSide{inf: inf}
}

// withTransform sets transformOnce as the informer's transform.
func (c *clientGoSide) withTransform() *clientGoSide {
	if err := c.inf.SetTransform(func(obj any) (any, error) { return transformOnce(obj.(*corev1.ConfigMap)), nil }); err != nil {
		panic(err) // before Run it cannot fail
	}
	return c
}

func (c *clientGoSide) addHandler(resync *time.Duration, n *notes) error {
	reg, err := c.inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { noteAdd(n, obj, initial) },
		UpdateFunc: func(old, new any) { noteUpdate(n, old, new) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				noteTombstone(n, t.Obj, t.Key)
				return
			}
			noteDelete(n, obj)
		},
	}, cache.HandlerOptions{ResyncPeriod: resync, Logger: &quietKlog})
	c.regs = append(c.regs, reg)
	return err
}

func (c *clientGoSide) removeHandler(i int) error { return c.inf.RemoveEventHandler(c.regs[i]) }
func (c *clientGoSide) handlerSynced(i int) bool  { return c.regs[i].HasSynced() }
func (c *clientGoSide) hasSynced() bool           { return c.inf.HasSynced() }

func (c *clientGoSide) cache() string {
	list := c.inf.GetStore().List()
	parts := make([]string, len(list))
	for i, obj := range list {
		parts[i] = describeQueued(obj)
	}
	return "[" + strings.Join(sortedStrings(parts), " ") + "]"
}

func (c *clientGoSide) run(ctx context.Context) {
	c.inf.RunWithContext(klog.NewContext(ctx, quietKlog))
}

func describeObjects(list []*corev1.ConfigMap) string {
	parts := make([]string, len(list))
	for i, obj := range list {
		parts[i] = describeQueued(obj)
	}
	return "[" + strings.Join(sortedStrings(parts), " ") + "]"
}
