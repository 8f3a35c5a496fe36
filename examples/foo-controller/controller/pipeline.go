package controller

import (
	"fmt"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// Pipeline names the informer pipeline the controller's two informers run on.
type Pipeline string

const (
	// DefaultPipeline is what the zero informer options give, as in client-go 1.37:
	// a RealFIFO fed by a watch-list (LIST only if the server refuses the stream).
	DefaultPipeline Pipeline = "default"
	// ClassicPipeline is DeltaFIFO fed by a paged LIST then WATCH: what client-go's
	// informers ran by default up to 1.32 (RealFIFO became the default in 1.33, its
	// InOrderInformers gate) and listed with up to 1.34 (the watch-list in 1.35, its
	// WatchListClient gate), and what most informer write-ups describe.
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

// Layout is the controller's pipeline on p as a trace recording's header describes it
// (trace.Pipeline): its two informers with their queue and initial list, its two
// handlers, its workqueue and its workers.
func (p Pipeline) Layout(workers int) trace.Pipeline {
	queue, list := trace.RealFIFO, "watch-list"
	if p == ClassicPipeline {
		queue, list = trace.DeltaFIFO, "list"
	}
	return trace.Pipeline{
		Informers:  []trace.InformerInfo{{Source: "foos", Queue: queue, List: list}, {Source: "deployments", Queue: queue, List: list}},
		Handlers:   []trace.HandlerInfo{{Name: FooHandler, Informer: "foos"}, {Name: DeploymentHandler, Informer: "deployments"}},
		Workqueues: []string{"foos"},
		Workers:    workers,
	}
}
