package resolvers

import "github.com/99designs/gqlgen/graphql"

// batchResults converts a batch resolver's answers, one per parent, in the
// parents' order. When any failed, the error is a graphql.BatchErrorList, so
// that gqlgen reports each parent's error on that parent's own path (and
// only there), as a resolver per parent did.
func batchResults[V, M any](vals []V, errs []error, conv func(V) M) ([]M, error) {
	out := make([]M, len(vals))
	failed := false
	for i, v := range vals {
		if errs[i] != nil {
			failed = true
			continue
		}
		out[i] = conv(v)
	}
	if failed {
		return out, graphql.BatchErrorList(errs)
	}
	return out, nil
}
