package soak

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// knobs size a soak. Each has an environment variable; the defaults are the short soak
// `make soak` and CI run (a few minutes).
type knobs struct {
	ops          int           // SOAK_OPS: creates, updates and deletes, one at a time
	faults       int           // SOAK_FAULTS: cuts, compactions, freezes, fail-overs, refusals, spread over the ops
	apiRestarts  int           // SOAK_APISERVER_RESTARTS: kube-apiserver killed (SIGKILL) and started
	etcdRestarts int           // SOAK_ETCD_RESTARTS: etcd killed (SIGKILL) and started
	checkpoints  int           // SOAK_CHECKPOINTS: pauses, besides the end, at which every cache must equal a LIST
	objects      int           // SOAK_OBJECTS: names the writer uses
	slow         time.Duration // SOAK_SLOW: how long the slow handler takes per notification
	seed         uint64        // SOAK_SEED: the writer's and the fault schedule's randomness
	settle       time.Duration // SOAK_SETTLE: how long a checkpoint waits for every cache and handler to catch up
	shards       int           // SOAK_SHARDS: besides the whole-resource informers, ours and client-go's on each of Split(uid, n); 0: none
}

func knobsFromEnv() (knobs, error) {
	k := knobs{ops: 600, faults: 60, apiRestarts: 1, etcdRestarts: 1, checkpoints: 2, objects: 40,
		slow: 5 * time.Millisecond, seed: 1, settle: 3 * time.Minute, shards: 2}
	for _, v := range []struct {
		env string
		to  *int
	}{
		{"SOAK_OPS", &k.ops}, {"SOAK_FAULTS", &k.faults}, {"SOAK_APISERVER_RESTARTS", &k.apiRestarts},
		{"SOAK_ETCD_RESTARTS", &k.etcdRestarts}, {"SOAK_CHECKPOINTS", &k.checkpoints}, {"SOAK_OBJECTS", &k.objects},
		{"SOAK_SHARDS", &k.shards},
	} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return k, fmt.Errorf("%s=%q: want a number ≥ 0", v.env, s)
			}
			*v.to = n
		}
	}
	for _, v := range []struct {
		env string
		to  *time.Duration
	}{{"SOAK_SLOW", &k.slow}, {"SOAK_SETTLE", &k.settle}} {
		if s := os.Getenv(v.env); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return k, fmt.Errorf("%s=%q: want a duration ≥ 0", v.env, s)
			}
			*v.to = d
		}
	}
	if s := os.Getenv("SOAK_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return k, fmt.Errorf("SOAK_SEED=%q: want a number", s)
		}
		k.seed = n
	}
	if k.ops < 1 || k.objects < 1 {
		return k, fmt.Errorf("SOAK_OPS and SOAK_OBJECTS must be at least 1")
	}
	return k, nil
}

// spread returns, for each of ops steps, how many of n events happen after it: evenly
// spaced, none after the last step (the end is a checkpoint of its own).
func spread(n, ops int) []int {
	at := make([]int, ops)
	for j := range n {
		at[(j+1)*ops/(n+1)]++
	}
	return at
}
