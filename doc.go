// Package informers is client-go's informer machinery rebuilt from scratch in small,
// annotated packages, so that a Go developer can read how a Kubernetes controller sees
// the cluster — and run it against a real cluster.
//
// The pipeline, top to bottom, with the package that implements each stage:
//
//	kube-apiserver
//	    │  watch-list stream (or a paged LIST) / WATCH (a stream of events)
//	    ▼
//	listwatch.RESTListerWatcher (HTTP, framing, decoding into typed objects)
//	    │  ListResult / Watch events
//	    ▼
//	reflector.Reflector ──Add/Update/Delete/Replace/Resync──▶ deltafifo.RealFIFO (or DeltaFIFO)
//	                                                               │ Pop
//	                                                               ▼
//	                                  informer (processLoop) ──▶ indexer.Indexer (the cache)
//	                                                               │ distribute
//	                                                               ▼
//	                             sharedProcessor ──▶ processorListener (one per handler, own buffer)
//	                                                               │ OnAdd/OnUpdate/OnDelete
//	                                                               ▼
//	                              your handler: enqueue a key ──▶ workqueue.RateLimitingQueue
//	                                                               │ Get/Done/Forget
//	                                                               ▼
//	                                       worker: read the cache, reconcile, write via REST
//
// With zero options every stage is client-go 1.37's: the reflector fetches the state as
// a watch-list and the informer queues it in a RealFIFO. The classic pipeline most of
// the literature describes, a paged LIST into a DeltaFIFO, is one option away
// (informer.Options{Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList}).
//
// Reading order: indexer (what "the cache" is), deltafifo (how changes queue up),
// reflector (how changes arrive from the API server; listwatch is the wire under
// it), informer (how the three compose
// and fan out to handlers), workqueue (how a controller turns events into work), then
// the programs in examples/ from 01 to 07 and the Foo controller. docs/ has a chapter
// per stage and the map from each of our files to client-go's.
//
// Package leaderelection lets several replicas of a controller agree, through a Lease,
// that one of them runs the workers (docs/08-leader-election.md).
//
// Package kubeconfig finds the cluster the way kubectl does (-kubeconfig, $KUBECONFIG,
// ~/.kube/config, in-cluster); docs/use-in-your-module.md shows a whole program built from
// these packages in a module of its own.
//
// This root package holds no code; import the packages above.
package informers
