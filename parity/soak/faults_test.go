package soak

import (
	"context"
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// The topology the faults act on:
//
//	informers "via A" ──▶ proxy A ──▶ kube-apiserver A (no watch cache for ConfigMaps) ──▶ etcd
//	informers "via B" ──▶ proxy B ──▶ kube-apiserver B (watch cache) ──▶ B's etcd link ──▶ etcd
//	writer ───────────────────────────▶ kube-apiserver A
//
// A serves every ConfigMap watch from etcd, so a compaction sends a watch that starts
// again from before it a 410 Gone, and a watch-list is refused (each library falls back
// to a LIST). B has a watch cache: it serves watch-lists, and it lags while its etcd
// link is frozen. Proxy B can fail its clients over to A and back, to a B that may lag.
type cluster struct {
	env       *testenv.Env
	b         *testenv.SecondAPIServer
	proxyA    *testenv.Proxy
	proxyB    *testenv.Proxy
	direct    kubernetes.Interface // to A, for the compaction's writes
	otherNS   string
	compacted int // compactions so far, to name the writes before each
}

// A fault is one kind of trouble: apply starts it and returns how to end it (nil when
// it ends by itself, as a cut connection does).
type fault struct {
	name  string
	apply func(ctx context.Context, c *cluster) (end func() error, err error)
}

var faults = []fault{
	{"cut A's connections", func(_ context.Context, c *cluster) (func() error, error) {
		c.proxyA.Cut()
		return nil, nil
	}},
	{"cut B's connections", func(_ context.Context, c *cluster) (func() error, error) {
		c.proxyB.Cut()
		return nil, nil
	}},
	{"compact etcd, then cut both", func(ctx context.Context, c *cluster) (func() error, error) {
		// Two writes no informer watches move etcd past every informer's resourceVersion,
		// so the compaction leaves each one's next watch from before it: 410 Gone.
		c.compacted++
		name := fmt.Sprintf("before-compaction-%d", c.compacted)
		cms := c.direct.CoreV1().ConfigMaps(c.otherNS)
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		if _, err := c.env.CompactEtcd(ctx); err != nil {
			return nil, err
		}
		c.proxyA.Cut()
		c.proxyB.Cut()
		return nil, nil
	}},
	{"freeze B's etcd link (B lags)", func(_ context.Context, c *cluster) (func() error, error) {
		c.b.EtcdLink.Freeze()
		return func() error { c.b.EtcdLink.Thaw(); return nil }, nil
	}},
	{"fail B's clients over to A", func(_ context.Context, c *cluster) (func() error, error) {
		if _, err := c.proxyB.Switch(c.env.Config.Host); err != nil {
			return nil, err
		}
		return func() error { _, err := c.proxyB.Switch(c.b.Config.Host); return err }, nil
	}},
	{"refuse connections to A", func(_ context.Context, c *cluster) (func() error, error) {
		c.proxyA.Refuse()
		return c.proxyA.Accept, nil
	}},
}

// ongoing is a fault that has not ended yet: it ends after the given number of ops, or
// at the next checkpoint.
type ongoing struct {
	fault *fault
	left  int
	end   func() error
}

// injector applies faults chosen at random among those not already going on.
type injector struct {
	r       *rand.Rand
	c       *cluster
	ongoing []*ongoing
	counts  map[string]int
}

func (in *injector) inject(ctx context.Context) error {
	var free []*fault
	for i := range faults {
		busy := false
		for _, o := range in.ongoing {
			busy = busy || o.fault == &faults[i]
		}
		if !busy {
			free = append(free, &faults[i])
		}
	}
	f := free[in.r.IntN(len(free))]
	end, err := f.apply(ctx, in.c)
	if err != nil {
		return fmt.Errorf("fault %q: %w", f.name, err)
	}
	in.counts[f.name]++
	if end != nil {
		in.ongoing = append(in.ongoing, &ongoing{fault: f, left: 1 + in.r.IntN(20), end: end})
	}
	return nil
}

// tick counts one op down and ends the faults whose time is up.
func (in *injector) tick() error {
	kept := in.ongoing[:0]
	for _, o := range in.ongoing {
		if o.left--; o.left > 0 {
			kept = append(kept, o)
			continue
		}
		if err := o.end(); err != nil {
			return fmt.Errorf("ending %q: %w", o.fault.name, err)
		}
	}
	in.ongoing = kept
	return nil
}

// endAll ends every fault still going on, for a checkpoint.
func (in *injector) endAll() error {
	for _, o := range in.ongoing {
		if err := o.end(); err != nil {
			return fmt.Errorf("ending %q: %w", o.fault.name, err)
		}
	}
	in.ongoing = nil
	return nil
}
