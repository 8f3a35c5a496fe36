package informer

import "github.com/kubeinternals/informers/indexer"

// MutationCacheHandler is the event handler that keeps mc in step with an informer:
// every object the informer adds or updates is reported to mc.OnAddOrUpdate, every
// deleted one to mc.OnDelete, so that mc forgets a write as soon as the informer has
// caught up with it and recognises a write answered after its object was deleted.
// Register it on the informer whose Indexer mc reads:
//
//	mc, err := indexer.NewMutationCache(inf.Indexer(), indexer.MutationCacheOptions{IncludeAdds: true})
//	// …
//	_, err = inf.AddEventHandler(informer.MutationCacheHandler(mc))
//
// A delete whose OptionalObj is missing (possible only for a DeletedObject built by
// hand) is skipped: the deletion has no resourceVersion to compare.
//
// client-go: tools/cache/mutation_cache.go MutationCache.OnAddOrUpdate, MutationCache.OnDelete
func MutationCacheHandler[T indexer.Object](mc *indexer.MutationCache[T]) HandlerFuncs[T] {
	return HandlerFuncs[T]{
		AddFunc:    func(obj T, _ bool) { mc.OnAddOrUpdate(obj) },
		UpdateFunc: func(_, newObj T) { mc.OnAddOrUpdate(newObj) },
		DeleteFunc: func(d DeletedObject[T]) {
			if !isNil(d.OptionalObj) {
				mc.OnDelete(d.OptionalObj)
			}
		},
	}
}
