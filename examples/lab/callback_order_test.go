package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kubeinternals/informers/trace"
)

// The CI run that met it: deployment-edited-by-hand, run earlier, left a Deployment
// named example in a namespace still being deleted, and callback-order's cluster-wide
// informers listed it before the create. Its recording check follows the created
// Foo's own key.
func TestCallbackOrdersRecordedCheckFollowsTheCreatedKey(t *testing.T) {
	call := func(handler, typ, key string) trace.Event {
		return trace.Event{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: handler, Type: typ, Key: key}
	}
	events := recorded{
		call("handleDeployment", "add", "lab-deployment-edited-x/example"), // the leftover, in the initial list
		{Stage: trace.Experiment, Kind: trace.Action, Type: "change", Detail: "create: POST Foo lab-callbacks-y/example (deploymentName example, replicas 1), wait until …"},
		call("handleDeployment", "delete", "lab-deployment-edited-x/example"), // its namespace goes
		call("enqueueFoo", "add", "lab-callbacks-y/example"),
		call("handleDeployment", "add", "lab-callbacks-y/example"),
	}
	assert.True(t, callbackOrderRecorded(events).OK, "%+v", callbackOrderRecorded(events))
	events[3], events[4] = events[4], events[3]
	assert.False(t, callbackOrderRecorded(events).OK, "the Deployment's add before the Foo's")
}
