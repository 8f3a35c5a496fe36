package workqueue

import "errors"

// ErrInvalidArgument is wrapped by every error that a constructor or ParallelizeUntil
// returns for bad input (a negative delay, a nil limiter, zero workers, …).
//
// Why: client-go accepts such input and then misbehaves later (a negative piece count
// panics inside ParallelizeUntil, a nil limiter panics on the first AddRateLimited). We
// reject it where it is written, with a message that names the bad field.
var ErrInvalidArgument = errors.New("workqueue: invalid argument")

// ErrDrainAborted is wrapped by the error ShutDownWithDrain returns when ShutDown was
// called while it was still waiting for items in processing.
var ErrDrainAborted = errors.New("workqueue: drain aborted by ShutDown")
