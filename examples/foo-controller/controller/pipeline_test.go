package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

func TestPipelineNamesChooseTheInformersQueueAndInitialList(t *testing.T) {
	for _, tt := range []struct {
		pipeline Pipeline
		queue    informer.QueueKind
		list     reflector.InitialList
	}{
		{"", informer.RealFIFOQueue, reflector.WatchList},
		{DefaultPipeline, informer.RealFIFOQueue, reflector.WatchList},
		{ClassicPipeline, informer.DeltaFIFOQueue, reflector.PagedList},
	} {
		t.Run(string(tt.pipeline), func(t *testing.T) {
			queue, list, err := tt.pipeline.options()
			require.NoError(t, err)
			assert.Equal(t, tt.queue, queue)
			assert.Equal(t, tt.list, list)
		})
	}
	assert.Equal(t, "DeltaFIFO fed by a paged LIST", ClassicPipeline.Describe())
	assert.Equal(t, "RealFIFO fed by a watch-list", DefaultPipeline.Describe())

	_, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Pipeline: "fast"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown pipeline "fast"`)
}
