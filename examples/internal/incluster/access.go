package incluster

import (
	"context"
	"encoding/json"
	"fmt"
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
	review := map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec": map[string]any{
			"user":   p.User,
			"groups": []string{"system:serviceaccounts", "system:serviceaccounts:" + p.Namespace, "system:authenticated"},
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
	what := fmt.Sprintf("%s: can %s %s.%s becomes %v", p.User, verb, resource, group, want)
	return poll(ctx, 30*time.Second, what, func() (bool, error) {
		got, err := p.Can(ctx, admin, verb, group, resource, "")
		return err == nil && got == want, err
	})
}
