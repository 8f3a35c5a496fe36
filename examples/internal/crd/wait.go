package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
)

// condition is one entry of a CRD's status.conditions.
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// crdStatus is the only part of a CRD this package reads back.
type crdStatus struct {
	Status struct {
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

// waitEstablished polls the CRD every interval until Established=True, NamesAccepted=False
// (fail at once: waiting cannot fix a name clash), or ctx ends.
//
// Why poll and not watch: the wait is short (usually under a second) and a GET loop is
// easier to read; a watch would need its own resync for the case where the condition is
// already true before the watch starts.
func waitEstablished(ctx context.Context, c rest.Interface, name string, interval time.Duration) error {
	var (
		last  []condition
		reads int
	)
	timer := time.NewTimer(0) // first read at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s after %d status reads, last conditions %s: %w",
				ErrNotEstablished, name, reads, describe(last), context.Cause(ctx))
		case <-timer.C:
		}
		conds, err := readConditions(ctx, c, name)
		reads++
		if err != nil {
			if ctx.Err() != nil {
				continue // report the context's error above, not the aborted GET
			}
			return err
		}
		last = conds
		if names, ok := find(conds, "NamesAccepted"); ok && names.Status == "False" {
			return fmt.Errorf("%w: %s: %s: %s", ErrNamesNotAccepted, name, names.Reason, names.Message)
		}
		if est, ok := find(conds, "Established"); ok && est.Status == "True" {
			return nil
		}
		timer.Reset(interval)
	}
}

// readConditions GETs the CRD and returns its status conditions.
func readConditions(ctx context.Context, c rest.Interface, name string) ([]condition, error) {
	res := c.Get().Resource("customresourcedefinitions").Name(name).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, fmt.Errorf("crd: read %s: %w", name, err)
	}
	raw, _ := res.Raw() // Why ignore: Error() above already returned the only error Raw has.
	var s crdStatus
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("crd: decode %s: %w", name, err)
	}
	return s.Status.Conditions, nil
}

func find(conds []condition, typ string) (condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return condition{}, false
}

// describe renders conditions as "Type=Status(Reason)" for error messages.
func describe(conds []condition) string {
	if len(conds) == 0 {
		return "none"
	}
	s := ""
	for i, c := range conds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason)
	}
	return s
}
