package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubeinternals/informers/examples/internal/events"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func TestRecorderAgainstAnAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	evClient, _, err := kube.NewRESTClient(env.Config, eventsv1.SchemeGroupVersion, nil, eventsv1.AddToScheme)
	require.NoError(t, err)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "events-test"}}
	require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(ctx).Error())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns.Name}}
	stored := &corev1.ConfigMap{}
	require.NoError(t, core.Post().Namespace(ns.Name).Resource("configmaps").Body(cm).Do(ctx).Into(stored))

	rec, err := events.NewRecorder(env.Config, events.Options{ReportingController: "kubeinternals.io/events-test", ReportingInstance: "test-0"})
	require.NoError(t, err)

	list := func(t *testing.T, namespace string, selector fields.Selector) []eventsv1.Event {
		t.Helper()
		out := &eventsv1.EventList{}
		require.NoError(t, evClient.Get().Namespace(namespace).Resource("events").
			Param("fieldSelector", selector.String()).Do(ctx).Into(out))
		return out.Items
	}

	t.Run("a Warning about a ConfigMap is listed in its namespace with every field", func(t *testing.T) {
		rec.Eventf(ctx, stored, events.TypeWarning, "ErrResourceExists", "Sync", "Resource %q already exists", "settings")

		got := list(t, ns.Name, fields.OneTermEqualSelector("regarding.name", "settings"))
		require.Len(t, got, 1)
		ev := got[0]
		assert.Equal(t, corev1.ObjectReference{
			Kind: "ConfigMap", APIVersion: "v1", Namespace: ns.Name, Name: "settings",
			UID: stored.UID, ResourceVersion: stored.ResourceVersion,
		}, ev.Regarding)
		assert.Equal(t, events.TypeWarning, ev.Type)
		assert.Equal(t, "ErrResourceExists", ev.Reason)
		assert.Equal(t, "Sync", ev.Action)
		assert.Equal(t, `Resource "settings" already exists`, ev.Note)
		assert.Equal(t, "kubeinternals.io/events-test", ev.ReportingController)
		assert.Equal(t, "test-0", ev.ReportingInstance)
		assert.False(t, ev.EventTime.IsZero())
	})

	t.Run("two events about one object in quick succession are both stored", func(t *testing.T) {
		for i := range 2 {
			_, err := rec.Record(ctx, stored, events.TypeNormal, "Synced", "Sync", "pass "+string(rune('a'+i)))
			require.NoError(t, err)
		}
		got := list(t, ns.Name, fields.AndSelectors(
			fields.OneTermEqualSelector("regarding.name", "settings"),
			fields.OneTermEqualSelector("reason", "Synced")))
		assert.Len(t, got, 2)
	})

	t.Run("ten identical warnings are one Event with series.count 10", func(t *testing.T) {
		for range 10 {
			rec.Eventf(ctx, stored, events.TypeWarning, "Repeated", "Sync", "Resource %q already exists", "settings")
		}
		onlyRepeated := fields.AndSelectors(
			fields.OneTermEqualSelector("regarding.name", "settings"),
			fields.OneTermEqualSelector("reason", "Repeated"))
		got := list(t, ns.Name, onlyRepeated)
		require.Len(t, got, 1)
		ev := got[0]
		require.NotNil(t, ev.Series)
		assert.Equal(t, int32(10), ev.Series.Count)
		assert.False(t, ev.Series.LastObservedTime.Before(&ev.EventTime), "last %v, first %v", ev.Series.LastObservedTime, ev.EventTime)

		// Why read it as core/v1 too: that is what `kubectl get events` and `kubectl
		// describe` read; both show the series count ("x10 over 4s").
		var coreEvents corev1.EventList
		require.NoError(t, core.Get().Namespace(ns.Name).Resource("events").
			Param("fieldSelector", fields.OneTermEqualSelector("reason", "Repeated").String()).Do(ctx).Into(&coreEvents))
		require.Len(t, coreEvents.Items, 1)
		require.NotNil(t, coreEvents.Items[0].Series)
		assert.Equal(t, int32(10), coreEvents.Items[0].Series.Count)

		t.Run("deleted, it is created again with the count so far", func(t *testing.T) {
			require.NoError(t, evClient.Delete().Namespace(ns.Name).Resource("events").Name(ev.Name).Do(ctx).Error())
			again, err := rec.Record(ctx, stored, events.TypeWarning, "Repeated", "Sync", `Resource "settings" already exists`)
			require.NoError(t, err)
			assert.NotEqual(t, ev.Name, again.Name)
			got := list(t, ns.Name, onlyRepeated)
			require.Len(t, got, 1)
			assert.Equal(t, again.Name, got[0].Name)
			require.NotNil(t, got[0].Series)
			assert.Equal(t, int32(11), got[0].Series.Count)
			assert.True(t, got[0].EventTime.Equal(&ev.EventTime), "it starts where the first one did")
		})
	})

	t.Run("an event about a cluster-scoped object is stored in the default namespace", func(t *testing.T) {
		// The apiserver creates the default namespace shortly after it is ready.
		require.Eventually(t, func() bool {
			return core.Get().Resource("namespaces").Name(metav1.NamespaceDefault).Do(ctx).Error() == nil
		}, 30*time.Second, 100*time.Millisecond)
		storedNS := &corev1.Namespace{}
		require.NoError(t, core.Get().Resource("namespaces").Name(ns.Name).Do(ctx).Into(storedNS))

		ev, err := rec.Record(ctx, storedNS, events.TypeNormal, "Seen", "Observe", "namespace seen")
		require.NoError(t, err)
		assert.Equal(t, metav1.NamespaceDefault, ev.Namespace)
		got := list(t, metav1.NamespaceDefault, fields.OneTermEqualSelector("regarding.name", ns.Name))
		require.Len(t, got, 1)
		assert.Equal(t, "Namespace", got[0].Regarding.Kind)
	})

	t.Run("a long note is cut to 1024 bytes and accepted", func(t *testing.T) {
		long := make([]byte, 3000)
		for i := range long {
			long[i] = 'x'
		}
		ev, err := rec.Record(ctx, stored, events.TypeNormal, "Long", "Sync", string(long))
		require.NoError(t, err)
		assert.Len(t, ev.Note, 1024)
	})

	t.Run("an event in a namespace that does not exist is an error from Record", func(t *testing.T) {
		ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: "no-such-namespace"}}
		_, err := rec.Record(ctx, ghost, events.TypeNormal, "R", "A", "n")
		require.Error(t, err)
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})
}
