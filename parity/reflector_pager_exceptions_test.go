package parity

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"github.com/kubeinternals/informers/reflector"
)

// goneOnPageTwo serves a LIST of two ConfigMaps one per page, and answers the second
// page's continue token with 410 Gone — what API servers before 1.18 sent for a
// compacted token (later ones say Expired). An unpaged LIST gets both. It records each
// request as "rv=… limit=… continue=…".
type goneOnPageTwo struct{ requests []string }

func (s *goneOnPageTwo) page(opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	s.requests = append(s.requests, fmt.Sprintf("rv=%q limit=%d continue=%q", opts.ResourceVersion, opts.Limit, opts.Continue))
	switch {
	case opts.Continue != "":
		// Built by hand: apimachinery deprecates NewGone, as servers no longer send it.
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone,
			Reason: metav1.StatusReasonGone, Message: "the continue token is compacted"}}
	case opts.Limit == 1:
		return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "5", Continue: "page-2"}, Items: []corev1.ConfigMap{*configMap("a", 1)}}, nil
	}
	return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.ConfigMap{*configMap("a", 1), *configMap("b", 2)}}, nil
}

func (s *goneOnPageTwo) List(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	list, err := s.page(opts)
	if err != nil {
		return reflector.ListResult[*corev1.ConfigMap]{}, err
	}
	out := reflector.ListResult[*corev1.ConfigMap]{ResourceVersion: list.ResourceVersion, Continue: list.Continue}
	for i := range list.Items {
		out.Items = append(out.Items, &list.Items[i])
	}
	return out, nil
}

// A 410 Gone on a later page of a LIST: client-go's pager falls back to a full list
// only on 410 Expired and returns Gone to its caller (its reflector then lists again
// from RV ""); ours treats both 410s alike and lists once more, in full, at the first
// page's resourceVersion. Found by the reflector's differential test, whose server
// therefore sends Expired only.
//
// client-go: tools/pager/pager.go ListPager.list
var _ = exception("docs/parity.md", "Differences found by the suite", "a 410 Gone on a later page of a LIST", func(t *testing.T) {
	ctx := context.Background()
	theirServer := &goneOnPageTwo{}
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) { return theirServer.page(opts) }))
	p.PageSize = 1
	_, _, err := p.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.True(t, apierrors.IsGone(err), "client-go: the Gone is returned: %v", err)
	require.Equal(t, []string{`rv="0" limit=1 continue=""`, `rv="" limit=1 continue="page-2"`}, theirServer.requests)

	ourServer := &goneOnPageTwo{}
	ours, err := reflector.NewPager[*corev1.ConfigMap](ourServer, reflector.PagerOptions{PageSize: 1})
	require.NoError(t, err)
	list, _, err := ours.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err, "ours")
	require.Len(t, list.Items, 2, "ours: the full list")
	require.Equal(t, []string{`rv="0" limit=1 continue=""`, `rv="" limit=1 continue="page-2"`, `rv="0" limit=0 continue=""`}, ourServer.requests,
		"ours: once more, unpaged, at the first page's resourceVersion")
})
