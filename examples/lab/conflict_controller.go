package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// attempt is one request a strategy made for its object.
type attempt struct {
	Start, End time.Time
	Method     string // GET or PUT
	RV         string // the resourceVersion the PUT carried, or the one the GET returned
	Code       int    // 200 or 409
	NewRV      string // the resourceVersion a successful PUT returned
}

// String is "PUT rv=12 → 409".
func (a attempt) String() string {
	if a.Method == "GET" {
		return fmt.Sprintf("GET → rv=%s", a.RV)
	}
	s := fmt.Sprintf("PUT rv=%s → %d", a.RV, a.Code)
	if a.NewRV != "" {
		s += " (rv=" + a.NewRV + ")"
	}
	return s
}

// conflictCtl is the scenario's controller: one worker that sets data
// controller=done on a ConfigMap, reading it from the informer's cache. For the key
// inPlace it retries a 409 in place; for any other key it returns the key to the queue.
type conflictCtl struct {
	inf     *informer.SharedIndexInformer[*corev1.ConfigMap]
	queue   *workqueue.RateLimitingQueue[string]
	core    rest.Interface
	tracer  *trace.Tracer
	inPlace string

	// read and proceed hold each key's first sync between reading the cache and its
	// PUT: the scenario makes the competing write there.
	read    chan string // worker → scenario: the resourceVersion read from the cache
	proceed chan struct{}
	// afterConflict, if set, is called by the worker after each 409 of key, with how
	// many it has seen, before the key goes back to the queue.
	afterConflict func(key string, n int)

	mu       sync.Mutex
	attempts map[string][]attempt // guarded by mu
	held     map[string]bool      // keys whose first sync was held; guarded by mu
}

// worker runs syncs until the queue shuts down.
func (c *conflictCtl) worker(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		start := time.Now()
		err := c.sync(ctx, key)
		c.tracer.Reconciled("conflicts", key, time.Since(start), err)
		if err != nil {
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// sync sets controller=done on the ConfigMap key, starting from the cache.
func (c *conflictCtl) sync(ctx context.Context, key string) error {
	cached, ok, err := c.inf.Indexer().GetByKey(key)
	if err != nil || !ok {
		return fmt.Errorf("%s not in the cache: %v", key, err)
	}
	c.mu.Lock()
	first := !c.held[key]
	c.held[key] = true
	c.mu.Unlock()
	if first {
		select {
		case c.read <- cached.ResourceVersion:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-c.proceed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err = c.put(ctx, key, cached)
	if apierrors.IsConflict(err) && key == c.inPlace {
		err = retryOnConflict(ctx, func() error {
			fresh, err := c.get(ctx, key)
			if err != nil {
				return err
			}
			return c.put(ctx, key, fresh)
		})
	}
	return err
}

// retryOnConflict calls fn until it returns anything but a 409 Conflict, at most 4
// times, pausing 10ms plus up to 10% jitter before each call: client-go's
// DefaultRetry (5 steps) with the first step already spent on the write from the cache.
// The scenarios that scale a Foo or a Deployment while a controller writes its status
// (scaleFoo, scaleDeployment) retry with it too.
//
// client-go: util/retry/util.go RetryOnConflict (with DefaultRetry)
func retryOnConflict(ctx context.Context, fn func() error) error {
	var err error
	for range 4 {
		pause := 10*time.Millisecond + time.Duration(rand.Int64N(int64(time.Millisecond)))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err = fn(); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// get reads key's ConfigMap from the server.
func (c *conflictCtl) get(ctx context.Context, key string) (*corev1.ConfigMap, error) {
	ns, name, _ := strings.Cut(key, "/")
	a := attempt{Start: time.Now(), Method: "GET"}
	cm := &corev1.ConfigMap{}
	err := c.core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm)
	a.End, a.RV, a.Code = time.Now(), cm.ResourceVersion, statusCode(err)
	c.record(key, a)
	return cm, err
}

// put PUTs a copy of from with controller=done, carrying from's resourceVersion.
func (c *conflictCtl) put(ctx context.Context, key string, from *corev1.ConfigMap) error {
	cm := from.DeepCopy() // Pitfall: never modify a cached object.
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["controller"] = "done"
	a := attempt{Start: time.Now(), Method: "PUT", RV: cm.ResourceVersion}
	err := updateConfigMap(ctx, c.core, cm)
	a.End, a.Code = time.Now(), statusCode(err)
	if err == nil {
		a.NewRV = cm.ResourceVersion
	}
	n := c.record(key, a)
	if apierrors.IsConflict(err) && c.afterConflict != nil {
		c.afterConflict(key, n)
	}
	return err
}

// record keeps a and returns how many 409s key has had.
func (c *conflictCtl) record(key string, a attempt) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[key] = append(c.attempts[key], a)
	return conflicts(c.attempts[key])
}

// of returns key's attempts so far.
func (c *conflictCtl) of(key string) []attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]attempt(nil), c.attempts[key]...)
}

// statusCode is the HTTP status of a request's error: 200 for nil.
func statusCode(err error) int {
	if err == nil {
		return 200
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return int(s.Status().Code)
	}
	return 0
}

// conflicts counts the 409s.
func conflicts(as []attempt) int {
	n := 0
	for _, a := range as {
		if a.Code == 409 {
			n++
		}
	}
	return n
}

// succeeded returns the successful PUT, if any.
func succeeded(as []attempt) (attempt, bool) {
	for _, a := range as {
		if a.Method == "PUT" && a.Code == 200 {
			return a, true
		}
	}
	return attempt{}, false
}

// describe is "PUT rv=5 → 409; GET → rv=6; PUT rv=6 → 200 (rv=7)".
func describe(as []attempt) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, "; ")
}
