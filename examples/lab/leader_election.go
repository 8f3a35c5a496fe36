package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/trace"
)

// The lab's election timings: client-go's proportions (15s/10s/2s), five times
// shorter so the scenario takes seconds.
const (
	labLeaseDuration = 3 * time.Second
	labRenewDeadline = 2 * time.Second
	labRetryPeriod   = 500 * time.Millisecond
)

// leaderElection: two (then three) foo-controller processes with -leader-elect; the
// leader is killed, then the next one paused while the Foo changes.
func leaderElection() Scenario {
	return Scenario{
		Name:     "leader-election",
		Question: "Two replicas with leader election: who works, and what happens when the leader dies or pauses?",
		Why: "Only the Lease's holder runs workers; the other replica syncs its cache and queues keys, and waits. A killed leader releases nothing, so the standby takes over once the lease has expired on its own clock: LeaseDuration after it last saw the Lease change, plus up to one retry. " +
			"A paused leader is the case contexts cannot close: when it wakes, its own deadline (LeaseDuration less 10% after it sent its last successful renewal, transition R6) passed long ago, so the timer fires at once and its work's context ends (or its first renewal reads the new leader's Lease first: R5) — but a worker that was in the middle of a sync when the process stopped runs on until it next looks at its context, and for that moment two replicas work. " +
			"The resourceVersion on each update stops the stale replica from writing over a Deployment version it has not seen (409 Conflict), but not from acting on a Foo its cache has not caught up with. " +
			"What closes the window is the write gate: foo-controller sends every write through its elector's gate, which lets a write out only while the term holds and checks the leader's own deadline on each request — so the woken replica's writes fail with ErrWriteGateClosed before they leave the process, even before its R6 timer has run.",
		Read: []string{
			"docs/08-leader-election.md (the timelines, the bounds, the paused leader)",
			"leaderelection/attempt.go: Elector.tryAcquireOrRenew (A2, A3: expiry on the candidate's own clock); leaderelection/leadership.go: Elector.lead (R6: the leader's own deadline)",
			"leaderelection/writegate.go: Elector.WriteGate (writes only while the term holds; the deadline checked per request)",
			"examples/foo-controller/controller/controller.go: Controller.lead (workers only while leading, stopped at once on a lost lease), New (the write clients built from Elector.Gated)",
		},
		Run:      runLeaderElection,
		Recorded: leaderElectionRecorded,
	}
}

// recordingOf is where the replica named name writes its recording (-record).
func recordingOf(dir, name string) string { return filepath.Join(dir, name+".jsonl") }

// runLeaderElection runs the experiment.
func runLeaderElection(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	apps, foos, ns, err := beginFoos(ctx, lab, "leader-election")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lab-leader-election-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	binary, err := buildFooController(ctx, dir)
	if err != nil {
		return nil, err
	}
	args := []string{
		"-log-format=json", "-resync=0", "-metrics-bind-address=127.0.0.1:0",
		"-leader-elect", "-leader-elect-resource-namespace=" + ns,
		"-leader-elect-lease-duration=" + labLeaseDuration.String(),
		"-leader-elect-renew-deadline=" + labRenewDeadline.String(),
		"-leader-elect-retry-period=" + labRetryPeriod.String(),
	}
	var replicas []*replica
	defer func() {
		for _, p := range replicas {
			_ = p.stop(5 * time.Second)
		}
		// Why after the stops: a process writes the end of its recording as it exits.
		for _, p := range replicas {
			lab.addRecording(p.name, recordingOf(dir, p.name))
		}
	}()
	start := func(name string) (*replica, error) {
		args := args
		if lab.recording != nil {
			args = append(slices.Clone(args), "-record="+recordingOf(dir, name))
		}
		p, err := startReplica(name, binary, lab.Kubeconfig(), args...)
		if err == nil {
			replicas = append(replicas, p)
		}
		return p, err
	}
	t0 := time.Now()
	r.Do("build examples/foo-controller and run it as process A with -leader-elect, lease %v, renew deadline %v, retry %v (client-go's 15s/10s/2s, five times shorter), the Lease in %s; once A works, start B the same way",
		labLeaseDuration, labRenewDeadline, labRetryPeriod, ns)

	a, err := start("A")
	if err != nil {
		return nil, err
	}
	if _, err := a.awaitLog(ctx, awaitLong, t0, "starting workers", nil); err != nil {
		return nil, err
	}
	b, err := start("B")
	if err != nil {
		return nil, err
	}
	if _, err := standingBy(ctx, b, t0); err != nil {
		return nil, err
	}

	// Who works: a Foo, and each process's count of processed keys.
	const name = "ha"
	if _, err := foos.Foos(ns).Create(ctx, &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To[int32](1)},
	}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	r.Do("POST Foo %s/%s (replicas 1); wait for its Deployment; read each process's /metrics", ns, name)
	if err := await(ctx, awaitLong, "the Deployment", func() bool { return deploymentReplicas(ctx, apps, ns, name) == 1 }); err != nil {
		return nil, err
	}
	aWork, aAdds, err := queueCounts(ctx, a)
	if err != nil {
		return nil, err
	}
	bWork, bAdds, err := queueCounts(ctx, b)
	if err != nil {
		return nil, err
	}
	r.See("A (leader): %v keys queued, %v processed; B (standby): %v keys queued, %v processed", aAdds, aWork, bAdds, bWork)
	r.Check("only the leader's workers ran; the standby's handlers queued the Foo too (a warm cache and queue)",
		aWork > 0 && bWork == 0 && bAdds > 0, "A processed %v, B processed %v with %v queued", aWork, bWork, bAdds)

	// A crash.
	killedAt := a.kill()
	r.Fault("SIGKILL A (a crash: no release)")
	bLeads, err := b.awaitLog(ctx, awaitLong, killedAt, "starting workers", nil)
	if err != nil {
		return nil, err
	}
	crash := bLeads.Time.Sub(killedAt)
	lo, hi := labLeaseDuration-labRetryPeriod, labLeaseDuration+2*maxRetryWait(labRetryPeriod)
	r.See("B started its workers %v after A was killed", crash.Round(time.Millisecond))
	r.Check("the standby took over only once the lease could have expired, and within one more retry",
		crash >= lo && crash <= hi+time.Second, "%v, bounds %v–%v (+1s for a loaded machine)", crash.Round(time.Millisecond), lo, hi)

	// A pause.
	c, err := start("C")
	if err != nil {
		return nil, err
	}
	r.Fault("start C (what the kubelet does for A's pod); once it stands by, SIGSTOP B, the leader (a frozen process: it keeps its lease in memory, and its timers do not run)")
	if _, err := standingBy(ctx, c, killedAt); err != nil {
		return nil, err
	}
	pausedAt, err := b.signal(syscall.SIGSTOP)
	if err != nil {
		return nil, err
	}
	cLeads, err := c.awaitLog(ctx, awaitLong, pausedAt, "starting workers", nil)
	if err != nil {
		return nil, err
	}
	r.See("C started its workers %v after B was paused", cLeads.Time.Sub(pausedAt).Round(time.Millisecond))

	if err := setFooReplicas(ctx, foos, ns, name, 2); err != nil {
		return nil, err
	}
	r.Do("while B is paused: PUT the Foo with replicas 2; wait until C scaled the Deployment; then SIGCONT B")
	if err := await(ctx, awaitLong, "C to scale the Deployment", func() bool { return deploymentReplicas(ctx, apps, ns, name) == 2 }); err != nil {
		return nil, err
	}
	scaled, err := deployment(ctx, apps, ns, name)
	if err != nil {
		return nil, err
	}
	resumedAt, err := b.signal(syscall.SIGCONT)
	if err != nil {
		return nil, err
	}
	bLost, err := b.awaitLog(ctx, awaitLong, resumedAt, "lost the lease", nil)
	if err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "B to exit", b.exited); err != nil {
		return nil, err
	}
	exited := time.Now() // every line B logged is before this
	window := bLost.Time.Sub(resumedAt)
	bWrites := b.linesBetween(resumedAt, exited, "scaling deployment", "sync conflicted", "sync failed", "sync's write refused")
	refused := b.linesBetween(resumedAt, exited, "sync's write refused")
	failed := b.linesBetween(resumedAt, exited, "sync failed", "sync conflicted")
	r.See("B woke at +%v and believed it led until +%v (%v), while C had led since +%v; B then exited with status %d",
		resumedAt.Sub(t0).Round(time.Millisecond), bLost.Time.Sub(t0).Round(time.Millisecond), window.Round(time.Millisecond),
		cLeads.Time.Sub(t0).Round(time.Millisecond), b.exitCode())
	if len(bWrites) == 0 {
		r.See("B's workers, in that window: nothing to do (its cache already had C's scale when its sync ran)")
	}
	for _, l := range bWrites {
		r.See("B's worker, in that window: %s", l)
	}

	// B has exited: any write of B's that landed after C's scale has bumped the
	// Deployment's generation by now (a spec change always does; C writes again only
	// to repair one).
	after, err := deployment(ctx, apps, ns, name)
	if err != nil {
		return nil, err
	}
	staleWrites := after.Generation - scaled.Generation
	r.See("the Deployment: generation %d at C's scale, %d after B exited; replicas %d", scaled.Generation, after.Generation, ptr.Deref(after.Spec.Replicas, 0))
	r.Check("C was already working when B woke still believing it led (its last observation named it)",
		cLeads.Time.Before(resumedAt) && window >= 0, "B gave up %v after waking", window.Round(time.Millisecond))
	lostBy := fmt.Sprint(bLost.Attrs["transition"])
	r.Check("the paused leader gave up on waking, by its own deadline (R6) or at its first read of C's lease (R5), not a renewal round later, and exited 1",
		window < labRetryPeriod && (lostBy == "R6" || lostBy == "R5") && b.exitCode() == 1,
		"%v after SIGCONT by %s (a failing renewal round would take %v), exit status %d", window.Round(time.Millisecond), lostBy, labRenewDeadline, b.exitCode())
	r.Check("no write from the paused replica landed after the takeover",
		staleWrites == 0 && ptr.Deref(after.Spec.Replicas, 0) == 2,
		"spec writes after C's scale: %d; B's syncs after waking: %d refused by the write gate, %d failed otherwise (the work's context ended first)", staleWrites, len(refused), len(failed))

	stoppedAt := time.Now()
	if err := c.stop(10 * time.Second); err != nil {
		return nil, err
	}
	released, ok := c.first(stoppedAt, "released the lease", nil)
	r.Do("SIGTERM C")
	r.Check("a graceful stop releases the Lease after the workers stopped", ok, "C logged %q", released.Msg)

	r.See("the processes' election log lines (offsets from the start):")
	for _, l := range electionTimeline(t0, replicas) {
		r.See("  %s", l)
	}
	how := "had nothing stale to write"
	if len(bWrites) > 0 {
		how = "tried: " + strings.Join(bWrites, "; ")
	}
	r.Answer = fmt.Sprintf("one replica works at a time: the standby took over %v after a SIGKILL (lease %v); a paused leader woke believing it led and kept its workers for %v beside the new leader (it %s); "+
		"%d of its writes landed after the takeover (%d refused by the write gate, %d stopped by the work's context): whichever comes first, the gate checks the leader's own deadline before any write leaves",
		crash.Round(100*time.Millisecond), labLeaseDuration, window.Round(100*time.Millisecond), how, staleWrites, len(refused), len(failed))
	return r, nil
}

// standingBy waits until p has synced its caches and seen another replica lead.
func standingBy(ctx context.Context, p *replica, since time.Time) (logLine, error) {
	if _, err := p.awaitLog(ctx, awaitLong, since, "caches synced; competing for the lease", nil); err != nil {
		return logLine{}, err
	}
	return p.awaitLog(ctx, awaitLong, since, "leader", map[string]string{"this replica": "false"})
}

// maxRetryWait is the longest pause between two tries to acquire.
func maxRetryWait(retry time.Duration) time.Duration {
	return retry + time.Duration(leaderelection.JitterFactor*float64(retry))
}

// linesBetween are p's log messages (with their foo attribute) starting with one of
// msgs, logged in [from, to].
func (r *replica) linesBetween(from, to time.Time, msgs ...string) []string {
	var out []string
	for _, l := range r.log() {
		if l.Time.Before(from) || l.Time.After(to) {
			continue
		}
		for _, m := range msgs {
			if strings.HasPrefix(l.Msg, m) {
				s := l.Msg
				if foo, ok := l.Attrs["foo"]; ok {
					s += fmt.Sprintf(" (%v)", foo)
				}
				if e, ok := l.Attrs["err"]; ok {
					s += ": " + shortReason(fmt.Sprint(e))
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// electionTimeline lists the replicas' leader-election and worker log lines in time
// order.
func electionTimeline(t0 time.Time, replicas []*replica) []string {
	type entry struct {
		at   time.Time
		line string
	}
	var all []entry
	for _, p := range replicas {
		for _, l := range p.log() {
			switch {
			case strings.HasPrefix(l.Msg, "acquired the lease"), strings.HasPrefix(l.Msg, "lost the lease"),
				strings.HasPrefix(l.Msg, "released the lease"), strings.HasPrefix(l.Msg, "starting workers"),
				strings.HasPrefix(l.Msg, "leadership lost"), strings.HasPrefix(l.Msg, "new leader observed"):
				line := l.Msg
				if tr, ok := l.Attrs["transition"]; ok {
					line += fmt.Sprintf(" (%v)", tr)
				}
				if h, ok := l.Attrs["holder"]; ok {
					line += fmt.Sprintf(": %v", replicaOf(fmt.Sprint(h), replicas))
				}
				all = append(all, entry{l.Time, fmt.Sprintf("%+8.3fs %s %s", l.Time.Sub(t0).Seconds(), p.name, line)})
			}
		}
	}
	slices.SortStableFunc(all, func(x, y entry) int { return x.at.Compare(y.at) })
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.line
	}
	return out
}

// replicaOf names the replica whose identity is id, or returns id.
func replicaOf(id string, replicas []*replica) string {
	for _, p := range replicas {
		if l, ok := p.first(time.Time{}, "trying to acquire the lease", map[string]string{"identity": id}); ok && l.Msg != "" {
			return p.name
		}
	}
	return id
}

// queueCounts scrapes p's /metrics for its workqueue's processed and added keys.
func queueCounts(ctx context.Context, p *replica) (processed, added float64, err error) {
	l, err := p.awaitLog(ctx, awaitLong, time.Time{}, "serving metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	series, err := scrapeMetrics(ctx, fmt.Sprint(l.Attrs["addr"]))
	if err != nil {
		return 0, 0, err
	}
	return series[`workqueue_work_duration_seconds_count{name="foos"}`], series[`workqueue_adds_total{name="foos"}`], nil
}

// deployment reads the Deployment ns/name.
func deployment(ctx context.Context, apps rest.Interface, ns, name string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	return d, apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(d)
}

// deploymentReplicas is the Deployment's spec.replicas, or -1 if it cannot be read.
func deploymentReplicas(ctx context.Context, apps rest.Interface, ns, name string) int32 {
	d, err := deployment(ctx, apps, ns, name)
	if err != nil {
		return -1
	}
	return ptr.Deref(d.Spec.Replicas, -1)
}

// setFooReplicas sets the Foo's spec.replicas, reading it again after a conflict (the
// controller writes its status).
func setFooReplicas(ctx context.Context, foos *fooclient.Client, ns, name string, replicas int32) error {
	var last error
	err := await(ctx, awaitLong, "the Foo's update", func() bool {
		foo, err := foos.Foos(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			foo.Spec.Replicas = ptr.To(replicas)
			_, err = foos.Foos(ns).Update(ctx, foo, metav1.UpdateOptions{})
		}
		last = err
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return nil
}

// leaderElectionRecorded: A, then B, then C acquired the lease, and B lost it.
func leaderElectionRecorded(r recorded) Check {
	var holders []string
	for _, e := range r.of(trace.LeaseAcquired) {
		holders = append(holders, strings.SplitN(e.Source, "/", 2)[0])
	}
	lost := r.of(trace.LeaseLost)
	return check("the lease went to A, then B (after A's SIGKILL), then C (while B was paused); B woke and lost it",
		strings.Join(holders, " ") == "A B C" && len(lost) == 1 && strings.HasPrefix(lost[0].Source, "B/"),
		"acquired by %s; lost by %d", strings.Join(holders, ", "), len(lost))
}
