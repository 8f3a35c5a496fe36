package fakeapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/shard"
)

// Gate on, the fake serves a shard's objects only, on a LIST (paged or not), a WATCH
// and a watch-list, echoes the selector on a LIST, and refuses a malformed selector
// with 500; gate off, it ignores the selector and echoes nothing.
func TestShardLikeTheAPIServerFiltersOnlyWithTheGateOn(t *testing.T) {
	ctx := context.Background()
	halves, err := shard.Split(shard.UID, 2)
	require.NoError(t, err)
	half := halves[0]
	s := fakeapi.New[*corev1.ConfigMap]()
	var in []string
	for i := range 20 {
		c := cm(fmt.Sprintf("cm-%02d", i))
		c.UID = types.UID(fmt.Sprintf("%08x-uid", uint32(i)*2654435761))
		s.Create(c)
		if half.ContainsObject(c) {
			in = append(in, "ns/"+c.Name)
		}
	}
	require.NotEmpty(t, in)
	require.Less(t, len(in), 20, "both halves hold objects")
	names := func(items []*corev1.ConfigMap) []string {
		var out []string
		for _, o := range items {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		return out
	}
	opts := metav1.ListOptions{ShardSelector: half.String()}

	all, err := s.List(ctx, opts)
	require.NoError(t, err)
	assert.Len(t, all.Items, 20, "gate off: the selector is ignored")
	assert.Empty(t, all.ShardSelector)

	s.ShardLikeTheAPIServer(true)
	res, err := s.List(ctx, opts)
	require.NoError(t, err)
	assert.ElementsMatch(t, in, names(res.Items))
	assert.Equal(t, half.String(), res.ShardSelector)

	s.PageLists(0)
	paged := opts
	paged.Limit = 3
	var pages []*corev1.ConfigMap
	for {
		res, err := s.List(ctx, paged)
		require.NoError(t, err)
		pages = append(pages, res.Items...)
		if res.Continue == "" {
			break
		}
		paged.Continue = res.Continue
	}
	assert.Equal(t, in, names(pages), "paged, in key order")

	yes := true
	wl, err := s.Watch(ctx, metav1.ListOptions{ShardSelector: half.String(), SendInitialEvents: &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	require.NoError(t, err)
	defer wl.Stop()
	var initial []*corev1.ConfigMap
	for ev := range wl.ResultChan() {
		if ev.Type == watch.Bookmark {
			break
		}
		initial = append(initial, ev.Object)
	}
	assert.Equal(t, in, names(initial), "the watch-list's initial events")

	w, err := s.Watch(ctx, metav1.ListOptions{ShardSelector: half.String(), ResourceVersion: s.ResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	for i := 20; len(in) < 30 && i < 200; i++ {
		c := cm(fmt.Sprintf("cm-%03d", i))
		c.UID = types.UID(fmt.Sprintf("%08x-uid", uint32(i)*2654435761))
		s.Create(c)
		if half.ContainsObject(c) {
			in = append(in, "ns/"+c.Name)
			ev := <-w.ResultChan()
			assert.Equal(t, "ns/"+c.Name, ev.Object.Namespace+"/"+ev.Object.Name, "the next event is the next object in the shard")
		}
	}

	_, err = s.List(ctx, metav1.ListOptions{ShardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"})
	require.Error(t, err)
	assert.Equal(t, int32(500), err.(apierrors.APIStatus).Status().Code, "a malformed selector: 500, as from the apiserver")
}
