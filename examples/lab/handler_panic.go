package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// handlerPanic: a handler panics on one object; the listener recovers, logs and goes
// on, and nothing else notices.
func handlerPanic() Scenario {
	return Scenario{
		Name:     "handler-panic",
		Question: "A handler panics: what happens to it, the informer and the other handlers?",
		Why: "Each handler is called from its own listener goroutine, which recovers a panic, logs it with the object's key, reports PanicRecovered and goes on with the next notification: " +
			"that one notification is lost for that handler only, while the cache (written before any handler runs) and the other handlers never notice. " +
			"client-go differs: its listener calls utilruntime.HandleCrash, which by default re-panics and crashes the whole process (informer/doc.go, Differences from client-go).",
		Read: []string{
			"docs/04-informer.md (Walk through the code) and informer/doc.go (Differences from client-go)",
			"informer/listener.go: listener.call (the recover), listener.run",
		},
		Run:      runHandlerPanic,
		Recorded: handlerPanicRecorded,
	}
}

// runHandlerPanic feeds two handlers a sequence of changes, one of which makes one
// handler panic, and compares what each received.
func runHandlerPanic(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "handler-panic")
	if err != nil {
		return nil, err
	}
	logs := &lockedBuffer{}
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns),
		informer.FactoryOptions{Logger: lab.logTo(logs, slog.LevelWarn)})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, rec, inf := o.factory, o.rec, o.SharedIndexInformer
	const poison = "poison"
	fragile, steady := &callRecorder[*corev1.ConfigMap]{}, &callRecorder[*corev1.ConfigMap]{}
	fh := fragile.handler()
	record := fh.AddFunc
	fh.AddFunc = func(obj *corev1.ConfigMap, initial bool) {
		if obj.Name == poison {
			panic(fmt.Sprintf("cannot handle %s", obj.Name))
		}
		record(obj, initial)
	}
	fragileReg, err := inf.AddEventHandlerWithOptions(fh, informer.HandlerOptions{Name: "fragile"})
	if err != nil {
		return nil, err
	}
	steadyReg, err := inf.AddEventHandlerWithOptions(steady.handler(), informer.HandlerOptions{Name: "steady"})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, fragileReg, steadyReg); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer on %s with two handlers that record their calls: \"fragile\" panics in OnAdd for %q, \"steady\" never panics", ns, poison)

	// One at a time, each after the informer has it, so that the order is fixed.
	names := []string{"a", poison, "b"}
	for _, name := range names {
		if err := create(ctx, core, ns, "configmaps", configMap(ns, name)); err != nil {
			return nil, err
		}
		if err := await(ctx, awaitLong, "the informer to cache "+name, cached(inf, ns+"/"+name)); err != nil {
			return nil, err
		}
	}
	cm, ok, _ := inf.Indexer().GetByKey(ns + "/" + poison)
	if !ok {
		return nil, fmt.Errorf("%s vanished from the cache", poison)
	}
	changed := cm.DeepCopy()
	changed.Data = map[string]string{"k": "changed"}
	if err := updateConfigMap(ctx, core, changed); err != nil {
		return nil, err
	}
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "c")); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMaps a, %s, b (each after the informer has the one before), then PUT %s and POST c", poison, poison)
	lastCall := func(c *callRecorder[*corev1.ConfigMap]) func() bool {
		return c.has("c", func(h handlerCall) bool { return h.kind == "add" })
	}
	if err := await(ctx, awaitLong, "both handlers to get c", func() bool { return lastCall(fragile)() && lastCall(steady)() }); err != nil {
		return nil, err
	}

	events := rec.Events()
	panics := ofKind(events, trace.PanicRecovered, "")
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		return e.Stage == trace.Listener && e.Kind != trace.Buffered && e.Kind != trace.HandlerCalled && (e.Key == ns+"/"+poison || e.Key == ns+"/b")
	}))
	seq := func(c *callRecorder[*corev1.ConfigMap]) []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for _, h := range c.calls {
			out = append(out, h.kind+" "+h.name)
		}
		return out
	}
	fragileSeq, steadySeq := seq(fragile), seq(steady)
	r.See("fragile handled: %s", strings.Join(fragileSeq, ", "))
	r.See("steady handled:  %s", strings.Join(steadySeq, ", "))
	r.See("so fragile's first call about %s was an update of an object it never saw added: state it keeps per object must cope with that", poison)
	keys := inf.Indexer().ListKeys()
	slices.Sort(keys)
	r.See("the cache: %s; the informer stopped: %v", joinKeys(keys), inf.IsStopped())
	logged := logs.linesWith("panicked", "handler=fragile")
	for _, l := range logged {
		// The stack trace, the line's last attribute, is long: the lab shows where it
		// starts and checks that it is there.
		line, _, _ := strings.Cut(withoutTime(l), " stack=")
		r.See("log: %s stack=\"goroutine …\" (the stack trace from the panic down, cut here)", line)
	}

	want := []string{"add a", "add " + poison, "add b", "update " + poison, "add c"}
	r.Check("the panic was recovered and traced once, for fragile's add of "+poison, len(panics) == 1 && panics[0].Source == "fragile" &&
		panics[0].Key == ns+"/"+poison && panics[0].Type == "add" && panics[0].Reason == "cannot handle "+poison,
		"%d PanicRecovered: %s", len(panics), eventsText(panics))
	r.Check("fragile kept receiving: every later notification, the same object's update included", slices.Equal(fragileSeq, slices.Delete(slices.Clone(want), 1, 2)),
		"%s", strings.Join(fragileSeq, ", "))
	r.Check("steady received everything, in order", slices.Equal(steadySeq, want), "%s", strings.Join(steadySeq, ", "))
	r.Check("the cache has every object and the informer runs on", len(keys) == 4 && !inf.IsStopped(), "%d objects, stopped=%v", len(keys), inf.IsStopped())
	r.Check("the panic was logged with the object's key and the stack trace", len(logged) == 1 && strings.Contains(logged[0], ns+"/"+poison) &&
		strings.Contains(logged[0], ` stack="goroutine `), "%d log line(s)", len(logged))
	r.Answer = fmt.Sprintf("only that call is lost: the panic in fragile's add of %s was recovered and logged, fragile went on to handle %d more notifications "+
		"(%s's update included), steady handled all %d, and the cache holds all %d objects",
		poison, len(fragileSeq)-1, poison, len(steadySeq), len(keys))
	return r, nil
}

// eventsText is the events' sentences, separated by "; ".
func eventsText(events []trace.Event) string {
	var parts []string
	for _, e := range events {
		parts = append(parts, e.Source+": "+e.String())
	}
	return strings.Join(parts, "; ")
}

// handlerPanicRecorded: fragile's panic was recovered once, and it kept receiving.
func handlerPanicRecorded(r recorded) Check {
	panics := r.of(trace.PanicRecovered)
	after := recorded(r[r.index(func(e trace.Event) bool { return e.Kind == trace.PanicRecovered })+1:]).of(trace.HandlerCalled).from("fragile")
	return check("one panic recovered, in fragile's add of poison; fragile was called 3 more times after it",
		len(panics) == 1 && panics[0].Source == "fragile" && strings.HasSuffix(panics[0].Key, "/poison") && len(after) == 3,
		"%d panic(s); fragile's calls after: %d", len(panics), len(after))
}
