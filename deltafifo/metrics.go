package deltafifo

// GaugeMetric is a value that is set: the queue's length, for an informer's
// queued-items metric (the informer passes its provider's gauge in the options).
//
// client-go: tools/cache/reflector_metrics.go GaugeMetric
type GaugeMetric interface{ Set(float64) }

// setLengthLocked records n, the queue's length, on g (nil: no metric). The queue's
// lock must be held.
//
// Invariant: the gauge is set under the same lock as the change it reports, so the
// values land in the order of the changes and the last one is the length now. Read
// after the lock is released, a writer's length could be recorded after a Pop that
// already emptied the queue, leaving an empty queue reading 1.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO (f.metrics.numberOfQueuedItem.Set under f.lock)
func setLengthLocked(g GaugeMetric, n int) {
	if g != nil {
		g.Set(float64(n))
	}
}
