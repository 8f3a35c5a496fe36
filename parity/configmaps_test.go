package parity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The objects the indexer, lister and mutation-cache tests generate: ConfigMaps over a
// handful of namespaces, names and labels, so that keys collide often and every index
// value is shared by several objects.

var (
	cmNamespaces = []string{"", "ns1", "ns2"} // "" is a cluster-scoped object: key "name", namespace index value ""
	cmNames      = []string{"a", "b", "c"}
	// cmTeams are values of the "teams" label, which the multi-valued index splits at
	// ",": several values, a repeated one, the empty value, and (label absent) none.
	cmTeams = []string{"a", "b", "a,b", "b,c", "a,a", "", "a,,b"}
	cmApps  = []string{"x", "y", ""}
)

// cmSpec is one generated ConfigMap: its identity, version and labels. RV is unique
// per generated object, so it names the version a query returned.
type cmSpec struct {
	NS, Name string
	RV       int
	UID      string
	Teams    *string // nil: no "teams" label
	App      *string // nil: no "app" label
}

func genCM(r *rand.Rand, rv int) cmSpec {
	s := cmSpec{NS: pick(r, cmNamespaces), Name: pick(r, cmNames), RV: rv}
	if r.IntN(4) > 0 {
		t := pick(r, cmTeams)
		s.Teams = &t
	}
	if r.IntN(2) == 0 {
		a := pick(r, cmApps)
		s.App = &a
	}
	return s
}

func pick[E any](r *rand.Rand, from []E) E { return from[r.IntN(len(from))] }

// key is MetaNamespaceKeyFunc's key for the spec, as both libraries compute it.
func (s cmSpec) key() string {
	if s.NS == "" {
		return s.Name
	}
	return s.NS + "/" + s.Name
}

func (s cmSpec) String() string {
	var l []string
	if s.Teams != nil {
		l = append(l, "teams="+strconv.Quote(*s.Teams))
	}
	if s.App != nil {
		l = append(l, "app="+strconv.Quote(*s.App))
	}
	uid := ""
	if s.UID != "" {
		uid = " uid=" + s.UID
	}
	return fmt.Sprintf("%s@%d%s{%s}", s.key(), s.RV, uid, strings.Join(l, ","))
}

// build returns a fresh ConfigMap: each side gets its own, so neither can see what the
// other did to an object.
func (s cmSpec) build() *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: s.NS, Name: s.Name, ResourceVersion: strconv.Itoa(s.RV), UID: types.UID(s.UID),
	}}
	if s.Teams != nil || s.App != nil {
		cm.Labels = map[string]string{}
		if s.Teams != nil {
			cm.Labels["teams"] = *s.Teams
		}
		if s.App != nil {
			cm.Labels["app"] = *s.App
		}
	}
	return cm
}

func buildAll(specs []cmSpec) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, len(specs))
	for i, s := range specs {
		out[i] = s.build()
	}
	return out
}

// cmKeys is every key a generated object can have, and one that none has.
func cmKeys() []string {
	keys := []string{"nope/x", "/a", ""}
	for _, ns := range cmNamespaces {
		for _, n := range cmNames {
			keys = append(keys, cmSpec{NS: ns, Name: n}.key())
		}
	}
	return keys
}

// describe names an object by key and version: "ns1/a@7", or "-" for none.
func describe(cm *corev1.ConfigMap) string {
	if cm == nil {
		return "-"
	}
	key := cm.Name
	if cm.Namespace != "" {
		key = cm.Namespace + "/" + key
	}
	if cm.UID != "" {
		return key + "@" + cm.ResourceVersion + "/" + string(cm.UID)
	}
	return key + "@" + cm.ResourceVersion
}

// describeSorted describes a result whose order neither library specifies.
func describeSorted(list []*corev1.ConfigMap) string {
	return "[" + strings.Join(sortedStrings(describeEach(list)), " ") + "]"
}

// describeInOrder describes a result whose order both libraries fix.
func describeInOrder(list []*corev1.ConfigMap) string {
	return "[" + strings.Join(describeEach(list), " ") + "]"
}

func describeEach(list []*corev1.ConfigMap) []string {
	out := make([]string, len(list))
	for i, cm := range list {
		out[i] = describe(cm)
	}
	return out
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// errWord is what a transcript says about an error whose text the libraries word
// differently: only whether there was one.
func errWord(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// teamsOf is the multi-valued index both sides use: the "teams" label split at ",".
// No label gives no values; an empty label gives the one value "".
func teamsOf(cm *corev1.ConfigMap) []string {
	v, ok := cm.Labels["teams"]
	if !ok {
		return nil
	}
	return strings.Split(v, ",")
}

// appOf is a single-valued index that only labelled objects are in.
func appOf(cm *corev1.ConfigMap) []string {
	if v, ok := cm.Labels["app"]; ok {
		return []string{v}
	}
	return nil
}

// noneOf is an index that files no object under any value.
func noneOf(*corev1.ConfigMap) []string { return nil }
