package trace

import (
	"fmt"
	"strings"
	"time"
)

// String is the event as one sentence, without its time and stage, the way the
// timeline prints it: `queued Updated default/example-foo (2 deltas pending, queue 1)`.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	add := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	rv := func() {
		if e.ResourceVersion != "" {
			add(" rv=%s", e.ResourceVersion)
		}
	}
	why := func() {
		if e.Reason != "" {
			add(": %s", e.Reason)
		}
	}
	switch e.Kind {
	case ListStarted:
		add(" (%s) at rv=%q", e.Type, e.ResourceVersion)
	case Listed:
		add(" %d items", e.Items)
		rv()
		switch {
		case e.Type == "watch-list":
			add(" (watch-list)")
		case e.Paged:
			add(" (paged)")
		}
	case WatchStarted, Bookmark:
		rv()
	case WatchEvent:
		add(" %s %s", e.Type, e.Key)
		rv()
	case WatchEnded, Relist:
		why()
		if e.ResourceVersion != "" {
			add(" (next from rv=%s)", e.ResourceVersion)
		}
	case Backoff:
		add(" %s", ms(e.Duration))
		why()
	case ResyncTick:
		why()
	case Queued:
		add(" %s", e.Type)
		if e.Key != "" {
			add(" %s", e.Key)
		}
		rv()
		if e.Reason != "" {
			add(" [%s]", e.Reason)
		}
		if e.Pending > 0 {
			add(" (%d %s pending, queue %d)", e.Pending, plural(e.Pending, "delta", "deltas"), e.QueueLen)
		} else {
			add(" (queue %d)", e.QueueLen)
		}
	case Replaced:
		add(" %d items, %d %s inferred (queue %d)", e.Items, e.Tombstones, plural(e.Tombstones, "tombstone", "tombstones"), e.QueueLen)
	case ShardFiltering:
		add(" on the %s", e.Type)
		why()
		if e.Detail != "" {
			add(" [%s]", e.Detail)
		}
	case ShardDropped:
		add(" %s", e.Key)
		rv()
		if e.Detail != "" {
			add(": %s", e.Detail)
		}
	case DeleteDropped:
		add(" %s: neither queued nor known", e.Key)
	case Popped:
		name := e.Key
		if name == "" {
			name = e.Type // a whole-list delta: ReplacedAll, SyncAll, Bookmark
		}
		if e.Type == "batch" {
			add(" %s in a batch of %d (queue %d left)", name, e.Pending, e.QueueLen)
		} else {
			add(" %s with %d %s (queue %d left)", name, e.Pending, plural(e.Pending, "delta", "deltas"), e.QueueLen)
		}
	case Applied:
		add(" %s %s", e.Type, e.Key)
		rv()
		add(" to the indexer")
		if e.Detail != "" {
			add(" (%s)", e.Detail)
		}
	case FannedOut:
		add(" %s %s to %d %s", e.Type, e.Key, e.Listeners, plural(e.Listeners, "handler", "handlers"))
		if e.Skipped > 0 {
			add(" (%d not due for resync)", e.Skipped)
		}
	case Buffered:
		add(" %s %s (backlog %d)", e.Type, e.Key, e.Backlog)
	case HandlerCalled:
		add(" %s %s", e.Type, e.Key)
	case HandlerReturned:
		add(" %s %s after %s", e.Type, e.Key, ms(e.Duration))
	case PanicRecovered:
		add(" in %s %s", e.Type, e.Key)
		why()
	case Added:
		add(" %s", e.Key)
		switch e.Reason {
		case "new":
			add(": new (queue %d)", e.QueueLen)
		case "deduplicated":
			add(": deduplicated, already waiting")
		case "dirty":
			add(": being processed, marked dirty (queued again at Done)")
		default:
			why()
		}
	case AddedAfter:
		add(" %s: due in %s", e.Key, ms(e.Duration))
	case RateLimited:
		add(" %s: retry in %s (requeue %d)", e.Key, ms(e.Duration), e.Requeues)
	case Got:
		add(" %s after %s in the queue (queue %d left)", e.Key, ms(e.Duration), e.QueueLen)
	case Done:
		add(" %s", e.Key)
		if e.Reason != "" {
			add(": %s (added while processing)", e.Reason)
		}
	case Forgot:
		add(" %s (backoff reset)", e.Key)
	case ShutDown:
		why()
	case Mapped:
		add(" %s %s to key %s", e.Source, e.Key, e.Detail)
	case Logged:
		add(" %s: %s", e.Type, e.Detail)
		if e.Attrs != "" {
			add(" %s", e.Attrs)
		}
	case Reconciled:
		add(" %s after %s", e.Key, ms(e.Duration))
		if e.Reason != "" {
			add(", error: %s", e.Reason)
		} else {
			add(", ok")
		}
	case LeaseTried, LeaseAcquired, LeaseReleased:
		add(" %s (%s)", e.Key, e.Type)
		why()
	case LeaseRenewed:
		add(" %s (%s) %s after the last", e.Key, e.Type, ms(e.Duration))
	case LeaseLost:
		add(" %s (%s) %s after the last successful renewal was sent", e.Key, e.Type, ms(e.Duration))
		why()
	case NewLeaderObserved:
		holder := e.Detail
		if holder == "" {
			holder = "(none: released)"
		}
		add(" %s of %s", holder, e.Key)
	case Action:
		add(" (%s): %s", e.Type, e.Detail)
	default:
		if e.Key != "" {
			add(" %s", e.Key)
		}
		rv()
		why()
	}
	return b.String()
}

// ms prints a duration in milliseconds with three decimals, the timeline's unit.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
