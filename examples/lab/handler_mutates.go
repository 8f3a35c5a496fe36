package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// handlerMutates: a handler writes to the object it was given, which is the cached
// object itself; everyone else sees the write, and the mutation detector names it.
func handlerMutates() Scenario {
	return Scenario{
		Name:     "handler-mutates",
		Question: "A handler changes the object it was given: what breaks, and how does the mutation detector report it?",
		Why: "The informer hands every handler, and every Lister caller, the very pointer its cache holds: no reader gets a copy. " +
			"A handler that writes to it writes into the cache, so the other handlers, the Listers and the next update's old object all see a state the server never had, and nothing fails at the moment of the write. " +
			"With Options.MutationDetector the informer keeps a deep copy of each object it caches and compares the two every Period (1s by default; here the lab asks at once with CheckMutations, after the handlers have run, so that the comparison does not race the write); " +
			"a changed object is reported once, with the informer, its key and a diff, logged at Error level and passed to OnMutation. " +
			"client-go's detector (KUBE_CACHE_MUTATION_DETECTOR) panics instead. The fix in the handler: DeepCopy, then change the copy.",
		Read: []string{
			"docs/04-informer.md (The transform: the one place an object may be changed; Catching a handler that changes what it was given)",
			"informer/mutation.go: mutationDetector.compare; informer/deltas.go: SharedIndexInformer.watchForMutation",
		},
		Run:      runHandlerMutates,
		Recorded: handlerMutatesRecorded,
	}
}

// runHandlerMutates runs two handlers on one object — one writes a label into it, the
// other reads it afterwards — then updates the object on the server and asks the
// mutation detector.
func runHandlerMutates(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "handler-mutates")
	if err != nil {
		return nil, err
	}
	logs := &lockedBuffer{}
	var mu sync.Mutex
	var reported []*informer.MutationError
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{
		Logger: lab.logTo(logs, slog.LevelError),
		// Why an hour: the lab compares with CheckMutations once the handlers are
		// done; a periodic comparison could run while the buggy handler writes.
		MutationDetector: &informer.MutationDetector{Period: time.Hour, OnMutation: func(err *informer.MutationError) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}},
	})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	inf := o.SharedIndexInformer
	const target, label = "target", "seen-by"

	// The order matters for what each handler sees: the reader waits until the
	// labeller has written, so it reads after the write (and the race detector sees
	// them ordered).
	written := make(chan struct{})
	type sighting struct{ add, updateOld, updateNew string }
	var seen sighting
	readerDone, updateSeen := make(chan struct{}), make(chan struct{})
	labeller := informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, _ bool) {
		if cm.Name == target {
			cm.Labels[label] = "labeller" // the bug: cm is the cached object
			close(written)
		}
	}}
	reader := informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) {
			if cm.Name != target {
				return
			}
			select {
			case <-written:
			case <-ctx.Done():
				return
			}
			seen.add = cm.Labels[label]
			close(readerDone)
		},
		UpdateFunc: func(old, cm *corev1.ConfigMap) {
			if cm.Name == target && old.ResourceVersion != cm.ResourceVersion {
				seen.updateOld, seen.updateNew = old.Labels[label], cm.Labels[label]
				close(updateSeen)
			}
		},
	}
	lReg, err := inf.AddEventHandlerWithOptions(labeller, informer.HandlerOptions{Name: "labeller"})
	if err != nil {
		return nil, err
	}
	rReg, err := inf.AddEventHandlerWithOptions(reader, informer.HandlerOptions{Name: "reader"})
	if err != nil {
		return nil, err
	}
	o.factory.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, lReg, rReg); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer on %s with the mutation detector on and two handlers: \"labeller\" sets label %s=labeller on the object its OnAdd gets; \"reader\" reads that label after it", ns, label)

	cm := configMap(ns, target, "k", "v")
	if err := create(ctx, core, ns, "configmaps", cm); err != nil {
		return nil, err
	}
	if err := awaitChan(ctx, readerDone, "the reader's OnAdd"); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap %s (without the label) and wait for both handlers", target)

	cachedObj, err := inf.Lister().Namespace(ns).Get(target)
	if err != nil {
		return nil, err
	}
	var onServer corev1.ConfigMap
	if err := core.Get().Namespace(ns).Resource("configmaps").Name(target).Do(ctx).Into(&onServer); err != nil {
		return nil, err
	}
	r.See("the reader's OnAdd saw %s=%q", label, seen.add)
	r.See("the cache (Lister) has %s=%q; the server has %s=%q", label, cachedObj.Labels[label], label, onServer.Labels[label])

	found := inf.CheckMutations()
	for _, e := range found {
		r.See("CheckMutations: %s in informer %s; the diff (copy -, cache +):", e.Key, e.Informer)
		for _, l := range strings.Split(strings.TrimSpace(e.Diff), "\n") {
			r.See("    %s", l)
		}
	}
	logged := logs.linesWith("cache mutation detected")
	r.Do("CheckMutations: compare every cached object with the copy taken when it was cached")

	changed := onServer.DeepCopy()
	changed.Data["k"] = "v2"
	if err := updateConfigMap(ctx, core, changed); err != nil {
		return nil, err
	}
	if err := awaitChan(ctx, updateSeen, "the reader's OnUpdate"); err != nil {
		return nil, err
	}
	r.Do("PUT %s with k=v2 (the server's copy, still without the label)", target)
	r.See("the reader's OnUpdate: old has %s=%q, new has %s=%q — a label removal the server never made", label, seen.updateOld, label, seen.updateNew)
	again := inf.CheckMutations()
	mu.Lock()
	onMutation := len(reported)
	mu.Unlock()

	key := ns + "/" + target
	r.Check("the labeller's write went into the cache: the Lister has the label, the server does not",
		cachedObj.Labels[label] == "labeller" && onServer.Labels[label] == "", "cache %q, server %q", cachedObj.Labels[label], onServer.Labels[label])
	r.Check("the other handler saw the write", seen.add == "labeller", "reader saw %q", seen.add)
	r.Check("the next update's old object carries the label and the new one does not", seen.updateOld == "labeller" && seen.updateNew == "",
		"old %q, new %q", seen.updateOld, seen.updateNew)
	r.Check("the detector reported the object once, with the informer, its key and a diff naming the label",
		len(found) == 1 && found[0].Key == key && found[0].Informer == "configmaps" && strings.Contains(found[0].Diff, `+   "`+label+`": "labeller"`) && onMutation == 1,
		"%d found (%s), %d passed to OnMutation", len(found), mutatedKeys(found), onMutation)
	r.Check("it was logged at Error level with the key", len(logged) == 1 && strings.Contains(logged[0], "level=ERROR") && strings.Contains(logged[0], key),
		"%d log line(s)", len(logged))
	r.Check("the new version, cached by the update, is unchanged: nothing more to report", len(again) == 0, "%d found", len(again))
	r.Answer = fmt.Sprintf("the write went into the cache: the other handler saw %s=%q, the Lister returns it while the server has none, and the next update looked like a label removal; "+
		"the mutation detector reported %s once, in informer %s, with a diff adding the label, logged at Error level", label, seen.add, key, "configmaps")
	return r, nil
}

// awaitChan waits until ch is closed, for at most awaitLong.
func awaitChan(ctx context.Context, ch <-chan struct{}, what string) error {
	return await(ctx, awaitLong, what, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// mutatedKeys is the keys of found, comma-separated.
func mutatedKeys(found []*informer.MutationError) string {
	keys := make([]string, len(found))
	for i, e := range found {
		keys[i] = e.Key
	}
	return strings.Join(keys, ", ")
}

// handlerMutatesRecorded: both handlers got target's add, and the reader's call
// returned only after the labeller's call had begun: the reader waits inside its
// OnAdd until the labeller has written, so it reads the label the labeller wrote into
// the shared object.
//
// Pitfall: not "after the labeller's call returned". The labeller's listener records
// its return after the handler's last statement (the close that frees the reader), so
// the two returns may be recorded in either order.
func handlerMutatesRecorded(r recorded) Check {
	adds := recorded(kinds(r, trace.HandlerCalled, trace.HandlerReturned)).about("/target").where(func(e trace.Event) bool { return e.Type == "add" })
	labellerCalled := adds.index(func(e trace.Event) bool { return e.Kind == trace.HandlerCalled && e.Source == "labeller" })
	readerReturned := adds.index(func(e trace.Event) bool { return e.Kind == trace.HandlerReturned && e.Source == "reader" })
	labellerReturned := adds.index(func(e trace.Event) bool { return e.Kind == trace.HandlerReturned && e.Source == "labeller" })
	return check("both handlers were called with target's add; the reader's call returned after the labeller's had begun",
		labellerCalled >= 0 && labellerReturned >= 0 && readerReturned > labellerCalled,
		"add calls and returns: %s", strings.Join(callsOf(adds), ", "))
}

// callsOf names each handler event of adds: "labeller called", "reader returned".
func callsOf(adds recorded) []string {
	out := make([]string, len(adds))
	for i, e := range adds {
		verb := "called"
		if e.Kind == trace.HandlerReturned {
			verb = "returned"
		}
		out[i] = e.Source + " " + verb
	}
	return out
}
