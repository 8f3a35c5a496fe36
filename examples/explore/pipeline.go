package main

import (
	"strings"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// pipeline is the live state of every box on the page, folded from trace events as
// they arrive. It is not safe for concurrent use: the hub guards it.
//
// Why fold events instead of asking the stages: the trace is the only window the
// stages open, and folding it shows that it is enough — every number on the page is a
// count or a last value of the events in the journey below it. The one exception is
// the indexer's size, which the hub reads from the caches themselves (see cacheSizes).
type pipeline struct {
	informers map[string]*informerBox // by informer name (the resource)
	handlers  map[string]*handlerBox  // by handler name
	queue     workqueueBox
	workers   workersBox
	// retryAt holds, per workqueue key held back by AddRateLimited or AddAfter, when
	// it is due. Keys whose time has passed are pruned by snapshot.
	retryAt map[string]time.Time
	// queueKind is the stage the informers' queues will report as ("realfifo",
	// "deltafifo"): the queue boxes show it before their first event. "" while unknown.
	queueKind string
}

// informerBox is one informer's column: its reflector, its queue and its indexer.
type informerBox struct {
	Resource  string       `json:"resource"`
	Reflector reflectorBox `json:"reflector"`
	Queue     queueBox     `json:"queue"`
	Indexer   indexerBox   `json:"indexer"`
}

// reflectorBox is what the reflector is doing and has done.
type reflectorBox struct {
	// Phase is LIST (a LIST request), WATCH-LIST (a watch-list's initial events),
	// WATCH, BACKOFF, or WATCH ENDED between a watch and what follows.
	Phase string `json:"phase"`
	// RV is the last resourceVersion the reflector reached.
	RV string `json:"rv"`
	// FilledBy is what filled the cache last: "watch-list", "LIST" or "paged LIST".
	FilledBy string `json:"filledBy,omitempty"`
	// Lists counts the fetches of the full state, watch-lists and LISTs alike.
	Lists int `json:"lists"`
	// Watches counts the streams the reflector watched on: each WATCH request, and each
	// watch-list once its initial events ended, since its stream goes on as the watch.
	Watches     int `json:"watches"`
	WatchEvents int `json:"watchEvents"`
	Bookmarks   int `json:"bookmarks"`
	Relists     int `json:"relists"`
	// LastRelist is why the last relist happened; LastWatchEnd why the last watch
	// ended; LastBackoff the last backoff's duration and reason.
	LastRelist   string `json:"lastRelist,omitempty"`
	LastWatchEnd string `json:"lastWatchEnd,omitempty"`
	LastBackoff  string `json:"lastBackoff,omitempty"`
	// Shard is, for a sharded informer, who filters its shard and the shard, from its
	// last trace.ShardFiltering ("on the client: the apiserver did not apply
	// ShardSelector … [shardRange(…)]"); ShardDropped counts the objects dropped for
	// being outside it (trace.ShardDropped). Empty and 0 for an informer of a whole
	// resource.
	Shard        string `json:"shard,omitempty"`
	ShardDropped int    `json:"shardDropped"`
}

// queueBox is an informer's DeltaFIFO or RealFIFO.
type queueBox struct {
	// Kind is the stage the queue reports as: "realfifo" or "deltafifo".
	Kind     string `json:"kind"`
	Depth    int    `json:"depth"`
	MaxDepth int    `json:"maxDepth"`
	Queued   int    `json:"queued"`
	Popped   int    `json:"popped"`
	// Replaces counts the full states queued: one per LIST, and one per watch-list,
	// at its end bookmark.
	Replaces int `json:"replaces"`
}

// indexerBox is an informer's cache: the writes the informer applied, and its size.
type indexerBox struct {
	Applied   int `json:"applied"`
	FannedOut int `json:"fannedOut"`
	// Objects and Indices come from the cache itself at snapshot time.
	Objects int            `json:"objects"`
	Indices map[string]int `json:"indices,omitempty"`
}

// handlerBox is one handler's processorListener.
type handlerBox struct {
	Name string `json:"name"`
	// Informer is the resource of the informer the handler is registered on.
	Informer string `json:"informer"`
	// Backlog is notifications buffered and not yet handed to the handler;
	// HighWater its largest value.
	Backlog   int `json:"backlog"`
	HighWater int `json:"highWater"`
	Calls     int `json:"calls"`
	Panics    int `json:"panics"`
	// InCall is true between HandlerCalled and HandlerReturned.
	InCall   bool   `json:"inCall"`
	LastCall string `json:"lastCall,omitempty"`
	buffered int
}

// workqueueBox is the rate-limited workqueue between handlers and workers.
type workqueueBox struct {
	Depth        int `json:"depth"`
	Processing   int `json:"processing"`
	Adds         int `json:"adds"`
	Deduplicated int `json:"deduplicated"`
	Dirty        int `json:"dirty"`
	RateLimited  int `json:"rateLimited"`
	Forgets      int `json:"forgets"`
	// RetriesWaiting counts keys held back by a backoff that has not elapsed.
	RetriesWaiting int `json:"retriesWaiting"`
}

// workersBox is the workers' reconciles, and the Lease that lets them run.
type workersBox struct {
	Workers    int    `json:"workers"`
	Busy       int    `json:"busy"`
	Reconciles int    `json:"reconciles"`
	Errors     int    `json:"errors"`
	LastError  string `json:"lastError,omitempty"`
	// Lease is the last leader-election event, as a sentence ("acquired …
	// (A1): created the lease"); Renewals counts the renewals since.
	Lease    string `json:"lease,omitempty"`
	Renewals int    `json:"renewals"`
}

func newPipeline(workers int) *pipeline {
	return &pipeline{
		informers: map[string]*informerBox{},
		handlers:  map[string]*handlerBox{},
		workers:   workersBox{Workers: workers},
		retryAt:   map[string]time.Time{},
	}
}

// informer returns the box of the informer named source, creating it.
func (p *pipeline) informer(source string) *informerBox {
	b := p.informers[source]
	if b == nil {
		kind := p.queueKind
		if kind == "" {
			kind = "—"
		}
		b = &informerBox{Resource: source, Reflector: reflectorBox{Phase: "—"}, Queue: queueBox{Kind: kind}}
		p.informers[source] = b
	}
	return b
}

// handler returns the box of the handler named name, creating it.
func (p *pipeline) handler(name string) *handlerBox {
	b := p.handlers[name]
	if b == nil {
		b = &handlerBox{Name: name}
		p.handlers[name] = b
	}
	return b
}

// apply folds one event into the boxes.
func (p *pipeline) apply(e trace.Event) {
	switch e.Stage {
	case trace.Reflector:
		p.applyReflector(&p.informer(e.Source).Reflector, e)
	case trace.DeltaFIFO, trace.RealFIFO:
		q := &p.informer(e.Source).Queue
		q.Kind = string(e.Stage)
		switch e.Kind {
		case trace.Queued:
			q.Queued++
		case trace.Popped:
			q.Popped++
		case trace.Replaced:
			q.Replaces++
		}
		q.Depth = e.QueueLen
		q.MaxDepth = max(q.MaxDepth, q.Depth)
	case trace.Informer:
		ix := &p.informer(e.Source).Indexer
		switch e.Kind {
		case trace.Applied:
			ix.Applied++
		case trace.FannedOut:
			ix.FannedOut++
		}
	case trace.Listener:
		p.applyListener(p.handler(e.Source), e)
	case trace.Workqueue:
		p.applyWorkqueue(e)
	case trace.Controller:
		if e.Kind == trace.Reconciled {
			p.workers.Reconciles++
			if e.Reason != "" {
				p.workers.Errors++
				p.workers.LastError = e.Key + ": " + e.Reason
			}
		}
	case trace.LeaderElection:
		// Why not every event: a renewal every RetryPeriod would hide the acquisition
		// it renews; count renewals, keep the sentence of the rest.
		if e.Kind == trace.LeaseRenewed {
			p.workers.Renewals++
			return
		}
		p.workers.Lease = e.Source + " " + e.String()
	}
}

func (p *pipeline) applyReflector(r *reflectorBox, e trace.Event) {
	switch e.Kind {
	case trace.ShardFiltering:
		r.Shard = strings.TrimPrefix(e.String(), string(trace.ShardFiltering)+" ")
	case trace.ShardDropped:
		r.ShardDropped++
	case trace.ListStarted:
		r.Phase = "LIST"
		if e.Type == "watch-list" {
			r.Phase = "WATCH-LIST"
		}
		r.Lists++
	case trace.Listed:
		r.RV = e.ResourceVersion
		switch {
		case e.Type == "watch-list":
			r.FilledBy = "watch-list"
			// Why WATCH here: a watch-list emits no WatchStarted — the stream that sent
			// the initial events, up to the end bookmark, stays open as the watch.
			r.Phase = "WATCH"
			r.Watches++
		case e.Paged:
			r.FilledBy = "paged LIST"
		default:
			r.FilledBy = "LIST"
		}
	case trace.WatchStarted:
		r.Phase = "WATCH"
		r.Watches++
	case trace.WatchEvent:
		r.WatchEvents++
		r.RV = e.ResourceVersion
	case trace.Bookmark:
		r.Bookmarks++
		r.RV = e.ResourceVersion
	case trace.WatchEnded:
		r.Phase = "WATCH ENDED"
		r.LastWatchEnd = e.Reason
	case trace.Relist:
		r.Relists++
		r.LastRelist = e.Reason
	case trace.Backoff:
		r.Phase = "BACKOFF"
		r.LastBackoff = e.Duration.Round(time.Millisecond).String() + ": " + e.Reason
	}
}

func (p *pipeline) applyListener(h *handlerBox, e trace.Event) {
	switch e.Kind {
	case trace.Buffered:
		h.buffered++
		h.HighWater = max(h.HighWater, e.Backlog)
	case trace.HandlerCalled:
		h.Calls++
		h.InCall = true
		h.LastCall = e.Type + " " + e.Key
	case trace.HandlerReturned:
		h.InCall = false
	case trace.PanicRecovered:
		h.Panics++
		h.InCall = false
	}
	// Why count instead of trusting Buffered.Backlog: Backlog is the count when a
	// notification arrived; calls made since then have shrunk it.
	h.Backlog = max(h.buffered-h.Calls, 0)
}

func (p *pipeline) applyWorkqueue(e trace.Event) {
	q := &p.queue
	switch e.Kind {
	case trace.Added:
		switch e.Reason {
		case "new":
			q.Adds++
			q.Depth = e.QueueLen
		case "deduplicated":
			q.Deduplicated++
		case "dirty":
			q.Dirty++
		}
	case trace.RateLimited, trace.AddedAfter:
		if e.Kind == trace.RateLimited {
			q.RateLimited++
		}
		due := e.Time.Add(e.Duration)
		// Invariant, as in the delaying queue: a second AddAfter moves a key earlier,
		// never later.
		if at, ok := p.retryAt[e.Key]; !ok || due.Before(at) {
			p.retryAt[e.Key] = due
		}
	case trace.Got:
		q.Depth = e.QueueLen
		q.Processing++
	case trace.Done:
		q.Processing = max(q.Processing-1, 0)
	case trace.Forgot:
		q.Forgets++
	}
	p.workers.Busy = min(q.Processing, p.workers.Workers)
}

// snapshot is the whole picture at one moment, as the page receives it.
type snapshot struct {
	Informers []informerBox `json:"informers"`
	Handlers  []handlerBox  `json:"handlers"`
	Workqueue workqueueBox  `json:"workqueue"`
	Workers   workersBox    `json:"workers"`
	// Events is how many trace events the hub has received since its last reset, and
	// Generation how many resets there were (a replay that went back).
	Events     uint64 `json:"events"`
	Generation uint64 `json:"generation"`
	// Pipeline is the pipeline the boxes belong to (set by the hub).
	Pipeline pipelineLabel `json:"pipeline"`
	// LastAction is what "repeat" would do again, "" before the first action (set by
	// the server).
	LastAction string `json:"lastAction,omitempty"`
	// Replay is the player's position when the page replays a recording (set by the
	// server); nil live.
	Replay *replayState `json:"replay,omitempty"`
}

// snapshot copies the boxes, in the order of informers and handlers (then any others
// by name), counting the retries still waiting at now.
func (p *pipeline) snapshot(now time.Time, informers, handlers []string) snapshot {
	var s snapshot
	for _, name := range ordered(p.informers, informers) {
		s.Informers = append(s.Informers, *p.informers[name])
	}
	for _, name := range ordered(p.handlers, handlers) {
		s.Handlers = append(s.Handlers, *p.handlers[name])
	}
	s.Workqueue = p.queue
	s.Workqueue.RetriesWaiting = p.retriesWaiting(now)
	s.Workers = p.workers
	return s
}

// retriesWaiting counts the keys whose backoff has not elapsed at now, forgetting
// those whose time has come.
func (p *pipeline) retriesWaiting(now time.Time) int {
	for k, at := range p.retryAt {
		if !at.After(now) {
			delete(p.retryAt, k)
		}
	}
	return len(p.retryAt)
}

// pipelineLabel is the running pipeline, as the page shows it.
type pipelineLabel struct {
	// Name is the controller.Pipeline: "default" or "classic".
	Name string `json:"name"`
	// Text is what it is made of and whose it is: "RealFIFO fed by a watch-list
	// (client-go 1.37 default)".
	Text string `json:"text"`
	// Queue is the stage its informers' queues report as: "realfifo" or "deltafifo".
	Queue string `json:"queue"`
	// Run numbers the controllers the explorer started: 1 for the first, one more per
	// switch.
	Run int `json:"run"`
}
