package reflector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pageLister serves a fixed sequence of pages and records the options of each call.
type pageLister struct {
	pages []ListResult[cmT]
	errs  []error // errs[i] is returned by call i instead of pages[i] when non-nil
	calls []metav1.ListOptions
}

func (l *pageLister) List(_ context.Context, opts metav1.ListOptions) (ListResult[cmT], error) {
	i := len(l.calls)
	l.calls = append(l.calls, opts)
	if i < len(l.errs) && l.errs[i] != nil {
		return ListResult[cmT]{}, l.errs[i]
	}
	return l.pages[i], nil
}

func TestPager(t *testing.T) {
	a, b, c := cm("a", "1"), cm("b", "2"), cm("c", "3")
	tests := []struct {
		name          string
		pageSize      int64
		opts          metav1.ListOptions
		pages         []ListResult[cmT]
		errs          []error
		wantCalls     []metav1.ListOptions
		wantItems     []cmT
		wantRV        string
		wantPaginated bool
		wantExpired   bool
	}{
		{
			name:      "a single page is returned as it is, with the default limit of 500",
			opts:      metav1.ListOptions{ResourceVersion: "0"},
			pages:     []ListResult[cmT]{{Items: []cmT{a}, ResourceVersion: "7"}},
			wantCalls: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantItems: []cmT{a},
			wantRV:    "7",
		},
		{
			name:     "pages are followed by continue token, without RV, and merged with the first page's RV",
			pageSize: 1,
			opts:     metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, LabelSelector: "x=y"},
			pages: []ListResult[cmT]{
				{Items: []cmT{a}, ResourceVersion: "7", Continue: "t1"},
				{Items: []cmT{b}, ResourceVersion: "8", Continue: "t2"},
				{Items: []cmT{c}, ResourceVersion: "9"},
			},
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, LabelSelector: "x=y", Limit: 1},
				{LabelSelector: "x=y", Limit: 1, Continue: "t1"},
				{LabelSelector: "x=y", Limit: 1, Continue: "t2"},
			},
			wantItems:     []cmT{a, b, c},
			wantRV:        "7",
			wantPaginated: true,
		},
		{
			name: "an explicit Limit in the options wins over the page size",
			opts: metav1.ListOptions{Limit: 3},
			pages: []ListResult[cmT]{
				{Items: []cmT{a}, ResourceVersion: "7"},
			},
			wantCalls: []metav1.ListOptions{{Limit: 3}},
			wantItems: []cmT{a},
			wantRV:    "7",
		},
		{
			name:     "410 on a later page falls back to one full list at the original RV",
			pageSize: 1,
			opts:     metav1.ListOptions{ResourceVersion: "0"},
			pages: []ListResult[cmT]{
				{Items: []cmT{a}, ResourceVersion: "7", Continue: "t1"},
				{},
				{Items: []cmT{a, b}, ResourceVersion: "9"},
			},
			errs: []error{nil, errExpired()},
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "0", Limit: 1},
				{Limit: 1, Continue: "t1"},
				{ResourceVersion: "0"},
			},
			wantItems:     []cmT{a, b},
			wantRV:        "9",
			wantPaginated: true,
		},
		{
			name:     "410 Gone (what older servers say) on a later page falls back too, as the reflector treats Gone like Expired",
			pageSize: 1,
			opts:     metav1.ListOptions{ResourceVersion: "0"},
			pages: []ListResult[cmT]{
				{Items: []cmT{a}, ResourceVersion: "7", Continue: "t1"},
				{},
				{Items: []cmT{a, b}, ResourceVersion: "9"},
			},
			//lint:ignore SA1019 NewGone is what servers before 1.18 sent; the pager must still recognise it.
			errs: []error{nil, apierrors.NewGone("continue token too old")},
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "0", Limit: 1},
				{Limit: 1, Continue: "t1"},
				{ResourceVersion: "0"},
			},
			wantItems:     []cmT{a, b},
			wantRV:        "9",
			wantPaginated: true,
		},
		{
			name:        "410 on the first page is returned to the caller",
			opts:        metav1.ListOptions{ResourceVersion: "5"},
			pages:       []ListResult[cmT]{{}},
			errs:        []error{errExpired()},
			wantCalls:   []metav1.ListOptions{{ResourceVersion: "5", Limit: 500}},
			wantExpired: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &pageLister{pages: tt.pages, errs: tt.errs}
			p, err := NewPager[cmT](l, PagerOptions{PageSize: tt.pageSize})
			require.NoError(t, err)
			res, paginated, err := p.List(t.Context(), tt.opts)
			assert.Equal(t, tt.wantCalls, l.calls)
			if tt.wantExpired {
				assert.True(t, apierrors.IsResourceExpired(err), "got %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantItems, res.Items)
			assert.Equal(t, tt.wantRV, res.ResourceVersion)
			assert.Empty(t, res.Continue)
			assert.Equal(t, tt.wantPaginated, paginated)
		})
	}
}

func TestPagerDoesNotRetainPageSlices(t *testing.T) {
	page1 := []cmT{cm("a", "1"), cm("b", "1")}
	l := &pageLister{pages: []ListResult[cmT]{{Items: page1, ResourceVersion: "1", Continue: "t"}, {Items: []cmT{cm("c", "1")}}}}
	p, err := NewPager[cmT](l, PagerOptions{})
	require.NoError(t, err)
	res, _, err := p.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, res.Items, 3)
	assert.NotSame(t, &page1[0], &res.Items[0], "merged items live in a new array")
}

func TestPagerStopsWhenTheContextIsCancelled(t *testing.T) {
	l := &pageLister{pages: []ListResult[cmT]{{Items: []cmT{cm("a", "1")}, Continue: "t"}}}
	p, err := NewPager[cmT](l, PagerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = p.List(ctx, metav1.ListOptions{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, l.calls)
}

func TestNewPagerRejectsBadInput(t *testing.T) {
	_, err := NewPager[cmT](nil, PagerOptions{})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = NewPager[cmT](&pageLister{}, PagerOptions{PageSize: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}
