package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// crdMissing: an informer for a resource whose CRD is not installed fails its
// watch-list and the LIST it falls back to with 404; WaitForCacheSync says so at once, and the informer, still running, syncs
// at the first retry after the CRD is installed.
func crdMissing() Scenario {
	return Scenario{
		Name:     "crd-missing",
		Question: "The CRD is not installed yet: what does WaitForCacheSync say, and what happens once it is?",
		Why: "Without the CRD the API server has no such resource, so the reflector's watch-list fails with 404 Not Found, and so does the LIST it falls back to in the same cycle (client-go 1.37 does the same); our WaitForCacheSync returns at once with that error, because waiting cannot fix a missing resource by itself (client-go's would wait until its stop channel and only log the reason). " +
			"The informer does not stop: its reflector retries with backoff (800ms doubling, with jitter), and the first watch-list after the CRD is Established succeeds, so the cache syncs within one backoff interval without any restart.",
		Read: []string{
			"docs/faq.md #14 (WaitForCacheSync hangs forever) and docs/03-reflector.md (B1 backoff)",
			"informer/wait.go: WaitForCacheSync",
			"reflector/reflector.go: Reflector.Run (back off, then list again)",
		},
		Run:      runCRDMissing,
		Recorded: crdMissingRecorded,
	}
}

// barsCRD is the manifest of a small namespaced custom resource, Bar, in group.
func barsCRD(group string) []byte {
	return fmt.Appendf(nil, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bars.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: bars, singular: bar, kind: Bar, listKind: BarList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group)
}

// runCRDMissing starts an informer for a resource no CRD defines, then installs the
// CRD under the running informer.
func runCRDMissing(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	ns, err := lab.Namespace(ctx, "crd-missing")
	if err != nil {
		return nil, err
	}
	// Why a group named after the namespace: each run installs a CRD no run before it
	// installed, even on a long-lived $KUBECONFIG cluster.
	group := ns + ".lab.kubeinternals.io"
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "bars"}
	crdName := "bars." + group

	installed := false
	defer func() {
		// After the informer's shutdown (the defer below runs first), so that deleting
		// the CRD does not show up in its trace.
		if installed {
			deleteCRD(lab, crdName)
		}
	}()
	tracer, rec := lab.newRecorder()
	f, err := lab.Factory(tracer, informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := informer.For[*unstructured.Unstructured](f, informer.Resource{GVR: gvr, Namespace: ns})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	f.Start(ctx)
	errMissing := informer.WaitForCacheSync(ctx, inf)
	missingTook := time.Since(start)
	r.Do("start an informer for %s in %s (unstructured) — no such CRD is installed — and call WaitForCacheSync(informer)", gvr.GroupResource(), ns)

	installStart := time.Now()
	if _, err := crd.InstallCRD(ctx, lab.Direct, barsCRD(group), crd.Options{PollInterval: 20 * time.Millisecond}); err != nil {
		return nil, err
	}
	established := time.Now()
	installed = true
	r.Do("install CRD %s (crd.InstallCRD: server-side apply, then poll every 20ms until Established)", crdName)
	errRightAfter := informer.WaitForCacheSync(ctx, inf)
	r.Do("call WaitForCacheSync again at once, then create Bar bar-1 and wait (on informer.Synced, bounded) for the still-running informer to sync, and call WaitForCacheSync a third time")

	bars, _, err := kube.NewRESTClient(lab.Direct, gvr.GroupVersion(), nil)
	if err != nil {
		return nil, err
	}
	postStart := time.Now()
	bar := fmt.Appendf(nil, `{"apiVersion":%q,"kind":"Bar","metadata":{"name":"bar-1","namespace":%q},"spec":{"size":3}}`, gvr.GroupVersion().String(), ns)
	if err := bars.Post().Namespace(ns).Resource("bars").Body(bar).SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		return nil, fmt.Errorf("creating bar-1: %w", err)
	}
	barCreated := time.Now()
	select {
	case <-inf.Synced():
	case <-time.After(awaitLong):
		return nil, fmt.Errorf("the informer did not sync within %s of the CRD being Established", awaitLong)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	errSynced := informer.WaitForCacheSync(ctx, inf)
	if err := await(ctx, awaitLong, "bar-1 in the cache", cached(inf, ns+"/bar-1")); err != nil {
		return nil, err
	}

	events := trace.Filter(rec.Events(), func(e trace.Event) bool { return e.Stage == trace.Reflector })
	r.Timeline(firstN(events, 25))
	// Everything below is read from the trace alone, except where it is compared with
	// the moment InstallCRD returned. Why: the server establishes the CRD up to one poll
	// (20ms) before InstallCRD sees it, so a list may succeed a little before that moment.
	var listed, retryAfter, waitingIn trace.Event // the first successful list, the list request that led to it, the backoff before that
	for i, e := range events {
		if e.Kind == trace.Listed {
			listed = e
			for _, b := range slices.Backward(events[:i]) {
				if b.Kind == trace.ListStarted && retryAfter.Time.IsZero() {
					retryAfter = b
				}
				if b.Kind == trace.Backoff {
					waitingIn = b
					break
				}
			}
			break
		}
	}
	failedLists := count(events, func(e trace.Event) bool { return e.Kind == trace.Relist && e.Time.Before(retryAfter.Time) })
	backoffs := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Backoff && e.Time.Before(retryAfter.Time) })
	syncedAfter := listed.Time.Sub(established)
	due := waitingIn.Time.Add(waitingIn.Duration).Sub(established)

	r.See("WaitForCacheSync returned after %s: %v", missingTook.Round(time.Millisecond), errMissing)
	r.See("called again as soon as InstallCRD returned (the CRD Established): %s", errText(errRightAfter))
	r.See("failed cycles: %d; backoffs after them: %s", failedLists, durations(backoffs))
	r.See("the %s that succeeded came at the end of a %s backoff, %s after InstallCRD returned (the CRD Established); the cache synced %s after InstallCRD returned",
		retryAfter.Type, waitingIn.Duration.Round(time.Millisecond), retryAfter.Time.Sub(established).Round(time.Millisecond), syncedAfter.Round(time.Millisecond))

	for _, e := range events {
		if e.Kind == trace.WatchEvent && e.Key == ns+"/bar-1" {
			r.See("bar-1: its POST, sent %s after InstallCRD returned, took %s (kube-apiserver's first write of the new resource); the list that synced the cache came meanwhile, with %d items; "+
				"bar-1 arrived as a watch event as its POST returned (%+.1fms)",
				postStart.Sub(established).Round(100*time.Microsecond), barCreated.Sub(postStart).Round(time.Millisecond), listed.Items, float64(e.Time.Sub(barCreated))/float64(time.Millisecond))
		}
	}

	r.Check("WaitForCacheSync returned at once with the 404, not at its context's end",
		errors.Is(errMissing, informer.ErrNotSynced) && apierrors.IsNotFound(errMissing) && !errors.Is(errMissing, context.DeadlineExceeded) && missingTook < awaitLong,
		"after %s: 404 Not Found %v", missingTook.Round(time.Millisecond), apierrors.IsNotFound(errMissing))
	r.Check("the reflector kept trying, with backoff", failedLists >= 1 && len(backoffs) >= 1, "failed cycles: %d; backoffs: %s", failedLists, durations(backoffs))
	r.Check("the same informer listed and synced once the CRD was installed, no restart", !listed.Time.IsZero() && listed.Time.After(installStart) && inf.HasSynced(),
		"listed %d items %s after InstallCRD returned", listed.Items, syncedAfter.Round(time.Millisecond))
	r.Check("it waited out its backoff: the list that succeeded came when the backoff ended, not when the CRD appeared",
		!retryAfter.Time.IsZero() && !waitingIn.Time.IsZero() && !retryAfter.Time.Before(waitingIn.Time.Add(waitingIn.Duration)),
		"backoff due to end %s after InstallCRD returned, list at %s", due.Round(time.Millisecond), retryAfter.Time.Sub(established).Round(time.Millisecond))
	r.Check("WaitForCacheSync then returned nil, and bar-1 is in the cache", errSynced == nil, "%s", errText(errSynced))
	r.Answer = fmt.Sprintf("at once (%s) an error carrying the 404: %q; the informer keeps retrying with backoff and, without a restart, synced %s after InstallCRD saw the CRD Established (at the end of its %s backoff)",
		missingTook.Round(time.Millisecond), errText(errMissing), syncedAfter.Round(time.Millisecond), waitingIn.Duration.Round(time.Millisecond))
	return r, nil
}

// deleteCRD deletes the scenario's CRD, best effort, with a context of its own: the
// scenario's may have ended.
func deleteCRD(lab *Lab, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, _, err := kube.NewRESTClient(lab.Direct, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, nil)
	if err != nil {
		return
	}
	_ = ext.Delete().Resource("customresourcedefinitions").Name(name).Do(ctx).Error()
}

// durations lists the events' Durations: "1.2s, 2.9s".
func durations(events []trace.Event) string {
	var s []string
	for _, e := range events {
		s = append(s, e.Duration.Round(time.Millisecond).String())
	}
	return joinKeys(s)
}

// crdMissingRecorded: the lists failed and the reflector backed off; then the same
// informer listed, once, without a restart.
func crdMissingRecorded(r recorded) Check {
	listed := r.index(func(e trace.Event) bool { return e.Kind == trace.Listed })
	if listed < 0 {
		return check("the informer listed once the CRD was installed", false, "no list succeeded")
	}
	failed := recorded(r[:listed]).where(func(e trace.Event) bool { return e.Kind == trace.Relist || e.Kind == trace.Backoff })
	return check("first a failed list and a backoff; then the same informer listed, once, without a restart",
		len(failed) >= 2 && len(r.of(trace.Listed)) == 1, "%d relist/backoff before the list; %d list(s) succeeded", len(failed), len(r.of(trace.Listed)))
}
