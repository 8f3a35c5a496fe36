package informer

import "github.com/kubeinternals/informers/listwatch"

// Sharding reports the informer's shard, who filters it — the apiserver, or the
// informer because the apiserver ignored the selector — and how many objects outside
// the shard were dropped. ok is false for an informer without Options.Shard. It is
// safe to call from any goroutine; ShardStatus.String is a health detail in one line.
func (s *SharedIndexInformer[T]) Sharding() (status listwatch.ShardStatus, ok bool) {
	if s.sharded == nil {
		return listwatch.ShardStatus{}, false
	}
	return s.sharded.Status(), true
}
