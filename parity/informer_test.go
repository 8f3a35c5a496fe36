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

	"github.com/kubeinternals/informers/parity/internal/check"
)

// TestInformer runs our shared informer and client-go's side by side in one synctest
// bubble, both on the default queue (RealFIFO) and a classic initial LIST, over one
// scripted API server (informer_server_test.go), which lists the objects in an order
// each input draws (not by name), and plays a generated story: objects
// created, updated and deleted as watch events; handlers registered before Run and
// after the sync (with the default resync period, none, or twice the default) and
// removed; watches that end with 410 Expired (a relist, with objects deleted and
// changed meanwhile: tombstones and relist updates) or end plainly (a re-watch from
// the last resourceVersion, which replays what changed meanwhile); and resyncs (fake
// time advanced past the resync period). Every input runs twice, without and with a
// transform (which marks each object with how often it ran on it).
//
// After every step, once both pipelines are idle, it compares: the LIST and WATCH
// requests each reflector made (and from which resourceVersion); each handler's
// notifications in order — OnAdd with isInInitialList, OnUpdate old → new, OnDelete
// with the object or the tombstone's key and object; each handler's HasSynced; the
// informer's HasSynced; and the cache's contents. Only what client-go hands over in a
// map's order is sorted before it is compared (inMapOrder).
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.AddEventHandlerWithOptions
// client-go: tools/cache/shared_informer.go sharedProcessor.shouldResync
// client-go: tools/cache/controller.go processDeltas
// client-go: tools/cache/reflector.go Reflector.ListAndWatchWithContext
func TestInformer(t *testing.T) {
	check.Run(t, check.Config[infOp]{Runs: 600, Simplify: simplifyInfOp}, genInfOps, func(ops []infOp) error {
		for _, transform := range []bool{false, true} {
			if err := compareInformers(t, ops, transform); err != nil {
				if transform {
					return wrapVariant("with a transform", err)
				}
				return err
			}
		}
		return nil
	})
}

// Fake time. A relist waits out a jittered backoff (800ms–1.6s on both sides, since
// each end of a watch comes more than two minutes after the last one), so the two
// reflectors relist at slightly different instants, and each restarts its resync
// timer there. Whether a handler is due at a resync check compares that check's time
// with the handler's registration or its previous resync; the steps below keep the
// jitter out of every such comparison. Time moves only in whole minutes
// (infEndWatchWait, infResyncWait), and at most infMaxTimed steps of each kind move
// it, so two steps are 3a+61b minutes apart (a, b ≤ infMaxTimed): a multiple of the
// period only when a = b = 0, the same instant — and then the relist comes after the registration on
// both sides, and two relists cannot start from one instant. A resync step waits one
// period and a minute, so one or two resync checks fall into it, never at its end,
// where they would race with the next step.
const (
	infResyncPeriod = time.Hour
	infEndWatchWait = 3 * time.Minute
	infResyncWait   = infResyncPeriod + time.Minute
	infMaxTimed     = 6 // of each of endWatch and resync
	infMaxHandlers  = 4 // registrations per input
)

type infKind int

const (
	infStart infKind = iota
	infWrite
	infDelete
	infAddHandler
	infRemoveHandler
	infEndWatch
	infResync
)

// infOp is one step of the story.
type infOp struct {
	kind    infKind
	order   []string // start: the order in which the server lists the objects
	name    string   // write, delete: the object (created if absent, else updated)
	resync  int      // addHandler: 0 the informer's default, 1 none, 2 twice the default
	nth     int      // removeHandler: which live handler, by position (mod how many live)
	expire  bool     // endWatch: with 410 Expired (relist), or a plain end (re-watch)
	changes []infChange
}

// infChange is a change made while no watch is open, between a watch's end and the
// reflector's next request: a relist sees only its result.
type infChange struct {
	del  bool
	name string
}

func (c infChange) String() string {
	if c.del {
		return "delete " + c.name
	}
	return "write " + c.name
}

func (o infOp) String() string {
	switch o.kind {
	case infStart:
		return fmt.Sprintf("Run both informers (the server lists %s)", strings.Join(o.order, ", "))
	case infWrite:
		return "write " + o.name
	case infDelete:
		return "delete " + o.name
	case infAddHandler:
		return "add handler with resync " + []string{"default (1h)", "0 (none)", "2h"}[o.resync]
	case infRemoveHandler:
		return fmt.Sprintf("remove live handler #%d", o.nth)
	case infEndWatch:
		how := "plainly"
		if o.expire {
			how = "with 410 Expired"
		}
		ch := make([]string, len(o.changes))
		for i, c := range o.changes {
			ch[i] = c.String()
		}
		return fmt.Sprintf("end the watches %s; meanwhile [%s]; wait %v", how, strings.Join(ch, ", "), infEndWatchWait)
	default:
		return fmt.Sprintf("wait %v (resync)", infResyncWait)
	}
}

var infNames = []string{"a", "b", "c", "d", "e"}

// genInfOps makes up to 40 steps: Run early (often first, so that the initial list is
// empty; else after some writes and handlers), writes weighted over deletes so the
// cache fills, and handlers, watch ends and resyncs within their limits.
func genInfOps(r *rand.Rand) []infOp {
	n := 5 + r.IntN(36)
	ops := make([]infOp, 0, n+1)
	startAt := r.IntN(n / 3)
	handlers, ends, resyncs := 0, 0, 0
	for len(ops) < n {
		if len(ops) == startAt {
			order := slices.Clone(infNames)
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			ops = append(ops, infOp{kind: infStart, order: order})
		}
		switch p := r.IntN(100); {
		case p < 35:
			ops = append(ops, infOp{kind: infWrite, name: pick(r, infNames)})
		case p < 50:
			ops = append(ops, infOp{kind: infDelete, name: pick(r, infNames)})
		case p < 65 && handlers < infMaxHandlers:
			handlers++
			ops = append(ops, infOp{kind: infAddHandler, resync: r.IntN(3)})
		case p < 70:
			ops = append(ops, infOp{kind: infRemoveHandler, nth: r.IntN(3)})
		case p < 85 && ends < infMaxTimed:
			ends++
			op := infOp{kind: infEndWatch, expire: r.IntN(4) > 0}
			for range r.IntN(4) {
				op.changes = append(op.changes, infChange{del: r.IntN(2) == 0, name: pick(r, infNames)})
			}
			ops = append(ops, op)
		case p >= 85 && resyncs < infMaxTimed:
			resyncs++
			ops = append(ops, infOp{kind: infResync})
		}
	}
	return ops
}

// simplifyInfOp offers an end of the watch with one meanwhile change fewer, a
// handler without resync, and a server that lists by name.
func simplifyInfOp(o infOp) []infOp {
	var out []infOp
	if o.kind == infStart && !slices.IsSorted(o.order) {
		s := o
		s.order = sortedStrings(o.order)
		out = append(out, s)
	}
	for i := range o.changes {
		s := o
		s.changes = slices.Delete(slices.Clone(o.changes), i, i+1)
		out = append(out, s)
	}
	if o.kind == infAddHandler && o.resync != 1 {
		s := o
		s.resync = 1
		out = append(out, s)
	}
	return out
}

// compareInformers plays ops on both informers in one bubble and compares the
// transcripts.
func compareInformers(t *testing.T, ops []infOp, transform bool) error {
	return transcriptsInBubble(t, func(ours, theirs *check.Transcript) { playInformers(ops, transform, ours, theirs) })
}

// informerRun is one side of the comparison while the story is played.
type informerRun struct {
	side  informerSide
	end   *endpoint
	tr    *check.Transcript
	notes []*notes // one per registration, in order
	done  chan struct{}
}

func playInformers(ops []infOp, transform bool, ourTr, theirTr *check.Transcript) {
	srv := newCMServer()
	ourSide, theirSide := newOursSide(oursLW{srv, &srv.ours}, infResyncPeriod), newClientGoSide(clientGoLW{srv, &srv.theirs}, infResyncPeriod)
	if transform {
		ourSide, theirSide = ourSide.withTransform(), theirSide.withTransform()
	}
	sides := []*informerRun{
		{side: ourSide, end: &srv.ours, tr: ourTr},
		{side: theirSide, end: &srv.theirs, tr: theirTr},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var live []int // registrations not removed, by index; the same on both sides
	started := false
	for i, op := range ops {
		for _, s := range sides {
			s.tr.Printf("%d. %s", i+1, op)
		}
		switch op.kind {
		case infStart:
			if started {
				break
			}
			started = true
			srv.listOrder = op.order // before either reflector runs
			for _, s := range sides {
				s.done = make(chan struct{})
				go func() { defer close(s.done); s.side.run(ctx) }()
			}
		case infWrite:
			srv.write(op.name)
		case infDelete:
			if _, ok := srv.remove(op.name); !ok {
				for _, s := range sides {
					s.tr.Printf("  (%s does not exist)", op.name)
				}
			}
		case infAddHandler:
			var resync *time.Duration
			switch op.resync {
			case 1:
				resync = new(time.Duration)
			case 2:
				d := 2 * infResyncPeriod
				resync = &d
			}
			for _, s := range sides {
				n := &notes{}
				s.notes = append(s.notes, n)
				s.tr.Printf("  registered h%d: %s", len(s.notes)-1, errWord(s.side.addHandler(resync, n)))
			}
			live = append(live, len(sides[0].notes)-1)
		case infRemoveHandler:
			if len(live) == 0 {
				for _, s := range sides {
					s.tr.Printf("  (no handler to remove)")
				}
				break
			}
			at := op.nth % len(live)
			for _, s := range sides {
				s.tr.Printf("  removed h%d: %s", live[at], errWord(s.side.removeHandler(live[at])))
			}
			live = slices.Delete(live, at, at+1)
		case infEndWatch:
			srv.endWatches(op.expire, op.changes...)
			time.Sleep(infEndWatchWait)
		case infResync:
			time.Sleep(infResyncWait)
		}
		synctest.Wait()
		for _, s := range sides {
			s.observe(srv, live, inMapOrder(op, len(s.notes)-1))
		}
	}
	cancel()
	for _, s := range sides {
		if s.done != nil {
			<-s.done
		}
	}
}

// observe writes what one side did since the last step: its reflector's requests,
// each handler's notifications (a removed handler's too: it must have none) with the
// runs that unordered says client-go hands over in a map's order sorted, each live
// handler's HasSynced, the informer's HasSynced and its cache.
func (s *informerRun) observe(srv *cmServer, live []int, unordered func(h int, note string) bool) {
	for _, r := range srv.takeRequests(s.end) {
		s.tr.Printf("  server: %s", r)
	}
	for h, n := range s.notes {
		for _, l := range unorderedRunsSorted(n.take(), func(note string) bool { return unordered(h, note) }) {
			s.tr.Printf("  h%d: %s", h, l)
		}
	}
	var synced []string
	for _, h := range live {
		synced = append(synced, fmt.Sprintf("h%d=%v", h, s.side.handlerSynced(h)))
	}
	s.tr.Printf("  synced: informer=%v handlers [%s]; cache %s", s.side.hasSynced(), strings.Join(synced, " "), s.side.cache())
}

// inMapOrder says which notifications client-go hands handler h in step op in a map's
// iteration order, and the comparison sorts: each kind only in the step that makes it,
// so that none hides an order client-go keeps.
//
//   - A resync step: its updates (old and new the same version), every cached object
//     from the cache's List (SyncAll).
//   - An end of the watches: a relist's tombstones, for the cached keys missing from
//     the list, from the cache's ListKeys. The relist's adds and updates come after
//     them in the list's order, and are compared in it.
//   - A registration: the new handler's replayed adds (isInInitialList=true), from the
//     cache's List, when the informer runs already.
//
// Everything else keeps its place: the first list's adds (isInInitialList=true) come
// in the list's order, which the server draws per input, and watch events in theirs.
// (No resync check falls within an end of the watches, nor a relist within a resync
// step: see the constants above.)
//
// client-go: tools/cache/controller.go processDeltas (SyncAll: clientState.List)
// client-go: tools/cache/the_real_fifo.go reconcileReplacement (knownObjects.ListKeys)
// client-go: tools/cache/controller.go processReplacedAllInfo
// client-go: tools/cache/shared_informer.go sharedIndexInformer.AddEventHandlerWithOptions (s.indexer.List)
func inMapOrder(op infOp, newest int) func(h int, note string) bool {
	return func(h int, note string) bool {
		switch op.kind {
		case infResync:
			change, isUpdate := strings.CutPrefix(note, "OnUpdate ")
			old, new, _ := strings.Cut(change, " → ")
			return isUpdate && old == new
		case infEndWatch:
			return strings.HasPrefix(note, "OnDelete tombstone(")
		case infAddHandler:
			return h == newest && strings.HasPrefix(note, "OnAdd ") && strings.HasSuffix(note, " initial=true")
		}
		return false
	}
}

// unorderedRunsSorted sorts each run of consecutive notifications that unordered
// holds for. Every other notification keeps its place, and no run crosses one.
func unorderedRunsSorted(lines []string, unordered func(string) bool) []string {
	out := slices.Clone(lines)
	for i := 0; i < len(out); {
		j := i + 1
		if unordered(out[i]) {
			for j < len(out) && unordered(out[j]) {
				j++
			}
			slices.Sort(out[i:j])
		}
		i = j
	}
	return out
}
