package objects

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestKeyOmitsTheSlashOfAClusterScopedObject(t *testing.T) {
	for _, c := range []struct{ namespace, name, want string }{
		{"default", "cfg", "default/cfg"},
		{"", "node-1", "node-1"},
	} {
		if got := Key(c.namespace, c.name); got != c.want {
			t.Errorf("Key(%q, %q) = %q, want %q", c.namespace, c.name, got, c.want)
		}
	}
}

func TestIsNilSeesANilPointerInsideAnInterface(t *testing.T) {
	var pod *corev1.Pod
	for _, c := range []struct {
		name string
		obj  any
		want bool
	}{
		{"nil interface", nil, true},
		{"nil *Pod", pod, true},
		{"a Pod", &corev1.Pod{}, false},
		{"a value, not a pointer", corev1.Pod{}, false},
	} {
		if got := IsNil(c.obj); got != c.want {
			t.Errorf("%s: IsNil = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestResourceVersionMetricKeepsTheLast15Digits(t *testing.T) {
	for _, c := range []struct {
		rv   string
		want float64
		ok   bool
	}{
		{"12345", 12345, true},
		{"1234567890123456789", 567890123456789, true},
		{"", 0, false},
		{"abc", 0, false},
	} {
		got, ok := ResourceVersionMetric(c.rv)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ResourceVersionMetric(%q) = %v, %v; want %v, %v", c.rv, got, ok, c.want, c.ok)
		}
	}
}
