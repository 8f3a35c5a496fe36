package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
)

// The outage measurement: how long after a long kube-apiserver outage does each
// library's informer hold a change made once the apiserver is back? It is a
// measurement, like a benchmark, not a test of timing: it fails only when a cache
// never gets the change or the control plane breaks. bench/README.md ("After a long
// outage") has the figures and how to run it (`make outage`).
//
// Environment (without KUBEINTERNALS_OUTAGE the test skips at once):
//
//	KUBEINTERNALS_OUTAGE            how long the apiserver stays down, a Go duration (5m)
//	KUBEINTERNALS_OUTAGE_RUNS       outages, one after another on one control plane (default 3)
//	KUBEINTERNALS_OUTAGE_INFORMERS  informers of each library behind every outage (default 8)
//	KUBEINTERNALS_OUTAGE_FAULT      restart (default): kube-apiserver is stopped, then
//	                                started again on the same etcd; refuse: a proxy in
//	                                front of it refuses connections, the apiserver and its
//	                                watch cache stay up
const (
	outageEnv          = "KUBEINTERNALS_OUTAGE"
	outageRunsEnv      = "KUBEINTERNALS_OUTAGE_RUNS"
	outageInformersEnv = "KUBEINTERNALS_OUTAGE_INFORMERS"
	outageFaultEnv     = "KUBEINTERNALS_OUTAGE_FAULT"
	outageNamespace    = "outage"
	// outageSettle is how long the synced informers watch before the outage begins.
	outageSettle = 5 * time.Second
)

// outageSpec is one invocation's settings, read from the environment.
type outageSpec struct {
	down      time.Duration // from the fault to the start of the recovery
	runs      int
	informers int  // per library
	refuse    bool // the proxy refuses, instead of a stopped apiserver
}

func (s outageSpec) fault() string {
	if s.refuse {
		return "refuse"
	}
	return "restart"
}

// outageSpecFromEnv reads the settings, skipping the test when KUBEINTERNALS_OUTAGE
// is unset.
func outageSpecFromEnv(t *testing.T) outageSpec {
	t.Helper()
	v := os.Getenv(outageEnv)
	if v == "" {
		t.Skipf("skipping: a measurement of several minutes; set %s=5m (the outage length) to run it, or `make outage`", outageEnv)
	}
	down, err := time.ParseDuration(v)
	if err != nil || down <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration such as 5m", outageEnv, v)
	}
	spec := outageSpec{down: down, runs: 3, informers: 8}
	for _, n := range []struct {
		env string
		to  *int
	}{{outageRunsEnv, &spec.runs}, {outageInformersEnv, &spec.informers}} {
		if v := os.Getenv(n.env); v != "" {
			if *n.to, err = strconv.Atoi(v); err != nil || *n.to < 1 {
				t.Fatalf("%s=%q: want a positive integer", n.env, v)
			}
		}
	}
	switch f := os.Getenv(outageFaultEnv); f {
	case "", "restart":
	case "refuse":
		spec.refuse = true
	default:
		t.Fatalf("%s=%q: want restart or refuse", outageFaultEnv, f)
	}
	return spec
}

// TestOutageRecovery puts informers of both libraries, at their defaults, behind the
// same apiserver outage: our informer.Factory (zero options but the Scheme a typed
// informer needs) and client-go's informers.NewSharedInformerFactory, each watching
// the ConfigMaps of one namespace, several of each, every informer with its own
// factory and so its own reflector and backoff. The outage lasts
// KUBEINTERNALS_OUTAGE; when the apiserver is back (ready, with the restart fault), one
// ConfigMap is created, and each informer's time from "back" until its cache holds
// that ConfigMap is its figure.
//
// Fair: both libraries face the same outage in the same run, with the same rest.Config
// and the same namespace; every informer is fresh at the start of each run, so each
// reflector's backoff starts from scratch: the informers sync, watch for 5 s, and the
// outage begins. Each
// informer's requests are recorded by a wrapper of its transport (rest.Config's
// WrapTransport, alike on both sides), to show what each did and when.
func TestOutageRecovery(t *testing.T) {
	spec := outageSpecFromEnv(t)
	env := testenv.Start(t, testenv.Options{})
	ctx := t.Context()
	direct, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = direct.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: outageNamespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := env.Config
	var proxy *testenv.Proxy
	if spec.refuse {
		if proxy, err = testenv.StartProxy(env.Config.Host); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		cfg = proxy.Config(env.Config)
	}
	var ours, clientGo []float64
	for run := 1; run <= spec.runs; run++ {
		r := outageRun(t, spec, run, env, proxy, cfg, direct)
		ours, clientGo = append(ours, r.seconds("ours")...), append(clientGo, r.seconds("client-go")...)
	}
	t.Logf("all %d runs (%s, %s down, %d informers a library a run): seconds from the apiserver back until the cache held the change",
		spec.runs, spec.fault(), spec.down, spec.informers)
	t.Logf("  %-9s %s", "ours", summary(ours))
	t.Logf("  %-9s %s", "client-go", summary(clientGo))
}

// outageResult is one run's informers, each with its figure and its requests.
type outageResult struct {
	informers []*outageInformer
}

func (r outageResult) seconds(impl string) []float64 {
	var s []float64
	for _, inf := range r.informers {
		if inf.impl == impl {
			s = append(s, inf.current.Seconds())
		}
	}
	return s
}

// outageInformer is one informer behind the outage.
type outageInformer struct {
	impl     string // "ours" or "client-go"
	n        int
	has      func(key string) bool // its cache holds key
	shutdown func()
	requests *requestLog
	current  time.Duration // from back until has(marker); set once
}

// outageRun runs one outage: fresh informers synced, the fault for spec.down, the
// recovery, one new ConfigMap, and the time until each cache holds it.
func outageRun(t *testing.T, spec outageSpec, run int, env *testenv.Env, proxy *testenv.Proxy, cfg *rest.Config, direct kubernetes.Interface) outageResult {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var res outageResult
	for i := range spec.informers {
		for _, impl := range []string{"ours", "client-go"} {
			inf, err := startOutageInformer(ctx, cfg, impl, i+1)
			if err != nil {
				t.Fatal(err)
			}
			res.informers = append(res.informers, inf)
		}
	}
	defer func() {
		cancel()
		for _, inf := range res.informers {
			inf.shutdown()
		}
	}()
	// Every informer has synced.
	syncCtx, syncCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer syncCancel()
	for _, inf := range res.informers {
		for !inf.has("") {
			select {
			case <-syncCtx.Done():
				t.Fatalf("run %d: %s #%d did not sync within 2 minutes", run, inf.impl, inf.n)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}

	// Why wait: a watch that ends within a second of starting with no events is a
	// "very short watch", which both libraries answer with a relist instead of a
	// re-watch. A running controller's watch has been open far longer; so must these.
	time.Sleep(outageSettle)

	down := time.Now()
	if proxy != nil {
		proxy.Refuse()
	} else if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(down.Add(spec.down)))
	recovering := time.Now()
	if proxy != nil {
		if err := proxy.Accept(); err != nil {
			t.Fatal(err)
		}
	} else {
		readyCtx, readyCancel := context.WithTimeout(ctx, 3*time.Minute)
		err := env.StartAPIServer(readyCtx)
		readyCancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	back := time.Now()

	marker := fmt.Sprintf("marker-%d", run)
	_, err := direct.CoreV1().ConfigMaps(outageNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: marker}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("run %d: creating the marker: %v", run, err)
	}
	key := outageNamespace + "/" + marker
	deadline := time.Now().Add(5 * time.Minute)
	for left := len(res.informers); left > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("run %d: %d caches still lack %s 5 minutes after the apiserver was back", run, left, key)
		}
		time.Sleep(10 * time.Millisecond)
		for _, inf := range res.informers {
			if inf.current == 0 && inf.has(key) {
				inf.current = max(time.Since(back), time.Nanosecond)
				left--
			}
		}
	}

	t.Logf("run %d/%d: %s, down %s, back (ready) %.1f s after the recovery began; seconds from back until the cache held %s:",
		run, spec.runs, spec.fault(), spec.down, back.Sub(recovering).Seconds(), key)
	t.Logf("  %-9s %s", "ours", summary(res.seconds("ours")))
	t.Logf("  %-9s %s", "client-go", summary(res.seconds("client-go")))
	for _, inf := range res.informers {
		t.Logf("    %s #%d: %.1f s; %s", inf.impl, inf.n, inf.current.Seconds(), inf.requests.story(down, back))
	}
	return res
}

// startOutageInformer starts one informer of impl at its library's defaults, on a
// config of its own whose transport records its requests. Its has("") reports
// whether it has synced.
func startOutageInformer(ctx context.Context, cfg *rest.Config, impl string, n int) (*outageInformer, error) {
	log := &requestLog{}
	c := rest.CopyConfig(cfg)
	c.WrapTransport = log.wrap
	inf := &outageInformer{impl: impl, n: n, requests: log}
	switch impl {
	case "ours":
		scheme, err := listwatch.NewScheme(corev1.AddToScheme)
		if err != nil {
			return nil, err
		}
		f := informer.NewFactory(c, informer.FactoryOptions{Scheme: scheme})
		cms, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: outageNamespace})
		if err != nil {
			return nil, err
		}
		f.Start(ctx)
		inf.shutdown = f.Shutdown
		inf.has = func(key string) bool {
			if key == "" {
				return cms.HasSynced()
			}
			_, ok, _ := cms.Indexer().GetByKey(key)
			return ok
		}
	case "client-go":
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			return nil, err
		}
		f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0, clientgoinformers.WithNamespace(outageNamespace))
		cms := f.Core().V1().ConfigMaps().Informer()
		f.Start(ctx.Done())
		inf.shutdown = f.Shutdown
		inf.has = func(key string) bool {
			if key == "" {
				return cms.HasSynced()
			}
			_, ok, _ := cms.GetStore().GetByKey(key)
			return ok
		}
	}
	return inf, nil
}

// requestLog records every request one informer sends: when, what, and how it ended.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest // guarded by mu
}

type loggedRequest struct {
	at     time.Time
	kind   string // "watch-list", "watch" or "list"
	result string // an HTTP status code, "refused", or another error
}

// wrap is a rest.Config WrapTransport.
func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		at := time.Now()
		resp, err := rt.RoundTrip(req)
		q := req.URL.Query()
		kind := "list"
		if w := q.Get("watch"); w == "true" || w == "1" {
			kind = "watch"
			if q.Get("sendInitialEvents") == "true" {
				kind = "watch-list"
			}
		}
		var result string
		switch {
		case err == nil:
			result = strconv.Itoa(resp.StatusCode)
		case utilnet.IsConnectionRefused(err):
			result = "refused"
		default:
			result = err.Error()
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, loggedRequest{at: at, kind: kind, result: result})
		l.mu.Unlock()
		return resp, err
	})
}

// story tells one informer's outage: how many requests were refused while it was
// down and the gaps between them (its backoff delays, in seconds), then every request
// from the last refused one on, with its time from back.
func (l *requestLog) story(down, back time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gaps []string
	var last time.Time
	refused := 0
	firstAfter := len(l.reqs)
	for i, r := range l.reqs {
		if r.at.Before(down) {
			continue
		}
		if r.result != "refused" {
			firstAfter = i
			break
		}
		if !last.IsZero() {
			gaps = append(gaps, fmt.Sprintf("%.1f", r.at.Sub(last).Seconds()))
		}
		last = r.at
		refused++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d refused while down, the gaps between them %s", refused, strings.Join(gaps, " "))
	if !last.IsZero() {
		fmt.Fprintf(&b, "; last refused %+.1f s", last.Sub(back).Seconds())
	}
	b.WriteString("; then")
	for _, r := range l.reqs[firstAfter:] {
		fmt.Fprintf(&b, " %+.1f s %s %s,", r.at.Sub(back).Seconds(), r.kind, r.result)
	}
	return strings.TrimSuffix(b.String(), ",")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// summary is the figures, sorted, with their count, median and mean.
func summary(s []float64) string {
	s = slices.Sorted(slices.Values(s))
	if len(s) == 0 {
		return "none"
	}
	var b strings.Builder
	sum := 0.0
	for _, v := range s {
		fmt.Fprintf(&b, "%.1f ", v)
		sum += v
	}
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("n=%d median %.1f mean %.1f: %s", len(s), median, sum/float64(len(s)), strings.TrimSpace(b.String()))
}
