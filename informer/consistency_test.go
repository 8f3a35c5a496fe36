package informer_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// Options.CheckWatchList reaches the reflector: a watch-list that left out an object
// is reported, and the cache and the handlers get the object from the check's LIST.
func TestCheckWatchListRepairsTheCacheFromTheList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := func(o *corev1.ConfigMap, rv string) *corev1.ConfigMap {
			o.ResourceVersion, o.UID = rv, types.UID("uid-"+o.Name)
			return o
		}
		var lists []metav1.ListOptions
		lw := reflector.ListWatch[*corev1.ConfigMap]{
			ListFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
				lists = append(lists, opts)
				return reflector.ListResult[*corev1.ConfigMap]{Items: []*corev1.ConfigMap{at(cm("a"), "2"), at(cm("b"), "3")}, ResourceVersion: "3"}, nil
			},
			WatchFunc: func(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
				w := reflector.NewFakeWatch[*corev1.ConfigMap]()
				end := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "3", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
				// Goroutine owned by the fake server: it sends a stream that lacks b,
				// then returns; the watch stays open until stopped.
				go func() { _ = w.Add(at(cm("a"), "2")) && w.Bookmark(end) }()
				return w, nil
			},
		}
		var found []*reflector.InconsistencyError
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](lw, informer.Options[*corev1.ConfigMap]{
			CheckWatchList:  true,
			OnInconsistency: func(err *reflector.InconsistencyError) { found = append(found, err) },
		})
		handler := &recorder{}
		_, err := inf.AddEventHandler(handler)
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		require.True(t, inf.HasSynced())

		require.Len(t, lists, 1)
		assert.Equal(t, metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, lists[0])
		require.Len(t, found, 1)
		assert.Equal(t, []reflector.Difference{{Key: "ns/b", UID: "uid-b", Listed: "3"}}, found[0].Differences)
		assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, inf.Indexer().ListKeys())
		assert.Equal(t, []string{"add a", "add b"}, handler.summary())
	})
}
