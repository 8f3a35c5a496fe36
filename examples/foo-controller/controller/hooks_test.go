package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/informer"
)

// newHooked builds a controller that is never run: nothing here talks to a server.
func newHooked(t *testing.T, hooks Hooks) *Controller {
	t.Helper()
	c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Hooks: hooks})
	require.NoError(t, err)
	t.Cleanup(c.queue.ShutDown)
	return c
}

func TestHooks(t *testing.T) {
	t.Run("an error from BeforeSync fails the sync without running it, and the key is retried with backoff", func(t *testing.T) {
		injected := errors.New("injected")
		var seen []Key
		c := newHooked(t, Hooks{BeforeSync: func(_ context.Context, k Key) error {
			seen = append(seen, k)
			return injected
		}})
		key := Key{Namespace: "team-a", Name: "web"}
		c.queue.Add(key)
		// Why this cannot reach sync: the Foo informer never ran, so a sync would find
		// no Foo and return nil — which would Forget the key, not requeue it.
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, []Key{key}, seen)
		assert.Equal(t, 1, c.queue.NumRequeues(key), "the failure was rate-limited back into the queue")
	})
	t.Run("BeforeSync returning nil lets the sync run", func(t *testing.T) {
		c := newHooked(t, Hooks{BeforeSync: func(context.Context, Key) error { return nil }})
		key := Key{Namespace: "team-a", Name: "gone"}
		c.queue.Add(key)
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 0, c.queue.NumRequeues(key), "the sync ran: a Foo not in the cache is not an error")
	})
	t.Run("BeforeHandler is called with the handler's name before it enqueues", func(t *testing.T) {
		var calls []string
		var queuedBefore []int
		var c *Controller
		c = newHooked(t, Hooks{BeforeHandler: func(h string) {
			calls = append(calls, h)
			queuedBefore = append(queuedBefore, c.queue.Len())
		}})
		c.fooHandlers().AddFunc(testFoo(ptr.To[int32](1)), false)
		assert.Equal(t, []string{FooHandler}, calls)
		assert.Equal(t, []int{0}, queuedBefore, "called before the handler's work")
		assert.Equal(t, 1, c.queue.Len())

		calls = nil
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "team-a", ResourceVersion: "1"}}
		h := c.deploymentHandlers()
		h.AddFunc(dep, false)
		h.UpdateFunc(dep, dep)
		h.DeleteFunc(informer.DeletedObject[*appsv1.Deployment]{OptionalObj: dep})
		assert.Equal(t, []string{DeploymentHandler, DeploymentHandler, DeploymentHandler}, calls)
	})
}
