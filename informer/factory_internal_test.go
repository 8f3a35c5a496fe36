package informer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

func TestFactoryPassesItsOptionsToEveryInformer(t *testing.T) {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	opts := FactoryOptions{Scheme: scheme, ResyncPeriod: time.Minute, Queue: DeltaFIFOQueue, InitialList: reflector.PagedList, BacklogWarning: 7}
	// No request is made until Start: the host is never dialled.
	f := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, opts)
	inf, err := For[*corev1.ConfigMap](f, Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, inf.opts.ResyncPeriod)
	assert.Equal(t, DeltaFIFOQueue, inf.opts.Queue)
	assert.Equal(t, reflector.PagedList, inf.opts.InitialList)
	assert.Equal(t, 7, inf.opts.BacklogWarning)
}

func TestDecodesProtobufIsTrueForGeneratedAPITypesOnly(t *testing.T) {
	assert.True(t, decodesProtobuf[*corev1.ConfigMap]())
	assert.True(t, decodesProtobuf[*corev1.Pod]())
	assert.False(t, decodesProtobuf[*unstructured.Unstructured](), "Unstructured has no protobuf code")
	type customResource struct{ Name string }
	assert.False(t, decodesProtobuf[*customResource](), "a type without generated protobuf code")
}
