package main

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// readYourWrites: a controller creates an object, then reconciles again before its
// informer has seen the create. Reading the informer, it creates a second one; reading
// through a MutationCache, it sees its own create; with a fixed name, the apiserver
// refuses the second create (sample-controller's way).
func readYourWrites() Scenario {
	return Scenario{
		Name:     "read-your-writes",
		Question: "My controller creates an object, then reconciles again before its informer has seen it: does it create a second one?",
		Why: "The informer's cache is only as new as the last watch event, and the create's event takes a moment to arrive (here the watch is held, to make the moment last). " +
			"A controller that reads the cache, finds nothing and creates with generateName creates again on the next reconcile: the apiserver has no reason to refuse a second object with a new name. " +
			"A MutationCache remembers the apiserver's answer to the create (Mutation) and returns, per key, the newer of it and the informer's copy, so the second reconcile finds the object; the informer's event then makes it forget the answer (OnAddOrUpdate, fed by informer.MutationCacheHandler). " +
			"sample-controller needs neither: its Deployment has a fixed name, so the second create is refused with 409 AlreadyExists and the key is retried until the cache has caught up.",
		Read: []string{
			"docs/06-controller.md (Reading your own writes)",
			"indexer/mutation_cache.go: MutationCache.Mutation, MutationCache.ByIndex; informer/mutation_cache.go: MutationCacheHandler",
		},
		Fault:    "holds the informer's watch for a moment (a TCP proxy in front of kube-apiserver)",
		Run:      runReadYourWrites,
		Recorded: readYourWritesRecorded,
	}
}

// ownerIndex files a ConfigMap under its "owner" label: the controller's "which objects
// are mine" query.
const ownerIndex = "owner"

func byOwner(c *corev1.ConfigMap) ([]string, error) {
	if o, ok := c.Labels["owner"]; ok {
		return []string{o}, nil
	}
	return nil, nil
}

// ownedConfigMap is the object the controller makes for owner: named name, or
// generated from prefix when name is "".
func ownedConfigMap(ns, owner, name, prefix string) *corev1.ConfigMap {
	c := configMap(ns, name)
	c.GenerateName = prefix
	c.Labels["owner"] = owner
	return c
}

func runReadYourWrites(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "read-your-writes")
	if err != nil {
		return nil, err
	}
	var mc *indexer.MutationCache[*corev1.ConfigMap]
	inf, err := startObserved(ctx, lab, lab.Watched, configMaps(ns), informer.FactoryOptions{}, func(inf *informer.SharedIndexInformer[*corev1.ConfigMap]) error {
		if err := inf.Indexer().AddIndexers(indexer.Indexers[*corev1.ConfigMap]{ownerIndex: byOwner}); err != nil {
			return err
		}
		var err error
		if mc, err = indexer.NewMutationCache(inf.Indexer(), indexer.MutationCacheOptions{IncludeAdds: true, Logger: lab.log}); err != nil {
			return err
		}
		_, err = inf.AddEventHandler(informer.MutationCacheHandler(mc))
		return err
	})
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	r.Do("start a ConfigMap informer on %s with an index by the label owner, a MutationCache over its cache (IncludeAdds) and the handler that feeds it", ns)

	// One controller, three ways to read and write. reconcile ensures one ConfigMap
	// for owner exists: it reads, and creates if it found none.
	type way struct {
		owner, name, prefix string
		read                func(owner string) ([]*corev1.ConfigMap, error)
		remember            bool // hand the create's answer to mc.Mutation
		reads               []int
		creates             []string // the created names, or the refusal
	}
	fromInformer := func(owner string) ([]*corev1.ConfigMap, error) { return inf.Indexer().ByIndex(ownerIndex, owner) }
	fromMutationCache := func(owner string) ([]*corev1.ConfigMap, error) { return mc.ByIndex(ownerIndex, owner) }
	ways := []*way{
		{owner: "informer", prefix: "dup-", read: fromInformer},
		{owner: "mutation-cache", prefix: "mc-", read: fromMutationCache, remember: true},
		{owner: "fixed-name", name: "fixed", read: fromInformer},
	}
	reconcile := func(w *way) error {
		found, err := w.read(w.owner)
		if err != nil {
			return err
		}
		w.reads = append(w.reads, len(found))
		if len(found) > 0 {
			return nil
		}
		c := ownedConfigMap(ns, w.owner, w.name, w.prefix)
		err = create(ctx, core, ns, "configmaps", c)
		switch {
		case apierrors.IsAlreadyExists(err):
			w.creates = append(w.creates, "409 AlreadyExists")
			return nil // sample-controller returns the error: the key is retried later
		case err != nil:
			return err
		}
		w.creates = append(w.creates, c.Name)
		if w.remember {
			mc.Mutation(c)
		}
		return nil
	}

	thaw, err := lab.Freeze()
	if err != nil {
		return nil, err
	}
	r.Fault("hold every byte of the informer's watch: its cache cannot change until the thaw")
	for _, w := range ways {
		for range 2 {
			if err := reconcile(w); err != nil {
				thaw()
				return nil, err
			}
		}
	}
	r.Do("reconcile twice for each owner: owner=informer reads the informer and creates with generateName dup-; owner=mutation-cache reads through the MutationCache, creates with generateName mc- and hands the answer to Mutation; owner=fixed-name reads the informer and creates the fixed name \"fixed\"")
	thaw()
	r.Do("release the watch and wait until the informer has every ConfigMap created")
	var created []string
	for _, w := range ways {
		for _, name := range w.creates {
			if !strings.HasPrefix(name, "409") {
				created = append(created, ns+"/"+name)
			}
		}
	}
	for _, key := range created {
		if err := await(ctx, awaitLong, "the informer to see "+key, cached(inf.SharedIndexInformer, key)); err != nil {
			return nil, err
		}
	}

	count := func(read func(string) ([]*corev1.ConfigMap, error), owner string) int {
		objs, err := read(owner)
		if err != nil {
			return -1
		}
		return len(objs)
	}
	for _, w := range ways {
		r.See("owner=%s: the two reconciles found %v ConfigMap(s) and created %s; the informer now has %d", w.owner, w.reads, joinKeys(w.creates), count(fromInformer, w.owner))
	}
	inf0, mc0, fixed := ways[0], ways[1], ways[2]
	r.Check("reading the informer, the second reconcile found nothing and created a second ConfigMap",
		len(inf0.creates) == 2 && count(fromInformer, inf0.owner) == 2, "reads %v, creates %s", inf0.reads, joinKeys(inf0.creates))
	r.Check("reading through the MutationCache, the second reconcile found the first create and did not create",
		len(mc0.creates) == 1 && len(mc0.reads) == 2 && mc0.reads[1] == 1 && count(fromInformer, mc0.owner) == 1, "reads %v, creates %s", mc0.reads, joinKeys(mc0.creates))
	afterThaw, _ := mc.ByIndex(ownerIndex, mc0.owner)
	sameCopy := len(afterThaw) == 1 && len(mc0.creates) == 1
	if sameCopy {
		cached, _, _ := inf.Indexer().GetByKey(ns + "/" + mc0.creates[0])
		sameCopy = cached != nil && afterThaw[0] == cached
	}
	r.Check("once the informer has it, the MutationCache returns the informer's copy, once",
		sameCopy, "%d object(s) through the MutationCache", len(afterThaw))
	r.Check("with a fixed name the second create was refused with 409 AlreadyExists",
		len(fixed.creates) == 2 && fixed.creates[1] == "409 AlreadyExists" && count(fromInformer, fixed.owner) == 1, "creates %s", joinKeys(fixed.creates))
	r.Answer = fmt.Sprintf("reading the informer, yes: two ConfigMaps (%s); through a MutationCache, no: one (%s), the second reconcile saw it; with a fixed name the second create got 409 AlreadyExists and one exists",
		joinKeys(inf0.creates), joinKeys(mc0.creates))
	return r, nil
}

// readYourWritesRecorded: the informer saw two ConfigMaps created for the owner that
// read the informer, and one for each of the other two.
func readYourWritesRecorded(r recorded) Check {
	added := r.of(trace.WatchEvent).where(func(e trace.Event) bool { return e.Type == "ADDED" })
	keysWith := func(part string) int {
		n := 0
		for _, e := range added {
			if strings.Contains(e.Key, part) {
				n++
			}
		}
		return n
	}
	dup, mc, fixed := keysWith("/dup-"), keysWith("/mc-"), len(added.about("/fixed"))
	return check("the informer saw two dup- ConfigMaps created (it was read), one mc- (the MutationCache was read) and one fixed",
		dup == 2 && mc == 1 && fixed == 1, "ADDED: dup- %d, mc- %d, fixed %d", dup, mc, fixed)
}
