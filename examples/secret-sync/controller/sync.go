package controller

import (
	"context"
	"errors"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// sync is one full pass: every wanted copy is created or updated, every unwanted copy
// deleted. It reads only the caches, so it acts on the newest state the informers have.
// It keeps going after a failed request and returns all the errors joined.
func (c *Controller) sync(ctx context.Context) error {
	c.syncs.Add(1)
	sources, err := c.sources.Lister().Namespace(c.source).List(labels.Everything())
	if err != nil {
		return err
	}
	sources = slices.DeleteFunc(sources, func(s *corev1.Secret) bool { return !copyable(s) })
	allNS, err := c.namespaces.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	targets := map[string]bool{}
	for _, ns := range allNS {
		if c.wants(ns) {
			targets[ns.Name] = true
		}
	}
	wanted := map[string]bool{} // namespace/name of every wanted copy
	var errs []error
	for _, ns := range slices.Sorted(maps.Keys(targets)) {
		for _, src := range sources {
			wanted[ns+"/"+src.Name] = true
			errs = append(errs, c.put(ctx, desiredCopy(src, ns)))
		}
	}
	copies, err := c.copies.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	for _, cp := range copies {
		// Pitfall: the label selects Secrets, not namespaces. A Secret in the source
		// namespace can carry the label too (applied from YAML exported from a copy);
		// it is a source, never a copy, and deleting it would delete its copies next.
		if cp.Namespace == c.source {
			continue
		}
		if !wanted[cp.Namespace+"/"+cp.Name] {
			errs = append(errs, c.remove(ctx, cp))
		}
	}
	err = errors.Join(errs...)
	c.log.Debug("synced", "namespaces", len(targets), "secrets", len(sources), "err", err)
	return err
}

// put is the create-then-update of the one-shot pattern: POST the copy, and if it
// exists, PUT it whole. The PUT carries no resourceVersion (an unconditional update: the
// last writer wins, which is what "make it equal to the source" means).
//
// Why this does not storm: a PUT equal to what is stored changes nothing on the server —
// same resourceVersion, no watch event — so it does not wake the copies informer.
func (c *Controller) put(ctx context.Context, cp *corev1.Secret) error {
	err := c.core.Post().Namespace(cp.Namespace).Resource("secrets").Param("fieldManager", FieldManager).Body(cp).Do(ctx).Error()
	if !apierrors.IsAlreadyExists(err) {
		if err == nil {
			c.creates.Add(1)
			c.log.Info("created copy", "secret", cp.Namespace+"/"+cp.Name)
		}
		return err
	}
	c.updates.Add(1)
	return c.core.Put().Namespace(cp.Namespace).Resource("secrets").Name(cp.Name).Param("fieldManager", FieldManager).Body(cp).Do(ctx).Error()
}

// remove deletes a copy nobody wants any more; one already gone is fine.
func (c *Controller) remove(ctx context.Context, cp *corev1.Secret) error {
	c.deletes.Add(1)
	err := c.core.Delete().Namespace(cp.Namespace).Resource("secrets").Name(cp.Name).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.log.Info("deleted copy", "secret", cp.Namespace+"/"+cp.Name)
	}
	return err
}

// wants reports whether ns opts in: annotated "true", not the source, not being deleted
// (a terminating namespace refuses new objects).
func (c *Controller) wants(ns *corev1.Namespace) bool {
	return ns.Name != c.source && ns.Annotations[c.annotation] == "true" &&
		ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating
}

// copyable reports whether a source Secret is copied at all.
func copyable(s *corev1.Secret) bool {
	return s.Type != corev1.SecretTypeServiceAccountToken
}

// desiredCopy is the copy of src that namespace ns should hold: the same name, type,
// data and labels, plus LabelSourceNamespace. Nothing server-owned (uid,
// resourceVersion, timestamps) is carried over.
func desiredCopy(src *corev1.Secret, ns string) *corev1.Secret {
	lbls := maps.Clone(src.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[LabelSourceNamespace] = src.Namespace
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: src.Name, Namespace: ns, Labels: lbls},
		Type:       src.Type,
		// Pitfall: the maps are shared with the cached source; they are only encoded,
		// never modified, so no DeepCopy is needed.
		Data: src.Data,
	}
}
