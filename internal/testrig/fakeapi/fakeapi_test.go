package fakeapi_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

func cm(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestServerListsAndWatchesLikeTheAPIServerContract(t *testing.T) {
	ctx := context.Background()
	s := fakeapi.New[*corev1.ConfigMap]()
	a := s.Create(cm("a"))
	list, err := s.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, a.ResourceVersion, list.ResourceVersion)

	t.Run("a watch from the list's RV sees only later changes, in order", func(t *testing.T) {
		w, err := s.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		require.NoError(t, err)
		defer w.Stop()
		b := s.Create(cm("b"))
		s.Delete(b)
		ev := <-w.ResultChan()
		assert.Equal(t, watch.Added, ev.Type)
		assert.Equal(t, "b", ev.Object.Name)
		ev = <-w.ResultChan()
		assert.Equal(t, watch.Deleted, ev.Type)
	})

	t.Run("after Compact an old RV is 410 Gone and open watches get an Expired error", func(t *testing.T) {
		w, err := s.Watch(ctx, metav1.ListOptions{ResourceVersion: s.ResourceVersion()})
		require.NoError(t, err)
		s.Compact()
		ev := <-w.ResultChan()
		require.Equal(t, watch.Error, ev.Type)
		assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Status)))
		_, ok := <-w.ResultChan()
		assert.False(t, ok, "the watch ends after the error")
		_, err = s.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		assert.True(t, apierrors.IsResourceExpired(err))
	})

	t.Run("FailLists returns the error until cleared", func(t *testing.T) {
		s.FailLists(fakeapi.StatusError(403, "no"))
		_, err := s.List(ctx, metav1.ListOptions{})
		assert.True(t, apierrors.IsForbidden(err))
		s.FailLists(nil)
		_, err = s.List(ctx, metav1.ListOptions{})
		assert.NoError(t, err)
	})

	t.Run("a watch stops when its context ends", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		w, err := s.Watch(wctx, metav1.ListOptions{})
		require.NoError(t, err)
		cancel()
		_, ok := <-w.ResultChan()
		assert.False(t, ok)
	})
}

func TestAWatchListSendsTheStateThenTheEndBookmarkThenLiveChanges(t *testing.T) {
	ctx := context.Background()
	s := fakeapi.New[*corev1.ConfigMap]()
	s.Create(cm("b"))
	s.Create(cm("a"))
	yes := true
	opts := metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	w, err := s.Watch(ctx, opts)
	require.NoError(t, err)
	defer w.Stop()
	c := s.Create(cm("c"))
	var got []string
	for range 4 {
		ev := <-w.ResultChan()
		got = append(got, string(ev.Type)+" "+ev.Object.Name+"@"+ev.Object.ResourceVersion+" "+ev.Object.Annotations[metav1.InitialEventsAnnotationKey])
	}
	assert.Equal(t, []string{"ADDED a@3 ", "ADDED b@2 ", "BOOKMARK @3 true", "ADDED c@" + c.ResourceVersion + " "}, got)

	t.Run("a watch-list without resourceVersionMatch=NotOlderThan is a bad request, as on the apiserver", func(t *testing.T) {
		_, err := s.Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true})
		assert.True(t, apierrors.IsBadRequest(err), "got %v", err)
	})
	t.Run("a server that declares watch-list unsupported says so and refuses it", func(t *testing.T) {
		assert.False(t, s.IsWatchListSemanticsUnSupported())
		s.SetWatchListUnsupported(true)
		assert.True(t, s.IsWatchListSemanticsUnSupported())
		_, err := s.Watch(ctx, opts)
		assert.True(t, apierrors.IsBadRequest(err), "got %v", err)
	})
}

func TestBookmarkSendsEveryOpenWatchTheCurrentResourceVersion(t *testing.T) {
	s := fakeapi.New[*corev1.ConfigMap]()
	s.Create(cm("a"))
	w, err := s.Watch(context.Background(), metav1.ListOptions{AllowWatchBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()
	s.Bookmark()
	ev := <-w.ResultChan()
	assert.Equal(t, watch.Bookmark, ev.Type)
	assert.Equal(t, s.ResourceVersion(), ev.Object.ResourceVersion)
	assert.Empty(t, ev.Object.Name, "a bookmark carries only a resource version")
}
