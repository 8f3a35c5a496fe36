package leaderelection

import (
	"context"
	"errors"
	"io"
	"net/http"

	"k8s.io/client-go/rest"
)

// ErrWriteGateClosed is the error of a write sent through the write gate (WriteGate,
// Gated) while this candidate does not lead, and the cause that cancels a write still
// in flight when it stops leading. errors.Is tells it apart from an apiserver's
// answer: the request never reached the apiserver, or was abandoned on the way.
//
// Like 1.38's `ErrWriteGateClosed` (in its beta; the client-go release this module pins
// has no write gate, so there is no file to cite).
var ErrWriteGateClosed = errors.New("leaderelection: write gate closed: not leading")

// WriteGate returns a transport wrapper (rest.Config.WrapTransport's type) that lets a
// request through only while this candidate leads, unless it is a safe HTTP method:
//
//   - GET, HEAD, OPTIONS and TRACE always pass — informers, listers and watches keep
//     working on a standby, which is what gives a new leader a warm cache;
//   - any other method (POST, PUT, PATCH, DELETE, and methods it does not know) fails
//     with ErrWriteGateClosed, without being sent, unless this candidate holds the
//     lease: from the acquisition until the lease is lost (R4, R5, R6, S4) or the
//     work has returned, before the lease is released (S2). During a graceful drain
//     (S1) the lease is still renewed and the gate stays open, so the work can finish
//     what it holds;
//   - a write in flight when the gate closes is cancelled with ErrWriteGateClosed as
//     its context's cause, up to the moment its response headers arrive.
//
// Why it closes the paused-leader window that contexts leave open: a worker that wakes
// up in the middle of a sync does not look at its context before its next write, but
// every write goes through the gate, and the gate compares the time with the leader's
// own deadline (LeaseDuration·(1−StopBeforeExpiry) after it sent its last successful
// renewal) on every request, before the R6 timer has had a chance to run: a process
// that wakes past its deadline sends no write.
//
// What it cannot close: a write the apiserver accepted before the gate closed lands,
// whatever happens to its answer; and a write whose bytes were on their way when the
// process paused reaches the apiserver when it wakes. Never gate the Lock's own client:
// the elector could not renew through a closed gate.
//
// Like 1.38's `writeGate` and `LeaderElector.WriteGate` (in its beta). Differences: client-go's gate closes at a loss only in its
// Recovery mode; without Recovery it closes when Run returns, after the lease was
// released. Ours closes at the loss, and before the release. client-go's gate may open
// again when a recovering leader renews; ours never reopens within a term (a loss is
// final, Run returns). client-go has no own deadline (R6) to check per request.
func (e *Elector) WriteGate() func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &gatedTransport{e: e, next: rt} }
}

// Gated returns a copy of cfg whose clients send writes through the write gate (see
// WriteGate). Build the clients that act for the leader from it; build the Lock and
// the informers from cfg.
func (e *Elector) Gated(cfg *rest.Config) *rest.Config {
	gated := rest.CopyConfig(cfg)
	gated.Wrap(e.WriteGate())
	return gated
}

// WriteGateOpen reports whether a write sent now would pass the gate.
func (e *Elector) WriteGateOpen() bool {
	l := e.term.Load()
	return l != nil && l.admits()
}

// gatedTransport is the round tripper WriteGate wraps around a client's.
type gatedTransport struct {
	e    *Elector
	next http.RoundTripper
	// admitted, when set (only by tests), runs between the first check that admits a
	// write and the registration of its cancellation: the window the second check
	// closes.
	admitted func()
}

// RoundTrip sends safe methods as they are, and a write only while the term that
// admits it is live, cancelling it if the term ends before the response headers. Like
// 1.38's `writeGateRoundTripper.RoundTrip`.
func (t *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if safeMethod(req.Method) {
		return t.next.RoundTrip(req)
	}
	l := t.e.term.Load()
	if l == nil || !l.admits() {
		return nil, t.refuse(req, "not leading")
	}
	if t.admitted != nil {
		t.admitted()
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(l.lease, func() { cancel(ErrWriteGateClosed) })
	// Invariant: the term is checked again after the cancellation is registered, so
	// every write is either refused here or cancelled by the AfterFunc when the term
	// ends. Why: a term that ended between the first check and the registration would
	// run the AfterFunc in a goroutine of its own, while this one went on to send the
	// write with a live context — after the release, perhaps after another replica
	// took over.
	if !l.admits() {
		stop()
		cancel(nil)
		return nil, t.refuse(req, "the lease ended as the write was admitted")
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	stop()
	if err != nil {
		closed := errors.Is(context.Cause(ctx), ErrWriteGateClosed)
		cancel(nil)
		if closed {
			t.e.rejectedWrite(req, "cancelled in flight: the lease was lost")
			return nil, ErrWriteGateClosed
		}
		return nil, err
	}
	if resp.Body == nil {
		cancel(nil)
		return resp, nil
	}
	// The answer has come: the write happened. Reading the body is no longer the
	// gate's business, but the request's context must live until the body is closed.
	resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: func() { cancel(nil) }}
	return resp, nil
}

// refuse closes the body of a write the gate does not send, counts and logs it, and
// returns ErrWriteGateClosed.
func (t *gatedTransport) refuse(req *http.Request, why string) error {
	// Pitfall: a RoundTripper must close the body even when it sends nothing.
	if req.Body != nil {
		_ = req.Body.Close()
	}
	t.e.rejectedWrite(req, why)
	return ErrWriteGateClosed
}

// WrappedRoundTripper lets client-go's transport helpers see through the gate.
//
// apimachinery: pkg/util/net/http.go RoundTripperWrapper
func (t *gatedTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// safeMethod reports whether method is one of RFC 9110's safe methods; anything else,
// an unknown method included, is a write.
func safeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// releaseOnClose runs release once the response body is closed.
type releaseOnClose struct {
	io.ReadCloser
	release func()
}

func (b *releaseOnClose) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}

// rejectedWrite counts and logs a write the gate refused or cancelled.
func (e *Elector) rejectedWrite(req *http.Request, why string) {
	e.metrics.gateRejections.Inc()
	e.log.Debug("write gate: write refused", "method", req.Method, "path", req.URL.Path, "why", why)
}
