package fakeapi

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/shard"
)

// ShardLikeTheAPIServer plays kube-apiserver with its feature gate
// ShardedListAndWatch on (true) or off (false, the default). On, a LIST, WATCH or
// watch-list with ListOptions.ShardSelector serves only the objects of that shard,
// a LIST echoes the selector in ListResult.ShardSelector (metadata.shardInfo), and a
// selector that does not parse is refused with 500 Internal Error, as the apiserver
// refuses one. Off, the selector is ignored without a word, as by the apiserver.
func (s *Server[T]) ShardLikeTheAPIServer(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sharding = on
}

// shardOfLocked returns the filter and the echoed selector for opts: nil and "" when
// the server does not shard or opts asks for no shard.
func (s *Server[T]) shardOfLocked(opts metav1.ListOptions) (keep func(T) bool, echo string, err error) {
	if !s.sharding || opts.ShardSelector == "" {
		return nil, "", nil
	}
	sh, err := shard.Parse(opts.ShardSelector)
	if err != nil {
		return nil, "", apierrors.NewInternalError(err)
	}
	return func(o T) bool { return sh.ContainsObject(o) }, sh.String(), nil
}
