package incluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Can asks the apiserver, with a SubjectAccessReview, whether the Pod's ServiceAccount
// may do verb on group/resource in namespace ns ("" for every namespace).
func (p Pod) Can(ctx context.Context, admin *rest.Config, verb, group, resource, ns string) (bool, error) {
	c, err := rawClient(admin)
	if err != nil {
		return false, err
	}
	saNamespace := strings.Split(p.User, ":")[2]
	review := map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec": map[string]any{
			"user":   p.User,
			"groups": []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
			"resourceAttributes": map[string]string{
				"verb": verb, "group": group, "resource": resource, "namespace": ns,
			},
		},
	}
	body, _ := json.Marshal(review)
	raw, err := c.Post().AbsPath("/apis/authorization.k8s.io/v1/subjectaccessreviews").Body(body).DoRaw(ctx)
	if err != nil {
		return false, err
	}
	var out struct {
		Status struct {
			Allowed bool `json:"allowed"`
		} `json:"status"`
	}
	return out.Status.Allowed, json.Unmarshal(raw, &out)
}

// AwaitCan waits, up to 30 s, until Can answers want: RBAC learns of a changed role
// through a watch, a moment after the write.
func (p Pod) AwaitCan(ctx context.Context, admin *rest.Config, want bool, verb, group, resource string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := p.Can(ctx, admin, verb, group, resource, "")
		if err == nil && got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: can %s %s.%s is %v after 30s, want %v (%v)", p.User, verb, resource, group, got, want, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
