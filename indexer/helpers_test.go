package indexer

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cm builds a ConfigMap. labels are key, value pairs.
func cm(namespace, name string, labels ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if len(labels) > 0 {
		c.Labels = map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			c.Labels[labels[i]] = labels[i+1]
		}
	}
	return c
}

// withFinalizers returns c with these finalizers, which byFinalizer indexes.
func withFinalizers(c *corev1.ConfigMap, finalizers ...string) *corev1.ConfigMap {
	c.Finalizers = finalizers
	return c
}

// withData returns c with one data entry, to tell versions of an object apart.
func withData(c *corev1.ConfigMap, value string) *corev1.ConfigMap {
	c.Data = map[string]string{"v": value}
	return c
}

// byApp indexes a ConfigMap by its "app" label; no label, no value.
func byApp(c *corev1.ConfigMap) ([]string, error) {
	if app, ok := c.Labels["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

// byFinalizer indexes a ConfigMap under each of its finalizers (several values,
// duplicates possible).
func byFinalizer(c *corev1.ConfigMap) ([]string, error) {
	return slices.Clone(c.Finalizers), nil
}

var errPoison = errors.New("poisoned object")

// failOnPoison indexes by the "app" label but fails for an object labelled poison.
func failOnPoison(c *corev1.ConfigMap) ([]string, error) {
	if _, bad := c.Labels["poison"]; bad {
		return nil, errPoison
	}
	return byApp(c)
}

// newCMIndexer returns an Indexer of ConfigMaps with a namespace and an app index.
func newCMIndexer() Indexer[*corev1.ConfigMap] {
	return New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{
		NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap],
		"app":          byApp,
	}})
}

// names returns the keys of objs, sorted, for order-independent comparisons; nil when
// there are none.
func names[T Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, ObjectKey(o.GetNamespace(), o.GetName()))
	}
	slices.Sort(out)
	return out
}

// sorted returns a sorted copy; nil when s is empty.
func sorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
