package reflector

import (
	"context"
	"fmt"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// resyncLoop (transition R1) calls store.Resync every ResyncPeriod (when ShouldResync allows) until
// ctx ends. A Resync error is sent on errc, which ends the current watch and so
// forces a relist, and the loop returns.
//
// Why a fresh timer per period, not a ticker: the period counts from the end of the
// previous Resync, so a slow Resync never queues up ticks.
//
// client-go: tools/cache/reflector.go Reflector.startResync
func (r *Reflector[T]) resyncLoop(ctx context.Context, errc chan<- error) {
	t := time.NewTimer(r.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		due := r.opts.ShouldResync == nil || r.opts.ShouldResync()
		if r.opts.Tracer != nil {
			why := "resyncing the store"
			if !due {
				why = "skipped: no handler is due"
			}
			r.emit(trace.Event{Kind: trace.ResyncTick, Reason: why})
		}
		if due {
			r.logger.Debug("resync")
			if err := r.store.Resync(); err != nil {
				errc <- fmt.Errorf("resync: %w", err) // errc has room for one; we send once
				return
			}
		}
		t.Reset(r.opts.ResyncPeriod)
	}
}
