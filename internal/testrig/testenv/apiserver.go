package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/shard"
)

// Profile says which programs a control plane runs.
type Profile int

const (
	// APIServer runs etcd and kube-apiserver: enough for list, watch, CRDs and writes.
	APIServer Profile = iota
	// Cluster adds kube-controller-manager (Deployments get ReplicaSets, garbage
	// collection works), kube-scheduler and kwok with one fake node on which pods
	// become Running without containers.
	Cluster
)

// Options configures a control plane. The zero value is an APIServer profile on free
// loopback ports in a fresh temporary directory.
type Options struct {
	Profile Profile
	// APIServerFlags are extra kube-apiserver flags, e.g. "--watch-cache=false".
	APIServerFlags []string
	// APIServerPort and EtcdPort fix the ports (0 = a free port). `make cluster` fixes
	// them so that a second cluster fails clearly instead of starting beside the first.
	APIServerPort, EtcdPort int
	// Dir holds data, logs and the kubeconfig. Empty: a temporary directory that Stop
	// removes. A Dir given here is kept.
	Dir string
	// Detached starts processes in their own session so that they outlive this
	// process (`make cluster`); they are stopped later by pid (see Processes and
	// StopProcess).
	Detached bool
	// ReadyTimeout bounds the wait for /readyz (default 90s).
	ReadyTimeout time.Duration
	// WithoutSharding starts kube-apiserver without its feature gate
	// ShardedListAndWatch, which it otherwise turns on (ShardingGateFlag): with the
	// gate off the apiserver ignores ListOptions.ShardSelector without a word, the
	// case a sharded informer filters on the client.
	WithoutSharding bool
}

// ShardingGateFlag is the kube-apiserver flag that turns on sharded LIST and WATCH
// (alpha in 1.36, off by default); every control plane here passes it unless
// Options.WithoutSharding. docs/local-cluster.md shows the same gate for kind.
const ShardingGateFlag = "--feature-gates=" + shard.FeatureGate + "=true"

// Env is a running control plane.
type Env struct {
	// Config has admin credentials for the kube-apiserver on loopback.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Dir holds the data directories and a log file per program.
	Dir string

	opts         Options
	binDir       string
	ownDir       bool
	creds        credentials
	etcdPort     int
	etcdPeerPort int
	apiPort      int
	etcd         *process
	apiserver    *process
	others       []*process // controller manager, scheduler, kwok (Cluster profile)

	secondMu      sync.Mutex         // guards seconds and secondStarted
	seconds       []*SecondAPIServer // started by StartSecondAPIServer, not yet stopped; guarded by secondMu
	secondStarted int                // how many StartSecondAPIServer began; guarded by secondMu
}

// launchAttempts bounds how often Launch starts over after losing a free port.
const launchAttempts = 3

// Launch starts a control plane and waits until it is ready. On error everything it
// started is stopped again. Tests use Start, which also registers Stop.
//
// Why it may start over: a free port is found by listening on port 0 and closing the
// listener, and etcd or kube-apiserver binds it a moment later. Test packages run in
// parallel, each starting control planes, so another process can take the port in
// between ("bind: address already in use"). With ports it chose itself, Launch then
// starts over on new ports; with ports the caller fixed, that error is the answer.
func Launch(ctx context.Context, opts Options) (*Env, error) {
	for attempt := 1; ; attempt++ {
		e, err := launchOnce(ctx, opts)
		if err == nil || attempt == launchAttempts || !lostFreePort(opts, err) {
			return e, err
		}
	}
}

// lostFreePort reports whether err is a port taken between our check and the
// program's bind, on ports Launch chose itself.
func lostFreePort(opts Options, err error) bool {
	return opts.EtcdPort == 0 && opts.APIServerPort == 0 &&
		strings.Contains(err.Error(), "address already in use")
}

func launchOnce(ctx context.Context, opts Options) (_ *Env, err error) {
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	e := &Env{opts: opts, binDir: binDir, Dir: opts.Dir}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "kubeinternals-testenv-"); err != nil {
			return nil, err
		}
		e.ownDir = true
	} else if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	if e.creds, err = writeCredentials(e.Dir); err != nil {
		return nil, fmt.Errorf("writing credentials: %w", err)
	}
	if e.etcdPort, err = portOrFree(opts.EtcdPort, "etcd"); err != nil {
		return nil, err
	}
	if e.etcdPeerPort, err = portOrFree(0, "etcd peer"); err != nil {
		return nil, err
	}
	if e.apiPort, err = portOrFree(opts.APIServerPort, "kube-apiserver"); err != nil {
		return nil, err
	}
	e.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(e.apiPort),
		BearerToken:     e.creds.tokens[admin.user],
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, // kube-apiserver's self-signed serving cert
		QPS:             -1,                                   // no client-side throttling against a local server
	}
	if e.Kubeconfig, err = writeKubeconfig(e.Dir, e.Config.Host, admin, e.Config.BearerToken); err != nil {
		return nil, err
	}
	if err := e.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := e.startAPIServer(ctx); err != nil {
		return nil, err
	}
	if err := e.bindClusterAdmins(ctx); err != nil {
		return nil, err
	}
	if opts.Profile == Cluster {
		if err := e.startClusterComponents(ctx); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) etcdURL() string { return "http://127.0.0.1:" + strconv.Itoa(e.etcdPort) }

func (e *Env) startEtcd(ctx context.Context) error {
	peer := "http://127.0.0.1:" + strconv.Itoa(e.etcdPeerPort)
	p, err := startProcess("etcd", e.Dir, filepath.Join(e.binDir, "etcd"), []string{
		"--data-dir=" + filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls=" + e.etcdURL(),
		"--advertise-client-urls=" + e.etcdURL(),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync", // test data: durability is not needed, speed is
		"--log-level=warn",
	}, e.opts.Detached)
	if err != nil {
		return err
	}
	e.etcd = p
	return waitFor(ctx, 30*time.Second, p, func(c *http.Client) bool {
		resp, err := c.Get(e.etcdURL() + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// apiServerArgs are kubeadm's kube-apiserver flags (what kind runs), less what needs a
// certificate authority, a kubelet or an aggregated API server, plus what loopback and
// our credentials need. docs/local-cluster.md lists them against kind's, with the
// reason for each difference.
//
// kubeadm: cmd/kubeadm/app/phases/controlplane/manifests.go getAPIServerCommand
func (e *Env) apiServerArgs() []string { return e.apiServerArgsFor(e.apiPort, e.etcdURL()) }

// apiServerArgsFor are apiServerArgs for an apiserver on port that reaches etcd at
// etcdURL: the first one's, or a second one's (StartSecondAPIServer).
func (e *Env) apiServerArgsFor(port int, etcdURL string) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// Why none: kube-apiserver 1.37 refuses a loopback advertise address with an
		// endpoint reconciler (its "kubernetes" Service's endpoints must be routable),
		// and no process here reaches the apiserver through that Service: the pods
		// are kwok's and run nothing.
		// kube-apiserver: pkg/controlplane/instance.go (ValidateIP)
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + e.creds.certDir,
		"--token-auth-file=" + e.creds.tokenFile,
		"--service-account-key-file=" + e.creds.saKeyFile,
		"--service-account-signing-key-file=" + e.creds.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		// In addition to the default plugins (NamespaceLifecycle, ServiceAccount,
		// PodSecurity, ResourceQuota, the admission webhooks and policies, …).
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--allow-privileged=true",
	}
	if e.opts.Profile == APIServer {
		// Why: the ServiceAccount plugin refuses every Pod whose ServiceAccount does not
		// exist, and "default" is created in each namespace by kube-controller-manager,
		// which this profile does not run.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	if !e.opts.WithoutSharding {
		args = append(args, ShardingGateFlag)
	}
	return append(args, e.opts.APIServerFlags...)
}

func (e *Env) startAPIServer(ctx context.Context) error {
	p, err := startProcess("kube-apiserver", e.Dir, filepath.Join(e.binDir, "kube-apiserver"), e.apiServerArgs(), e.opts.Detached)
	if err != nil {
		return err
	}
	e.apiserver = p
	return e.waitReady(ctx, p, e.Config.Host)
}

// waitReady waits until the kube-apiserver p, serving at host, answers /readyz.
func (e *Env) waitReady(ctx context.Context, p *process, host string) error {
	return waitFor(ctx, e.opts.ReadyTimeout, p, func(c *http.Client) bool {
		req, _ := http.NewRequest(http.MethodGet, host+"/readyz", nil)
		// Why the super-admin: /readyz is public, but only once the RBAC bootstrap
		// policy exists; system:masters is allowed before that.
		req.Header.Set("Authorization", "Bearer "+e.creds.tokens[superAdmin.user])
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// RestartAPIServer stops kube-apiserver (bounded graceful shutdown, then kill) and
// starts it again on the same port against the same etcd, waiting until it is ready.
func (e *Env) RestartAPIServer(ctx context.Context) error {
	if err := e.StopAPIServer(); err != nil {
		return err
	}
	return e.StartAPIServer(ctx)
}

// SetSharding turns kube-apiserver's feature gate ShardedListAndWatch on or off for
// its next start (StartAPIServer, RestartAPIServer): the same data, served by an
// apiserver that shards or one that ignores the shard selector.
func (e *Env) SetSharding(on bool) { e.opts.WithoutSharding = !on }

// StopAPIServer stops kube-apiserver (bounded graceful shutdown, then kill) and leaves
// it down, etcd running: until StartAPIServer, a client connecting to its port gets
// "connection refused", as it does when the apiserver process is down.
func (e *Env) StopAPIServer() error {
	if e.opts.Detached {
		return errors.New("StopAPIServer is for attached control planes")
	}
	e.apiserver.stop(3 * time.Second)
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same port
// against the same etcd, and waits until it is ready.
//
// Pitfall: nothing holds the port while the apiserver is down; if another program has
// bound it meanwhile, the new apiserver fails to start and so does this call.
func (e *Env) StartAPIServer(ctx context.Context) error {
	if e.opts.Detached {
		return errors.New("StartAPIServer is for attached control planes")
	}
	select {
	case <-e.apiserver.done:
	default:
		return errors.New("StartAPIServer: kube-apiserver is still running; call StopAPIServer first")
	}
	return e.startAPIServer(ctx)
}

// CompactEtcd compacts etcd's history up to its current revision and returns it.
// A watch served by etcd (kube-apiserver with --watch-cache=false) from an older
// resourceVersion then fails with 410 Gone. It talks to etcd's JSON gateway, so the
// module needs no etcd client.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	var rangeResp struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	key := base64.StdEncoding.EncodeToString([]byte("/registry"))
	if err := etcdPost(ctx, e.etcdURL()+"/v3/kv/range", map[string]any{"key": key, "limit": 1}, &rangeResp); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(rangeResp.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", rangeResp.Header.Revision, err)
	}
	if err := etcdPost(ctx, e.etcdURL()+"/v3/kv/compaction", map[string]any{"revision": rev, "physical": true}, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

func etcdPost(ctx context.Context, url string, body any, out any) error {
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s", url, resp.Status)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Stop stops every process, the newest first, and removes the directory if Launch
// created it. It is idempotent.
func (e *Env) Stop() {
	for i := len(e.others) - 1; i >= 0; i-- {
		e.others[i].stop(2 * time.Second)
	}
	e.others = nil
	e.stopSecondAPIServers()
	if e.apiserver != nil {
		e.apiserver.stop(3 * time.Second)
	}
	if e.etcd != nil {
		e.etcd.stop(5 * time.Second)
	}
	if e.ownDir && e.Dir != "" {
		_ = os.RemoveAll(e.Dir)
	}
}

// waitFor polls ready every 100ms until it returns true, the process exits, the
// timeout passes or ctx ends.
func waitFor(ctx context.Context, timeout time.Duration, p *process, ready func(*http.Client) bool) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for {
		if err := p.exitedEarly(); err != nil {
			return err
		}
		if ready(client) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s; last log lines:\n%s", p.name, timeout, tail(p.logPath, 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// portOrFree returns port if it is free on 127.0.0.1, or a free port when port is 0.
func portOrFree(port int, what string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return 0, fmt.Errorf("port %d for %s is in use (another cluster running? `make cluster-down`, or set another port): %w", port, what, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Processes returns every program this control plane runs: etcd, kube-apiserver, the
// second apiservers still running (StartSecondAPIServer), then the Cluster profile's
// components. Stop them in reverse.
func (e *Env) Processes() []Process {
	var ps []Process
	for _, p := range append(append([]*process{e.etcd, e.apiserver}, e.secondProcesses()...), e.others...) {
		if p != nil {
			ps = append(ps, Process{Name: p.name, PID: p.cmd.Process.Pid})
		}
	}
	return ps
}

// PIDs returns the process ids of every program this control plane started, in the
// order of Processes.
func (e *Env) PIDs() []int {
	var pids []int
	for _, p := range e.Processes() {
		pids = append(pids, p.PID)
	}
	return pids
}
