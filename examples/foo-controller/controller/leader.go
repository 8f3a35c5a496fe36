package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/leaderelection"
)

// LeaderElection makes Run compete for a Lease with the other replicas: the informers
// start and sync on every replica (a replica that takes over starts with a warm
// cache), the workers run only on the leader, and only while it leads.
type LeaderElection struct {
	// Namespace and Name of the Lease. Namespace is required; "" Name means
	// "foo-controller".
	Namespace, Name string
	// Identity names this replica in the Lease; "" means the hostname (the Pod's
	// name in a cluster) plus "_" and a random suffix, as client-go's callers do.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod: zero means 15s, 10s and 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel clears the Lease after a graceful stop (SIGTERM), once the
	// workers finished, so another replica takes over at its next try instead of
	// after LeaseDuration.
	ReleaseOnCancel bool
}

// NewIdentity returns a replica identity for LeaderElection.Identity: the hostname
// (the Pod's name in a cluster) plus "_" and a random suffix, as client-go's callers
// make theirs. The suffix keeps two processes on one host apart.
func NewIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("controller: leader election identity: %w", err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return host + "_" + hex.EncodeToString(suffix), nil
}

// HealthTolerance is how long past its lease duration a leader may go unrenewed before
// /healthz fails (kube-controller-manager's 20s).
const HealthTolerance = 20 * time.Second

// newElector builds the Elector for le, with the work to do while leading.
func (c *Controller) newElector(cfg *rest.Config, le LeaderElection, metrics leaderelection.MetricsProvider, lead func(context.Context)) (*leaderelection.Elector, error) {
	if le.Namespace == "" {
		return nil, errors.New("controller: leader election needs the Lease's namespace")
	}
	if le.Name == "" {
		le.Name = Name
	}
	if le.Identity == "" {
		id, err := NewIdentity()
		if err != nil {
			return nil, err
		}
		le.Identity = id
	}
	lock, err := leaderelection.NewLeaseLock(cfg, leaderelection.LeaseLockOptions{
		Namespace: le.Namespace, Name: le.Name, Identity: le.Identity,
	})
	if err != nil {
		return nil, err
	}
	return leaderelection.New(leaderelection.Config{
		Lock: lock, LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: le.ReleaseOnCancel, Logger: c.log, Tracer: c.tracer, MetricsProvider: metrics,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: lead,
			OnNewLeader:      func(id string) { c.log.Info("leader", "identity", id, "this replica", id == le.Identity) },
		},
	})
}

// Leading reports whether this replica's workers run: always once synced without
// leader election; with it, only while it holds the Lease.
func (c *Controller) Leading() bool { return c.leading.Load() }

// Healthy is the liveness check: with leader election, it fails when this replica
// believes it leads but has not renewed the Lease for LeaseDuration + HealthTolerance
// (a leader stuck somewhere, which a restart fixes). foo-controller serves it as
// /healthz.
//
// client-go: tools/leaderelection/healthzadaptor.go HealthzAdaptor.Check
func (c *Controller) Healthy() error {
	if e := c.elector; e != nil {
		return e.Check(HealthTolerance)
	}
	return nil
}
