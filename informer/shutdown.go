package informer

import (
	"context"
	"errors"
	"fmt"
)

// ErrForeignRegistration is returned by ShutDownEventHandler for a registration that
// this informer did not make: nil, or one of another informer.
var ErrForeignRegistration = errors.New("registration is not one of this informer's")

// ShutDownEventHandler removes the handler of reg, as RemoveEventHandler does, then
// waits until the handler has stopped: its goroutine has returned, so no call of it
// is in progress and none will begin. Notifications still queued for it are dropped,
// not delivered. Use it when the handler's resources may be released only once the
// handler can no longer touch them: a channel it sends on, a file it writes.
//
// It returns nil once the handler has stopped — at once for a handler whose
// goroutine never started (the informer never ran) or has already returned (the
// informer stopped, or an earlier removal), so a second call is a no-op. When ctx
// ends first it returns ctx.Err(); the handler is removed all the same, and its call
// in progress finishes in the background. It is safe to call from any goroutine,
// including another handler's.
//
// It returns an error wrapping ErrForeignRegistration, and does nothing, for a
// registration this informer did not make.
//
// Pitfall: it must not be called from inside reg's own handler: it would wait for
// itself. The wait also never ends if reg's handler is blocked on the caller — on a
// lock the caller holds. ctx bounds such a wait.
//
// Why a method, where client-go has a package function
// ShutDownEventHandler(informer, handle): its SharedInformer is an interface, which
// cannot gain a method without breaking every implementation; ours is a concrete
// type.
//
// Differences from client-go: for another informer's handle client-go removes
// nothing and then waits for that handler to stop, which it may never do; ours
// returns ErrForeignRegistration. And ctx bounds the wait.
//
// client-go: tools/cache/shared_informer.go ShutDownEventHandler
func (s *SharedIndexInformer[T]) ShutDownEventHandler(ctx context.Context, reg *Registration[T]) error {
	if reg == nil || reg.informer != s {
		return fmt.Errorf("ShutDownEventHandler: %w", ErrForeignRegistration)
	}
	s.RemoveEventHandler(reg)
	select {
	case <-reg.l.finished:
		return nil
	default:
	}
	select {
	case <-reg.l.finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
