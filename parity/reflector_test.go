package parity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/parity/internal/check"
)

// TestReflector runs our reflector and client-go's, each on its own over a store that
// records every call (reflector_sides_test.go), against one scripted API server
// (informer_server_test.go) in one synctest bubble per input, and plays a generated
// story: writes and deletes before the start and while watching; bookmarks; watches
// that end plainly (a re-watch; twice at once: a very short watch), or with an ERROR
// event — 410 Expired or 500 (a relist), 429 (a backoff, then a re-watch) — with
// objects changed before the next request; and
// failures armed for the next requests of a kind — 410 Expired or "too large resource
// version" on a LIST's first page, 410 on a continue page, 500 on a LIST, a WATCH or a
// watch-list refused with 410, too-large or 429. The server pages LISTs (at most 1–3
// objects a page, or the limit asked), with or without a watch cache that ignores the
// limit at RV "0".
//
// Every input runs three ways: both reflectors LIST then WATCH (ours with PagedList,
// client-go's ListerWatcher opting out of watch-lists); both at their default
// watch-list (client-go's ListerWatcher does not opt out), against a server that serves
// it; and the same against a server that refuses it (422), so each cycle falls back to
// a LIST.
//
// After every step, once both reflectors are idle, it compares for each side: every
// request in order — verb, resourceVersion, resourceVersionMatch, limit, continue,
// sendInitialEvents, allowWatchBookmarks, timeoutSeconds within [5m, 10m), and the wait
// before it (at once, or within the bounds of which backoff step: the jitter makes the
// exact waits differ, see describeWait) — with the server's answer; the store's calls
// between them, in order (Add, Update, Delete, Replace with its items and
// resourceVersion, Bookmark); the store's objects; LastSyncResourceVersion.
//
// Kept off the script, because the two differ there on purpose (docs/defaults.md
// "## Reflector", each an exception): a watch-list stream cut before its end bookmark
// (the server sends the initial events and the bookmark at once, and cuts only open
// watches), undecodable objects (the ListerWatchers here hand over typed objects), and
// what each WatchErrorHandler hears (both are given one that does nothing); logs are
// discarded. Every 410 says Expired, never Gone (see serverFault.err). Resync is off: its timer restarts with each watch, after jittered waits.
//
// client-go: tools/cache/reflector.go Reflector.ListAndWatchWithContext
// client-go: tools/cache/reflector.go Reflector.list
// client-go: tools/cache/reflector.go Reflector.watch
// client-go: tools/cache/reflector.go Reflector.watchList
// client-go: tools/pager/pager.go ListPager.list
func TestReflector(t *testing.T) {
	withoutErrorBackoff(t)
	check.Run(t, check.Config[reflOp]{Runs: 800, Simplify: simplifyReflOp}, genReflOps, func(ops []reflOp) error {
		for _, v := range reflVariants {
			if err := compareReflectors(t, ops, v); err != nil {
				return wrapVariant(v.name, err)
			}
		}
		return nil
	})
}

// reflVariant is one way of running an input.
type reflVariant struct {
	name      string
	mode      reflectorMode
	watchList bool // the server serves watch-lists
}

var reflVariants = []reflVariant{
	{"LIST then WATCH", modeList, false},
	{"watch-list, served", modeWatchList, true},
	{"watch-list, refused by the server", modeWatchList, false},
}

// reflSettle is how long every step that can end a cycle waits: past any chain of
// backoffs a step can cause (at most four: steps 0–3, under 30s together), and more
// than the 2 minutes after which both backoffs start over, so each step's chain begins
// at step 0 on both sides.
const reflSettle = 5 * time.Minute

type reflKind int

const (
	rfServer reflKind = iota
	rfWrite
	rfDelete
	rfRun
	rfBookmark
	rfEnd
)

type endHow int

const (
	endPlain    endHow = iota // the stream ends without an error: a re-watch
	endTwice                  // …and the re-watch ends at once, with no event: a very short watch
	endExpire                 // an ERROR event 410 Expired, then the end: a relist
	endTooMany                // an ERROR event 429: a backoff, then a re-watch
	endInternal               // an ERROR event 500: a relist
	numEndHows
)

// status is the ERROR event's status this end sends; nil for a plain end.
func (h endHow) status() *metav1.Status {
	switch h {
	case endExpire:
		return expiredStatus()
	case endTooMany:
		return &apierrors.NewTooManyRequests("slow down", 1).ErrStatus
	case endInternal:
		return &apierrors.NewInternalError(fmt.Errorf("etcd is unhappy")).ErrStatus
	}
	return nil
}

// reflOp is one step of the story.
type reflOp struct {
	kind       reflKind
	name       string        // write, delete
	pageCap    int           // server
	watchCache bool          // server
	how        endHow        // end
	faults     []serverFault // run, end: armed before the step acts
	changes    []infChange   // end: made after the watches ended
}

func (o reflOp) String() string {
	faults := func() string {
		if len(o.faults) == 0 {
			return ""
		}
		f := make([]string, len(o.faults))
		for i, x := range o.faults {
			f[i] = x.String()
		}
		return "; armed [" + strings.Join(f, ", ") + "]"
	}
	switch o.kind {
	case rfServer:
		return fmt.Sprintf("server: pages of at most %d (0: the limit), watch cache %v", o.pageCap, o.watchCache)
	case rfWrite:
		return "write " + o.name
	case rfDelete:
		return "delete " + o.name
	case rfRun:
		return fmt.Sprintf("Run both reflectors%s; wait %v", faults(), reflSettle)
	case rfBookmark:
		return "bookmark"
	default:
		how := [...]string{"plainly", "plainly, then the re-watch at once", "with an ERROR event 410 Expired",
			"with an ERROR event 429 TooManyRequests", "with an ERROR event 500 InternalError"}[o.how]
		ch := make([]string, len(o.changes))
		for i, c := range o.changes {
			ch[i] = c.String()
		}
		return fmt.Sprintf("end the watches %s%s; meanwhile [%s]; wait %v", how, faults(), strings.Join(ch, ", "), reflSettle)
	}
}

// genReflOps makes a server setting, up to 5 writes before the start, then up to 25
// steps: writes weighted over deletes, bookmarks, and ends of the watch with up to
// three faults and three changes each.
func genReflOps(r *rand.Rand) []reflOp {
	ops := []reflOp{{kind: rfServer, pageCap: r.IntN(4), watchCache: r.IntN(2) == 0}}
	for range r.IntN(6) {
		ops = append(ops, reflOp{kind: rfWrite, name: pick(r, infNames)})
	}
	ops = append(ops, reflOp{kind: rfRun, faults: genFaults(r)})
	for range r.IntN(26) {
		switch p := r.IntN(100); {
		case p < 35:
			ops = append(ops, reflOp{kind: rfWrite, name: pick(r, infNames)})
		case p < 50:
			ops = append(ops, reflOp{kind: rfDelete, name: pick(r, infNames)})
		case p < 60:
			ops = append(ops, reflOp{kind: rfBookmark})
		default:
			op := reflOp{kind: rfEnd, how: endHow(r.IntN(int(numEndHows))), faults: genFaults(r)}
			for range r.IntN(4) {
				op.changes = append(op.changes, infChange{del: r.IntN(3) == 0, name: pick(r, infNames)})
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// genFaults arms none in half the steps, else one to three.
func genFaults(r *rand.Rand) []serverFault {
	if r.IntN(2) == 0 {
		return nil
	}
	f := make([]serverFault, 1+r.IntN(3))
	for i := range f {
		f[i] = serverFault(r.IntN(int(numFaults)))
	}
	return f
}

// simplifyReflOp offers a step with one fault or one change fewer, a plain end
// instead of another, and a server without a page cap or a watch cache.
func simplifyReflOp(o reflOp) []reflOp {
	var out []reflOp
	for i := range o.faults {
		s := o
		s.faults = slices.Delete(slices.Clone(o.faults), i, i+1)
		out = append(out, s)
	}
	for i := range o.changes {
		s := o
		s.changes = slices.Delete(slices.Clone(o.changes), i, i+1)
		out = append(out, s)
	}
	if o.kind == rfEnd && o.how != endPlain {
		s := o
		s.how = endPlain
		out = append(out, s)
	}
	if o.kind == rfServer && o.pageCap != 0 {
		s := o
		s.pageCap = 0
		out = append(out, s)
	}
	if o.kind == rfServer && o.watchCache {
		s := o
		s.watchCache = false
		out = append(out, s)
	}
	return out
}

// compareReflectors plays ops on both reflectors in one bubble and compares the
// transcripts.
func compareReflectors(t *testing.T, ops []reflOp, v reflVariant) error {
	return transcriptsInBubble(t, func(ours, theirs *check.Transcript) { playReflectors(ops, v, ours, theirs) })
}

func playReflectors(ops []reflOp, v reflVariant, ourTr, theirTr *check.Transcript) {
	srv := newCMServer()
	srv.timed, srv.watchList = true, v.watchList
	sides := []*reflectorSide{newOursReflectorSide(srv, v.mode), newClientGoReflectorSide(srv, v.mode)}
	trs := []*check.Transcript{ourTr, theirTr}
	ctx, cancel := context.WithCancel(context.Background())
	started := false
	for i, op := range ops {
		for _, tr := range trs {
			tr.Printf("%d. %s", i+1, op)
		}
		switch op.kind {
		case rfServer:
			srv.mu.Lock()
			srv.pageCap, srv.watchCache = op.pageCap, op.watchCache
			srv.mu.Unlock()
		case rfWrite:
			srv.write(op.name)
		case rfDelete:
			if _, ok := srv.remove(op.name); !ok {
				for _, tr := range trs {
					tr.Printf("  (%s does not exist)", op.name)
				}
			}
		case rfBookmark:
			srv.bookmark()
		case rfRun:
			if started {
				break
			}
			started = true
			for _, f := range op.faults {
				srv.arm(f)
			}
			srv.startClock()
			for _, s := range sides {
				s.done = make(chan struct{})
				s.start(ctx)
			}
			time.Sleep(reflSettle)
		case rfEnd:
			for _, f := range op.faults {
				srv.arm(f)
			}
			if op.how == endTwice {
				srv.failWatches(op.how.status())
				synctest.Wait() // both re-watched at once
				srv.endWatches(false, op.changes...)
			} else {
				srv.failWatches(op.how.status(), op.changes...)
			}
			time.Sleep(reflSettle)
		}
		synctest.Wait()
		srv.disarm()
		for i, s := range sides {
			for _, l := range srv.takeRequests(s.end) {
				trs[i].Printf("  %s", l)
			}
			trs[i].Printf("  store %s; LastSyncResourceVersion %q", s.store.contents(), s.lastSync())
		}
	}
	cancel()
	for _, s := range sides {
		if s.done != nil {
			<-s.done
		}
	}
}
