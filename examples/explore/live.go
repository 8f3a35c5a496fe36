//go:build !replayonly

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/kube"
)

// namespace is where the explorer's Foos live.
const namespace = "explore"

// errInjected is the failure of a reconcile the fail-reconcile button asked for.
var errInjected = errors.New("injected failure (the explorer's fail-reconcile button)")

// live is the world the buttons act on: the cluster, through Direct (so that cutting
// the informers' connections never breaks a button), and the controller's hooks.
type live struct {
	cluster *cluster.Cluster
	foos    *fooclient.Client
	apps    *rest.RESTClient
	core    *rest.RESTClient

	mu       sync.Mutex
	failLeft map[controller.Key]int   // reconciles still to fail, per Foo; guarded by mu
	delay    map[string]time.Duration // sleep before each call, per handler; guarded by mu
}

// newLive builds the world on c and creates the explorer's namespace if it is missing.
func newLive(ctx context.Context, c *cluster.Cluster) (*live, error) {
	l := &live{cluster: c, failLeft: map[controller.Key]int{}, delay: map[string]time.Duration{}}
	var err error
	if l.foos, err = fooclient.NewClient(c.Direct, fooclient.Options{}); err != nil {
		return nil, err
	}
	if l.apps, _, err = kube.NewRESTClient(c.Direct, appsv1.SchemeGroupVersion, nil, appsv1.AddToScheme); err != nil {
		return nil, err
	}
	if l.core, _, err = kube.NewRESTClient(c.Direct, corev1.SchemeGroupVersion, nil, corev1.AddToScheme); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := l.core.Post().Resource("namespaces").Body(ns).Do(ctx).Error(); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	return l, nil
}

// hooks are the controller hooks behind the fail-reconcile and slow-handler buttons.
func (l *live) hooks() controller.Hooks {
	return controller.Hooks{BeforeSync: l.beforeSync, BeforeHandler: l.beforeHandler}
}

func (l *live) beforeSync(_ context.Context, key controller.Key) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failLeft[key] == 0 {
		return nil
	}
	l.failLeft[key]--
	return fmt.Errorf("%w, %d more to come", errInjected, l.failLeft[key])
}

func (l *live) beforeHandler(handler string) {
	l.mu.Lock()
	d := l.delay[handler]
	l.mu.Unlock()
	if d > 0 {
		time.Sleep(d) // Why a plain sleep: it stands for a handler doing slow work.
	}
}

// CreateFoo creates the Foo name, asking for a Deployment of its own name with
// replicas, as sample-controller's example Foo does.
//
// Why the same name: a journey follows an object of one informer (trace.Journey), so
// the Deployment's events stay out of the Foo's journey although their keys are
// equal; the Deployment joins it only where handleDeployment maps it to the Foo's key.
func (l *live) CreateFoo(ctx context.Context, name string, replicas int32) error {
	foo := &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: &replicas},
	}
	_, err := l.foos.Foos(namespace).Create(ctx, foo, metav1.CreateOptions{})
	return err
}

// TouchFoo sets an annotation: an update that changes no field the controller reads.
func (l *live) TouchFoo(ctx context.Context, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"kubeinternals.io/touched":%q}}}`, time.Now().Format(time.RFC3339Nano))
	return mergePatch(ctx, l.foos.RESTClient(), "foos", name, patch)
}

func (l *live) ScaleFoo(ctx context.Context, name string, replicas int32) error {
	return mergePatch(ctx, l.foos.RESTClient(), "foos", name, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
}

func (l *live) DeleteFoo(ctx context.Context, name string) error {
	return l.foos.Foos(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// ScaleDeployment changes the Deployment of the Foo named foo (named like it, see
// CreateFoo) behind the controller's back.
func (l *live) ScaleDeployment(ctx context.Context, foo string, replicas int32) error {
	return mergePatch(ctx, l.apps, "deployments", foo, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
}

// mergePatch applies a JSON merge patch to the object name of resource in the
// explorer's namespace.
func mergePatch(ctx context.Context, c rest.Interface, resource, name, patch string) error {
	return c.Patch(types.MergePatchType).Namespace(namespace).Resource(resource).Name(name).Body([]byte(patch)).Do(ctx).Error()
}

// FailReconciles makes the next times reconciles of the Foo fail, then touches it so
// that one starts.
func (l *live) FailReconciles(ctx context.Context, name string, times int) error {
	key := controller.Key{Namespace: namespace, Name: name}
	l.mu.Lock()
	l.failLeft[key] = times
	l.mu.Unlock()
	if err := l.TouchFoo(ctx, name); err != nil {
		l.mu.Lock()
		delete(l.failLeft, key)
		l.mu.Unlock()
		return err
	}
	return nil
}

func (l *live) SlowHandler(handler string, delay time.Duration) {
	l.mu.Lock()
	l.delay[handler] = delay
	l.mu.Unlock()
}

func (l *live) CutWatch() (int, error) { return l.cluster.Cut() }

// CompactEtcd writes twice to a ConfigMap no informer here watches, then compacts
// etcd up to its newest revision.
//
// Why the writes: compacting at revision R keeps R itself, and a watch from
// resourceVersion V asks for the revisions from V+1. On a quiet cluster a reflector's
// last resourceVersion can be etcd's newest revision or the one before it, and its
// next watch would still be served. Two writes the reflectors do not see put R at
// least two past them, so the next watch gets 410 Gone.
func (l *live) CompactEtcd(ctx context.Context) (int64, error) {
	if !l.cluster.Local {
		return 0, cluster.ErrNeedsLocalControlPlane
	}
	const marker = "compaction-marker"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: marker, Namespace: namespace}}
	if err := l.core.Post().Namespace(namespace).Resource("configmaps").Body(cm).Do(ctx).Error(); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	for i := range 2 {
		patch := fmt.Sprintf(`{"data":{"write":"%d at %s"}}`, i, time.Now().Format(time.RFC3339Nano))
		if err := mergePatch(ctx, l.core, "configmaps", marker, patch); err != nil {
			return 0, err
		}
	}
	return l.cluster.CompactEtcd(ctx)
}

func (l *live) RestartAPIServer(ctx context.Context) error { return l.cluster.RestartAPIServer(ctx) }
