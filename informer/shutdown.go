package informer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
)

// ErrShutDownFromOwnHandler is returned by ShutDownEventHandler when it is called from
// inside one of the callbacks of the very registration it is asked to shut down. The
// wait could never end — the goroutine it waits for is the caller — so the call does
// nothing and says so. A handler that wants to stop itself calls RemoveEventHandler,
// which does not wait.
var ErrShutDownFromOwnHandler = errors.New("called from inside the handler it shuts down, it would wait for itself forever (use RemoveEventHandler)")

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
// It returns an error wrapping ErrShutDownFromOwnHandler, and does nothing, when
// called from inside reg's own handler; one wrapping ErrForeignRegistration, and does
// nothing, for a registration this informer did not make.
//
// Pitfall: the wait also never ends if reg's handler is blocked on the caller — on a
// lock the caller holds, or on a goroutine that called ShutDownEventHandler for it.
// Only a call on the handler's own goroutine is recognised; ctx bounds the rest.
//
// Why a method, where client-go has a package function
// ShutDownEventHandler(informer, handle): its SharedInformer is an interface, which
// cannot gain a method without breaking every implementation; ours is a concrete
// type.
//
// Differences from client-go: client-go's MUST NOT be called from the handler's own
// callbacks (it deadlocks) and only says so; ours recognises that call and returns
// ErrShutDownFromOwnHandler. For another informer's handle client-go removes nothing
// and then waits for that handler to stop, which it may never do; ours returns
// ErrForeignRegistration. And ctx bounds the wait.
//
// client-go: tools/cache/shared_informer.go ShutDownEventHandler
func (s *SharedIndexInformer[T]) ShutDownEventHandler(ctx context.Context, reg *Registration[T]) error {
	if reg == nil || reg.informer != s {
		return fmt.Errorf("ShutDownEventHandler: %w", ErrForeignRegistration)
	}
	if reg.l.calledFromHandler() {
		return fmt.Errorf("ShutDownEventHandler(%q): %w", reg.l.name, ErrShutDownFromOwnHandler)
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

// calledFromHandler reports whether the caller runs on this listener's goroutine —
// that is, inside one of its handler's callbacks, the only code of anyone else's that
// runs there.
//
// Why the goroutine's identity, and not something the listener owns: the two cases
// to tell apart — the handler calling ShutDownEventHandler for itself (a deadlock),
// and another goroutine calling it while the handler is busy (legitimate: it must
// wait) — leave the listener in exactly the same state, a handler call in progress.
// Every signal the listener could own is the same in both: a flag set around each
// callback, a lock held during it, even the listener's call frame found on the
// caller's stack with runtime.Callers (another listener's handler calling has one
// too, and a frame does not say whose listener it belongs to). A context value
// cannot help either: handlers receive no context from us, so the caller has nothing
// of ours to pass back. What differs is only who is calling, and Go hides goroutine
// identity on purpose; runtime.Stack's header ("goroutine 42 [running]:") is the one
// place it shows. So run records its goroutine's id once, as it starts, and this
// compares the caller's with it: no cost on the notification path, one short stack
// read per ShutDownEventHandler call (not on any hot path).
//
// client-go 1.37 decides nothing here: its ShutDownEventHandler "MUST NOT be called
// from within the event handler's own callbacks, as that will result in a deadlock".
// We keep the check because the deadlock it prevents is silent and permanent.
//
// If a Go release changed the header, goroutineID would return 0: run logs that at
// error level, the check stops matching (a call from the handler's own callback then
// waits until its ctx ends, as client-go's would forever), and nothing else breaks.
// TestTheStackHeaderStillNamesTheGoroutine fails first, on the release that changed
// it.
//
// Invariant (why it is race-free): the id is written once, atomically, by run's own
// goroutine before its first handler call. A call from inside the handler comes after
// that write on the same goroutine, so it always sees it. Any other goroutine reads
// either 0 or that id, and neither is its own, so it never gets a false match.
func (l *listener[T]) calledFromHandler() bool {
	id := goroutineID()
	return id != 0 && id == l.goroutine.Load()
}

// goroutineID returns the id of the calling goroutine, read from the header of its
// stack trace, or 0 if the header cannot be read.
func goroutineID() uint64 {
	var buf [64]byte
	return goroutineIDFrom(buf[:stackOf(buf[:])])
}

// stackOf writes the calling goroutine's stack trace into buf, as runtime.Stack does;
// a variable so that a test can hand run a header it cannot read.
var stackOf = func(buf []byte) int { return runtime.Stack(buf, false) }

// goroutineIDFrom reads the id out of a stack trace's header, "goroutine 42
// [running]:" (or, in a synctest bubble, "goroutine 42 [running, synctest bubble
// 3]:"); 0 if header does not start that way.
func goroutineIDFrom(header []byte) uint64 {
	header, ok := bytes.CutPrefix(header, []byte("goroutine "))
	if !ok {
		return 0
	}
	digits, rest, ok := bytes.Cut(header, []byte(" "))
	if !ok || !bytes.HasPrefix(rest, []byte("[")) {
		return 0
	}
	id, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
