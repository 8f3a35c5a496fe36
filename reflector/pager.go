package reflector

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultPageSize is the page size of a paged LIST when none is configured.
//
// client-go: tools/pager/pager.go defaultPageSize
const DefaultPageSize = 500

// PagerOptions configures NewPager.
type PagerOptions struct {
	// PageSize is the limit of each page; 0 means DefaultPageSize.
	PageSize int64
}

// Pager turns one logical LIST into limit/continue pages, so that the server never
// builds one huge response.
//
// client-go: tools/pager/pager.go ListPager
type Pager[T any] struct {
	lister   Lister[T]
	pageSize int64
}

// NewPager returns a Pager over lister.
func NewPager[T any](lister Lister[T], opts PagerOptions) (*Pager[T], error) {
	if lister == nil {
		return nil, fmt.Errorf("%w: nil Lister", ErrInvalidOptions)
	}
	if opts.PageSize < 0 {
		return nil, fmt.Errorf("%w: negative PageSize %d", ErrInvalidOptions, opts.PageSize)
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	return &Pager[T]{lister: lister, pageSize: opts.PageSize}, nil
}

// List fetches every page and returns all items with the resource version of the
// first page, and whether more than one page was needed (paginated).
//
// opts.Limit, when 0, becomes the page size. Pages after the first carry only the
// continue token: the resource version is fixed by the token itself.
//
// Invariant: if a later page fails with 410 Expired (the continue token outlived
// etcd's compaction), List falls back to one full, unpaged list at the original
// resource version; an Expired on the first page is returned to the caller, whose
// resource version it is.
//
// Differences from client-go: client-go's pager falls back only on Expired, while
// its reflector treats Expired and Gone (what older servers send) alike. Both 410s
// mean "that revision is compacted", so ours falls back on either (isExpiredError),
// and the pager and the reflector agree.
//
// client-go: tools/pager/pager.go ListPager.list
func (p *Pager[T]) List(ctx context.Context, opts metav1.ListOptions) (result ListResult[T], paginated bool, err error) {
	if opts.Limit == 0 {
		opts.Limit = p.pageSize
	}
	original := opts
	var items []T
	for page := 0; ; page++ {
		if err := ctx.Err(); err != nil {
			return ListResult[T]{}, paginated, err
		}
		res, err := p.lister.List(ctx, opts)
		if err != nil {
			if page == 0 || !isExpiredError(err) {
				return ListResult[T]{}, paginated, err
			}
			// Why: pages of a paged list are consistent only while etcd still has
			// their revision. Start over in one request at the RV the caller asked
			// for, which the watch cache may serve.
			full := original
			full.Limit, full.Continue = 0, ""
			res, err := p.lister.List(ctx, full)
			return res, paginated, err
		}
		if page == 0 {
			if res.Continue == "" {
				return res, false, nil // one page: hand it over as is
			}
			result.ResourceVersion, result.ShardSelector = res.ResourceVersion, res.ShardSelector
			items = make([]T, 0, 2*len(res.Items))
		}
		// Invariant: we copy the page's pointers into our own slice, so no page's
		// slice outlives its loop iteration.
		items = append(items, res.Items...)
		if res.Continue == "" {
			result.Items = items
			return result, true, nil
		}
		paginated = true
		opts.Continue = res.Continue
		// Why: the server rejects a resource version together with a continue token.
		opts.ResourceVersion = ""
		opts.ResourceVersionMatch = ""
	}
}
