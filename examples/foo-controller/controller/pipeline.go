package controller

import (
	"fmt"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// Pipeline names the informer pipeline the controller's two informers run on.
type Pipeline string

const (
	// DefaultPipeline is what the zero informer options give, as in client-go 1.36:
	// a RealFIFO fed by a watch-list (LIST only if the server refuses the stream).
	DefaultPipeline Pipeline = "default"
	// ClassicPipeline is DeltaFIFO fed by a paged LIST then WATCH: what client-go
	// ran before 1.35/1.36 and what most informer write-ups describe.
	ClassicPipeline Pipeline = "classic"
)

// Pipelines lists the valid names, default first.
var Pipelines = []Pipeline{DefaultPipeline, ClassicPipeline}

// options returns the informer options the pipeline stands for.
func (p Pipeline) options() (informer.QueueKind, reflector.InitialList, error) {
	switch p {
	case "", DefaultPipeline:
		return informer.RealFIFOQueue, reflector.WatchList, nil
	case ClassicPipeline:
		return informer.DeltaFIFOQueue, reflector.PagedList, nil
	default:
		return 0, 0, fmt.Errorf("controller: unknown pipeline %q (want %q or %q)", string(p), DefaultPipeline, ClassicPipeline)
	}
}

// Describe says what the pipeline is made of, for logs and pages.
func (p Pipeline) Describe() string {
	queue, list, err := p.options()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v fed by a %v", queue, list)
}
