// Package trace makes the informer machinery visible: every stage reports what it
// does, as typed events, to an optional Tracer.
//
//	kube-apiserver
//	     │ LIST / WATCH
//	     ▼
//	reflector ──▶ RealFIFO / DeltaFIFO ──▶ informer ──▶ indexer
//	                                          │ fan-out
//	                                          ▼
//	                              listener (one per handler) ──▶ your handler
//	                                                                │ Add(key)
//	                                                                ▼
//	                                                  workqueue ──▶ worker (sync)
//
//	      every box above reports to ─────▶ trace.Tracer ──▶ sinks (Recorder, Slog, yours)
//
// An Event says when (Time), who (Stage, Source), what (Kind), about which object
// (Key, ResourceVersion), and the stage's own facts: how many deltas are pending for
// the key, how long the item waited in the workqueue, how many handlers a
// notification went to. Each Kind's comment lists the fields it sets; Event.String
// turns one into the sentence the timeline prints.
//
// # Turning it on
//
// Every constructor's Options has a Tracer field: reflector.Options,
// deltafifo.DeltaFIFOOptions and RealFIFOOptions, informer.Options,
// informer.FactoryOptions, workqueue.Options. The Factory passes its tracer to every
// informer it builds, and an informer passes its own to its reflector, its queue and
// its handlers' listeners, so one option traces a whole pipeline:
//
//	var rec trace.Recorder
//	tr := trace.New(rec.Record)
//	factory := informer.NewFactory(cfg, informer.FactoryOptions{Tracer: tr, …})
//	queue := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{
//		Options: workqueue.Options{Name: "foos", Tracer: tr}})
//	…
//	trace.WriteTimeline(os.Stdout, trace.Journey(rec.Events(), "foos", "default/example-foo"))
//
// The indexer takes no tracer of its own: the informer is its only writer and reports
// each write (Applied), with the index values it changed.
//
// Your handlers and workers are part of the pipeline too: Tracer.Map records that a
// handler turned an object's key into another workqueue key (a Deployment's owner
// reference → its Foo's key), so that Journey can follow the change across — the only
// way a journey crosses from one informer's object to another's work; and
// Tracer.Reconciled records a sync's outcome.
//
// # What it costs
//
// A nil *Tracer is the off switch. Each event site is guarded by `if tracer != nil`
// and builds its Event inside the guard, so without a tracer a stage pays one pointer
// comparison per event site: no allocation, no formatting, no interface call. The
// tests pin the untraced allocation counts of the queues' hot paths, and bench/ has a
// row with a tracer attached, so its price is known.
//
// With a tracer, every event is built and handed to each Sink synchronously, on the
// stage's goroutine and sometimes under its lock (so that one stage's events arrive
// in order). A Sink must be quick, safe for concurrent use, and must never call back
// into the pipeline. A Sink that panics is contained: Emit recovers the panic, the
// sink loses that event, the stage goes on, and the panic is logged through
// slog.Default() (the 1st, 2nd, 4th, … one).
//
// # Reading a trace
//
// Journey follows one object of one informer ("foos", "default/example-foo") through
// every stage, and into the workqueue keys its handlers queued or mapped it to; a
// same-named object of another informer stays out, except for its mapping into the
// followed key. WriteTimeline prints a journey with offsets from the first event:
//
//	+0.000ms  reflector  foos  watch event MODIFIED default/example-foo rv=812
//	+0.041ms  realfifo   foos  queued Updated default/example-foo rv=812 (queue 1)
//
// docs/07-reading-a-trace.md walks through a whole journey, stage by stage.
//
// Reading order: event.go (stages, kinds, the Event), tracer.go (Tracer, Sink,
// KeyOf), sentence.go (one event as a sentence), journey.go (following a key, the
// timeline), recorder.go and slog.go (two sinks); then recordings: recording.go (the
// format and its header), recording_line.go (an event as a line), recording_write.go,
// recording_read.go (the reader: a recording cut by a crash, the size it reads whole)
// and recording_names.go (every name exact and once).
package trace
