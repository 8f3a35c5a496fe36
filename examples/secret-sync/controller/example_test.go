package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/workqueue"
)

// Every event enqueues the same key, and the queue folds them into one sync.
func Example_oneShotKey() {
	q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{})
	defer q.ShutDown()
	secrets := enqueueAll[*corev1.Secret](q)
	namespaces := enqueueAll[*corev1.Namespace](q)
	for range 100 {
		secrets.OnUpdate(&corev1.Secret{}, &corev1.Secret{})
	}
	namespaces.OnAdd(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, false)
	secrets.OnDelete(informer.DeletedObject[*corev1.Secret]{OptionalObj: &corev1.Secret{}})
	fmt.Println("events: 102, queued syncs:", q.Len())
	// Output:
	// events: 102, queued syncs: 1
}
