package main

// scenarios lists every scenario in the order `make lab` runs them: the informer's
// contract first, then the controller's patterns, then the wire and the faults, which
// disturb the cluster and so come last.
func scenarios() []Scenario {
	return []Scenario{
		// The informer's contract.
		addsBeforeSync(),
		factoryStart(),
		deltaTypes(),
		deleteUnknownKey(),
		periodicResync(),
		sameRVUpdates(),
		slowHandler(),
		handlerPanic(),
		transformScenario(),
		handlerMutates(),
		handlerDoesWork(),

		// The controller's patterns.
		identicalUpdates(),
		sameKeyDedup(),
		queuePerProcess(),
		leaderElection(),
		conflictRetry(),
		readYourWrites(),
		failingReconcile(),
		deploymentEditedByHand(),
		crdMissing(),
		callbackOrder(), // last of these: the later, the likelier the garbage collector knows Foos (see Lab.prepare)

		// The wire and the faults.
		watchWire(),
		watchCut(),
		stuckWatch(),
		watchListCut(),
		compaction410(),
		laggingAPIServer(),
		shardedInformers(),
		apiserverRestart(),
	}
}
