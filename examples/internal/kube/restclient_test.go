package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func reply(req *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}
}

func TestNewRESTClient(t *testing.T) {
	cfg := &rest.Config{Host: "https://apiserver.test"}
	var paths []string
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		paths = append(paths, req.URL.Path)
		if strings.HasSuffix(req.URL.Path, "/missing") {
			return reply(req, http.StatusNotFound, `{"apiVersion":"v1","kind":"Status","status":"Failure","code":404,"reason":"NotFound","message":"nope"}`), nil
		}
		return reply(req, http.StatusOK, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"},"data":{"k":"v"}}`), nil
	})}

	t.Run("the core group is served under /api and decodes typed objects", func(t *testing.T) {
		rc, scheme, err := NewRESTClient(cfg, corev1.SchemeGroupVersion, hc, corev1.AddToScheme)
		require.NoError(t, err)
		cm := &corev1.ConfigMap{}
		require.NoError(t, rc.Get().Namespace("ns").Resource("configmaps").Name("cm").Do(context.Background()).Into(cm))
		assert.Equal(t, map[string]string{"k": "v"}, cm.Data)
		assert.Equal(t, "/api/v1/namespaces/ns/configmaps/cm", paths[len(paths)-1])
		assert.True(t, scheme.Recognizes(corev1.SchemeGroupVersion.WithKind("ConfigMap")))
	})
	t.Run("a named group is served under /apis/<group>/<version>", func(t *testing.T) {
		rc, _, err := NewRESTClient(cfg, appsv1.SchemeGroupVersion, hc, appsv1.AddToScheme)
		require.NoError(t, err)
		_ = rc.Get().Namespace("ns").Resource("deployments").Name("d").Do(context.Background()).Error()
		assert.Equal(t, "/apis/apps/v1/namespaces/ns/deployments/d", paths[len(paths)-1])
	})
	t.Run("an error reply becomes a StatusError", func(t *testing.T) {
		rc, _, err := NewRESTClient(cfg, corev1.SchemeGroupVersion, hc, corev1.AddToScheme)
		require.NoError(t, err)
		err = rc.Get().Namespace("ns").Resource("configmaps").Name("missing").Do(context.Background()).Error()
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})
	t.Run("a failing AddToScheme is reported", func(t *testing.T) {
		boom := errors.New("boom")
		_, _, err := NewRESTClient(cfg, corev1.SchemeGroupVersion, hc, func(*runtime.Scheme) error { return boom })
		require.ErrorIs(t, err, boom)
	})
	t.Run("a nil config is refused", func(t *testing.T) {
		_, _, err := NewRESTClient(nil, corev1.SchemeGroupVersion, hc)
		require.Error(t, err)
	})
	t.Run("the caller's config is not modified", func(t *testing.T) {
		orig := &rest.Config{Host: "https://apiserver.test"}
		_, _, err := NewRESTClient(orig, corev1.SchemeGroupVersion, hc, corev1.AddToScheme)
		require.NoError(t, err)
		assert.Nil(t, orig.GroupVersion)
		assert.Empty(t, orig.APIPath)
		assert.Nil(t, orig.NegotiatedSerializer)
	})
}
